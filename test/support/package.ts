/**
 * The package as a user gets it: the project built, packed with `npm pack` into a tarball, and installed with
 * `npm install <tarball>` into a temporary project outside the repository.
 *
 * The tarball is packed once per test run (a lock directory in the run's work dir, or in the system temp dir without
 * one), after the build `prepack` runs. npm runs on the Node 24 that runs Jest.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { buildArtifacts, bundlePlugin } from '../../tools/plugin';
import { withLock } from '../../tools/lock';
import { pruneLib } from '../../tools/prune-lib';

/** The repository root. */
export const REPO = resolve(__dirname, '..', '..');

/** The package's `exports` map, as package.json has it. */
export type ExportsMap = Record<string, string | { readonly types: string; readonly default: string }>;

/** package.json of the repository. */
export function packageJson(): { name: string; version: string; exports: ExportsMap; files: string[]; bin: Record<string, string>; scripts: Record<string, string> } {
  return JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as ReturnType<typeof packageJson>;
}

/** Every file an `exports` entry or `bin` names, relative to the package root (no `./`). */
export function exportTargets(): string[] {
  const pkg = packageJson();
  const targets = Object.values(pkg.exports).flatMap((t) => (typeof t === 'string' ? [t] : [t.types, t.default]));
  return [...new Set([...targets, ...Object.values(pkg.bin)].map((p) => p.replace(/^\.\//, '')))];
}

/** An environment whose `node` (for npm, npx and bin scripts) is the Node 24 running Jest. */
export function nodeEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false', ...extra };
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program; never throws on a non-zero exit (check `code`). */
export function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string }): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, [...args], { cwd: options.cwd, env: options.env ?? nodeEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // A child that exits before reading its input (npm, kubectl) closes the pipe: EPIPE then is no error of the run.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** Like {@link run}, but rejects on a non-zero exit with the command and its output. */
export async function runOk(command: string, args: readonly string[], options: Parameters<typeof run>[2]): Promise<string> {
  const result = await run(command, args, options);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} (in ${options.cwd}) failed (${String(result.code)}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/**
 * The lock every writer and every packer of the repository's lib/ takes, so that a Jest worker never reads (packs) a
 * lib/ file another worker is rewriting (tsc writes a file in place: a reader could see it half-written, "unexpected
 * EOF"). A directory under .tmp/ (git ignores it), with the holder's pid in it: a holder that died leaves a lock the
 * next taker breaks.
 */
export const BUILD_LOCK = join(REPO, '.tmp', 'build.lock');

/** How long a test waits for a lock of the build or of a cache (another worker's build, pack or install). */
export const LOCK_WAIT_MS = 900_000;

/** Runs `body` holding {@link BUILD_LOCK}. Not reentrant: `body` must not take it again. */
export function withBuildLock<T>(body: () => Promise<T>): Promise<T> {
  return withLock(BUILD_LOCK, body, { timeoutMs: LOCK_WAIT_MS });
}

/**
 * Builds the project as `npm run build` does (`tsc -p tsconfig.json`, then the provider plugin's bundle) and checks
 * every export target and bin exists and is newer than the build's start. tsc emits even when another file of the
 * tree has a type error, so its exit code is not the criterion. The caller holds {@link BUILD_LOCK}
 * ({@link buildProject} takes it).
 */
function buildUnlocked(): void {
  const start = Date.now();
  const result = spawnSync(join(REPO, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: REPO, encoding: 'utf8', env: nodeEnv() });
  pruneLib(REPO);
  bundlePlugin();
  for (const target of exportTargets().filter((t) => t.startsWith('lib/'))) {
    const path = join(REPO, target);
    if (!existsSync(path) || statSync(path).mtimeMs < start - 2_000) {
      throw new Error(`the build did not write ${target}:\n${result.stdout}${result.stderr}`);
    }
  }
}

/** {@link buildUnlocked} under {@link BUILD_LOCK}. */
export function buildProject(): Promise<void> {
  return withBuildLock(async () => buildUnlocked());
}

/**
 * Where {@link packedTarball} packs: in the run's work dir (removed with it), else in the system temp dir, one per Jest
 * run (the workers' parent process); a test file of a run without a work dir removes it.
 */
export function packDir(): string {
  return process.env.KAC_TEST_WORKDIR ? join(process.env.KAC_TEST_WORKDIR, 'kac-package') : join(tmpdir(), `kac-package-${String(process.ppid)}`);
}

/**
 * The path of `keystone-appcred-<version>.tgz`, built and packed with `npm pack` once per test run and reused by every
 * test file of the run.
 */
export async function packedTarball(): Promise<string> {
  const dir = packDir();
  const pkg = packageJson();
  const tarball = join(dir, `${pkg.name}-${pkg.version}.tgz`);
  return withLock(`${dir}.lock`, async () => {
    if (existsSync(tarball)) return tarball;
    mkdirSync(dir, { recursive: true });
    // What `prepack` runs, without failing on a type error in a file the package does not ship (a test in progress
    // elsewhere in the tree): tsc emits anyway, and buildUnlocked checks that every export target was written; then the
    // SDK artifacts (the Python wheel and sdist) into lib/sdk/. Under the build lock, so no other worker rewrites lib/
    // while npm reads it.
    await withBuildLock(async () => {
      buildUnlocked();
      buildArtifacts();
      const packed = await runOk('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: REPO, timeoutMs: 600_000 });
      // `npm pack --json` prints nothing but its JSON (prepack's tools write their paths to stderr).
      JSON.parse(packed);
    });
    if (!existsSync(tarball)) throw new Error(`npm pack wrote no ${tarball} (${readdirSync(dir).join(', ')})`);
    return tarball;
  }, { timeoutMs: LOCK_WAIT_MS });
}

/**
 * A new project directory outside the repository (in the run's work dir, else the system temp dir) with a private
 * package.json. Returns its path.
 */
export function newProject(name: string, files: Readonly<Record<string, string>> = {}): string {
  const parent = process.env.KAC_TEST_WORKDIR ?? tmpdir();
  const dir = mkdtempSync(join(parent, `kac-${name}-`));
  if (dir.startsWith(`${REPO}/`)) throw new Error(`${dir} is inside the repository`);
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: `kac-${name}`, version: '1.0.0', private: true }, null, 2)}\n`);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

/**
 * `npm install <specs...>` in `dir`, preferring npm's cache to the registry (`--prefer-offline`: the registry is asked
 * only for what the cache lacks). `npm install --offline` is not enough: the cache holds the tarballs `npm ci` fetched,
 * not the registry documents a version range needs. `flags` go before the specs (e.g. `--omit=dev`).
 */
export async function npmInstall(dir: string, specs: readonly string[], flags: readonly string[] = []): Promise<void> {
  await runOk('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...flags, ...specs], { cwd: dir, timeoutMs: 600_000 });
}

/**
 * Links packages of the repository's node_modules into the project's (after every `npm install`, which would remove
 * them as extraneous): the peer dependencies the repository already has, at the versions it tests with.
 */
export function linkFromRepository(dir: string, packages: readonly string[]): void {
  for (const name of packages) {
    const target = join(dir, 'node_modules', name);
    if (existsSync(target)) throw new Error(`${target} exists already (installed by npm?); not linking ${name}`);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(join(REPO, 'node_modules', name), target, 'dir');
  }
}

/** The version of a package in the repository's node_modules. */
export function repositoryVersion(name: string): string {
  return (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}
