/**
 * A fleet's mass rotation in the simulation (issue 48: "a 20,000-order mass rotation through jitter and windows"): the
 * real manager, controllers, reconcilers, caches and work queue of one operator process (./process.ts) over the fake
 * API server, Keystone and OpenBao, on the virtual clock (./clock.ts), so a month of a fleet's life runs in minutes.
 *
 * The fleet: `orders` orders of tenant-a, {@link PER_USER} per Keystone user (bench/operator's shape), created in one
 * burst (one GitOps sync) once their users are Ready, every rotation field left to the ControlPlane's fleet default:
 * interval 720h and grace period 24h (`intervalHours`, `graceHours`) and, with `policy`, {@link FLEET_JITTER_PERCENT}%
 * jitter and the window {@link FLEET_WINDOW} (weekdays 02:00–04:00 Europe/Berlin). Once every order holds its first
 * credential, the clock runs through the whole rotation period (to the last order's due time plus its grace period,
 * when the credential it replaced is deleted); `raise` orders have their `spec.credentialGeneration` raised at the
 * median recorded nextRotation, outside the window (a forced rotation: it must not wait).
 *
 * What it records, read by bench/fleet-rotation.ts and checked by {@link violationsOf}: every mint the operator logged
 * (`action` lines: when, which order, why), when each order converged at a new credential, each order's due time (the
 * reference's nextRotation, `min(lastRotation + interval, credentialExpiresAt − gracePeriod)`, from the status after
 * the fill), the most credentials an order held at the fake Keystone (sampled hourly and at the end), and the Keystone
 * requests per virtual second and in flight at once, as the operator's own `fetch` sends them. The fake Keystone
 * answers at once: its cost is not modelled, so "in flight" counts only what the operator's limiter lets through
 * together, and a rate is bounded by `--keystone-rate` alone.
 */
import type { RotationWindow } from '../../src/api';
import { credentialName } from '../../src/api/naming';
import type { Obj } from '../unit/kube/fake-api-server';
import { KEYSTONE_URL } from './network';
import { CP, PATHS, TENANTS, controlPlane, keystoneUser, order, roleAssignment } from './objects';
import { SimWorld } from './sim-world';

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;
/** Orders per Keystone user (bench/operator/orders.ts PER_USER: a service user's share). */
export const PER_USER = 10;
/** The fleet default's window: weekdays from 02:00 to 04:00 in Berlin. */
export const FLEET_WINDOW = { schedule: '0 2 * * 1-5', timeZone: 'Europe/Berlin', duration: '2h' } as const satisfies RotationWindow;
export const FLEET_JITTER_PERCENT = 10;
/** A pass's latency: how far past an instant an action it was due at may land (the watch, the queue, the limiter). */
export const PASS_LATENCY_MS = 10 * SECOND_MS;
/** How soon a raised generation must mint. */
export const FORCED_WITHIN_MS = 60 * SECOND_MS;
const TENANT = TENANTS[0];
const STEP_MS = MINUTE_MS;

const BERLIN = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', hourCycle: 'h23' });

/**
 * Whether {@link FLEET_WINDOW} is open at `t`, read by hand (not by src/lifecycle/window.ts, which it judges): Monday to
 * Friday, 02:00 to 04:00 Berlin time. Exact away from a daylight-saving change (the run lies in January and February).
 */
export function inFleetWindow(t: number): boolean {
  const parts = Object.fromEntries(BERLIN.formatToParts(new Date(t)).map((p) => [p.type, p.value]));
  return !['Sat', 'Sun'].includes(parts.weekday ?? '') && ['02', '03'].includes(parts.hour ?? '');
}

export interface MassRotationOptions {
  /** Orders in the fleet (a multiple of {@link PER_USER} keeps every user's share equal). */
  readonly orders: number;
  /** Jitter and the window in the fleet default; without, the fleet rotates as the reference says. */
  readonly policy: boolean;
  /** The fleet default's interval and grace period, in hours (a test runs a shorter period). @default 720 and 24 */
  readonly intervalHours?: number;
  readonly graceHours?: number;
  /** Orders whose generation is raised mid-run. @default 0 */
  readonly raise?: number;
  /** The operator's `--resync-period`. @default "24h" */
  readonly resyncPeriod?: string;
  /** @default 48 */
  readonly seed?: number;
  /** Called with a line of progress now and then (the bench's stderr). */
  readonly progress?: (line: string) => void;
}

