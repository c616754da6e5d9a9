#!/usr/bin/env node
/**
 * `pulumi-resource-keystone-appcred`: the provider plugin of the `keystone-appcred` Pulumi package. The engine starts it
 * and talks to it over gRPC (`@pulumi/pulumi/provider` serves the protocol); it runs the same verbs as the dynamic
 * resource. The package ships it bundled into one file (`lib/plugin/pulumi-resource-keystone-appcred`, see
 * tools/plugin.ts), so it runs on `PATH` or copied into Pulumi's plugin directory by `pulumi plugin install resource
 * keystone-appcred <version> --file <path>`, without a node_modules beside it.
 */
import { main } from '@pulumi/pulumi/provider';
import { pluginProvider } from './provider';

/** The package version, written in by the bundler. */
declare const KAC_PACKAGE_VERSION: string | undefined;

const version = typeof KAC_PACKAGE_VERSION === 'string' ? KAC_PACKAGE_VERSION : process.env.KAC_PACKAGE_VERSION;
if (version === undefined) {
  process.stderr.write('pulumi-resource-keystone-appcred: no version: run the bundled plugin (npm run build), not this module\n');
  process.exit(1);
}
void main(pluginProvider(version), process.argv.slice(2));
