/**
 * The jsii package of the construct library for the tests: built once per input hash into the cache
 * (tools/jsii/build.ts, which holds the cache's lock, so two Jest workers, two runs or two checkouts never build at
 * once), and the cdk8s-cli the example apps run under (`cdk8s synth`), installed once per version into the cache.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildJsii, cacheRoot, type JsiiBuild, type Language } from '../../tools/jsii/build';
import { withLock } from '../../tools/lock';
import { LOCK_WAIT_MS, npmInstall } from './package';
import { progress } from './proc';

/** The cdk8s-cli release the example apps are synthesized with (as test/e2e/package-cdk8s.test.ts installs it). */
export const CDK8S_CLI_VERSION = '2.207.60';

/** How long a build of every language may take on a fresh machine (with the peers' Go and Java bindings). */
export const JSII_BUILD_MS = 3_600_000;

/** The jsii package with `languages`, built unless cached. */
export function jsiiBuild(languages: readonly Language[]): Promise<JsiiBuild> {
  return buildJsii({ languages, log: (line) => progress(`jsii: ${line}`) });
}

/** The `cdk8s` executable of {@link CDK8S_CLI_VERSION}, installed into the cache on first use. */
export async function cdk8sCli(): Promise<string> {
  const dir = join(cacheRoot(), `cdk8s-cli-${CDK8S_CLI_VERSION}`);
  const cli = join(dir, 'node_modules', '.bin', 'cdk8s');
  if (existsSync(cli)) return cli;
  return withLock(`${dir}.lock`, async () => {
    if (existsSync(cli)) return cli;
    mkdirSync(dir, { recursive: true });
    await npmInstall(dir, [`cdk8s-cli@${CDK8S_CLI_VERSION}`], ['--no-save', '--omit=dev']);
    return cli;
  }, { timeoutMs: LOCK_WAIT_MS });
}
