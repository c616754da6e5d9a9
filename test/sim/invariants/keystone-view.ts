/**
 * The operator's pacing as Keystone saw it (issue 48, src/keystone/pacing.ts), for the invariants of ./keystone.ts:
 * each process's requests in flight at Keystone when each arrived (test/sim/network.ts counts them at the fake's front
 * door), when each process's pacing had time to learn Keystone's capacity, and its excursions above the spare-keeping
 * limit (its probes). Judged from what the fake saw and from the pacing's documented constants, never by calling the
 * pacing.
 */
import { PacingDefaults } from '../../../src/keystone/pacing';
import type { ServedRequest } from '../../support/fake-keystone/workers';
import { keystoneLoadOf, type KeystoneLoad } from '../keystone';
import type { Call } from '../network';
import type { SimWorld } from '../sim-world';

/** The least time between two probes (pacing.ts's `probeEveryMs`, the operator's default). */
export const PROBE_EVERY_MS = PacingDefaults.probeEveryMs;
/**
 * How long after Keystone first made a process's request wait its pacing has to act on it: the round that queued
 * ends after at most the ceiling's answers (≤ 8 requests, each ≤ 8 × 1.6 s behind a slowed Keystone of one worker),
 * and the limit falls at once; 30 s covers it.
 */
export const LEARN_MS = 30_000;
/** How long one probe's excursion may last: its unjudged round and its judged one (each ≤ the ceiling's answers). */
export const PROBE_ROUND_MS = 30_000;

/** An operator request's arrival above the spare-keeping limit. */
export interface Excursion {
  readonly process: string;
  readonly at: number;
  readonly inFlight: number;
  readonly workers: number;
}

export class PacingView {
  /** When each process's pacing learned Keystone's capacity (since the capacity last changed). */
  private readonly learned = new Map<string, number>();
  /** Every arrival above the spare-keeping limit, in order. */
  readonly excursions: Excursion[] = [];
  /** The operator's Keystone requests, in order of arrival. */
  readonly arrivals: Call[] = [];
  private readonly arrivalHooks: ((call: Call, learned: boolean) => void)[] = [];

  constructor(
    private readonly world: SimWorld,
    readonly load: KeystoneLoad,
  ) {
    load.workers.started.push((request) => this.started(request));
    world.network.keystoneArrivals.push((call) => this.arrived(call));
  }

  /** Called at each operator request's arrival, with whether its process's pacing has learned. */
  onArrival(hook: (call: Call, learned: boolean) => void): void {
    this.arrivalHooks.push(hook);
  }

  /** The spare-keeping limit with `workers` Keystone workers: max(1, W − spare). */
  spareLimit(process: string, workers: number): number {
    return Math.max(1, workers - this.spareOf(process));
  }

  spareOf(process: string): number {
    return this.world.processes.find((p) => p.name === process)?.config.keystoneSpareWorkers ?? 1;
  }

  ceilingOf(process: string): number {
    return this.world.processes.find((p) => p.name === process)?.config.keystoneInFlight ?? 0;
  }

  /** Whether `process`'s pacing had learned Keystone's capacity at `at`. */
  learnedAt(process: string, at: number): boolean {
    const since = this.learned.get(process);
    return since !== undefined && since + LEARN_MS <= at && since >= this.load.changedBefore(at);
  }

  /** Whether some process's pacing was learning at some instant of [from, to]. */
  learningWithin(from: number, to: number): boolean {
    if (this.load.changedBefore(to) + LEARN_MS > from) return true;
    return this.world.processes.some((p) => {
      const startedAt = this.world.restarts.find((r) => r.process === p.name)?.at ?? 0;
      if (startedAt > to || (p.running === false && this.lastArrivalOf(p.name) < from)) return false;
      return !this.learnedAt(p.name, from) || !this.learnedAt(p.name, to);
    });
  }

  private lastArrivalOf(process: string): number {
    for (let i = this.arrivals.length - 1; i >= 0; i--) if (this.arrivals[i].process === process) return this.arrivals[i].at;
    return Number.NEGATIVE_INFINITY;
  }

  private started(request: ServedRequest): void {
    if (request.startedAt === undefined || request.startedAt <= request.arrivedAt || !request.client.startsWith('keystone-appcred-operator-')) return;
    // Keystone made a request of this process wait: from now on its pacing has seen a queue (since the last change).
    const since = this.learned.get(request.client);
    if (since === undefined || since < this.load.changedBefore(request.arrivedAt)) this.learned.set(request.client, request.arrivedAt);
  }

  private arrived(call: Call): void {
    this.arrivals.push(call);
    const { workers } = this.load.capacityAt(call.at);
    if ((call.inFlight ?? 0) > this.spareLimit(call.process, workers)) this.excursions.push({ process: call.process, at: call.at, inFlight: call.inFlight ?? 0, workers });
    const learned = this.learnedAt(call.process, call.at);
    for (const hook of this.arrivalHooks) hook(call, learned);
  }
}

const views = new WeakMap<SimWorld, PacingView>();

/** The world's pacing view, when its Keystone has a capacity. */
export function pacingViewOf(world: SimWorld): PacingView | undefined {
  const load = keystoneLoadOf(world);
  if (!load) return undefined;
  let view = views.get(world);
  if (!view) {
    view = new PacingView(world, load);
    views.set(world, view);
  }
  return view;
}
