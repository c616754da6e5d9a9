/**
 * Process helpers shared by the starters of the real test components (kube.ts, openbao.ts, pulumi.ts): free ports,
 * servers started with their output in a log file, readiness polling, log tails and a clean stop.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1 (asked from the kernel, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/** The last `lines` lines of a log file ('' when it does not exist). */
export function tail(file: string, lines = 40): string {
  if (!existsSync(file)) return '';
  const all = readFileSync(file, 'utf8').split('\n');
  return all.slice(Math.max(0, all.length - lines - 1)).join('\n');
}

/** A server process started by {@link startServer}. */
export interface Server {
  readonly name: string;
  readonly process: ChildProcess;
  readonly log: string;
  /** Exit code or signal once the process has ended, else undefined. */
  exited(): string | undefined;
  /** Peak resident set size in KiB (VmHWM), read while the process runs; 0 when unknown. */
  peakRssKiB(): number;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

export interface ServerOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

/** Starts `bin args` with stdout and stderr appended to `log`. */
export function startServer(name: string, bin: string, args: readonly string[], log: string, options: ServerOptions = {}): Server {
  const fd = openSync(log, 'a');
  let child: ChildProcess;
  try {
    child = spawn(bin, args, { stdio: ['ignore', fd, fd], env: options.env ?? process.env, cwd: options.cwd });
  } finally {
    closeSync(fd);
  }
  let exit: string | undefined;
  let peak = 0;
  const gone = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = signal ?? String(code);
      resolve();
    });
    child.once('error', (error) => {
      exit = `spawn error: ${error.message}`;
      resolve();
    });
  });
  const readPeak = (): number => {
    if (child.pid === undefined || exit !== undefined) return peak;
    try {
      const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]));
    } catch {
      // The process is gone.
    }
    return peak;
  };
  return {
    name,
    process: child,
    log,
    exited: () => exit,
    peakRssKiB: readPeak,
    async stop(graceMs = 10_000): Promise<void> {
      readPeak();
      if (exit !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await gone;
      clearTimeout(timer);
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` until it returns true. Fails with the server's log tail when the server exits or `timeoutMs` passes.
 */
export async function waitUntil(server: Server, what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  for (;;) {
    const exit = server.exited();
    if (exit !== undefined) {
      throw new Error(`${server.name} exited (${exit}) before ${what}; last lines of ${server.log}:\n${tail(server.log)}`);
    }
    try {
      if (await probe()) return;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${server.name}: ${what} not reached in ${timeoutMs} ms${lastError ? ` (last error: ${lastError})` : ''}; ` +
          `last lines of ${server.log}:\n${tail(server.log)}`,
      );
    }
    await sleep(200);
  }
}

/** Writes one progress line of the test environment to stderr. */
export function progress(line: string): void {
  process.stderr.write(`[test env] ${line}\n`);
}
