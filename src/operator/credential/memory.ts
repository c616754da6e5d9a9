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
  return `${cluster ?? ''}/${key.namespace}/${key.name}`;
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

export class PassMemory {
  /** The last converged pass per order: the fingerprint of what it read, and when the order is due next. */
  private readonly converged = new Map<OrderId, { fingerprint: string; wakeAt?: number }>();
  /**
   * The orders this process has met, with what the user last asked of each (its spec generation and annotations, and
   * its `credentialGeneration`): the first pass over an order may find it settled by the cache alone, and a pass that
   * follows a change the user made observes Keystone afresh rather than through the session's known credentials
   * (docs/concepts/passes.md, "To make an order look now, change it"). A raised `credentialGeneration` is the exception: the
   * pass mints a new generation whatever Keystone holds, so a mass rotation by hand costs Keystone one create per order.
   * `fresh` stays set until a pass that reached Keystone succeeds: the retry of a pass that failed (Keystone down, a
   * conflict) lists anew too, rather than falling back to the known credentials the user's change meant to bypass.
   */
  private readonly seen = new Map<OrderId, { readonly asked: string; readonly credentialGeneration: number; readonly fresh: boolean }>();
  /** Orders whose last pass acted and converged: the pass their writes wake may be vouched for by the cache. */
  private readonly justActed = new Set<OrderId>();
  /**
   * Orders whose backup this process has looked at on both paths, its own and the one keystone-appcred 0.1.0 wrote
   * (src/lifecycle/migration.ts): a foreign document at the latter is reported once per process. Both paths are read
   * until the order's status records the migration done (`backupPath`); then the own path alone (a teardown reads both).
   */
  private readonly backupLooked = new Set<OrderId>();

  /** The order is gone: nothing of it is remembered. */
  gone(id: OrderId): void {
    this.converged.delete(id);
    this.seen.delete(id);
    this.justActed.delete(id);
    this.backupLooked.delete(id);
  }

  /**
   * A pass meets its order, having read what it stands on (`fingerprint`, undefined when something read carries no
   * resourceVersion): remembers what the user asks of it now, and says how the pass may proceed ({@link Sight}). A pass
   * that is not skipped forgets the converged pass before it: it converges again or acts.
   */
  meet(id: OrderId, order: KeystoneApplicationCredential, fingerprint: string | undefined, now: Date): Sight {
    const last = this.converged.get(id);
    const asked = { asked: askedOf(order), credentialGeneration: order.spec.credentialGeneration ?? 1 };
    const met = this.seen.get(id);
    const changedByUser = met !== undefined && met.asked !== asked.asked && asked.credentialGeneration <= met.credentialGeneration;
    const fresh = changedByUser || (met?.fresh ?? false);
    // A change the user made is never vouched for by the cache, even when it lands on the pass the own writes wake.
    const firstSight = met === undefined;
    const vouchable = firstSight || (this.justActed.delete(id) && !fresh);
    this.seen.set(id, { ...asked, fresh });
    const deleting = order.metadata.deletionTimestamp !== undefined;
    if (!deleting && fingerprint !== undefined && last?.fingerprint === fingerprint && (last.wakeAt === undefined || now.getTime() < last.wakeAt)) {
      return { firstSight, fresh, vouchable, steady: last.wakeAt !== undefined ? { wakeAt: last.wakeAt } : {} };
    }
    this.converged.delete(id);
    return { firstSight, fresh, vouchable };
  }

  /** The pass converged (without acting or writing, or settled by the cache): its inputs stand until `wakeAt`. */
  converge(id: OrderId, fingerprint: string, wakeAt: number | undefined): void {
    this.converged.set(id, { fingerprint, ...(wakeAt !== undefined ? { wakeAt } : {}) });
  }

  /** The pass acted (or wrote): the pass its writes wake may be vouched for by the cache. */
  acted(id: OrderId): void {
    this.justActed.add(id);
  }

  /** The pass observed Keystone anew and succeeded: the user's change is listed. */
  listed(id: OrderId): void {
    const met = this.seen.get(id);
    if (met?.fresh) this.seen.set(id, { ...met, fresh: false });
  }

  /** The order is to be met for the first time again (a pass the cache settles failed: its retry is settled again). */
  unmeet(id: OrderId): void {
    this.seen.delete(id);
  }

  /** The order was released by its teardown. */
  released(id: OrderId): void {
    this.converged.delete(id);
  }

  /** The former backup path was looked at; whether it had been before (what it holds is reported once per process). */
  formerLooked(id: OrderId): boolean {
    const before = this.backupLooked.has(id);
    this.backupLooked.add(id);
    return before;
  }

  /**
   * Forgets the order's converged pass (e.g. when it is deleted). `anew`: the order is met anew, its next pass a first
   * sight the cache may settle (what this process knew of it changed under it: a namespace's Secret access), unless a
   * change of the user's is still to be listed anew.
   */
  forget(id: OrderId, anew: boolean): void {
    this.converged.delete(id);
    if (anew && !this.seen.get(id)?.fresh) {
      this.seen.delete(id);
      this.justActed.delete(id);
    }
  }

  /** Forgets every order of a target cluster (deregistered): registered again, each is met anew. */
  forgetCluster(cluster: string): void {
    const prefix = `${cluster}/`;
    for (const memory of [this.converged, this.seen]) for (const id of [...memory.keys()]) if (id.startsWith(prefix)) memory.delete(id);
    for (const memory of [this.justActed, this.backupLooked]) for (const id of [...memory]) if (id.startsWith(prefix)) memory.delete(id);
  }
}

/** What the user last asked of an order: its spec generation and its annotations (a digest). */
function askedOf(order: KeystoneApplicationCredential): string {
  const annotations = order.metadata.annotations;
  const digest = annotations ? createHash('sha256').update(JSON.stringify(annotations)).digest('base64url').slice(0, 16) : '';
  return `${order.metadata.generation ?? 0}/${digest}`;
}
