/**
 * Python for the Automation API tests, as a user has it: a non-root user (`nobody`, with a home of its own in the run's
 * work dir) makes a fresh venv and installs the Python SDK's wheel from the packed npm package, which root unpacked into
 * a directory the user cannot write (as a global npm install is); then runs the Pulumi CLI and the provider plugin from
 * directories it can read. The wheels of what the SDK needs at run time come from the cached `pulumi-python` build
 * (build-test-binaries.sh, from PyPI), so the user's pip installs them with `--no-index`, without a download.
 *
 * The tests run as root; every process of the user runs under `setpriv --reuid --regid --clear-groups`, which keeps
 * the environment it is given (and so `HOME`, `PATH` and the `PULUMI_*` variables the test chooses).
 */
import { place } from './pulumi-sdk';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { cacheDir, resolveBinary } from './binaries';
import { run, runOk, type RunResult } from './package';
import { progress } from './proc';

/** The user: `nobody`. */
export const USER = { name: 'nobody', uid: 65534, gid: 65534 } as const;

/** A non-root user's Python set-up: its home, its venv's python and the directories of the programs it runs. */
export interface UserPython {
  /** The user's home (owned by it). */
  readonly home: string;
  /** The venv's python. */
  readonly python: string;
  /** A directory with `node` (for the plugin's `#!/usr/bin/env node`) and the plugin, to put on PATH. */
  readonly bin: string;
  /** `<root>/bin/pulumi`, the CLI, for `auto.PulumiCommand(root=...)`. */
  readonly pulumiRoot: string;
  /** The file backend's directory (owned by the user). */
  readonly backend: string;
  /** The root-owned directory the package was unpacked into (`<dir>/lib/sdk/python/*.whl`). */
  readonly packageDir: string;
  /** Gives `path` (a file, or a directory with everything in it) to the user. */
  own(path: string): void;
  /** Runs `command` as the user with exactly `env` (plus HOME). */
  run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<RunResult>;
}

/** A directory of root's, readable by all (0755). */
function rootDir(path: string): string {
  mkdirSync(path, { recursive: true });
  chmodSync(path, 0o755);
  return path;
}

/** A directory the user owns. */
function userDir(path: string): string {
  mkdirSync(path, { recursive: true });
  chownSync(path, USER.uid, USER.gid);
  chmodSync(path, 0o755);
  return path;
}

/** The user's view of `command`: `setpriv` with the user's ids and no supplementary groups. */
function asUser(command: string, args: readonly string[]): [string, string[]] {
  return ['setpriv', [`--reuid=${USER.uid}`, `--regid=${USER.gid}`, '--clear-groups', '--', command, ...args]];
}

