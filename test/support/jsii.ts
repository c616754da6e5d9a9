/**
 * The jsii package of the construct library for the tests: built once per input hash into the cache
 * (tools/jsii/build.ts, which holds the cache's lock, so two Jest workers, two runs or two checkouts never build at
 * once), and the cdk8s-cli the example apps run under (`cdk8s synth`), installed once per version into the cache.
 */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildJsii, cacheRoot, type JsiiBuild, type Language } from '../../tools/jsii/build';
import { withLock } from '../../tools/lock';
import { page, rows, section } from './markdown';
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

/** A file's size, or a directory's (every file in it, recursively, as `du --apparent-size` counts), in KiB, rounded. */
export function kib(path: string): number {
  const bytes = (p: string): number => (statSync(p).isDirectory() ? readdirSync(p).reduce((sum, name) => sum + bytes(join(p, name)), 0) : statSync(p).size);
  return Math.round(bytes(path) / 1024);
}

/** Which artifact a row of docs/install/cdk8s.md's output table is about, by its path. */
const ARTIFACTS: readonly (readonly [string, RegExp])[] = [
  ['wheel', /\.whl`/],
  ['go', /\/go\/keystoneappcredcdk8s\/`/],
  ['jar', /\/java\//],
  ['npm', /\.jsii\.tgz`/],
  ['docs', /API\.<language>\.md`/],
];

/**
 * The sizes docs/install/cdk8s.md states for the jsii package's artifacts of `version` (the output table's last column:
 * `208 KiB`, or a range `214–264 KiB each`), by artifact, as [least, most] in KiB.
 */
export function documentedSizes(version: string): Record<string, [number, number]> {
  const table = rows(section(page('docs/install/cdk8s.md'), '## Every cdk8s language (jsii)')).filter((cells) => cells[0].includes('lib/jsii/'));
  const sizes: Record<string, [number, number]> = {};
  for (const cells of table) {
    const artifact = ARTIFACTS.find(([, pattern]) => pattern.test(cells[0]))?.[0];
    const size = /^(\d+)(?:–(\d+))? KiB/.exec(cells[cells.length - 1]);
    if (!artifact || !size) throw new Error(`docs/install/cdk8s.md: a size row of no known artifact: ${cells.join(' | ')}`);
    if (!cells[0].includes(version) && artifact !== 'go' && artifact !== 'docs') throw new Error(`docs/install/cdk8s.md: ${cells[0]} is not of version ${version}`);
    sizes[artifact] = [Number(size[1]), Number(size[2] ?? size[1])];
  }
  return sizes;
}

