/**
 * The chaos run's schedule (issue 46, the real-component chaos run): what happens to a real installation, and when. A
 * schedule is drawn from a seed with fast-check (`fc.sample` with that seed: the same seed, minutes and interval give
 * the same schedule, event for event, to the second) and printed as JSON, which `--schedule FILE` runs again as it is.
 *
 * The events are the ones the simulation (test/sim/) draws that real components can be made to do: the leader
 * SIGKILLed (the kubelet starts it again) or SIGTERMed (the standby takes over), Keystone cut off (a resetting proxy) or
 * answering 5xx, 401 or 403, OpenBao cut off or denying (403), the API server restarted, a tenant editing a delivered
 * Secret (a key changed, the id swapped for another order's, the id and the secret swapped, the Secret deleted), a
 * generation raised, a namespace's consent taken off the ControlPlane and put back. Each kind comes once, in a seeded
 * order, before any comes again, so even a short run meets several kinds.
 */
import fc from 'fast-check';

/** The installation a schedule runs against and how long. */
export interface ChaosSetup {
  readonly seed: number;
  /** The run's length from the orders' first delivery, events and quiet tail included. */
  readonly minutes: number;
  /** `rotation.interval` of the rotating orders, in seconds (the settled order's is `0s`). */
  readonly intervalSeconds: number;
}

/** A tenant's namespace: `a` holds the rotating orders, `b` the settled one (each with its own Keystone user). */
export type Tenant = 'a' | 'b';

/** An order of the run: its tenant, its name, and whether its schedule is on. */
export interface ChaosOrder {
  readonly tenant: Tenant;
  readonly name: string;
  readonly rotating: boolean;
}

/** The orders every run holds: two rotating on the interval, one settled (rotated only by a raise). */
export const ORDERS: readonly ChaosOrder[] = [
  { tenant: 'a', name: 'r1', rotating: true },
  { tenant: 'a', name: 'r2', rotating: true },
  { tenant: 'b', name: 's1', rotating: false },
];

export type KeystoneFault = 'down' | '500' | '503' | '401' | '403';
export type TenantEdit = 'key' | 'swap' | 'swap-keys' | 'delete';

/** One thing that happens to the installation. */
export type ChaosEvent =
  /** The leader SIGKILLed; the kubelet starts it again a second later (the standby takes the Lease once it expires). */
  | { readonly kind: 'kill' }
  /** The leader SIGTERMed: it releases the Lease, the standby takes over; the kubelet starts it again as the standby. */
  | { readonly kind: 'handover' }
  /** Keystone, as the operator reaches it, cut off (`down`: every connection reset) or answering a status. */
  | { readonly kind: 'keystone'; readonly fault: KeystoneFault; readonly seconds: number }
  /** OpenBao, as the operator reaches it, cut off or denying every request (403). */
  | { readonly kind: 'openbao'; readonly fault: 'down' | '403'; readonly seconds: number }
  /** The API server restarted (SIGTERM, started again as it ran). */
  | { readonly kind: 'apiserver-restart' }
  /** A tenant edits an order's delivered Secret. */
  | { readonly kind: 'tenant-edit'; readonly order: string; readonly edit: TenantEdit }
  /** A tenant raises an order's `spec.credentialGeneration` (rotate now). */
  | { readonly kind: 'raise'; readonly order: string }
  /** The platform team takes a tenant's namespace off the ControlPlane (its orders freeze) and puts it back. */
  | { readonly kind: 'consent'; readonly tenant: Tenant; readonly seconds: number };

/** An event at `at` seconds from the run's start. */
export interface ChaosStep {
  readonly at: number;
  readonly event: ChaosEvent;
}

export interface ChaosSchedule {
  readonly setup: ChaosSetup;
  readonly steps: readonly ChaosStep[];
}

/** The grace period of every order: half the interval (shorter than it, as the spec requires). */
export const graceSecondsOf = (setup: ChaosSetup): number => Math.floor(setup.intervalSeconds / 2);

/** The longest outage: three minutes, or one and a half intervals if that is less (a short run's window is small). */
export const longestOutageOf = (setup: ChaosSetup): number => Math.min(180, Math.round(setup.intervalSeconds * 1.5));

/**
 * The quiet tail after the last event's end: a rotation, its grace period and a minute, so that every order rotates
 * and sweeps undisturbed before the run ends and every invariant's window closes.
 */
export const tailSecondsOf = (setup: ChaosSetup): number => setup.intervalSeconds + graceSecondsOf(setup) + 60;

const KINDS = ['kill', 'handover', 'keystone-down', 'keystone-status', 'openbao-down', 'openbao-denies', 'apiserver-restart', 'tenant-edit', 'raise', 'consent'] as const;
type Kind = (typeof KINDS)[number];

