/**
 * A throwaway, real Keystone for tests, the demo and the benchmarks — never for production code paths.
 *
 * It runs Debian's `python3-keystone` (Zed) from a temp dir with the settings measured in the project's Keystone notes:
 * SQLite in WAL mode (without it, writes fail sporadically with "database is locked"), an in-process dogpile memory cache
 * (without it every authenticated request runs hundreds of SQL queries), Fernet token/receipt/credential keys, and bcrypt
 * at a configurable, low cost (the cost hashes user passwords AND application-credential secrets). It is served by the
 * stdlib `wsgiref` server — one process, one thread (SQLite and the per-process cache are only correct that way; a bench
 * may ask for more processes) — with a listen backlog of 128 instead of wsgiref's 5, which drops SYNs under bursts of
 * parallel logins.
 */
import { execFile, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { PYTHON, SERVER_SCRIPT, keystoneConf, passwords, pythonEnv } from './config';
import { ensureKeystoneInstalled } from './install';

/** Options of {@link startLocalKeystone}. */
export interface LocalKeystoneOptions {
  /** Directory for the configuration, keys, database and log. Created if missing; removed by `stop()`. */
  readonly dir: string;
  /** TCP port on 127.0.0.1. @default a free port chosen by the OS */
  readonly port?: number;
  /**
   * bcrypt cost for user passwords and application-credential secrets. Low for tests; state it in any benchmark.
   * @default 4
   */
  readonly bcryptRounds?: number;
  /** Receives progress lines (setup steps and their durations). @default silent */
  readonly log?: (line: string) => void;
  /** Install Debian's python3-keystone with apt-get when it is missing (needs root). @default false */
  readonly install?: boolean;
  /** Milliseconds to wait for setup and start until `GET /v3` answers 200. @default 120000 */
  readonly startTimeoutMs?: number;
  /**
   * Server processes, each one thread, accepting from one socket as uWSGI's workers do: for benches of how Keystone
   * shares its workers only. Each has its own memory cache, so a credential deleted through one may still authenticate
   * through another for the cache's lifetime, and the tests never ask for more than one.
   * @default 1
   */
  readonly processes?: number;
}

/** A running local Keystone. */
export interface LocalKeystone {
  /** Identity endpoint, ending in `/v3`, e.g. `http://127.0.0.1:35123/v3`. */
  readonly authUrl: string;
  /** Password of the bootstrap admin, random per instance. */
  readonly adminPassword: string;
  readonly adminUser: 'admin';
  readonly adminProject: 'admin';
  /** Domain (by name) of the admin user and project. */
  readonly domain: 'Default';
  /** bcrypt cost the instance hashed passwords and secrets with when it started ({@link LocalKeystone.setBcryptRounds} changes it). */
  readonly bcryptRounds: number;
  /** Server processes (each one thread). */
  readonly processes: number;
  /** Process id of the server (also its process group id). */
  readonly pid: number;
  /** Setup and server log (stdout and stderr, including the access log); inside `dir`, so `stop()` removes it. */
  readonly logFile: string;
  /** Milliseconds the `keystone-manage` steps took (db_sync, keys, bootstrap), including one import of keystone. */
  readonly setupMs: number;
  /** Milliseconds from the end of setup until `GET /v3` answered 200 (the server's cold start). */
  readonly startMs: number;
  /** The process ids of the server processes (the first is {@link LocalKeystone.pid}). */
  serverPids(): number[];
  /**
   * Sets the bcrypt cost of the hashes made from now on, in every server process (the hashes made before keep theirs):
   * a bench sets up at a low cost and measures at the real one. Resolves once every process said so in its log.
   */
  setBcryptRounds(rounds: number): Promise<void>;
  /** Stops the server (its whole process group) and removes `dir`. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * One Python process sets Keystone up and then serves it. Importing keystone costs ~2.5 s of CPU, so the script imports
 * `keystone.cmd.cli` once and runs each `keystone-manage` command (`cli.main`, exactly what the executable calls) in a
 * forked child that inherits the imports: the key steps run alongside `db_sync`, SQLite switches to WAL right after it,
 * then `bootstrap`. The parent never parses the CLI configuration itself, so it can go on to serve
 * `initialize_public_application()` (what `keystone-wsgi-public` serves) on the stdlib wsgiref server: one process, one
 * thread, 127.0.0.1, backlog 128. The plan (including the admin password) arrives as JSON on stdin, so no secret shows
 * up in a command line or in the process environment. A watchdog thread (it serves no requests) exits when the Node
 * parent is gone, so a crashed test run leaves no Keystone behind.
 */

function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePromise(port));
    });
  });
}

function currentGroupName(): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile('id', ['-gn'], (error, stdout) => (error ? reject(error) : resolvePromise(stdout.trim())));
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Sets up and starts a Keystone on 127.0.0.1 and resolves once `GET /v3` answers 200.
 *
 * Setup runs `keystone-manage db_sync` (switching SQLite to WAL right after), `fernet_setup` (token and receipt keys) and
 * `credential_setup` owned by the current user and group, then `bootstrap` with a random admin password from
 * {@link passwords} (alphanumeric, starting with a letter, so `--bootstrap-password` never reads it as an option): user
 * `admin`, project `admin`, role `admin` (bootstrap also creates `member` and `reader`), region `RegionOne` and identity
 * endpoints at the instance's URL.
 *
 * Requires Debian's `python3-keystone`; it never installs anything itself.
 */
