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

type Labels = 'namespace' | 'name' | 'cluster';
type ConditionLabels = Labels | 'type' | 'status' | 'reason';

/** The labels of an order's series: `cluster` only for a target cluster's. */
const labelsOf = (namespace: string, name: string, cluster?: string) => ({ namespace, name, ...(cluster ? { cluster } : {}) });

/** The conditions of an order exported as series: `Ready` and the two sub-conditions whose reasons say what to do. */
const CONDITION_TYPES = ['Ready', 'CredentialReady', 'DeliveryReady'] as const;

type ConditionType = (typeof CONDITION_TYPES)[number];

/**
 * What the metrics remember of one order between passes. Kept small, as there is one per order for the life of the
 * process: plain arrays and an object rather than a Set and a Map each, the failure reasons only once the order failed
 * (with its seven series an order cost 2,097 bytes of heap before, 1,690 since: a bare script of 10,000 orders).
 */
interface OrderState {
  /** The generations Keystone holds under the order's names, as the last list and the process's own creates and deletes say. */
  inKeystone: readonly number[];
  /** The failure reasons the order has a series for (prom-client removes a series by its exact labels only). */
  reasons?: string[];
  /** The condition series the order has, by type: its status and reason. */
  readonly conditions: Partial<Record<ConditionType, { readonly status: string; readonly reason: string }>>;
  /** The delivered generation, as the last status or the last switch says. */
  delivered?: number;
}

export class CredentialMetrics {
  private readonly nextRotation: Gauge<Labels>;
  private readonly lastRotation: Gauge<Labels>;
  private readonly expiry: Gauge<Labels>;
  private readonly successor: Gauge<Labels>;
  private readonly condition: Gauge<ConditionLabels>;
  private readonly rotations: Counter<Labels>;
  private readonly failures: Counter<Labels | 'reason'>;
  private readonly orders = new Map<string, OrderState>();

  constructor(registry: Registry) {
    const registers = [registry];
    const labelNames = ['namespace', 'name', 'cluster'] as const;
    this.nextRotation = new Gauge({
      name: 'keystone_appcred_credential_next_rotation_timestamp_seconds',
      help: 'When the order rotates next (status.nextRotation), Unix seconds; absent while the schedule is off',
      labelNames,
      registers,
    });
    this.lastRotation = new Gauge({
      name: 'keystone_appcred_credential_delivered_since_timestamp_seconds',
      help: 'When the delivered credential became the delivered one (status.lastRotation), Unix seconds; its age is time() minus this',
      labelNames,
      registers,
    });
    this.expiry = new Gauge({
      name: 'keystone_appcred_credential_expiry_timestamp_seconds',
      help: 'When the delivered credential expires in Keystone (status.credentialExpiresAt), Unix seconds; absent for one created with the schedule off',
      labelNames,
      registers,
    });
    this.successor = new Gauge({
      name: 'keystone_appcred_credential_successor_exists',
      help: 'Whether Keystone holds a generation above the delivered one (a successor created, not switched to yet): 1 or 0',
      labelNames,
      registers,
    });
    this.condition = new Gauge({
      name: 'keystone_appcred_credential_condition',
      help: 'The order\'s Ready, CredentialReady and DeliveryReady conditions: 1 for the current status and reason of each type',
      labelNames: [...labelNames, 'type', 'status', 'reason'],
      registers,
    });
    this.rotations = new Counter({ name: 'keystone_appcred_credential_rotations_total', help: 'Switches to a new generation', labelNames, registers });
    this.failures = new Counter({ name: 'keystone_appcred_credential_failures_total', help: 'Failed passes, by condition reason', labelNames: [...labelNames, 'reason'], registers });
  }

