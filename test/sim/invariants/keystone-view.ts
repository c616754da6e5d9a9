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
 * How many rounds of its requests after Keystone first made a process's request wait its pacing needs to act on it: in
 * slow start its limit is up to 2 W, the round that queued (≤ 2 W answers) is judged at once, and the requests then
 * in flight (≤ 2 W) drain; three rounds of 2 W requests cover it.
 */
export const LEARN_ROUNDS = 3;

/**
 * How many of its requests one probe spans, in rounds of W + 1 (its limit): the round that lets the raise take effect,
 * the judged one, and the requests in flight when it ends.
 */
export const PROBE_ROUNDS = 3;

/**
 * An operator request's arrival above the spare-keeping limit: a probe's (the first of a process since
 * {@link PROBE_EVERY_MS}, or one of the {@link PROBE_ROUNDS} rounds of requests after it, at most W + 1 in flight), or
 * beyond what a probe may take.
 */
export interface Excursion {
  readonly process: string;
  readonly at: number;
  readonly inFlight: number;
  readonly workers: number;
  /** Why it is beyond a probe; absent: it is a probe's. */
  readonly beyond?: string;
}

export class PacingView {
  /**
   * Since when each process's requests met a queue (since the capacity last changed), and its requests since: its
   * pacing has learned after {@link LEARN_ROUNDS} rounds of 2 W of them.
   */
  private readonly learned = new Map<string, { readonly since: number; requests: number; at?: number }>();
  /** Every arrival above the spare-keeping limit, in order. */
  readonly excursions: Excursion[] = [];
  /** The operator's Keystone requests, in order of arrival. */
  readonly arrivals: Call[] = [];
  private readonly arrivalHooks: ((call: Call, learned: boolean) => void)[] = [];
  /** When requests arrived from a process whose pacing had not learned yet, in order. */
  private readonly unlearned: number[] = [];
  /** Each process's last probe: when it began, and its requests since. */
  private readonly probes = new Map<string, { readonly at: number; requests: number }>();

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
    const learned = this.learned.get(process);
    return learned?.at !== undefined && learned.at <= at && learned.since >= this.load.changedBefore(at);
  }

  /** Whether Keystone's capacity changed, or a request arrived from a process whose pacing had not learned, in [from, to]. */
  learningWithin(from: number, to: number): boolean {
    if (this.load.changedBefore(to) > from) return true;
    for (let i = this.unlearned.length - 1; i >= 0 && this.unlearned[i] >= from; i--) if (this.unlearned[i] <= to) return true;
    return false;
  }

  private started(request: ServedRequest): void {
    if (request.startedAt === undefined || request.startedAt <= request.arrivedAt || !request.client.startsWith('keystone-appcred-operator-')) return;
    // Keystone made a request of this process wait: from now on its pacing has seen a queue (since the last change).
    const learned = this.learned.get(request.client);
    if (learned === undefined || learned.since < this.load.changedBefore(request.arrivedAt)) this.learned.set(request.client, { since: request.arrivedAt, requests: 0 });
  }

  private arrived(call: Call): void {
    this.arrivals.push(call);
    const learning = this.learned.get(call.process);
    if (learning && learning.at === undefined && ++learning.requests >= LEARN_ROUNDS * 2 * this.load.capacityAt(call.at).workers) learning.at = call.at;
    const learned = this.learnedAt(call.process, call.at);
    if (!learned) this.unlearned.push(call.at);
    const probe = this.probes.get(call.process);
    if (probe) probe.requests++;
    const { workers } = this.load.capacityAt(call.at);
    const n = call.inFlight ?? 0;
    if (learned && n > this.spareLimit(call.process, workers)) {
      const excursion = { process: call.process, at: call.at, inFlight: n, workers };
      const inProbe = probe !== undefined && probe.requests <= PROBE_ROUNDS * (workers + 1);
      if (n > workers + 1) this.excursions.push({ ...excursion, beyond: "more than a probe's one request past Keystone's workers" });
      else if (inProbe) this.excursions.push(excursion);
      else if (probe !== undefined && call.at - probe.at < PROBE_EVERY_MS) this.excursions.push({ ...excursion, beyond: `${probe.requests - 1} requests and ${((call.at - probe.at) / 1000).toFixed(1)} s after the probe that began at ${new Date(probe.at).toISOString()}, before the next may begin` });
      else {
        this.probes.set(call.process, { at: call.at, requests: 1 });
        this.excursions.push(excursion);
      }
    }
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
