/**
 * Prepares the real Pulumi CLI for the tests: the CLI built from github.com/pulumi/pulumi/pkg/v3 (pinned to the
 * @pulumi/pulumi npm version the project installs), a Node.js language host, the `pulumi-nodejs` dynamic-provider
 * plugin and the Pulumi YAML language host (github.com/pulumi/pulumi-yaml), all in one directory; a local file backend in the run's temp dir; a test passphrase; no update checks and no
 * plugin downloads.
 *
 * Variables it exports (merged into the workers' environment):
 *   KAC_PULUMI            path of the `pulumi` executable
 *   KAC_PULUMI_BIN_DIR    directory holding pulumi, pulumi-language-nodejs, pulumi-resource-pulumi-nodejs and
 *                         pulumi-language-yaml (put it first on PATH for any process that runs pulumi; {@link pulumiEnv}
 *                         does)
 *   KAC_PULUMI_ROOT       its parent (KAC_PULUMI_BIN_DIR = $KAC_PULUMI_ROOT/bin), for the Automation API:
 *                         `PulumiCommand.get({ root: process.env.KAC_PULUMI_ROOT, skipVersionCheck: true })`
 *   KAC_PULUMI_HOME, KAC_PULUMI_BACKEND_URL, KAC_PULUMI_CONFIG_PASSPHRASE  the same values as the PULUMI_* below
 *   PULUMI_HOME, PULUMI_BACKEND_URL (file://…), PULUMI_CONFIG_PASSPHRASE, PULUMI_SKIP_UPDATE_CHECK=true,
 *   PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK=true, PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true,
 *   PULUMI_NODEJS_NODE    the Node.js executable (Node 24) the language host and the dynamic-provider plugin run
 *
 * Helpers for tests: {@link pulumiEnv}, {@link runPulumi}, {@link copyPulumiProgram}.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { cacheDir, PINNED_VERSIONS, resolveBinaries } from './binaries';
import type { Started, Starter } from './starter';
import { progress } from './proc';

/** The passphrase of the test stacks' secrets provider. Not a secret. */
export const TEST_PASSPHRASE = 'kac-test-passphrase';

const PROGRAMS = ['pulumi', 'pulumi-language-nodejs', 'pulumi-resource-pulumi-nodejs', 'pulumi-language-yaml'] as const;

