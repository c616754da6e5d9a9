/**
 * Per-order metrics of the KeystoneApplicationCredential reconciler, in the operator's registry: when each order rotates
 * next, how old its delivered credential is and when it expires in Keystone, whether its successor exists, where its
 * conditions stand, and how many rotations and failures (by reason) it has seen. These are the series the alerts
 * (src/observability/alerts.ts) read to say "a consumer is about to break" before it does.
 *
 * Labels are the order's namespace and name, and `cluster` for an order on a registered target cluster (absent on the
 * management cluster's series): a user must find the order an alert names. Nothing else varies per order (no id, never
 * a secret); the condition series add the condition's type, status and reason, each from a fixed set, and hold one
 * series per order and type (the current one). A deleted order's series all go, counters included, as kube-state-metrics
 * drops a deleted object's: otherwise every order ever deleted would stay in the registry (and in every scrape) for the
 * life of the process.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { KeystoneApplicationCredentialStatus } from '../../api';
import { sharedString } from '../../kube/shared-strings';
import { scraped, type Series } from '../runtime/scraped';

type Labels = 'namespace' | 'name' | 'cluster';
type ConditionLabels = Labels | 'type' | 'status' | 'reason';
type OrderLabels = Readonly<Partial<Record<Labels, string>>>;

/** The conditions of an order exported as series: `Ready` and the two sub-conditions whose reasons say what to do. */
const CONDITION_TYPES = ['Ready', 'CredentialReady', 'DeliveryReady'] as const;

/** A condition's series: its status and reason (one object per pair, shared by every order in it). */
interface ConditionSeries {
  readonly status: string;
  readonly reason: string;
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * What the metrics remember of one order between passes, and all its series are made of at a scrape (./scraped.ts):
 * numbers and shared objects, no series held. Kept small, as there is one per order for the life of the process (with
 * prom-client holding the seven series an order cost 1,690 bytes of heap: a bare script of 10,000 orders).
 */
interface OrderState {
  readonly labels: OrderLabels;
  /** The generations Keystone holds under the order's names, as the last list and the process's own creates and deletes say. */
  inKeystone: readonly number[];
  /** The delivered generation, as the last status or the last switch says. */
  delivered: number | undefined;
  /** `status.nextRotation`, `status.lastRotation` and `status.credentialExpiresAt`, Unix seconds. */
  nextRotation: number | undefined;
  lastRotation: number | undefined;
  expiry: number | undefined;
  /** The condition series the order has, in the order of {@link CONDITION_TYPES} (one array for every order alike). */
  conditions: readonly (ConditionSeries | undefined)[];
  /** Switches to a new generation this process made. */
  rotations: number | undefined;
  /** Failed passes by condition reason, once the order failed. */
  failures: Record<string, number> | undefined;
}

export class CredentialMetrics {
  private readonly orders = new Map<string, OrderState>();
  /**
   * The condition pairs, and the triples of them orders are in, one each however many orders share them: statuses and
   * reasons are fixed sets, and most orders of a fleet stand at the same three.
   */
  private readonly pairs = new Map<string, ConditionSeries>();
  private readonly triples = new Map<string, readonly (ConditionSeries | undefined)[]>();

  constructor(registry: Registry) {
    const registers = [registry];
    const labelNames = ['namespace', 'name', 'cluster'] as const;
    const gauge = (name: string, help: string, value: (s: OrderState) => number | undefined) => scraped(new Gauge({ name, help, labelNames, registers }), () => this.series(value));
    gauge('keystone_appcred_credential_next_rotation_timestamp_seconds', 'When the order rotates next (status.nextRotation), Unix seconds; absent while the schedule is off', (s) => s.nextRotation);
    gauge('keystone_appcred_credential_delivered_since_timestamp_seconds', 'When the delivered credential became the delivered one (status.lastRotation), Unix seconds; its age is time() minus this', (s) => s.lastRotation);
    gauge('keystone_appcred_credential_expiry_timestamp_seconds', 'When the delivered credential expires in Keystone (status.credentialExpiresAt), Unix seconds; absent for one created with the schedule off', (s) => s.expiry);
    // 1 while Keystone holds a generation above the delivered one; no series while no generation is delivered.
    gauge('keystone_appcred_credential_successor_exists', 'Whether Keystone holds a generation above the delivered one (a successor created, not switched to yet): 1 or 0', (s) => {
      const delivered = s.delivered;
      return delivered === undefined ? undefined : s.inKeystone.some((g) => g > delivered) ? 1 : 0;
    });
    scraped(
      new Gauge<ConditionLabels>({
        name: 'keystone_appcred_credential_condition',
        help: 'The order\'s Ready, CredentialReady and DeliveryReady conditions: 1 for the current status and reason of each type',
        labelNames: [...labelNames, 'type', 'status', 'reason'],
        registers,
      }),
      () => this.conditionSeries(),
    );
    scraped(new Counter({ name: 'keystone_appcred_credential_rotations_total', help: 'Switches to a new generation', labelNames, registers }), () => this.series((s) => s.rotations));
    scraped(new Counter<Labels | 'reason'>({ name: 'keystone_appcred_credential_failures_total', help: 'Failed passes, by condition reason', labelNames: [...labelNames, 'reason'], registers }), () => this.failureSeries());
  }