function eventArb(kind: Kind, setup: ChaosSetup): fc.Arbitrary<ChaosEvent> {
  const seconds = fc.integer({ min: 10, max: longestOutageOf(setup) });
  const order = fc.constantFrom(...ORDERS.map((o) => o.name));
  switch (kind) {
    case 'kill':
    case 'handover':
    case 'apiserver-restart':
      return fc.constant({ kind });
    case 'keystone-down':
      return seconds.map((s) => ({ kind: 'keystone' as const, fault: 'down' as const, seconds: s }));
    case 'keystone-status':
      return fc.record({ kind: fc.constant('keystone' as const), fault: fc.constantFrom<KeystoneFault>('500', '503', '401', '403'), seconds });
    case 'openbao-down':
      return seconds.map((s) => ({ kind: 'openbao' as const, fault: 'down' as const, seconds: s }));
    case 'openbao-denies':
      return seconds.map((s) => ({ kind: 'openbao' as const, fault: '403' as const, seconds: s }));
    case 'tenant-edit':
      return fc.record({ kind: fc.constant('tenant-edit' as const), order, edit: fc.constantFrom<TenantEdit>('key', 'swap', 'swap-keys', 'delete') });
    case 'raise':
      return fc.record({ kind: fc.constant('raise' as const), order });
    case 'consent':
      return fc.record({ kind: fc.constant('consent' as const), tenant: fc.constantFrom<Tenant>('a', 'b'), seconds: fc.integer({ min: Math.round(setup.intervalSeconds / 2), max: setup.intervalSeconds * 2 }) });
  }
}

/** How long an event lasts (seconds): its outage or its consent's absence; 0 for an instant. */
export const durationOf = (event: ChaosEvent): number => ('seconds' in event ? event.seconds : 0);

/**
 * The schedule a seed gives: events from the first interval on (the orders delivered and settled), a third of an
 * interval to one and a quarter apart, kinds in a seeded order that repeats, each ending (an outage healed, consent
 * back) before the quiet tail; an outage that would reach into the tail is shortened to fit, or left out under 10 s.
 */
export function drawSchedule(setup: ChaosSetup): ChaosSchedule {
  const first = setup.intervalSeconds;
  const last = setup.minutes * 60 - tailSecondsOf(setup);
  const gap = fc.integer({ min: Math.round(setup.intervalSeconds / 3), max: Math.round(setup.intervalSeconds * 1.25) });
  const most = Math.max(0, Math.ceil((last - first) / Math.round(setup.intervalSeconds / 3)) + 1);
  const arb = fc
    .shuffledSubarray([...KINDS], { minLength: KINDS.length, maxLength: KINDS.length })
    .chain((order) => fc.tuple(...Array.from({ length: most }, (_, i) => fc.record({ gap, event: eventArb(order[i % order.length], setup) }))));
  const [drawn] = fc.sample(arb, { seed: setup.seed, numRuns: 1 });
  const steps: ChaosStep[] = [];
  let at = first;
  for (const [i, { gap: pause, event }] of drawn.entries()) {
    if (i > 0) at += pause;
    if (at > last) break;
    const fits = 'seconds' in event ? { ...event, seconds: Math.min(event.seconds, last - at) } : event;
    if ('seconds' in fits && fits.seconds < 10) continue;
    steps.push({ at, event: fits });
  }
  return { setup, steps };
}

/** One line per step, for the run's report: `+95 s keystone 503 for 40 s`. */
export function describeStep(step: ChaosStep): string {
  const e = step.event;
  const what =
    e.kind === 'keystone' || e.kind === 'openbao'
      ? `${e.kind} ${e.fault} for ${e.seconds} s`
      : e.kind === 'tenant-edit'
        ? `tenant edit of ${e.order}-credentials: ${e.edit}`
        : e.kind === 'raise'
          ? `raise ${e.order}`
          : e.kind === 'consent'
            ? `consent of tenant ${e.tenant} off for ${e.seconds} s`
            : e.kind;
  return `+${step.at} s ${what}`;
}

/**
 * A schedule read back from its JSON (`--schedule FILE`, a report's printed schedule, maybe edited): checked, so a bad
 * file fails naming the field, the value and the rule.
 */
export function parseSchedule(text: string): ChaosSchedule {
  const raw = JSON.parse(text) as Partial<ChaosSchedule>;
  const setup = raw.setup as Partial<ChaosSetup> | undefined;
  const whole = (field: string, value: unknown, min: number) => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw new Error(`schedule: ${field} (${JSON.stringify(value)}) must be a whole number, ${min} or more`);
    return value;
  };
  const checked: ChaosSetup = { seed: whole('setup.seed', setup?.seed, 0), minutes: whole('setup.minutes', setup?.minutes, 1), intervalSeconds: whole('setup.intervalSeconds', setup?.intervalSeconds, 60) };
  if (!Array.isArray(raw.steps)) throw new Error('schedule: steps must be a list of { at, event }');
  const names = new Set(ORDERS.map((o) => o.name));
  const steps = raw.steps.map((step: ChaosStep, i) => {
    whole(`steps[${i}].at`, step.at, 0);
    const e = step.event as ChaosEvent | undefined;
    if (!e || !['kill', 'handover', 'keystone', 'openbao', 'apiserver-restart', 'tenant-edit', 'raise', 'consent'].includes(e.kind)) throw new Error(`schedule: steps[${i}].event.kind (${JSON.stringify(e?.kind)}) is not an event of the chaos run`);
    if ('order' in e && !names.has(e.order)) throw new Error(`schedule: steps[${i}].event.order (${JSON.stringify(e.order)}) must be one of ${[...names].join(', ')}`);
    if ('seconds' in e) whole(`steps[${i}].event.seconds`, e.seconds, 1);
    return step;
  });
  return { setup: checked, steps };
}
