/**
 * A lock between the processes that share a cache or a build (several checkouts on one machine, Jest workers, CI beside
 * a developer): a directory, which only one process can make, holding the holder's pid. The holder removes it when its
 * body settles; a holder that died (killed, crashed) never does, so a waiter that finds its pid gone takes the lock
 * over. Not reentrant: a body must not take the lock it holds.
 *
 * Written here rather than taken from a library: the holders run builds that block their event loop for minutes
 * (`spawnSync` of jsii, buildah), so a lock kept fresh by a timer (proper-lockfile's mtime) would go stale under a
 * holder that is alive; whether the holder's process exists cannot.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Whether a process of `pid` runs (a signal 0 reaches it; EPERM: it runs as another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How {@link withLock} waits. */
export interface LockOptions {
  /** Fail after waiting this long for a holder that is alive. @default no limit */
  readonly timeoutMs?: number;
  /** Told once when the lock is held by another process (whom it waits for). @default silent */
  readonly log?: (line: string) => void;
}

/** The pid in a lock directory; NaN while its holder has just made it and not written it yet. */
function holderOf(path: string): number {
  try {
    return Number(readFileSync(join(path, 'pid'), 'utf8'));
  } catch {
    return NaN;
  }
}

/** Runs `body` holding the lock directory `path`, made when it is free or its holder died. */
export async function withLock<T>(path: string, body: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? Infinity);
  mkdirSync(dirname(path), { recursive: true });
  let told = false;
  for (;;) {
    try {
      mkdirSync(path);
      writeFileSync(join(path, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = holderOf(path);
      if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
        rmSync(path, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`the lock ${path} was not released within ${options.timeoutMs} ms`);
      if (!told) options.log?.(`waiting for ${path}, held by process ${Number.isInteger(holder) ? holder : '?'} ...`);
      told = true;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await body();
  } finally {
    rmSync(path, { recursive: true, force: true });
  }
}
