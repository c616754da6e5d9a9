/**
 * Issue 48's pacing as Keystone and its other users feel it (src/keystone/pacing.ts, src/keystone/limits.ts), judged
 * from what the fake Keystone saw (./keystone-view.ts) and never by calling the pacing: the operator's requests in
 * flight stay within `--keystone-in-flight`; once its pacing has learned Keystone's capacity it leaves
 * `--keystone-spare-workers` of Keystone's workers free but for a probe; after a 429, a 503 or a timeout it sends
 * nothing beyond the cut limit; a fleet-wide raise converges; and another user of Keystone waits no longer than one
 * request's service time.
 */
import type { Invariant } from '../model';
import type { Call } from '../network';
import { LEARN_ROUNDS, pacingViewOf, PROBE_EVERY_MS, PROBE_ROUNDS, type PacingView } from './keystone-view';

/** How long a fleet-wide raise may take to converge with everything answering (8 orders on one worker: ~20 s). */
const FLEET_WITHIN_MS = 10 * 60_000;

const overloaded = (c: Call) => c.outcome === 429 || c.outcome === 503 || c.outcome === 'timeout';

export const inFlightWithinLimit: Invariant = {
  name: 'in-flight-within-limit',
  description: "the operator's requests in flight at Keystone never exceed --keystone-in-flight (per process)",
  watch(world, report) {
    pacingViewOf(world)?.onArrival((call) => {
      const ceiling = pacingViewOf(world)?.ceilingOf(call.process) ?? 0;
      if (ceiling > 0 && (call.inFlight ?? 0) > ceiling) report(`${call.process}: ${call.method} ${call.path} arrived with ${call.inFlight} of its requests in flight at Keystone, --keystone-in-flight ${ceiling}`);
    });
    return {};
  },
};

export const spareKept: Invariant = {
  name: 'keystone-spare-kept',
  description: `once its pacing learned Keystone's capacity (${LEARN_ROUNDS} rounds of 2 W requests after Keystone first made it wait), with W ≥ 2 workers the operator has ≤ max(1, W − spare) requests in flight, but for a probe: ≤ W + 1 for ${PROBE_ROUNDS} rounds of W + 1 requests, one probe per ${PROBE_EVERY_MS / 1000} s`,
  watch(world, report) {
    const view = pacingViewOf(world);
    let seen = 0;
    view?.onArrival(() => {
      for (; seen < view.excursions.length; seen++) {
        const e = view.excursions[seen];
        if (e.beyond !== undefined && e.workers >= 2) report(`${e.process}: a request arrived with ${e.inFlight} in flight on ${e.workers} workers (spare-keeping limit ${view.spareLimit(e.process, e.workers)}): ${e.beyond}`);
      }
    });
    return {};
  },
};

export const backoffOnOverload: Invariant = {
  name: 'backoff-on-overload',
  description: `after a 429, a 503 or a timeout of a request that had n in flight, the operator sends nothing that makes more than max(1, n − 1 − spare) in flight for ${PROBE_EVERY_MS / 1000} s`,
  watch(world, report) {
    const view = pacingViewOf(world);
    // The requests not ended yet or ended within the probe interval (the others can cut nothing any more).
    let open: Call[] = [];
    view?.onArrival((call) => {
      open = open.filter((c) => c.endedAt === undefined || call.at - c.endedAt < PROBE_EVERY_MS);
      const recent = open.filter((c) => c.process === call.process && c.endedAt !== undefined && c.endedAt < call.at && overloaded(c));
      open.push(call);
      if (recent.length === 0) return;
      const spare = view.spareOf(call.process);
      const cut = recent.reduce((least, c) => (Math.max(1, (c.inFlight ?? 1) - 1 - spare) < least.limit ? { limit: Math.max(1, (c.inFlight ?? 1) - 1 - spare), by: c } : least), { limit: Number.POSITIVE_INFINITY, by: recent[0] });
      if ((call.inFlight ?? 0) > cut.limit) {
        report(`${call.process}: ${call.method} ${call.path} arrived with ${call.inFlight} in flight ${((call.at - (cut.by.endedAt ?? 0)) / 1000).toFixed(1)} s after ${cut.by.method} ${cut.by.path} (${cut.by.inFlight} in flight) ended ${String(cut.by.outcome)}: the cut limit is ${cut.limit}`);
      }
    });
    return {};
  },
};

