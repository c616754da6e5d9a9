/**
 * What the invariants know of a run, kept as it happens: every order that ever existed (its credential name prefix, its
 * uid, where it lives, its grace period), which order each credential in Keystone belongs to (minted by the operator
 * or by 0.1.0 for it, or another installation's), and what each delivered Secret carries and since when (a pair
 * Keystone authenticates; a tenant's edit that no credential matches carries nothing).
 */
import { childPrefix, generationOf, resolveSpec } from '../../../src/api';
import { PATHS, TARGET_CLUSTER, unbase64 } from '../objects';
import type { SimWorld } from '../sim-world';
import type { ApiChange } from '../world';

/** An order as the ledger knows it. */
export interface KnownOrder {
  /** `tenant/name`. */
  readonly key: string;
  readonly tenant: string;
  readonly name: string;
  readonly prefix: string;
  uid: string;
  graceMs: number;
  /** Gone from its API server (its teardown released it). */
  gone: boolean;
  /** Being deleted (deletionTimestamp set), since. */
  deletingSince?: number;
}

/** What a delivered Secret carries now. */
interface Carried {
  readonly id: string;
  readonly since: number;
}

const ledgers = new WeakMap<SimWorld, Ledger>();

/** The ledger of a world (one per run, shared by the invariants). */
export function ledgerOf(world: SimWorld): Ledger {
  let ledger = ledgers.get(world);
  if (!ledger) ledgers.set(world, (ledger = new Ledger(world)));
  return ledger;
}

export class Ledger {
  readonly orders = new Map<string, KnownOrder>();
  /** Last time a delivered Secret carried each credential id (with its own secret). */
  readonly lastCarried = new Map<string, number>();
  /** What each order's delivered Secret carries now, by order key. */
  readonly carrying = new Map<string, Carried>();

  /** Credentials another installation minted under the orders' names: never the orders'. */
  get foreign(): ReadonlySet<string> {
    return this.world.foreign;
  }

  constructor(private readonly world: SimWorld) {
    world.hooks.change.push((change) => this.changed(change));
  }

  /** The order a credential's name belongs to (by its prefix), and its generation. */
  orderOf(credentialName: string): { order: KnownOrder; generation: number } | undefined {
    for (const order of this.orders.values()) {
      const generation = generationOf(order.prefix, credentialName);
      if (generation !== undefined) return { order, generation };
    }
    return undefined;
  }

  /** The credentials Keystone holds that are the order's (not another installation's), with their generations. */
  credentialsOf(order: KnownOrder): { id: string; generation: number }[] {
    const out: { id: string; generation: number }[] = [];
    for (const c of this.world.keystone.credentials.values()) {
      if (this.foreign.has(c.id)) continue;
      const generation = generationOf(order.prefix, c.name);
      if (generation !== undefined) out.push({ id: c.id, generation });
    }
    return out;
  }

  /** Whether the credential is held now: by a delivered Secret (with its secret), or by a backup document in OpenBao. */
  heldNow(id: string): string | undefined {
    for (const [key, carried] of this.carrying) if (carried.id === id) return `the delivered Secret of ${key}`;
    for (const path of this.world.openBao.paths()) if (this.world.openBao.document(path)?.application_credential_id === id) return `the backup at ${path}`;
    return undefined;
  }

  private changed(change: ApiChange): void {
    const now = this.world.time.now();
    if (change.collection === PATHS.orders) {
      const ns = change.object.metadata.namespace ?? '';
      const name = change.object.metadata.name;
      const key = `${ns}/${name}`;
      const prefix = childPrefix({ ...(change.cluster === 'target' ? { cluster: TARGET_CLUSTER } : {}), namespace: ns, name });
      const spec = change.object.spec as { rotation?: { interval?: string; gracePeriod?: string } } | undefined;
      const known = this.orders.get(key) ?? { key, tenant: ns, name, prefix, uid: '', graceMs: 0, gone: false };
      known.uid = change.object.metadata.uid ?? known.uid;
      known.graceMs = resolveSpec(spec ?? {}).gracePeriod.milliseconds;
      known.gone = change.type === 'DELETED';
      if (change.object.metadata.deletionTimestamp && known.deletingSince === undefined) known.deletingSince = now;
      if (!change.object.metadata.deletionTimestamp && change.type !== 'DELETED') known.deletingSince = undefined;
      this.orders.set(key, known);
      return;
    }
    if (change.collection !== PATHS.secrets || !change.object.metadata.name.endsWith('-credentials')) return;
    const ns = change.object.metadata.namespace ?? '';
    const key = `${ns}/${change.object.metadata.name.slice(0, -'-credentials'.length)}`;
    const before = this.carrying.get(key);
    const data = change.type === 'DELETED' ? undefined : (change.object.data as Record<string, string> | undefined);
    const id = data?.application_credential_id ? unbase64(data.application_credential_id) : undefined;
    const secret = data?.application_credential_secret ? unbase64(data.application_credential_secret) : undefined;
    const valid = id !== undefined && this.world.keystone.credentials.get(id)?.secret === secret;
    if (before && (!valid || before.id !== id)) this.lastCarried.set(before.id, now);
    if (valid && before?.id !== id) this.carrying.set(key, { id, since: now });
    else if (!valid) this.carrying.delete(key);
  }
}