  /**
   * Records the order's status after a pass, the one the pass recorded whether it succeeded or failed (`cluster`: a
   * target cluster's name, absent on the management cluster).
   */
  observed(namespace: string, name: string, status: KeystoneApplicationCredentialStatus | undefined, cluster?: string): void {
    const state = this.state(namespace, name, cluster);
    state.nextRotation = seconds(status?.nextRotation);
    state.lastRotation = seconds(status?.lastRotation);
    state.expiry = seconds(status?.credentialExpiresAt);
    state.delivered = status?.credentialGeneration;
    const conditions = CONDITION_TYPES.map((type) => {
      const c = status?.conditions?.find((x) => x.type === type);
      return c ? this.pair(c.status, c.reason) : undefined;
    });
    state.conditions = conditions.some((c) => c !== undefined) ? this.triple(conditions) : NONE;
  }

  /** Keystone listed the order's generations (a full pass observed it). */
  listed(namespace: string, name: string, generations: readonly number[], cluster?: string): void {
    this.state(namespace, name, cluster).inKeystone = generations.length === 0 ? NONE : exact([...new Set(generations)]);
  }

  /**
   * The process created (`minted`) or deleted a generation in Keystone: whether a successor exists changes at once,
   * not after the pass (a scrape during the rotation sees the successor as soon as Keystone holds it).
   */
  changedInKeystone(namespace: string, name: string, generation: number, change: 'minted' | 'deleted', cluster?: string): void {
    const state = this.state(namespace, name, cluster);
    const others = state.inKeystone.filter((g) => g !== generation);
    state.inKeystone = exact(change === 'minted' ? [...others, generation] : others);
  }

  /** The delivered Secret was written with `generation` (a switch): the successor is the delivered one now. */
  delivered(namespace: string, name: string, generation: number, cluster?: string): void {
    this.state(namespace, name, cluster).delivered = generation;
  }

  rotated(namespace: string, name: string, cluster?: string): void {
    const state = this.state(namespace, name, cluster);
    state.rotations = (state.rotations ?? 0) + 1;
  }

  failed(namespace: string, name: string, reason: string, cluster?: string): void {
    const state = this.state(namespace, name, cluster);
    const failures = (state.failures ??= {});
    failures[reason] = (failures[reason] ?? 0) + 1;
  }

  /** Drops every series of an order (deleted). */
  forget(namespace: string, name: string, cluster?: string): void {
    this.orders.delete(keyOf(namespace, name, cluster));
  }

  /** Drops every series of every order of a target cluster (deregistered: its orders are not served any more). */
  forgetCluster(cluster: string): void {
    for (const [key, state] of this.orders) if (state.labels.cluster === cluster) this.orders.delete(key);
  }

  private *series(value: (s: OrderState) => number | undefined): Iterable<Series<Labels>> {
    for (const s of this.orders.values()) {
      const v = value(s);
      if (v !== undefined) yield { labels: s.labels, value: v };
    }
  }

  private *conditionSeries(): Iterable<Series<ConditionLabels>> {
    for (const s of this.orders.values()) {
      for (const [i, c] of s.conditions.entries()) if (c) yield { labels: { ...s.labels, type: CONDITION_TYPES[i], status: c.status, reason: c.reason }, value: 1 };
    }
  }

  private *failureSeries(): Iterable<Series<Labels | 'reason'>> {
    for (const s of this.orders.values()) for (const [reason, value] of Object.entries(s.failures ?? {})) yield { labels: { ...s.labels, reason }, value };
  }

  private pair(status: string, reason: string): ConditionSeries {
    const key = `${status}/${reason}`;
    let pair = this.pairs.get(key);
    if (!pair) this.pairs.set(key, (pair = { status, reason }));
    return pair;
  }

  private triple(conditions: readonly (ConditionSeries | undefined)[]): readonly (ConditionSeries | undefined)[] {
    const key = conditions.map((c) => (c ? `${c.status}/${c.reason}` : '-')).join('|');
    let triple = this.triples.get(key);
    if (!triple) this.triples.set(key, (triple = conditions));
    return triple;
  }

  private state(namespace: string, name: string, cluster?: string): OrderState {
    const key = keyOf(namespace, name, cluster);
    let state = this.orders.get(key);
    if (!state) {
      // Every field set from the start: one object shape for every order.
      const labels = { namespace: sharedString(namespace), name, ...(cluster ? { cluster } : {}) };
      state = { labels, inKeystone: NONE, delivered: undefined, nextRotation: undefined, lastRotation: undefined, expiry: undefined, conditions: NONE, rotations: undefined, failures: undefined };
      this.orders.set(key, state);
    }
    return state;
  }
}

/** A copy of a small array exactly as long as it is (one built by spreading holds room for more: 152 bytes for one number). */
const exact = (values: readonly number[]): readonly number[] => (values.length === 0 ? NONE : values.slice());

/** Unix seconds of a timestamp; undefined for none (or one that does not parse: no series). */
function seconds(timestamp: string | undefined): number | undefined {
  const ms = timestamp === undefined ? NaN : Date.parse(timestamp);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

const keyOf = (namespace: string, name: string, cluster?: string) => JSON.stringify([cluster ?? '', namespace, name]);