export const fleetProgresses: Invariant = {
  name: 'fleet-progresses',
  description: `with everything answering, a fleet-wide raise converges: every order raised holds the raised generation within ${FLEET_WITHIN_MS / 60_000} minutes`,
  watch(world, report) {
    const pending: { at: number; generations: Map<string, number> }[] = [];
    let seen = 0;
    return {
      check() {
        for (; seen < world.eventKinds.length; seen++) {
          if (world.eventKinds[seen] !== 'raise-all') continue;
          const generations = new Map(world.orders().map((o) => [`${o.tenant}/${o.name}`, (o.object.spec as { credentialGeneration?: number }).credentialGeneration ?? 1]));
          pending.push({ at: world.eventTimes[seen], generations });
        }
        const now = world.time.now();
        for (let i = pending.length - 1; i >= 0; i--) {
          const raise = pending[i];
          const end = raise.at + FLEET_WITHIN_MS;
          if (now < end) continue;
          pending.splice(i, 1);
          const others = world.eventTimes.some((t, j) => t > raise.at && t <= end && !['raise-all', 'keystone-capacity', 'bystander', 'raise'].includes(world.eventKinds[j]));
          if (others || world.faultedBetween(raise.at, end) || world.restartedBetween(raise.at, end) || world.upgraded || world.secretsRefused.size > 0 || world.adoptions.size > 0) continue;
          const behind = world.orders().filter((o) => {
            const raised = raise.generations.get(`${o.tenant}/${o.name}`);
            const held = (o.object.status as { credentialGeneration?: number } | undefined)?.credentialGeneration ?? 0;
            return raised !== undefined && o.object.metadata.deletionTimestamp === undefined && !world.frozenBetween(o.tenant, raise.at, end) && held < raised;
          });
          if (behind.length > 0) report(`a raise of every order at ${new Date(raise.at).toISOString()}: ${behind.map((o) => `${o.tenant}/${o.name}`).join(', ')} not at the raised generation ${FLEET_WITHIN_MS / 60_000} minutes later with everything answering`);
        }
      },
    };
  },
};

export const bystanderServed: Invariant = {
  name: 'bystander-served',
  description: "with W ≥ 2 workers another user's login waits for a worker no longer than one service time of the slowest request, outside Keystone's faults, a pacing's learning and probes",
  watch(world, report) {
    const view = pacingViewOf(world);
    let seen = 0;
    return {
      check() {
        if (!view) return;
        const requests = view.load.workers.requests;
        for (; seen < requests.length; seen++) {
          const r = requests[seen];
          if (r.client !== 'bystander') continue;
          if (r.startedAt === undefined) break;
          const { workers } = view.load.capacityAt(r.arrivedAt);
          const slowest = view.load.workers.serviceMs('bcrypt');
          const wait = r.startedAt - r.arrivedAt;
          if (workers < 2 || wait <= slowest || excused(view, world, r.arrivedAt, r.startedAt, workers)) continue;
          report(`the bystander's login at ${new Date(r.arrivedAt).toISOString()} waited ${wait} ms for one of Keystone's ${workers} workers (a bcrypt request takes ${slowest} ms)`);
        }
      },
    };
  },
};

/** Whether a wait of the bystander in [from, to] falls in a fault of Keystone, a pacing's learning or a probe. */
function excused(view: PacingView, world: Parameters<Invariant['watch']>[0], from: number, to: number, workers: number): boolean {
  const reach = (workers + 1) * view.load.workers.serviceMs('bcrypt');
  if (world.faultedBetween(from - reach, to, ['keystone']) || world.restartedBetween(from - 60_000, to)) return true;
  if (view.learningWithin(from - reach, to)) return true;
  // A probe's excursion excuses it, unless the operator went beyond what a probe may take meanwhile.
  const near = view.excursions.filter((e) => e.at >= from - reach && e.at <= to);
  return near.length > 0 && near.every((e) => e.beyond === undefined);
}
