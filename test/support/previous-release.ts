/**
 * The previous release, built from the repository's own history, as the upgrade test installs it (the component
 * `previous-release`): keystone-appcred 0.1.0 is commit 8f3fd1c (tagged `v0.1.0`). The test never depends on the tag:
 * a clean clone of main may not carry tags, but it carries the commit, which `git archive` exports. The tree is
 * installed (`npm ci`, from the npm registry or npm's cache) and built (`npm run build`) once, and cached by commit in
 * `~/.cache/keystone-appcred/release-<version>-<commit>/` (`KAC_CACHE_DIR`), as the test binaries are by version: a
 * warm machine reuses it at once, a fresh one spends about a minute (npm ci 17 s and the build 21 s here, with npm's
 * cache warm).
 *
 * Variables: `KAC_PREVIOUS_RELEASE_DIR` (the built tree: `lib/src/cli/main.js`, `lib/src/pulumi/...`, its
 * `node_modules`), `KAC_PREVIOUS_RELEASE_VERSION`, `KAC_PREVIOUS_RELEASE_COMMIT`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Started } from './starter';

const REPO = resolve(__dirname, '..', '..');

/** The release the upgrade test from 0.1.0 starts from: its version and the commit it was cut from. */
export const PREVIOUS_RELEASE = { version: '0.1.0', commit: '8f3fd1cb2dde9360c1638f29ba0792bc15e12436' } as const;
/** keystone-appcred 0.2.0 (tagged `v0.2.0`), which the upgrade test by the install channels starts from. */
export const RELEASE_0_2_0 = { version: '0.2.0', commit: 'fc0992436a2a2f7270c85e3dc567919176fa7d66' } as const;

/** Where the previous release is built and cached. */
export function previousReleaseDir(release: { readonly version: string; readonly commit: string } = PREVIOUS_RELEASE): string {
  const root = process.env.KAC_CACHE_DIR ?? join(homedir(), '.cache', 'keystone-appcred');
  return join(root, `release-${release.version}-${release.commit.slice(0, 12)}`);
}

/** Fails with the command that fetches the commit when the clone does not hold it (a shallow clone). */
export function assertCommit(commit: string, repo: string = REPO, version: string = PREVIOUS_RELEASE.version): void {
  const found = spawnSync('git', ['-C', repo, 'cat-file', '-e', `${commit}^{commit}`], { encoding: 'utf8' });
  if (found.status !== 0) {
    throw new Error(
      `the previous release's commit ${commit} is not in this clone (${repo}): the upgrade test builds keystone-appcred ${version} from it. ` +
        `Fetch the history with \`git -C ${repo} fetch --unshallow\` (or \`git -C ${repo} fetch origin ${commit}\`) and run again`,
    );
  }
}

/** Builds the previous release into its cache directory unless it is there; returns the directory. */
export function buildPreviousRelease(release: { readonly version: string; readonly commit: string } = PREVIOUS_RELEASE, log: (line: string) => void = () => undefined): string {
  const dir = previousReleaseDir(release);
  if (existsSync(join(dir, '.built'))) return dir;
  assertCommit(release.commit, REPO, release.version);
  mkdirSync(dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  // One build at a time (another Jest run on the machine): a lock directory, broken when its holder is gone.
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      const holder = Number(existsSync(join(lock, 'pid')) ? readFileSync(join(lock, 'pid'), 'utf8') : NaN);
      let alive = false;
      try {
        if (Number.isInteger(holder) && holder > 0) alive = process.kill(holder, 0);
      } catch {
        alive = false;
      }
      if (!alive) rmSync(lock, { recursive: true, force: true });
      else execFileSync('sleep', ['1']);
    }
    if (existsSync(join(dir, '.built'))) return dir;
  }
  try {
    if (existsSync(join(dir, '.built'))) return dir;
    const tmp = `${dir}.tmp`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const t0 = Date.now();
    execFileSync('bash', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'archive', REPO, release.commit, tmp], { stdio: 'inherit' });
    // npm and the build run on the Node 24 running the tests; install scripts are skipped (the release's own `node`
    // devDependency would download a Node of its own).
    const env = { ...process.env, PATH: `${join(tmp, 'node_modules', '.bin')}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false' };
    execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: tmp, env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 900_000 });
    execFileSync('npm', ['run', 'build'], { cwd: tmp, env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 900_000 });
    if (!existsSync(join(tmp, 'lib', 'src', 'cli', 'main.js'))) throw new Error(`the build of keystone-appcred ${release.version} wrote no lib/src/cli/main.js in ${tmp}`);
    writeFileSync(join(tmp, '.built'), `${release.commit}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    log(`keystone-appcred ${release.version} (${release.commit.slice(0, 7)}) built in ${((Date.now() - t0) / 1000).toFixed(1)} s -> ${dir}`);
    return dir;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Builds a release (or takes it from the cache), saying where and how long. */
function prepared(release: { readonly version: string; readonly commit: string }): string {
  const t0 = Date.now();
  const dir = buildPreviousRelease(release, (line) => process.stderr.write(`[test env] ${line}\n`));
  process.stderr.write(`[test env] release ${release.version} at ${dir} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
  return dir;
}

/** The component `previous-release`: keystone-appcred 0.1.0 built (or taken from the cache). */
export async function preparePreviousRelease(): Promise<Started> {
  const dir = prepared(PREVIOUS_RELEASE);
  return {
    env: { KAC_PREVIOUS_RELEASE_DIR: dir, KAC_PREVIOUS_RELEASE_VERSION: PREVIOUS_RELEASE.version, KAC_PREVIOUS_RELEASE_COMMIT: PREVIOUS_RELEASE.commit },
    logs: [],
    stop: async () => undefined,
  };
}

/** The component `release-0.2.0`: keystone-appcred 0.2.0 built from its commit (or taken from the cache), `KAC_RELEASE_0_2_0_DIR`. */
export async function prepareRelease020(): Promise<Started> {
  return { env: { KAC_RELEASE_0_2_0_DIR: prepared(RELEASE_0_2_0) }, logs: [], stop: async () => undefined };
}
