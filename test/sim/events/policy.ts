/**
 * Issue 48's rotation policy in the simulation: the rotation windows an order or a fleet default may name (a small
 * pool, with what each does written out by hand, so the invariants judge the operator by it and not by
 * src/lifecycle/window.ts), jitter, and the `fleet-defaults` event: the platform team sets, changes or removes the
 * ControlPlane's `spec.applicationCredentialDefaults` or a namespace assignment's (src/plane/policy.ts).
 */
import fc from 'fast-check';
import type { RotationWindow } from '../../../src/api';
import type { EventKind } from '../model';
import { controlPlane, CP, PATHS, TENANTS, type FleetDefaults, type Tenant } from '../objects';

const MINUTE_MS = 60_000;

/** What a window of the pool does, by hand: whether it is refused, open at an instant, and opens within a span. */
export interface WindowModel {
  readonly window: RotationWindow;
  /** Refused whenever the schedule is on: it stays closed longer than any interval the simulation draws. */
  readonly refused: boolean;
  openAt(t: number): boolean;
  /** Whether it is open at some instant of [from, to]. */
  openWithin(from: number, to: number): boolean;
}

const evenMinute = (t: number) => Math.floor(t / MINUTE_MS) % 2 === 0;

/** The windows orders and fleet defaults name: one always open, one open on even minutes (UTC), one refused. */
export const WINDOWS = {
  always: { schedule: '* * * * *', timeZone: 'UTC', duration: '1m' },
  even: { schedule: '*/2 * * * *', timeZone: 'UTC', duration: '1m' },
  refused: { schedule: '0 3 1 1 *', timeZone: 'UTC', duration: '1h' },
} as const satisfies Record<string, RotationWindow>;
export type WindowName = keyof typeof WINDOWS;

export const WINDOW_MODELS: Readonly<Record<WindowName, WindowModel>> = {
  always: { window: WINDOWS.always, refused: false, openAt: () => true, openWithin: () => true },
  even: {
    window: WINDOWS.even,
    refused: false,
    openAt: evenMinute,
    // Open at `from`, or an even minute starts after it and no later than `to`.
    openWithin: (from, to) => evenMinute(from) || (Math.floor(from / MINUTE_MS) + 1) * MINUTE_MS <= to,
  },
  // Once a year for an hour: closed longer than every interval minus grace period drawn here (at most 720h).
  refused: { window: WINDOWS.refused, refused: true, openAt: () => false, openWithin: () => false },
};

/** The model of a window the simulation wrote (by its schedule), if it is one of the pool. */
export function windowModel(window: RotationWindow | undefined): WindowModel | undefined {
  return window && Object.values(WINDOW_MODELS).find((m) => m.window.schedule === window.schedule);
}

/** The interval value of an order that leaves its interval to the fleet defaults (and the CRD's 720h). */
export const FLEET_INTERVAL = 'fleet';

export const windowNameArb: fc.Arbitrary<WindowName> = fc.constantFrom('always', 'even', 'refused');
export const jitterArb: fc.Arbitrary<number> = fc.constantFrom(0, 10, 50);

/**
 * A fleet defaults block: an interval (`1m` is shorter than every grace period drawn, so it is refused for each order
 * that takes it: the conflicting combination), a window, jitter.
 */
const defaultsArb: fc.Arbitrary<{ interval?: string; window?: WindowName; jitterPercent?: number }> = fc.record(
  { interval: fc.constantFrom('30m', '1m'), window: windowNameArb, jitterPercent: jitterArb },
  { requiredKeys: [] },
);

type FleetDefaultsEvent = { kind: 'fleet-defaults'; at: 'control-plane' | Tenant; defaults: { interval?: string; window?: WindowName; jitterPercent?: number } | null };

export const fleetDefaults: EventKind<FleetDefaultsEvent> = {
  kind: 'fleet-defaults',
  description: "the platform team sets, changes or removes fleet defaults on the ControlPlane or a namespace's assignment",
  weight: 2,
  generate: () =>
    fc.record({
      kind: fc.constant('fleet-defaults' as const),
      at: fc.constantFrom('control-plane' as const, ...TENANTS),
      defaults: fc.option(defaultsArb, { nil: null }),
    }),
  apply: (world, e) => {
    const cp = world.management.object(PATHS.controlPlanes, CP.namespace, CP.name);
    const spec = cp?.spec as { namespaceAssignments?: { namespace: string; targetClusterRef?: unknown; applicationCredentialDefaults?: FleetDefaults }[]; applicationCredentialDefaults?: FleetDefaults } | undefined;
    const block: FleetDefaults | undefined = e.defaults
      ? {
          rotation: {
            ...(e.defaults.interval !== undefined ? { interval: e.defaults.interval } : {}),
            ...(e.defaults.window !== undefined ? { window: WINDOWS[e.defaults.window] } : {}),
            ...(e.defaults.jitterPercent !== undefined ? { jitterPercent: e.defaults.jitterPercent } : {}),
          },
        }
      : undefined;
    const assignments = (spec?.namespaceAssignments ?? []).map((a) => ({
      namespace: a.namespace,
      target: a.targetClusterRef !== undefined,
      defaults: a.namespace === e.at ? block : a.applicationCredentialDefaults,
    }));
    const fleet = e.at === 'control-plane' ? block : spec?.applicationCredentialDefaults;
    world.management.seed(PATHS.controlPlanes, { ...cp, spec: controlPlane(assignments, fleet).spec }, 'kubectl');
  },
};