/** A mint the operator logged. */
export interface Mint {
  readonly at: number;
  readonly key: string;
  readonly why: string;
}

export interface MassRotation {
  readonly options: MassRotationOptions;
  /** When the burst was created, and when its last order held its first credential (virtual ms). */
  readonly createdAt: number;
  readonly filledAt: number;
  /** When the raise happened (absent: none). */
  readonly raisedAt?: number;
  /**
   * The raised orders, each with the instant the reference lets its raise mint: the raise, or the end of the grace
   * period running then ("No rotation starts while a grace period runs, whatever the trigger").
   */
  readonly raised: ReadonlyMap<string, number>;
  /** The end of the run (virtual ms). */
  readonly endAt: number;
  /** Each order's due time after the fill (the reference's nextRotation) and its recorded nextRotation, by `tenant/name`. */
  readonly due: ReadonlyMap<string, { readonly due: number; readonly next: number; readonly credentialId: string }>;
  /** Mints after the fill, in order. */
  readonly mints: readonly Mint[];
  /** When each order first converged at a credential other than its first (Ready, the new credential delivered). */
  readonly converged: ReadonlyMap<string, number>;
  /** The orders' final state: Ready, holding a credential other than the first, its Secret authenticating. */
  readonly notConverged: readonly string[];
  /** The most credentials one order held at the fake Keystone, and which. */
  readonly mostCredentials: { readonly count: number; readonly key: string };
  /** Keystone requests of the operator: the most in flight at once, and per virtual second (fill and run apart). */
  readonly keystone: {
    readonly peakInFlight: number;
    readonly peakPerSecondFill: number;
    readonly peakPerSecondRun: number;
    readonly requests: number;
    /** The operator's Keystone requests between two virtual instants after the fill (ms, both included by second). */
    readonly requestsBetween: (from: number, to: number) => number;
  };
  readonly inFlightLimit: number;
  readonly rateLimit: number;
  /** The largest resident set seen, in bytes. */
  readonly peakRss: number;
}