/** Hard link, or copy where a link is impossible. */
function place(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

/**
 * One directory `<root>/bin` with the CLI and its two plugins as real files: the CLI finds bundled plugins next to its
 * own (symlink-resolved) executable, and also looks on PATH; both then name the same file, so it prints no "using … from
 * $PATH" warning. The `<root>/bin/pulumi` layout is what the Automation API's `PulumiCommand.get({ root })` expects.
 * Returns the root.
 */
function pulumiRoot(paths: Record<(typeof PROGRAMS)[number], string>): string {
  const key = PROGRAMS.map((p) => dirname(paths[p])).join('+');
  const digest = createHash('sha256').update(key).digest('hex').slice(0, 12);
  const root = join(dirname(cacheDir('pulumi')), `pulumi-root-${PINNED_VERSIONS.pulumi}-${digest}`);
  if (PROGRAMS.every((p) => existsSync(join(root, 'bin', p)))) return root;
  const tmp = `${root}.tmp.${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(join(tmp, 'bin'), { recursive: true });
  for (const p of PROGRAMS) place(paths[p], join(tmp, 'bin', p));
  rmSync(root, { recursive: true, force: true });
  renameSync(tmp, root);
  return root;
}

/** The environment for a process that runs pulumi: the current one (or `base`), the test variables, PATH with the bin dir. */
export function pulumiEnv(extra: NodeJS.ProcessEnv = {}, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const bin = base.KAC_PULUMI_BIN_DIR;
  if (!bin) throw new Error('KAC_PULUMI_BIN_DIR is not set: declare `@needs pulumi` in the test file');
  return {
    ...base,
    PATH: `${bin}:${dirname(process.execPath)}:${base.PATH ?? ''}`,
    PULUMI_HOME: base.KAC_PULUMI_HOME,
    PULUMI_BACKEND_URL: base.KAC_PULUMI_BACKEND_URL,
    PULUMI_CONFIG_PASSPHRASE: base.KAC_PULUMI_CONFIG_PASSPHRASE,
    PULUMI_SKIP_UPDATE_CHECK: 'true',
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: 'true',
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
    PULUMI_NODEJS_NODE: process.execPath,
    ...extra,
  };
}

export interface PulumiResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunPulumiOptions {
  /** The project directory (where Pulumi.yaml is). */
  readonly cwd: string;
  /** Extra environment variables. */
  readonly env?: NodeJS.ProcessEnv;
  /** Hard timeout; the process is killed after it. Default 180 s. */
  readonly timeoutMs?: number;
}

/** Runs `pulumi ...args` with {@link pulumiEnv}; never throws on a non-zero exit (check `code`). */
export function runPulumi(args: readonly string[], options: RunPulumiOptions): Promise<PulumiResult> {
  const exe = process.env.KAC_PULUMI;
  if (!exe) throw new Error('KAC_PULUMI is not set: declare `@needs pulumi` in the test file');
  return new Promise((resolvePromise, reject) => {
    const child = spawn(exe, [...args], { cwd: options.cwd, env: pulumiEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 180_000);
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

/**
 * Copies a Pulumi program (a directory with Pulumi.yaml and plain CommonJS .js) into a fresh temp dir under `parent`
 * (default: the run's work dir) and links the repository's node_modules beside it, so `require('@pulumi/pulumi')`
 * resolves to the project's copy while the stack files pulumi writes stay out of the repository. Returns the new dir.
 */
export function copyPulumiProgram(fixtureDir: string, parent: string = process.env.KAC_TEST_WORKDIR ?? '/tmp'): string {
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, 'pulumi-program-'));
  cpSync(fixtureDir, dir, { recursive: true });
  symlinkSync(resolve(__dirname, '..', '..', 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

export const preparePulumi: Starter = async (workDir: string): Promise<Started> => {
  mkdirSync(workDir, { recursive: true });
  const bins = resolveBinaries(PROGRAMS);
  for (const p of PROGRAMS) progress(`pulumi: ${p} from ${bins[p].source}: ${bins[p].path}`);
  const root = pulumiRoot({
    pulumi: bins.pulumi.path,
    'pulumi-language-nodejs': bins['pulumi-language-nodejs'].path,
    'pulumi-resource-pulumi-nodejs': bins['pulumi-resource-pulumi-nodejs'].path,
    'pulumi-language-yaml': bins['pulumi-language-yaml'].path,
  });
  const bin = join(root, 'bin');
  const home = join(workDir, 'home');
  const backend = join(workDir, 'backend');
  mkdirSync(home, { recursive: true });
  mkdirSync(backend, { recursive: true });
  const env: Record<string, string> = {
    KAC_PULUMI: join(bin, 'pulumi'),
    KAC_PULUMI_BIN_DIR: bin,
    KAC_PULUMI_ROOT: root,
    KAC_PULUMI_VERSION: PINNED_VERSIONS.pulumi,
    KAC_PULUMI_HOME: home,
    KAC_PULUMI_BACKEND_URL: `file://${backend}`,
    KAC_PULUMI_CONFIG_PASSPHRASE: TEST_PASSPHRASE,
    PULUMI_HOME: home,
    PULUMI_BACKEND_URL: `file://${backend}`,
    PULUMI_CONFIG_PASSPHRASE: TEST_PASSPHRASE,
    PULUMI_SKIP_UPDATE_CHECK: 'true',
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: 'true',
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
    PULUMI_NODEJS_NODE: process.execPath,
  };
  // Log in to the file backend once (writes PULUMI_HOME/credentials.json) and check that the CLI runs.
  const login = await new Promise<PulumiResult>((resolvePromise, reject) => {
    const child = spawn(env.KAC_PULUMI, ['login', env.PULUMI_BACKEND_URL], {
      cwd: workDir,
      env: pulumiEnv({}, { ...process.env, ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout: out, stderr: '' });
    });
  });
  if (login.code !== 0) throw new Error(`pulumi login ${env.PULUMI_BACKEND_URL} failed (${String(login.code)}):\n${login.stdout}`);
  return {
    env,
    logs: [],
    stop: async () => {
      // The backend and PULUMI_HOME live in the run's work dir, which the run state removes.
    },
  };
};

