/**
 * The `keystone-appcred` provider plugin for the tests: bundled from the sources by the same function `npm run build`
 * uses (tools/plugin.ts), once per test file, into the run's work dir (so test files that run at the same time never
 * write the same file, and the repository's lib/ is not touched), and installed into a Pulumi home with `pulumi plugin
 * install resource keystone-appcred <version> --file <path>` as a user installs it.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { PLUGIN, bundlePlugin, packageVersion } from '../../tools/plugin';
import { runPulumi } from './pulumi';

let bundled: string | undefined;

/** The bundled plugin executable (one per test file). */
export function testPlugin(): string {
  if (!bundled) {
    const parent = process.env.KAC_TEST_WORKDIR ?? '/tmp';
    mkdirSync(parent, { recursive: true });
    bundled = bundlePlugin(join(mkdtempSync(join(parent, 'plugin-')), PLUGIN));
  }
  return bundled;
}

/** The plugin's version: the package's. */
export const pluginVersion = packageVersion;

/**
 * A fresh Pulumi home (beside the shared one, under the run's work dir) with the plugin installed from `file` by
 * `pulumi plugin install`; returns the home. The file backend needs no login, so the home needs nothing else.
 */
export async function homeWithPlugin(file: string): Promise<string> {
  const home = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'pulumi-home-'));
  const result = await runPulumi(['plugin', 'install', 'resource', 'keystone-appcred', pluginVersion(), '--file', file], { cwd: home, env: { PULUMI_HOME: home } });
  if (result.code !== 0) throw new Error(`pulumi plugin install --file ${file} failed (${String(result.code)}):\n${result.stdout}\n${result.stderr}`);
  return home;
}
