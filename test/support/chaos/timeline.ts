/**
 * What the chaos run observed at the real components, as plain data: the invariants (./invariants/) are pure functions
 * of it, so each one is unit-tested on a timeline written by hand, and a run's timeline, saved as JSON, can be checked
 * again without the components.
 *
 * Sources: a sampler that reads, about every second and each time in the same order, every order's delivered Secret,
 * its backup in OpenBao, its status, the parked secrets and the orders' credentials in Keystone (directly, not through
 * the operator's proxies); the operator's proxies in front of Keystone and OpenBao (every request it made, with when
 * and how it ended); the operator's log lines (every replica, every restart); the consumers' authentications; the
 * leader's metrics with the statuses read just before; and the schedule's events as they happened. Secrets never enter
 * it: a delivered or parked secret is kept as a digest.
 */
import { createHash } from 'node:crypto';
import { generationOf } from '../../../src/api';
import type { RecordedCall } from '../recording-proxy';
import type { Tenant } from './schedule';

/** A secret as the timeline keeps it: a short digest (equal secrets, equal digests; nothing to leak). */
export const digestOf = (secret: string): string => createHash('sha256').update(secret).digest('hex').slice(0, 16);

/** A request the operator made, at its proxy (test/support/recording-proxy.ts, which always notes when). */
export type Call = RecordedCall & { readonly at: number };

/** An order of the run. */
export interface OrderInfo {
  /** `namespace/name`. */
  readonly key: string;
  readonly tenant: Tenant;
  /** Its children's prefix (credential names, parked Secrets, backup path). */
  readonly prefix: string;
  /** Its ordered Keystone user. */
  readonly user: { readonly id: string; readonly name: string };
  readonly graceMs: number;
  /** 0: the schedule is off. */
  readonly intervalMs: number;
}

export interface OrderStatusSeen {
  readonly credentialGeneration?: number;
  readonly credentialID?: string;
  readonly previousCredentialID?: string;
  readonly previousCredentialDeleteAt?: string;
  readonly nextRotation?: string;
  readonly observedGeneration?: number;
  readonly conditions?: readonly { readonly type: string; readonly status: string; readonly reason: string }[];
}

/** One order as one sample read it. */
export interface OrderSeen {
  readonly generation?: number;
  readonly status?: OrderStatusSeen;
  /** The delivered Secret's id and its secret's digest; undefined when there is no Secret. */
  readonly delivered?: { readonly id?: string; readonly secret?: string };
  /** The id the backup document at the order's path holds: `null` when there is no document, absent when unread. */
  readonly backup?: string | null;
  /** The digests of the parked secrets, by generation. */
  readonly parked: Readonly<Record<number, string>>;
}

/** A credential in Keystone as a sample listed it. */
export interface CredentialSeen {
  readonly id: string;
  readonly name: string;
  readonly userId: string;
  /** Its Keystone expiry (ms since the epoch); none when it has none. */
  readonly expiresAt?: number;
}

/** One observation of the components; a part that could not be read is absent. */
export interface Sample {
  readonly at: number;
  /** By order key; absent for an order that could not be read (the API server down). */
  readonly orders: Readonly<Record<string, OrderSeen>>;
  /** The users' credentials; absent when Keystone could not be listed. */
  readonly credentials?: readonly CredentialSeen[];
}

/** What happened to the installation, from when to when (ms since the epoch). */
export interface Disturbance {
  readonly kind: 'keystone' | 'openbao' | 'apiserver' | 'kill' | 'handover' | 'consent' | 'tenant-edit' | 'raise';
  readonly from: number;
  /** When it ended: the outage healed, the consent back, the API server ready, the killed replica's successor leading. */
  readonly to: number;
  /** The fault, for an outage (`down`, or the status answered). */
  readonly fault?: string;
  readonly order?: string;
  readonly tenant?: Tenant;
}

/** One authentication of a consumer with the pair it held. */
export interface ProbeResult {
  /** When Keystone answered (it checked the pair at or before then). */
  readonly at: number;
  /** The order's key. */
  readonly order: string;
  /** `fresh` re-reads the Secret before each authentication; `lagging` every half grace period, as a kubelet does. */
  readonly consumer: 'fresh' | 'lagging';
  readonly id?: string;
  /** The digest of the secret it held. */
  readonly secret?: string;
  /** `rejected`: Keystone answered 401 or 404; `unreachable`: no answer, or 5xx (Keystone's trouble, not the credential's). */
  readonly outcome: 'ok' | 'rejected' | 'unreachable';
}