export async function startLocalKeystone(options: LocalKeystoneOptions): Promise<LocalKeystone> {
  const bcryptRounds = options.bcryptRounds ?? 4;
  if (!validRounds(bcryptRounds)) throw new Error(`local keystone: bcryptRounds (${bcryptRounds}) must be an integer from 4 to 31`);
  const processes = options.processes ?? 1;
  if (!Number.isInteger(processes) || processes < 1 || processes > 64) throw new Error(`local keystone: processes (${processes}) must be an integer from 1 to 64`);
  const log = options.log ?? ((): void => undefined);
  const adminPassword = passwords.generate();
  await ensureKeystoneInstalled(options.install ?? false, options.log);

  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    const port = options.port ?? (await freePort());
    const authUrl = `http://127.0.0.1:${port}/v3`;
    const config = join(dir, 'keystone.conf');
    writeFileSync(config, keystoneConf(dir, bcryptRounds));
    const scriptFile = join(dir, 'serve-keystone.py');
    writeFileSync(scriptFile, SERVER_SCRIPT);
    const plan = {
      config,
      database: join(dir, 'keystone.db'),
      user: userInfo().username,
      group: await currentGroupName(),
      password: adminPassword,
      url: authUrl,
      port,
      processes,
    };

    const logFile = join(dir, 'keystone-server.log');
    const logFd = openSync(logFile, 'a');
    const spawnedAt = Date.now();
    const child = spawn(PYTHON, [scriptFile], {
      env: pythonEnv(dir),
      stdio: ['pipe', logFd, logFd],
      detached: true,
    });
    closeSync(logFd);
    child.stdin?.end(`${JSON.stringify(plan)}\n`);
    child.unref();
    const pid = child.pid;
    if (pid === undefined) throw new Error('local keystone: the server process did not start');
    let exited: string | undefined;
    const exitPromise = new Promise<void>((done) => {
      child.once('exit', (code, signal) => {
        exited = signal ?? `exit code ${code}`;
        done();
      });
    });

    let stopped = false;
    const stop = async (): Promise<void> => {
      if (stopped) return;
      stopped = true;
      if (exited === undefined) {
        killGroup(pid, 'SIGTERM');
        if (!(await settlesWithin(exitPromise, 5000))) {
          killGroup(pid, 'SIGKILL');
          await settlesWithin(exitPromise, 2000);
        }
      }
      removeDir();
    };

    // Every process listening, not just the first to answer.
    const listening = () => (readFileSafe(logFile).match(/KAC keystone listening on /g) ?? []).length;
    try {
      await waitUntilServing(authUrl, options.startTimeoutMs ?? 120_000, () => exited);
      for (const deadline = Date.now() + (options.startTimeoutMs ?? 120_000); listening() < processes; await delay(100)) {
        if (Date.now() > deadline) throw new Error(`local keystone: ${listening()} of ${processes} server processes listening`);
      }
    } catch (error) {
      const logTail = tail(readFileSafe(logFile), 30);
      await stop();
      throw new Error(`${(error as Error).message}\n--- keystone log tail ---\n${logTail}`);
    }
    const totalMs = Date.now() - spawnedAt;
    const setupMs = Number(/KAC setup finished after (\d+) ms/.exec(readFileSafe(logFile))?.[1] ?? Number.NaN);
    const startMs = totalMs - setupMs;
    log(`keystone at ${authUrl}: setup ${setupMs} ms, server start ${startMs} ms (bcrypt cost ${bcryptRounds})`);

    return {
      authUrl,
      adminPassword,
      adminUser: 'admin',
      adminProject: 'admin',
      domain: 'Default',
      bcryptRounds,
      processes,
      pid,
      logFile,
      setupMs,
      startMs,
      serverPids: () => [...readFileSafe(logFile).matchAll(/KAC keystone listening on \S+ \(process (\d+)\)/g)].map((m) => Number(m[1])),
      setBcryptRounds: async (rounds: number) => {
        if (!validRounds(rounds)) throw new Error(`local keystone: bcryptRounds (${rounds}) must be an integer from 4 to 31`);
        const said = () => (readFileSafe(logFile).match(new RegExp(`KAC bcrypt rounds ${rounds} in `, 'g')) ?? []).length;
        const before = said();
        writeFileSync(join(dir, 'bcrypt-rounds'), String(rounds));
        killGroup(pid, 'SIGUSR1');
        for (const deadline = Date.now() + 10_000; said() < before + processes; await delay(50)) {
          if (Date.now() > deadline) throw new Error(`local keystone: ${said() - before} of ${processes} server processes took bcrypt cost ${rounds}`);
        }
      },
      stop,
    };
  } catch (error) {
    removeDir();
    throw error;
  }
}

function validRounds(rounds: number): boolean {
  return Number.isInteger(rounds) && rounds >= 4 && rounds <= 31;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Whether `promise` settles within `ms`; leaves no timer behind either way. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((done) => {
    timer = setTimeout(() => done(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

async function waitUntilServing(authUrl: string, timeoutMs: number, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = exited();
    if (status !== undefined) throw new Error(`local keystone: the server exited (${status}) before serving ${authUrl}`);
    try {
      const response = await fetch(authUrl, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`local keystone: GET ${authUrl} did not answer 200 within ${timeoutMs} ms`);
    await delay(100);
  }
}

function tail(text: string, lines: number): string {
  return text.split('\n').slice(-lines).join('\n');
}
