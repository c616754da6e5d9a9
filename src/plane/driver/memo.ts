/**
 * A steady order costs nothing (architecture.md: "a pass that changes nothing writes nothing", "never polling
 * Keystone"): each driver remembers, per object, the resourceVersions of everything it read from the cache in its last
 * pass that converged with nothing to do, and skips the next pass — Keystone included — while they are the same. Any
 * change to the order, its ControlPlane, its children or its references is a new fingerprint and a full pass. Only an
 * optimisation: it lives in memory, a restart forgets it and observes everything once.
 */

import { hash } from 'node:crypto';
import type { PassMemo, PlaneDeps } from '../ports';
import type { PlaneSettled } from '../settled';
import type { PassResult } from './run';

/** Where a {@link ConvergedPasses} learns which objects still exist. */
export interface ConvergedPassesOptions {
  /** The UIDs of the objects that exist now (e.g. every plane object in the caches): a sweep forgets the others. */
  readonly live?: () => Iterable<string | undefined>;
  /** How often, at most, a sweep runs (on the next pass after this long). @default 60 s */
  readonly sweepMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * The fingerprints of the last converged pass per object UID. A deleted object's pass never reaches {@link memoized}
 * (there is nothing to read), so with `live` the entries of objects gone are swept now and then: the memo is bounded by
 * the objects that exist, not by every object the process ever met.
 *
 * Shared by every worker of every plane controller; an entry is read and written only by a pass of its own object, and
 * the work queue never runs two passes of one object at once, so `memoized`'s forget, pass and record of one UID cannot
 * interleave with another pass of that UID. A sweep runs without an await and drops only UIDs gone from the caches; a
 * pass of an object deleted meanwhile may record its entry after a sweep, and the next sweep drops it.
 */
export class ConvergedPasses implements PassMemo {
  private readonly last = new Map<string, { readonly fingerprint: string; readonly until?: number }>();
  private readonly seen = new Set<string>();
  private readonly now: () => number;
  private swept: number;

  constructor(private readonly options: ConvergedPassesOptions = {}) {
    this.now = options.now ?? Date.now;
    this.swept = this.now();
  }

  /** Whether this is the first time the object is met (marks it met). */
  firstSight(uid: string): boolean {
    if (this.seen.has(uid)) return false;
    this.seen.add(uid);
    return true;
  }

  /** Whether the object's inputs are exactly those of its last converged pass, and the clock has not woken it since. */
  unchanged(uid: string, fingerprint: string): boolean {
    this.sweep();
    const last = this.last.get(uid);
    return last !== undefined && last.fingerprint === fingerprint && (last.until === undefined || this.now() < last.until);
  }

  /** Now and then: forgets the objects that no longer exist. */
  private sweep(): void {
    const live = this.options.live;
    if (!live || this.now() - this.swept < (this.options.sweepMs ?? 60_000)) return;
    this.swept = this.now();
    const keep = new Set(live());
    for (const uid of this.last.keys()) if (!keep.has(uid)) this.last.delete(uid);
    for (const uid of this.seen) if (!keep.has(uid)) this.seen.delete(uid);
  }

  record(uid: string, fingerprint: string, until?: number): void {
    this.last.set(uid, { fingerprint, ...(until !== undefined ? { until } : {}) });
  }

  forget(uid: string, options: { readonly anew?: boolean } = {}): void {
    this.last.delete(uid);
    if (options.anew) this.seen.delete(uid);
  }

  /** Objects remembered (converged). */
  get size(): number {
    return this.last.size;
  }

  /** Objects met since they were last swept (converged or not). */
  get met(): number {
    return this.seen.size;
  }
}

/** Something read from the cache: its identity and resourceVersion, or absent. */
type Read = { readonly metadata: { readonly name: string; readonly resourceVersion?: string } } | undefined;

/**
 * The fingerprint of a pass's inputs, or undefined when one of them carries no resourceVersion (then the pass is
 * never skipped): the SHA-256 of their names and resourceVersions. A digest, not the text: it is kept per object for as
 * long as the object is steady, and an order's nine inputs made a text of about 200 characters, 4 MiB at 20,000 orders
 * (docs/benchmarks-operator.md); the digest costs under a microsecond a pass.
 */
export function fingerprintOf(reads: readonly (Read | readonly Read[])[]): string | undefined {
  const parts: string[] = [];
  for (const read of reads) {
    for (const one of Array.isArray(read) ? (read as readonly Read[]) : [read as Read]) {
      if (one === undefined) parts.push('-');
      else if (!one.metadata.resourceVersion) return undefined;
      else parts.push(`${one.metadata.name}@${one.metadata.resourceVersion}`);
    }
    parts.push('|');
  }
  return hash('sha256', parts.join(','), 'base64url');
}

/**
 * Runs `pass` unless the object's inputs are those of its last converged pass; remembers them when this pass converged
 * with nothing to do (no action, no status write, no timer but the clock's of a steady object, remembered until then),
 * forgets them otherwise. On the first sight of an object
 * (after a restart, on the standby that took over) `settled` may vouch for it from the cache alone (src/plane/settled.ts):
 * it is remembered as converged without its pass, so a restart costs Keystone nothing.
 */
export async function memoized(
  deps: PlaneDeps,
  uid: string | undefined,
  fingerprint: string | undefined,
  pass: () => Promise<PassResult>,
  settled?: () => Promise<PlaneSettled>,
): Promise<PassResult> {
  const memo = deps.memo;
  if (!memo || !uid || fingerprint === undefined) return pass();
  if (memo.unchanged(uid, fingerprint)) return { steps: 0, actions: [], skipped: true };
  const first = memo.firstSight?.(uid) ?? false;
  memo.forget(uid);
  if (first && settled && (await settled()).settled) {
    memo.record(uid, fingerprint);
    return { steps: 0, actions: [], skipped: true };
  }
  const result = await pass();
  if (result.actions.length === 0 && !result.wroteStatus && !result.released) {
    if (result.requeueAfter === undefined) memo.record(uid, fingerprint);
    else if (result.steady) memo.record(uid, fingerprint, (deps.clock ?? (() => new Date()))().getTime() + result.requeueAfter);
  }
  return result;
}
