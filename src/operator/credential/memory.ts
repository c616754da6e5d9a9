/**
 * What the KeystoneApplicationCredential reconciler remembers of its orders between passes, in memory only (a restart
 * or a failover starts empty): the last converged pass's inputs (a steady order costs nothing), what the user last
 * asked of each order (a change of theirs lists Keystone anew), the orders whose last pass acted (the pass their writes
 * wake may be vouched for by the cache) and those whose former backup path was looked at (reported once per process).
 * Entries are keyed by the work queue's key and its cluster: one worker at a time holds a key, so an entry is never
 * read or written by two passes at once, however many workers run.
 */
import { createHash } from 'node:crypto';
import type { KeystoneApplicationCredential } from '../../api';

/** What the reconciler remembers an order by. */
export type OrderId = string;

/** The id of the order `key` on `cluster` (absent: the management cluster). */
export function orderId(key: { readonly namespace: string; readonly name: string }, cluster: string | undefined): OrderId {
  // Joined, not concatenated: a flat string (a template's is a rope of three, 65 bytes kept per order as a key).
  return [cluster ?? '', key.namespace, key.name].join('/');
}

/** How a pass meets its order ({@link PassMemory.meet}). */
export interface Sight {
  /** This process meets the order for the first time: the cache alone may settle it. */
  readonly firstSight: boolean;
  /** The pass follows a change the user made (or retries one that failed): it lists Keystone anew. */
  readonly fresh: boolean;
  /** The cache may vouch for the order: a first sight, or the pass its own writes wake, unless the user changed it. */
  readonly vouchable: boolean;
  /** Nothing read changed since a converged pass and no deadline has come: the pass is skipped (`wakeAt`: the deadline). */
  readonly steady?: { readonly wakeAt?: number };
}

/**
 * All the reconciler remembers of one order, in one record under one key (four maps and sets keyed by the order cost
 * 565 bytes an order, 11 MiB at 20,000: docs/benchmarks-operator.md). Every field is set from the start: one object
 * shape for every order.
 */
interface Remembered {
  /** What the user last asked of the order (undefined: not met, or to be met anew). */
  asked: string | undefined;
  credentialGeneration: number;
  /** A change of the user's is still to be listed anew. */
  fresh: boolean;
  /** The last converged pass: the fingerprint of what it read (undefined: none), and when the order is due next. */
  fingerprint: string | undefined;
  wakeAt: number | undefined;
  /** The last pass acted and converged: the pass its writes wake may be vouched for by the cache. */
  justActed: boolean;
  /** The order's backup was looked at on both paths (its own and the one keystone-appcred 0.1.0 wrote). */
  backupLooked: boolean;
}

export class PassMemory {
  /**
   * Per order: the last converged pass (its fingerprint and wake-up); what the user last asked of it, once this
   * process has met it (its spec generation and annotations, and its `credentialGeneration`): the first pass over an
   * order may find it settled by the cache alone, and a pass that follows a change the user made observes Keystone
   * afresh rather than through the session's known credentials (docs/concepts/passes.md, "To make an order look now,
   * change it"). A raised `credentialGeneration` is the exception: the pass mints a new generation whatever Keystone
   * holds, so a mass rotation by hand costs Keystone one create per order. `fresh` stays set until a pass that reached
   * Keystone succeeds: the retry of a pass that failed (Keystone down, a conflict) lists anew too, rather than falling
   * back to the known credentials the user's change meant to bypass. Whether its last pass acted, and whether its
   * backup was looked at on both paths, its own and the one keystone-appcred 0.1.0 wrote (src/lifecycle/migration.ts):
   * a foreign document at the latter is reported once per process. Both paths are read until the order's status
   * records the migration done (`backupPath`); then the own path alone (a teardown reads both).
   */
  private readonly orders = new Map<OrderId, Remembered>();

  /** The order is gone: nothing of it is remembered. */
  gone(id: OrderId): void {
    this.orders.delete(id);
  }

