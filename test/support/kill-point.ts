/**
 * Crash injection from outside the product: follows an operator's JSON log file and sends SIGKILL right after the n-th
 * line that matches a kill point (an `action` line of one action type, or a `status` line), after an optional delay.
 * The operator carries no test code: the kill is driven only by what it writes to its log, as an operator's own
 * liveness would see it die at any instant.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import type { OperatorProcess } from './operator';

/** A point to kill at: the log line of an action (`action` is the lifecycle action type) or of a status write. */
export interface KillPoint {
  /** A readable name for reports, e.g. `park` or `sweep delete`. */
  readonly name: string;
  /** Whether a parsed JSON log line is this kill point. */
  matches(line: Record<string, unknown>): boolean;
}

/** The kill point after an action of `type` that went through (`outcome: done`), optionally only with `why` matching. */
export function afterAction(name: string, type: string, why?: RegExp): KillPoint {
  return { name, matches: (l) => l.msg === 'action' && l.action === type && l.outcome === 'done' && (why === undefined || why.test(String(l.why))) };
}

/** The kill point after a status write of a KeystoneApplicationCredential. */
export function afterStatusWrite(name = 'status write'): KillPoint {
  return { name, matches: (l) => l.msg === 'status' && l.kind === 'KeystoneApplicationCredential' };
}

/** Where the kill landed. */
export interface Kill {
  /** The log line it followed. */
  readonly line: Record<string, unknown>;
  /** Milliseconds from the arming to the kill. */
  readonly afterMs: number;
}

/**
 * The current end of a log file: arm a watcher from here before triggering what will write the kill point's line, so
 * earlier lines do not count.
 */
export function logOffset(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * Follows `op`'s log from `offset`, and SIGKILLs the process `delayMs` after the `nth` line matching `point` (1-based).
 * Rejects when the process exits first or `timeoutMs` passes (the kill point was not reached).
 */
export async function killAt(op: OperatorProcess, point: KillPoint, options: { offset: number; nth: number; delayMs: number; timeoutMs?: number }): Promise<Kill> {
  const started = Date.now();
  const deadline = started + (options.timeoutMs ?? 60_000);
  const fd = openSync(op.server.log, 'r');
  let position = options.offset;
  let pending = '';
  let seen = 0;
  try {
    for (;;) {
      const size = fstatSync(fd).size;
      if (size > position) {
        const buffer = Buffer.alloc(size - position);
        position += readSync(fd, buffer, 0, buffer.length, position);
        const lines = (pending + buffer.toString('utf8')).split('\n');
        pending = lines.pop() ?? '';
        for (const text of lines) {
          if (!text.startsWith('{')) continue;
          let line: Record<string, unknown>;
          try {
            line = JSON.parse(text) as Record<string, unknown>;
          } catch {
            continue;
          }
          if (!point.matches(line) || ++seen < options.nth) continue;
          if (options.delayMs > 0) await new Promise((r) => setTimeout(r, options.delayMs));
          op.server.process.kill('SIGKILL');
          return { line, afterMs: Date.now() - started };
        }
      }
      if (op.server.exited() !== undefined) throw new Error(`${op.name} exited (${op.server.exited()}) before kill point ${point.name} #${options.nth} (seen ${seen})`);
      if (Date.now() > deadline) throw new Error(`kill point ${point.name} #${options.nth} not reached in ${options.timeoutMs ?? 60_000} ms (seen ${seen})`);
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    closeSync(fd);
  }
}