/** `python`'s `major.minor`, as the user runs it, or undefined when the user cannot reach it (a path under /root). */
function versionAsUser(python: string, env: NodeJS.ProcessEnv): string | undefined {
  const [test, testArgs] = asUser('sh', ['-c', 'test -x "$1"', 'sh', python]);
  if (spawnSync(test, testArgs, { env, cwd: '/' }).status !== 0) return undefined;
  const [command, args] = asUser(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])']);
  const result = spawnSync(command, args, { encoding: 'utf8', env, cwd: '/' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/**
 * The interpreter the user makes its venv with: the system's `/usr/bin/python3`, as a user has it, else the one the
 * cached venv was made from when the user may run it (not under /root); either of the cached venv's `major.minor`, as
 * the cached wheels are built for it. Throws naming both when neither fits.
 */
function baseInterpreter(venvPython: string, env: NodeJS.ProcessEnv): string {
  const probe = spawnSync(venvPython, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2]); print(sys.base_prefix)'], { encoding: 'utf8' });
  if (probe.status !== 0) throw new Error(`${venvPython} does not run: ${probe.stderr}`);
  const [wanted, basePrefix] = probe.stdout.trim().split('\n');
  const candidates = ['/usr/bin/python3', join(basePrefix, 'bin', 'python3')];
  for (const candidate of candidates) if (existsSync(candidate) && versionAsUser(candidate, env) === wanted) return candidate;
  throw new Error(`no Python ${wanted} that ${USER.name} may run (tried ${candidates.join(', ')}): the wheels in the cache are for ${wanted}`);
}

/**
 * Sets up the user (see the module comment) in a new directory of the run: unpacks the packed package's `lib/sdk/python`
 * and `lib/plugin` as root, makes the venv and `pip install`s the wheel as the user, checks that nothing was written
 * beside the wheel, and links the CLI, node and the plugin where the user can run them.
 */
export async function userPythonWithWheel(tarball: string, plugin: string): Promise<UserPython> {
  const workDir = process.env.KAC_TEST_WORKDIR ?? '/tmp';
  // The run's work dir is root's (0700): the user may pass through it to its own directory, not list it.
  chmodSync(workDir, 0o711);
  const root = rootDir(mkdtempSync(join(workDir, 'python-user-')));
  const packageDir = rootDir(join(root, 'npm-global'));
  await runOk('tar', ['-xzf', tarball, '-C', packageDir, '--strip-components=1', 'package/lib/sdk/python'], { cwd: root });
  const wheels = readdirSync(join(packageDir, 'lib', 'sdk', 'python')).filter((f) => f.endsWith('.whl'));
  if (wheels.length !== 1) throw new Error(`the packed package has ${wheels.length} wheels in lib/sdk/python (${wheels.join(', ')}), not one`);
  const wheel = join(packageDir, 'lib', 'sdk', 'python', wheels[0]);

  const home = userDir(join(root, 'home'));
  const backend = userDir(join(root, 'backend'));
  const bin = rootDir(join(root, 'bin'));
  place(realpathSync(process.execPath), join(bin, 'node'));
  place(plugin, join(bin, basename(plugin)));
  const pulumiRoot = rootDir(join(root, 'pulumi-root'));
  rootDir(join(pulumiRoot, 'bin'));
  place(resolveBinary('pulumi').path, join(pulumiRoot, 'bin', 'pulumi'));
  const wheelhouse = rootDir(join(root, 'wheels'));
  const cached = join(cacheDir('pulumi-python'), 'wheels');
  resolveBinary('pulumi-python'); // built on first use, wheels and all
  for (const file of readdirSync(cached)) place(join(cached, file), join(wheelhouse, file));

  const baseEnv: NodeJS.ProcessEnv = { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8' };
  const runAs = (command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<RunResult> => {
    const [c, a] = asUser(command, args);
    return run(c, a, { cwd: options.cwd, env: { ...baseEnv, ...options.env, HOME: home }, timeoutMs: options.timeoutMs });
  };
  const base = baseInterpreter(resolveBinary('pulumi-python').path, baseEnv);
  progress(`pulumi-python as ${USER.name}: a venv of ${base}, the wheel ${wheels[0]} from the packed package`);
  const venv = join(home, 'venv');
  const before = readdirSync(dirname(wheel)).sort();
  const t0 = Date.now();
  for (const [command, args] of [
    [base, ['-m', 'venv', venv]],
    [join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-index', '--find-links', wheelhouse, wheel]],
  ] as const) {
    const result = await runAs(command, args, { cwd: home, timeoutMs: 300_000 });
    if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} as ${USER.name} failed (${String(result.code)}):\n${result.stdout}${result.stderr}`);
  }
  progress(`pulumi-python as ${USER.name}: venv and pip install in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const after = readdirSync(dirname(wheel)).sort();
  if (after.join() !== before.join()) throw new Error(`pip wrote into the package's directory: ${after.join(', ')}`);
  const own = (path: string): void => {
    chownSync(path, USER.uid, USER.gid);
    for (const entry of statSync(path).isDirectory() ? readdirSync(path) : []) own(join(path, entry));
  };
  return { home, python: join(venv, 'bin', 'python'), bin, pulumiRoot, backend, packageDir, own, run: runAs };
}