  /**
   * A pass meets its order, having read what it stands on (`fingerprint`, undefined when something read carries no
   * resourceVersion): remembers what the user asks of it now, and says how the pass may proceed ({@link Sight}). A pass
   * that is not skipped forgets the converged pass before it: it converges again or acts.
   */
  meet(id: OrderId, order: KeystoneApplicationCredential, fingerprint: string | undefined, now: Date): Sight {
    const r = this.record(id);
    const asked = askedOf(order);
    const credentialGeneration = order.spec.credentialGeneration ?? 1;
    const met = r.asked !== undefined;
    const changedByUser = met && r.asked !== asked && credentialGeneration <= r.credentialGeneration;
    const fresh = changedByUser || (met && r.fresh);
    // A change the user made is never vouched for by the cache, even when it lands on the pass the own writes wake.
    const firstSight = !met;
    const vouchable = firstSight || (r.justActed && !fresh);
    if (!firstSight) r.justActed = false;
    if (r.asked !== asked) r.asked = asked;
    r.credentialGeneration = credentialGeneration;
    r.fresh = fresh;
    const deleting = order.metadata.deletionTimestamp !== undefined;
    if (!deleting && fingerprint !== undefined && r.fingerprint === fingerprint && (r.wakeAt === undefined || now.getTime() < r.wakeAt)) {
      return { firstSight, fresh, vouchable, steady: r.wakeAt !== undefined ? { wakeAt: r.wakeAt } : {} };
    }
    this.unconverge(r);
    return { firstSight, fresh, vouchable };
  }

  /** The pass converged (without acting or writing, or settled by the cache): its inputs stand until `wakeAt`. */
  converge(id: OrderId, fingerprint: string, wakeAt: number | undefined): void {
    const r = this.record(id);
    r.fingerprint = fingerprint;
    r.wakeAt = wakeAt;
  }

  /** The pass acted (or wrote): the pass its writes wake may be vouched for by the cache. */
  acted(id: OrderId): void {
    this.record(id).justActed = true;
  }

  /** The pass observed Keystone anew and succeeded: the user's change is listed. */
  listed(id: OrderId): void {
    const r = this.orders.get(id);
    if (r?.asked !== undefined) r.fresh = false;
  }

  /** The order is to be met for the first time again (a pass the cache settles failed: its retry is settled again). */
  unmeet(id: OrderId): void {
    const r = this.orders.get(id);
    if (r) this.unsee(r);
  }

  /** The order was released by its teardown. */
  released(id: OrderId): void {
    const r = this.orders.get(id);
    if (r) this.unconverge(r);
  }

  /** The former backup path was looked at; whether it had been before (what it holds is reported once per process). */
  formerLooked(id: OrderId): boolean {
    const r = this.record(id);
    const before = r.backupLooked;
    r.backupLooked = true;
    return before;
  }

  /**
   * Forgets the order's converged pass (e.g. when it is deleted). `anew`: the order is met anew, its next pass a first
   * sight the cache may settle (what this process knew of it changed under it: a namespace's Secret access), unless a
   * change of the user's is still to be listed anew.
   */
  forget(id: OrderId, anew: boolean): void {
    const r = this.orders.get(id);
    if (!r) return;
    this.unconverge(r);
    if (anew && !(r.asked !== undefined && r.fresh)) {
      this.unsee(r);
      r.justActed = false;
    }
  }

  /** Forgets every order of a target cluster (deregistered): registered again, each is met anew. */
  forgetCluster(cluster: string): void {
    const prefix = `${cluster}/`;
    for (const id of [...this.orders.keys()]) if (id.startsWith(prefix)) this.orders.delete(id);
  }

  private record(id: OrderId): Remembered {
    let r = this.orders.get(id);
    if (!r) this.orders.set(id, (r = { asked: undefined, credentialGeneration: 0, fresh: false, fingerprint: undefined, wakeAt: undefined, justActed: false, backupLooked: false }));
    return r;
  }

  private unconverge(r: Remembered): void {
    r.fingerprint = undefined;
    r.wakeAt = undefined;
  }

  private unsee(r: Remembered): void {
    r.asked = undefined;
    r.credentialGeneration = 0;
    r.fresh = false;
  }
}

/** What the user last asked of an order: its spec generation and its annotations (a digest). */
function askedOf(order: KeystoneApplicationCredential): string {
  const annotations = order.metadata.annotations;
  const digest = annotations ? createHash('sha256').update(JSON.stringify(annotations)).digest('base64url').slice(0, 16) : '';
  return `${order.metadata.generation ?? 0}/${digest}`;
}