/** The stack config the e2e programs read: the rotation, and `app`'s connection with the password as a secret. */
export interface StackSettings {
  readonly interval: string;
  readonly gracePeriod?: string;
  readonly authUrl: string;
  readonly userId: string;
  readonly projectId: string;
  readonly password: string;
}

/**
 * `pulumi stack init` and the config of {@link StackSettings}, through the test's own `ok` (which adds the stack and
 * its environment, and fails on a non-zero exit).
 */
export async function configureStack(ok: (args: string[]) => Promise<unknown>, settings: StackSettings): Promise<void> {
  await ok(['stack', 'init']);
  await ok(['config', 'set', 'interval', settings.interval]);
  if (settings.gracePeriod !== undefined) await ok(['config', 'set', 'gracePeriod', settings.gracePeriod]);
  await ok(['config', 'set', 'authUrl', settings.authUrl]);
  await ok(['config', 'set', 'userId', settings.userId]);
  await ok(['config', 'set', 'projectId', settings.projectId]);
  await ok(['config', 'set', '--secret', 'password', '--', settings.password]);
}

/**
 * The environment that gives `pulumi` (and so the provider, either face) a Keystone user's connection by the `OS_*`
 * variables (`OS_CLOUD` emptied, so no clouds.yaml of the machine interferes) and the test OpenBao by `BAO_ADDR` and
 * `BAO_TOKEN`. `authUrl`: another endpoint for the same Keystone (a recording proxy). @default the user's
 */
export function keystoneAndBaoEnv(user: { readonly authUrl: string; readonly userId: string; readonly password: string; readonly projectId: string }, authUrl: string = user.authUrl): NodeJS.ProcessEnv {
  return {
    OS_CLOUD: '',
    OS_AUTH_URL: authUrl,
    OS_USER_ID: user.userId,
    OS_PASSWORD: user.password,
    OS_PROJECT_ID: user.projectId,
    BAO_ADDR: process.env.KAC_BAO_ADDR,
    BAO_TOKEN: process.env.KAC_BAO_TOKEN,
  };
}

/** How a {@link runPulumiToHalt} ended. */
export interface HaltedResult extends PulumiResult {
  /** The provider reached the halt point and the whole `pulumi` process group was killed there with SIGKILL. */
  readonly halted: boolean;
}

/**
 * Runs `pulumi ...args` as {@link runPulumi} does, with the provider's halt point `point` set (`<verb>:<point>`,
 * src/pulumi/halt.ts): once the provider reaches it, the whole process group of `pulumi` (the CLI, its language host,
 * the program and the provider plugins) is killed with SIGKILL, as a CI runner killed mid-run leaves it. A run that
 * ends without reaching the point resolves with `halted: false`.
 */
export function runPulumiToHalt(args: readonly string[], options: RunPulumiOptions & { readonly point: string }): Promise<HaltedResult> {
  const exe = process.env.KAC_PULUMI;
  if (!exe) throw new Error('KAC_PULUMI is not set: declare `@needs pulumi` in the test file');
  const marker = join(mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'halt-')), 'reached');
  const env = pulumiEnv({ ...options.env, KAC_TEST_PULUMI_HALT: options.point, KAC_TEST_PULUMI_HALT_FILE: marker });
  return new Promise((resolvePromise, reject) => {
    const child = spawn(exe, [...args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let halted = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const kill = () => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // already gone
      }
      killHalted(marker);
    };
    const poll = setInterval(() => {
      if (!existsSync(marker)) return;
      halted = true;
      clearInterval(poll);
      kill();
    }, 50);
    const timer = setTimeout(kill, options.timeoutMs ?? 180_000);
    child.once('error', (error) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      killHalted(marker);
      resolvePromise({ code, stdout, stderr, halted });
    });
  });
}

/**
 * SIGKILLs, by pid, any process this run started with `marker` as its halt file that outlived the process group's kill
 * (a plugin the CLI started in a group of its own): a halted provider never exits by itself.
 */
function killHalted(marker: string): void {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`KAC_TEST_PULUMI_HALT_FILE=${marker}`)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone, or not ours to read
    }
  }
}