/** Runs the fleet's rotation period; throws when the fleet does not converge in the time a fill may take. */
export async function massRotation(options: MassRotationOptions): Promise<MassRotation> {
  const progress = options.progress ?? (() => undefined);
  const intervalHours = options.intervalHours ?? 720;
  const graceMs = (options.graceHours ?? 24) * HOUR_MS;
  const graceHours = graceMs / HOUR_MS;
  const world = SimWorld.create({
    seed: options.seed ?? 48,
    orders: [],
    replicas: 1,
    consumerHandoff: false,
    secretAccess: 'cluster-wide',
    admin: 'password',
    targetCluster: false,
    operatorFlags: { resyncPeriod: options.resyncPeriod ?? '24h' },
    consumers: false,
  });
  const keystone = countKeystone(world);
  const mints: Mint[] = [];
  let phase: 'fill' | 'run' = 'fill';
  world.hooks.line.push((line) => {
    if (phase === 'run' && line.msg === 'action' && line.action === 'mint' && line.outcome === 'done') mints.push({ at: world.time.now(), key: String(line.key), why: String(line.why) });
  });
  const due = new Map<string, { due: number; next: number; credentialId: string }>();
  const converged = new Map<string, number>();
  world.hooks.change.push(({ collection, object, at }) => {
    if (phase !== 'run' || collection !== PATHS.orders) return;
    const key = keyOf(object);
    const status = statusOf(object);
    const first = due.get(key)?.credentialId;
    if (!converged.has(key) && first && status.credentialID && status.credentialID !== first && ready(object)) converged.set(key, at);
  });
  let peakRss = 0;
  try {
    const cp = world.management.object(PATHS.controlPlanes, CP.namespace, CP.name);
    const rotation = { interval: `${intervalHours}h`, gracePeriod: `${graceHours}h`, ...(options.policy ? { window: FLEET_WINDOW, jitterPercent: FLEET_JITTER_PERCENT } : {}) };
    world.management.seed(PATHS.controlPlanes, { ...cp, spec: controlPlane(TENANTS.map((namespace) => ({ namespace })), { rotation }).spec }, 'kubectl');
    const users = Math.ceil(options.orders / PER_USER);
    for (let u = 0; u < users; u++) {
      world.management.seed(PATHS.users, keystoneUser(TENANT, `svc-${u}`));
      world.management.seed(PATHS.assignments, roleAssignment(TENANT, `member-${u}`, `svc-${u}`));
    }
    await world.start();
    const step = async (ms = STEP_MS) => {
      await world.time.advance(ms);
      // The world keeps every line, call and request for the invariants; the bench counts them as they happen instead.
      world.lines.length = 0;
      world.reconciles.length = 0;
      world.network.calls.length = 0;
      world.keystone.calls.length = 0;
      world.management.requests.length = 0;
      world.target.requests.length = 0;
      peakRss = Math.max(peakRss, process.memoryUsage.rss());
    };
    const until = async (what: string, done: () => boolean, withinMs: number) => {
      const deadline = world.time.now() + withinMs;
      while (!done()) {
        if (world.time.now() >= deadline) throw new Error(`${what}: not done after ${withinMs / MINUTE_MS} virtual minutes`);
        await step();
        if (world.time.now() % (30 * MINUTE_MS) === 0) progress(`${iso(world.time.now())}: waiting for ${what}`);
      }
    };
    await until('the Keystone users Ready', () => world.management.list(PATHS.users).every(ready), 6 * HOUR_MS);
    const createdAt = world.time.now();
    for (let i = 0; i < options.orders; i++) world.management.seed(PATHS.orders, ownOrder(i), 'kubectl');
    progress(`${options.orders} orders created at ${iso(createdAt)}`);
    const fillWithin = 6 * HOUR_MS + (options.orders / 5) * SECOND_MS;
    await until('the fleet holding its first credentials', () => world.management.list(PATHS.orders).every((o) => ready(o) && statusOf(o).credentialID !== undefined), fillWithin);
    const filledAt = world.time.now();
    for (const o of world.management.list(PATHS.orders)) {
      const s = statusOf(o);
      const last = Date.parse(s.lastRotation ?? '');
      const expiry = s.credentialExpiresAt ? Date.parse(s.credentialExpiresAt) - graceMs : Infinity;
      due.set(keyOf(o), { due: Math.min(last + intervalHours * HOUR_MS, expiry), next: Date.parse(s.nextRotation ?? ''), credentialId: s.credentialID ?? '' });
    }
    progress(`filled at ${iso(filledAt)} (${((filledAt - createdAt) / MINUTE_MS).toFixed(1)} virtual minutes)`);
    keystone.fillDone();
    phase = 'run';
    const endAt = Math.max(...[...due.values()].map((d) => d.due)) + graceMs + HOUR_MS;
    const raised = new Map<string, number>();
    let raisedAt: number | undefined;
    const raiseCount = options.raise ?? 0;
    if (raiseCount > 0) {
      const nexts = [...due.values()].map((d) => d.next).sort((a, b) => a - b);
      raisedAt = nexts[Math.floor(nexts.length / 2)] ?? filledAt;
      while (inFleetWindow(raisedAt) || inFleetWindow(raisedAt + FORCED_WITHIN_MS)) raisedAt += HOUR_MS;
      raisedAt = Math.ceil(raisedAt / STEP_MS) * STEP_MS;
    }
    let mostCredentials = { count: 0, key: '' };
    const sample = () => {
      const held = credentialsPerOrder(world);
      for (const [key, count] of held) if (count > mostCredentials.count) mostCredentials = { count, key };
    };
    let lastDay = Math.floor(world.time.now() / (24 * HOUR_MS));
    // The run reads the world only at the raise, on each hour (the sample) and at the end (the first minute from it):
    // the clock moves from one to the next at once, every timer on the way firing at its time. (Minute by minute, each
    // of a month's 44,000 steps cost the fake timers a scan of every pending timer, and at fleet size most of the run.)
    const lastStep = Math.ceil(endAt / STEP_MS) * STEP_MS;
    while (world.time.now() < endAt) {
      if (raisedAt !== undefined && raised.size === 0 && world.time.now() >= raisedAt) {
        raisedAt = world.time.now();
        const every = options.orders / raiseCount;
        for (let r = 0; r < raiseCount; r++) {
          const i = Math.floor(r * every);
          const name = orderName(i);
          const existing = world.management.object(PATHS.orders, TENANT, name);
          // One above the generation it holds (a scheduled rotation before the raise has minted generation 2 already).
          const generation = (existing?.status as { credentialGeneration?: number } | undefined)?.credentialGeneration ?? 1;
          world.management.seed(PATHS.orders, { ...existing, spec: { ...(existing?.spec as object), credentialGeneration: generation + 1 } }, 'kubectl');
          const status = (existing?.status ?? {}) as { previousCredentialGeneration?: number; previousCredentialDeleteAt?: string };
          const graceEnds = status.previousCredentialGeneration !== undefined ? Date.parse(status.previousCredentialDeleteAt ?? '') : NaN;
          raised.set(`${TENANT}/${name}`, Number.isNaN(graceEnds) ? raisedAt : Math.max(raisedAt, graceEnds));
        }
        progress(`raised ${raiseCount} generations at ${iso(raisedAt)}`);
      }
      const now = world.time.now();
      const raiseDue = raisedAt !== undefined && raised.size === 0 && raisedAt > now ? raisedAt : Infinity;
      await step(Math.min((Math.floor(now / HOUR_MS) + 1) * HOUR_MS, raiseDue, lastStep) - now);
      if (world.time.now() % HOUR_MS === 0) sample();
      const day = Math.floor(world.time.now() / (24 * HOUR_MS));
      if (day !== lastDay) {
        lastDay = day;
        progress(`${iso(world.time.now()).slice(0, 10)}: ${mints.length} mints so far, RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
      }
    }
    sample();
    const notConverged = world.management.list(PATHS.orders).flatMap((o) => {
      const key = keyOf(o);
      const s = statusOf(o);
      const secret = world.delivered({ tenant: TENANT, name: o.metadata.name });
      const fine = ready(o) && s.credentialID !== due.get(key)?.credentialId && world.keystone.authenticates(secret?.application_credential_id, secret?.application_credential_secret);
      return fine ? [] : [key];
    });
    return {
      options,
      createdAt,
      filledAt,
      ...(raisedAt !== undefined ? { raisedAt } : {}),
      raised,
      endAt,
      due,
      mints,
      converged,
      notConverged,
      mostCredentials,
      keystone: keystone.figures(),
      inFlightLimit: world.leader?.config.keystoneInFlight ?? 0,
      rateLimit: world.leader?.config.keystoneRate ?? 0,
      peakRss,
    };
  } finally {
    await world.close();
  }
}

/**
 * The invariants of a mass rotation, as messages (none: all held): no scheduled rotation outside a window (with the
 * policy), no order rotated or converged past its due time (with the policy; without it every order is due at once
 * and the fleet is judged by its credentials' expiry), every order converged, at most two credentials per order at
 * the fake Keystone, every raised order minted within {@link FORCED_WITHIN_MS} of the raise (of the end of the grace
 * period running then: the reference starts no rotation in one).
 */
export function violationsOf(run: MassRotation): string[] {
  const out: string[] = [];
  const say = (message: string) => void (out.length < 20 ? out.push(message) : undefined);
  for (const m of run.mints) {
    if (run.options.policy && m.why === 'schedule due' && !inFleetWindow(m.at) && !inFleetWindow(m.at - PASS_LATENCY_MS)) say(`${m.key}: a scheduled rotation started at ${iso(m.at)}, outside the window`);
  }
  for (const [key, { due }] of run.due) {
    const at = run.converged.get(key);
    const limit = run.options.policy ? due + PASS_LATENCY_MS : due + (run.options.graceHours ?? 24) * HOUR_MS;
    if (at === undefined) say(`${key}: never converged at a new credential (due ${iso(due)})`);
    else if (at > limit) say(`${key}: converged at its new credential at ${iso(at)}, past ${run.options.policy ? 'its due time' : "its credential's expiry"} ${iso(limit)}`);
  }
  for (const key of run.notConverged) say(`${key}: not converged at the end (Ready, a new credential, its Secret authenticating)`);
  if (run.mostCredentials.count > 2) say(`${run.mostCredentials.key}: held ${run.mostCredentials.count} credentials at the fake Keystone at once`);
  for (const [key, from] of run.raised) {
    const forced = forcedMint(run, key);
    if (!forced || forcedWait(run, forced.at, from) > FORCED_WITHIN_MS) say(`${key}: the raised generation ${forced ? `minted at ${iso(forced.at)}` : 'never minted'}, raised at ${iso(run.raisedAt ?? 0)}, free to mint from ${iso(from)}`);
  }
  return out;
}

/**
 * How long a forced rotation free to mint from `from` and minted `at` waited for anything but Keystone's share: its wait
 * less the time the operator's Keystone requests in between take at `--keystone-rate`. A raise never waits for a
 * window, but a raise of a thousand orders is paced (issue 48: the fleet converges "at Keystone's capacity minus that
 * share"), so its last mint comes when the requests before it are through, not within a fixed time.
 */
export function forcedWait(run: MassRotation, at: number, from: number): number {
  return at - from - (run.keystone.requestsBetween(from, at) / run.rateLimit) * SECOND_MS;
}

/** The mint a raised order made for its raise. */
export function forcedMint(run: MassRotation, key: string): Mint | undefined {
  return run.mints.find((m) => m.key === key && m.why !== 'schedule due' && m.at >= (run.raisedAt ?? 0));
}

const orderName = (i: number) => `o${i}`;

/** Order `i`: user `svc-<i / PER_USER>`'s, every rotation field left to the fleet default. */
function ownOrder(i: number): Obj {
  const o = order(TENANT, orderName(i), { gracePeriod: '24h', credentialGeneration: 1 });
  const spec: Record<string, unknown> = { ...o.spec, userRef: { name: `svc-${Math.floor(i / PER_USER)}` } };
  delete spec.rotation;
  return { ...o, spec } as Obj;
}

type Status = { credentialID?: string; lastRotation?: string; nextRotation?: string; credentialExpiresAt?: string; conditions?: { type: string; status?: string }[] };
const statusOf = (o: Obj) => (o.status ?? {}) as Status;
const ready = (o: Obj) => statusOf(o).conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true || statusOf(o).conditions?.some((c) => c.type === 'CredentialReady' && c.status === 'True') === true;
const keyOf = (o: Obj) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const iso = (t: number) => new Date(t).toISOString();

/** How many credentials each order holds at the fake Keystone (by the name's prefix, as credentialName makes it). */
function credentialsPerOrder(world: SimWorld): Map<string, number> {
  const suffix = credentialName('', 1).replace(/1$/, '');
  const held = new Map<string, number>();
  for (const c of world.keystone.credentials.values()) {
    const at = c.name.lastIndexOf(suffix);
    if (at < 0) continue;
    const key = `${c.userId}/${c.name.slice(0, at)}`;
    held.set(key, (held.get(key) ?? 0) + 1);
  }
  return held;
}

/** Counts the operator's Keystone requests as its `fetch` sends them: in flight at once, per virtual second. */
function countKeystone(world: SimWorld) {
  const fetchOf = world.network.fetchOf.bind(world.network);
  const host = new URL(KEYSTONE_URL).host;
  let inFlight = 0;
  let peakInFlight = 0;
  let requests = 0;
  let second = -1;
  let inSecond = 0;
  let peakFill = 0;
  let peakRun = 0;
  let filled = false;
  // The requests of each virtual second after the fill (seconds with none are absent).
  const run = new Map<number, number>();
  world.network.fetchOf = (process, alive) => {
    const fetch = fetchOf(process, alive);
    return async (url, init) => {
      if (new URL(url).host !== host) return fetch(url, init);
      const now = Math.floor(world.time.now() / SECOND_MS);
      if (now !== second) [second, inSecond] = [now, 0];
      inSecond++;
      requests++;
      if (filled) {
        peakRun = Math.max(peakRun, inSecond);
        run.set(now, inSecond);
      } else peakFill = Math.max(peakFill, inSecond);
      peakInFlight = Math.max(peakInFlight, ++inFlight);
      try {
        return await fetch(url, init);
      } finally {
        inFlight--;
      }
    };
  };
  return {
    fillDone: () => void (filled = true),
    figures: () => ({
      peakInFlight,
      peakPerSecondFill: peakFill,
      peakPerSecondRun: peakRun,
      requests,
      requestsBetween: (from: number, to: number) => {
        let sum = 0;
        for (let t = Math.floor(from / SECOND_MS); t <= Math.floor(to / SECOND_MS); t++) sum += run.get(t) ?? 0;
        return sum;
      },
    }),
  };
}
