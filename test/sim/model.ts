/**
 * The simulation's vocabulary: a schedule (the installation it starts from and the events that happen to it, each after
 * a wait of virtual time), the registry entries that extend it (an {@link EventKind}: what can happen, how it is
 * generated, what it does to the world; an {@link Invariant}: what must hold, checked after every step), and what a
 * run reports. A schedule is plain JSON: a failing one is printed as a test case that replays it (./replay.ts).
 */
import type fc from 'fast-check';
import type { Setup } from './setup';
import type { SimWorld } from './sim-world';

export type { OrderSetup, Setup } from './setup';

/** One thing that happens: an event kind's name and its parameters (JSON). */
export interface EventInstance {
  readonly kind: string;
  readonly [parameter: string]: unknown;
}

/** Wait `wait` seconds of virtual time, then the event happens. */
export interface Step {
  readonly wait: number;
  readonly event: EventInstance;
}

export interface Schedule {
  readonly setup: Setup;
  readonly steps: readonly Step[];
}

/**
 * A kind of event in the registry (./events/index.ts). `generate` draws its parameters for a setup (fast-check, so a
 * failing schedule shrinks); `apply` makes it happen in the world at the current virtual instant (it may arm timers:
 * an outage ends by itself after its duration).
 */
export interface EventKind<P extends EventInstance = EventInstance> {
  readonly kind: P['kind'];
  /** What it stands for, for the docs and the replayed case's comment. */
  readonly description: string;
  /** How often it is drawn, relative to the others. */
  readonly weight: number;
  generate(setup: Setup): fc.Arbitrary<P>;
  apply(world: SimWorld, event: P): void | Promise<void>;
}

/** A broken invariant: which, when (virtual ms since the epoch), and what exactly. */
export interface Violation {
  readonly invariant: string;
  readonly at: number;
  readonly message: string;
}

/**
 * A rule that must hold over a whole run, in the registry (./invariants/index.ts). `watch` is called when the world is
 * built, before the operator starts: it subscribes to what it needs (the world's hooks: log lines, API changes, a
 * credential deleted in Keystone) and returns the checks the runner calls after every step (`check`) and once at the
 * end (`final`, after the run's quiet tail). A violation is reported by returning it, or through `report` at the
 * instant it happens.
 */
export interface Invariant {
  readonly name: string;
  /** The rule, as the issue words it. */
  readonly description: string;
  watch(world: SimWorld, report: (message: string) => void): InvariantChecks;
}

export interface InvariantChecks {
  check?(): void | Promise<void>;
  final?(): void | Promise<void>;
}

/** What a run found. */
export interface RunResult {
  readonly violations: readonly Violation[];
  /** Virtual time the run covered, in ms. */
  readonly virtualMs: number;
  /** A digest of everything that happened (calls, changes, log lines without durations): equal for equal schedules. */
  readonly trace: string;
}
