/**
 * The `keystone-appcred` provider plugin for the tests: bundled from the sources by the same function `npm run build`
 * uses (tools/plugin.ts), once per test file, into the run's work dir (so test files that run at the same time never
 * write the same file, and the repository's lib/ is not touched), or taken from the packed npm package as a user gets
 * it; and installed into a Pulumi home with `pulumi plugin install resource keystone-appcred <version> --file <path>`
 * as a user installs it.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { PLUGIN, bundlePlugin, packageVersion } from '../../tools/plugin';
import { packedTarball, runOk } from './package';
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

/**
 * The packed npm package's files under `paths` (relative to the package root, e.g. `lib/plugin`), extracted from the
 * tarball `npm pack` made (test/support/package.ts, once per run) into a fresh directory of the run: what a user who
 * installed the package has, not the repository's sources. Returns the package root in that directory.
 */
export async function fromPackedPackage(paths: readonly string[]): Promise<string> {
  const tarball = await packedTarball();
  const dir = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'packed-'));
  await runOk('tar', ['-xzf', tarball, '-C', dir, ...paths.map((p) => `package/${p}`)], { cwd: dir });
  return join(dir, 'package');
}

/** The provider plugin as the packed package ships it (`lib/plugin/pulumi-resource-keystone-appcred`). */
export async function packedPlugin(): Promise<string> {
  return join(await fromPackedPackage([`lib/plugin/${PLUGIN}`]), 'lib', 'plugin', PLUGIN);
}