/** An operator log line with the replica that wrote it and its time. */
export interface LogLine {
  readonly process: string;
  readonly at: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** The leader's metrics at a moment, with every order's conditions as read just before. */
export interface MetricsSample {
  readonly at: number;
  readonly process: string;
  /** `name{labels}` exactly as exposed → value. */
  readonly series: Readonly<Record<string, number>>;
  readonly conditions: Readonly<Record<string, OrderStatusSeen['conditions']>>;
}

export interface Timeline {
  readonly started: number;
  readonly ended: number;
  readonly orders: readonly OrderInfo[];
  readonly samples: readonly Sample[];
  /** The operator's requests to Keystone and to OpenBao, at its proxies. */
  readonly keystone: readonly Call[];
  readonly openbao: readonly Call[];
  /** How a failed pass names Keystone as the operator reaches it (`Keystone <URL>`). */
  readonly keystoneDependency: string;
  readonly lines: readonly LogLine[];
  readonly disturbances: readonly Disturbance[];
  readonly probes: readonly ProbeResult[];
  readonly metrics: readonly MetricsSample[];
  /** Credentials of the orders' users the operator never made (another installation's, a person's). */
  readonly foreign: readonly string[];
  /** The operator's informer resync period (ms; 0: never). */
  readonly resyncMs: number;
  /** How often the lagging consumer re-reads its Secret (ms). */
  readonly laggingRefreshMs: number;
}

/** A rule broken: which, when, what exactly. */
export interface Violation {
  readonly invariant: string;
  readonly at: number;
  readonly message: string;
}

/** Whether anything of `kinds` (every kind when absent) happened in [from, to]. */
export function disturbedBetween(t: Timeline, from: number, to: number, kinds?: readonly Disturbance['kind'][], order?: OrderInfo): boolean {
  return t.disturbances.some(
    (d) =>
      (!kinds || kinds.includes(d.kind)) &&
      d.from <= to &&
      d.to >= from &&
      // A tenant's edit, a raise or a consent concerns its own order or tenant only.
      (!order || (d.order === undefined || `${order.key.split('/')[0]}/${d.order}` === order.key) && (d.tenant === undefined || d.tenant === order.tenant)),
  );
}

/** When the first disturbance after `at` began, if one did. */
export function nextDisturbanceAfter(t: Timeline, at: number): number | undefined {
  return t.disturbances
    .map((d) => d.from)
    .filter((from) => from > at)
    .sort((a, b) => a - b)[0];
}

/** Whether a replica became the leader in [from, to]. */
export const leaderChangedBetween = (t: Timeline, from: number, to: number): boolean => t.lines.some((l) => l.msg === 'became the leader' && l.at >= from && l.at <= to);

/** The order's own credentials in a sample (its generations; others' and foreign ones left out). */
export function ownCredentials(t: Timeline, order: OrderInfo, credentials: readonly CredentialSeen[]): (CredentialSeen & { readonly generation: number })[] {
  const foreign = new Set(t.foreign);
  return credentials.flatMap((c) => {
    const generation = foreign.has(c.id) || c.userId !== order.user.id ? undefined : generationOf(order.prefix, c.name);
    return generation === undefined ? [] : [{ ...c, generation }];
  });
}

/** Derived views of a timeline, computed once per timeline (the invariants ask for them per sample). */
const derived = new WeakMap<Timeline, { byId?: Map<string, CredentialSeen>; logs: Map<string, CarriedEntry[]>; times?: Map<string, number[]> }>();
const cache = (t: Timeline) => derived.get(t) ?? (derived.set(t, { logs: new Map() }), derived.get(t)!);

/** Every credential any sample listed, by id (the last listing of each). */
export function credentialsById(t: Timeline): Map<string, CredentialSeen> {
  const c = cache(t);
  if (!c.byId) {
    c.byId = new Map();
    for (const s of t.samples) for (const x of s.credentials ?? []) c.byId.set(x.id, x);
  }
  return c.byId;
}

/**
 * What the order's delivered Secret carries in a sample: a credential of the order with its own parked secret (a pair
 * Keystone authenticates and the operator wrote), `null` when it carries none (no Secret, or a tenant's edit), or
 * `undefined` when the sample could not tell (a read failed).
 */
export function carried(t: Timeline, order: OrderInfo, sample: Sample): { id: string; generation: number } | null | undefined {
  const seen = sample.orders[order.key];
  if (!seen || !sample.credentials) return undefined;
  const id = seen.delivered?.id;
  const own = id === undefined ? undefined : ownCredentials(t, order, sample.credentials).find((c) => c.id === id);
  if (!own) return null;
  return seen.delivered?.secret !== undefined && seen.parked[own.generation] === seen.delivered.secret ? { id: own.id, generation: own.generation } : null;
}

/** One sample of what an order's Secret carried: the credential, or `null` for none. */
export interface CarriedEntry {
  readonly at: number;
  readonly id: string | null;
  readonly generation?: number;
}

/** What the order's Secret carried, sample by sample (samples that could not tell left out). */
export function carriedLog(t: Timeline, order: OrderInfo): readonly CarriedEntry[] {
  const c = cache(t);
  let log = c.logs.get(order.key);
  if (!log) {
    log = t.samples.flatMap((s) => {
      const x = carried(t, order, s);
      return x === undefined ? [] : [{ at: s.at, id: x?.id ?? null, ...(x ? { generation: x.generation } : {}) }];
    });
    c.logs.set(order.key, log);
  }
  return log;
}

/** The last time any order's delivered Secret was seen carrying `id` at or before `at`. */
export function lastCarried(t: Timeline, id: string, at: number): number | undefined {
  const c = cache(t);
  if (!c.times) {
    c.times = new Map();
    for (const order of t.orders) {
      for (const x of carriedLog(t, order)) {
        if (x.id === null) continue;
        const times = c.times.get(x.id) ?? [];
        times.push(x.at);
        c.times.set(x.id, times);
      }
    }
    for (const times of c.times.values()) times.sort((a, b) => a - b);
  }
  let last: number | undefined;
  for (const time of c.times.get(id) ?? []) {
    if (time > at) break;
    last = time;
  }
  return last;
}

/** The labels of a series key `name{a="1",b="2"}`. */
export function labelsOf(series: string): { readonly name: string; readonly labels: Readonly<Record<string, string>> } {
  const brace = series.indexOf('{');
  const name = brace < 0 ? series : series.slice(0, brace);
  const labels = Object.fromEntries([...(brace < 0 ? '' : series.slice(brace)).matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
  return { name, labels };
}