  /**
   * Records the order's status after a pass, the one the pass recorded whether it succeeded or failed (`cluster`: a
   * target cluster's name, absent on the management cluster).
   */
  observed(namespace: string, name: string, status: KeystoneApplicationCredentialStatus | undefined, cluster?: string): void {
    const seconds = (t: string | undefined) => (t === undefined ? undefined : Date.parse(t) / 1000);
    const labels = labelsOf(namespace, name, cluster);
    const set = (gauge: Gauge<Labels>, value: number | undefined) => (value === undefined || Number.isNaN(value) ? gauge.remove(labels) : gauge.set(labels, value));
    set(this.nextRotation, seconds(status?.nextRotation));
    set(this.lastRotation, seconds(status?.lastRotation));
    set(this.expiry, seconds(status?.credentialExpiresAt));
    const state = this.state(namespace, name, cluster);
    state.delivered = status?.credentialGeneration;
    this.successorOf(state, labels);
    for (const type of CONDITION_TYPES) {
      const c = status?.conditions?.find((x) => x.type === type);
      const before = state.conditions[type];
      if (before && (!c || before.status !== c.status || before.reason !== c.reason)) this.condition.remove({ ...labels, type, ...before });
      if (!c) {
        state.conditions[type] = undefined;
        continue;
      }
      const now = before && before.status === c.status && before.reason === c.reason ? before : { status: c.status, reason: c.reason };
      state.conditions[type] = now;
      this.condition.set({ ...labels, type, ...now }, 1);
    }
  }

  /** Keystone listed the order's generations (a full pass observed it). */
  listed(namespace: string, name: string, generations: readonly number[], cluster?: string): void {
    this.state(namespace, name, cluster).inKeystone = [...new Set(generations)];
  }

  /**
   * The process created (`minted`) or deleted a generation in Keystone: whether a successor exists changes at once,
   * not after the pass (a scrape during the rotation sees the successor as soon as Keystone holds it).
   */
  changedInKeystone(namespace: string, name: string, generation: number, change: 'minted' | 'deleted', cluster?: string): void {
    const state = this.state(namespace, name, cluster);
    const others = state.inKeystone.filter((g) => g !== generation);
    state.inKeystone = change === 'minted' ? [...others, generation] : others;
    this.successorOf(state, labelsOf(namespace, name, cluster));
  }

  /** The delivered Secret was written with `generation` (a switch): the successor is the delivered one now. */
  delivered(namespace: string, name: string, generation: number, cluster?: string): void {
    const state = this.state(namespace, name, cluster);
    state.delivered = generation;
    this.successorOf(state, labelsOf(namespace, name, cluster));
  }

  rotated(namespace: string, name: string, cluster?: string): void {
    this.state(namespace, name, cluster); // known, so that forgetCluster finds it
    this.rotations.inc(labelsOf(namespace, name, cluster));
  }

  failed(namespace: string, name: string, reason: string, cluster?: string): void {
    const state = this.state(namespace, name, cluster);
    if (!state.reasons) state.reasons = [reason];
    else if (!state.reasons.includes(reason)) state.reasons.push(reason);
    this.failures.inc({ ...labelsOf(namespace, name, cluster), reason });
  }

  /** Drops every series of an order (deleted). */
  forget(namespace: string, name: string, cluster?: string): void {
    const labels = labelsOf(namespace, name, cluster);
    for (const gauge of [this.nextRotation, this.lastRotation, this.expiry, this.successor]) gauge.remove(labels);
    this.rotations.remove(labels);
    const key = keyOf(namespace, name, cluster);
    const state = this.orders.get(key);
    for (const reason of state?.reasons ?? []) this.failures.remove({ ...labels, reason });
    for (const type of CONDITION_TYPES) {
      const c = state?.conditions[type];
      if (c) this.condition.remove({ ...labels, type, ...c });
    }
    this.orders.delete(key);
  }

  /** Drops every series of every order of a target cluster (deregistered: its orders are not served any more). */
  forgetCluster(cluster: string): void {
    for (const key of [...this.orders.keys()]) {
      const [c, namespace, name] = JSON.parse(key) as [string, string, string];
      if (c === cluster) this.forget(namespace, name, cluster);
    }
  }

  /** 1 while Keystone holds a generation above the delivered one; no series while no generation is delivered. */
  private successorOf(state: OrderState, labels: Partial<Record<Labels, string>>): void {
    const delivered = state.delivered;
    if (delivered === undefined) this.successor.remove(labels);
    else this.successor.set(labels, state.inKeystone.some((g) => g > delivered) ? 1 : 0);
  }

  private state(namespace: string, name: string, cluster?: string): OrderState {
    const key = keyOf(namespace, name, cluster);
    let state = this.orders.get(key);
    if (!state) this.orders.set(key, (state = { inKeystone: [], conditions: {} }));
    return state;
  }
}

const keyOf = (namespace: string, name: string, cluster?: string) => JSON.stringify([cluster ?? '', namespace, name]);
