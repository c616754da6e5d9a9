/**
 * What the invariants know of a run, kept as it happens: every order that ever existed (its credential name prefix, its
 * uid, where it lives, its grace period, its deletion policy), which order each credential in Keystone belongs to
 * (minted by the operator or by 0.1.0 for it, adopted by it, or another installation's), what each delivered Secret
 * carries and since when (a pair Keystone authenticates; a tenant's edit that no credential matches carries nothing),
 * and what an order deleted under `deletionPolicy: Retain` left (issue 49): no order's any more.
 */
import { backingPath, childPrefix, DeletionPolicy, generationOf, resolveSpec } from '../../../src/api';
import { CP, PATHS, TARGET_CLUSTER, unbase64 } from '../objects';
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
  /** Its grace period now, and each it had since it was first seen (when it took effect). */
  graceMs: number;
  readonly graces: { readonly at: number; readonly ms: number }[];
  /** Gone from its API server (its teardown released it). */
  gone: boolean;
  /** Being deleted (deletionTimestamp set), since. */
  deletingSince?: number;
  /** Its `spec.deletionPolicy` is Retain (as it was when its deletion began, once it began). */
  retain: boolean;
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
  /**
   * The credentials orders deleted under `deletionPolicy: Retain` left in Keystone (what their delivered Secret carried
   * when they were gone), with the order key and its uid: no order's since (a new order of the same name is another).
   */
  readonly retained = new Map<string, { readonly key: string; readonly uid: string }>();
  /** The generation each adopted credential had in its order's status, by id. */
  private readonly adoptedGeneration = new Map<string, number>();
  /** The first credential each order's status recorded, by `tenant/name/uid`. */
  private readonly firstRecorded = new Map<string, string>();

  /** Credentials another installation minted under the orders' names: never the orders'. */
  get foreign(): ReadonlySet<string> {
    return this.world.foreign;
  }

  constructor(private readonly world: SimWorld) {
    world.hooks.change.push((change) => this.changed(change));
  }

  /** The order a credential belongs to (an adoption's, else by its name's prefix), and its generation. */
  orderOf(credential: { readonly id: string; readonly name: string }): { order: KnownOrder; generation: number } | undefined {
    const adopted = this.adopter(credential.id);
    if (adopted) return adopted;
    for (const order of this.orders.values()) {
      const generation = generationOf(order.prefix, credential.name);
      if (generation !== undefined) return { order, generation };
    }
    return undefined;
  }

  /**
   * The credentials Keystone holds that are the order's, with their generations: minted under its names or adopted by
   * it; not another installation's, nor one a Retain deletion left.
   */
  credentialsOf(order: KnownOrder): { id: string; generation: number }[] {
    const out: { id: string; generation: number }[] = [];
    for (const c of this.world.keystone.credentials.values()) {
      if (this.foreign.has(c.id) || this.retained.has(c.id)) continue;
      const generation = this.adopter(c.id)?.order === order ? this.adopter(c.id)?.generation : generationOf(order.prefix, c.name);
      if (generation !== undefined) out.push({ id: c.id, generation });
    }
    return out;
  }

  /**
   * The grace periods a switch at `at` may have given the superseded credential: those in force in the ten seconds up
   * to it (a pass decides on the spec its cache showed; the status records the deadline it computed, and a grace period
   * changed later does not move it).
   */
  gracesAt(order: KnownOrder, at: number): number[] {
    const inForce = (t: number) => [...order.graces].reverse().find((g) => g.at <= t)?.ms ?? order.graces[0]?.ms ?? order.graceMs;
    return [inForce(at - 10_000), ...order.graces.filter((g) => g.at > at - 10_000 && g.at <= at).map((g) => g.ms)].concat(inForce(at));
  }

  /** The first credential the order's status recorded as delivered, if it recorded one. */
  firstDelivered(order: KnownOrder): string | undefined {
    return this.firstRecorded.get(`${order.key}/${order.uid}`);
  }

  /** The order that adopted a credential (a valid `spec.adopt` of the schedule), and the generation it took it as. */
  private adopter(id: string): { order: KnownOrder; generation: number } | undefined {
    for (const [key, adoption] of this.world.adoptions) {
      const order = this.orders.get(key);
      if (adoption.valid && adoption.id === id && order) return { order, generation: this.adoptedGeneration.get(id) ?? 1 };
    }
    return undefined;
  }

  /** The credential the order's backup holds: at its own path, or (after the upgrade, until its migration) 0.1.0's. */
  backedUp(order: KnownOrder): string | undefined {
    const { openBao } = this.world;
    return openBao.document(backingPath(CP.namespace, order.prefix, order.uid))?.application_credential_id ?? openBao.document(backingPath(CP.namespace, order.prefix))?.application_credential_id;
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
      const spec = resolveSpec((change.object.spec ?? {}) as Parameters<typeof resolveSpec>[0]);
      const known = this.orders.get(key) ?? { key, tenant: ns, name, prefix, uid: '', graceMs: 0, graces: [], gone: false, retain: false };
      known.uid = change.object.metadata.uid ?? known.uid;
      known.graceMs = spec.gracePeriod.milliseconds;
      if (known.graces[known.graces.length - 1]?.ms !== known.graceMs) known.graces.push({ at: now, ms: known.graceMs });
      known.gone = change.type === 'DELETED';
      if (known.deletingSince === undefined) known.retain = spec.deletionPolicy === DeletionPolicy.Retain;
      if (change.object.metadata.deletionTimestamp && known.deletingSince === undefined) known.deletingSince = now;
      if (!change.object.metadata.deletionTimestamp && change.type !== 'DELETED') known.deletingSince = undefined;
      const carried = this.carrying.get(key);
      if (known.gone && known.retain && carried) this.retained.set(carried.id, { key, uid: known.uid });
      const status = change.object.status as { credentialID?: string; credentialGeneration?: number; previousCredentialID?: string; previousCredentialGeneration?: number } | undefined;
      const first = `${key}/${known.uid}`;
      if (status?.credentialID !== undefined && !this.firstRecorded.has(first)) this.firstRecorded.set(first, status.credentialID);
      const adoption = this.world.adoptions.get(key);
      if (adoption && status?.credentialID === adoption.id && status.credentialGeneration !== undefined) this.adoptedGeneration.set(adoption.id, status.credentialGeneration);
      if (adoption && status?.previousCredentialID === adoption.id && status.previousCredentialGeneration !== undefined) this.adoptedGeneration.set(adoption.id, status.previousCredentialGeneration);
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
