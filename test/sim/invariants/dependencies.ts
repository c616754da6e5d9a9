/**
 * The dependency waits (src/operator/runtime/dependencies.ts) as a platform team feels them: an order waiting on a
 * dependency completes ≤ 60 s (virtual) after it answers again; and during an outage the dependency gets ≤ 1 call per
 * waiting order per minute, plus its probe (one waiter's pass every ≤ 15 s); a call is a pass that reached it (a login
 * and a list, or the two backup paths, are one).
 */
import type { Invariant } from '../model';
import type { Call, Dependency, Fault } from '../network';
import { KEYSTONE_URL } from '../network';
import type { LogLine } from '../process';
import type { FaultSpan, SimWorld } from '../sim-world';

/** How a failed pass names each dependency (src/operator/credential/reconciler.ts). */
export const DEPENDENCY_NAMES: Readonly<Record<Dependency, string>> = {
  keystone: `Keystone ${KEYSTONE_URL}`,
  openbao: 'OpenBao',
  api: 'the API server',
  target: 'the API server of cluster edge',
};

const RECOVERY_MS = 60_000;
/** The probe's passes a minute, once its pauses reached 15 s (plus up to 20 % jitter), and a waiter's own retry. */
const PROBE_PASSES = 5;

/**
 * The passes that reached a dependency among calls: the requests one pass makes to it go out at one virtual instant
 * (a login and a list, the own and the former backup path), for one Keystone user or one order's backup path.
 */
function passesOf(calls: readonly Call[]): number {
  return new Set(calls.map((c) => `${c.process} ${c.at} ${c.actor ?? c.path.replace(/\/service-accounts\/.*$/, '').replace(/\/[0-9a-f-]{36}$/, '')}`)).size;
}

/**
 * The calls without the sends again of one request after a 429 or 503 with a `Retry-After` (src/keystone/transport.ts
 * sends it again once that passed, within the same pass): the pass's first send counts.
 */
function firstSends(calls: readonly Call[], fault: Fault): Call[] {
  if (fault.mode !== 'status' || fault.retryAfterSeconds === undefined) return [...calls];
  const wait = fault.retryAfterSeconds * 1000;
  const last = new Map<string, number>();
  return calls.filter((c) => {
    const key = `${c.process} ${c.method} ${c.path} ${c.actor ?? ''}`;
    const before = last.get(key);
    last.set(key, c.at);
    return before === undefined || c.at - before < wait || c.at - before > wait + 1000;
  });
}

/** The last reconcile line of each credential order's key, as the leader logged them. */
function reconcileLines(world: SimWorld): LogLine[] {
  return world.reconciles.filter((l) => l.controller === 'KeystoneApplicationCredential');
}

/** The faults that ended since the last call (each once), in the order they began. */
function endedFaults(world: SimWorld): () => FaultSpan[] {
  let seen = 0;
  return () => {
    const ended: FaultSpan[] = [];
    for (const span of world.faultLog.slice(seen)) {
      if (span.to === undefined) break;
      seen++;
      ended.push(span);
    }
    return ended;
  };
}

const waitsOn = (line: LogLine, dependency: Dependency) => String(line.waitsOn ?? '').split(', ').includes(DEPENDENCY_NAMES[dependency]);
const keyOf = (line: LogLine) => `${String(line.cluster ?? '')}/${String(line.key)}`;
const failingKeyOf = (line: LogLine) => `${String(line.controller)}/${keyOf(line)}`;

export const recovery: Invariant = {
  name: 'waiters-recover-in-60s',
  description: 'an order waiting on a dependency completes ≤ 60 s (virtual) after it answers again (or fails for a reason of its own)',
  watch(world, report) {
    const pending: { dependency: Dependency; at: number; keys: Set<string> }[] = [];
    const ended = endedFaults(world);
    return {
      check() {
        // Each fault that ended: the orders whose last pass waited on its dependency.
        for (const span of ended()) {
          if (span.to === undefined) continue;
          const last = new Map<string, LogLine>();
          for (const line of reconcileLines(world)) if (Date.parse(String(line.time)) <= span.to) last.set(keyOf(line), line);
          const keys = new Set([...last].filter(([, l]) => l.result === 'error' && waitsOn(l, span.dependency)).map(([k]) => k));
          if (keys.size > 0) pending.push({ dependency: span.dependency, at: span.to, keys });
        }
        const now = world.time.now();
        for (const p of [...pending]) {
          if (now < p.at + RECOVERY_MS) continue;
          pending.splice(pending.indexOf(p), 1);
          const end = p.at + RECOVERY_MS;
          // Another fault (Keystone answering the operator too late under others' load among them), a restart, or an event
          // in the minute after: what the order does then is that event's.
          if (world.faultedBetween(p.at + 1, end) || world.timedOutBetween('keystone', p.at + 1, end) || world.restartedBetween(p.at - 20_000, end) || (world.nextEventAfter(p.at - 1) ?? Infinity) <= end) continue;
          const after = reconcileLines(world).filter((l) => Date.parse(String(l.time)) > p.at && Date.parse(String(l.time)) <= end);
          for (const key of p.keys) {
            const [, ns, name] = key.split('/');
            if (!world.order({ tenant: ns as 'tenant-a', name })) continue;
            // Recovered: a pass that succeeded, or one that failed for a reason of the order's own (an adoption refused),
            // waiting on nothing any more.
            if (!after.some((l) => keyOf(l) === key && (l.result === 'success' || l.result === 'requeue' || (l.result === 'error' && l.waitsOn === undefined)))) {
              const lines = after.filter((l) => keyOf(l) === key);
              const failed = lines.map((l) => `${String(l.error ?? '').slice(0, 80)}, retried in ${String(l.retryInMs)} ms`).join('; ');
              report(`${key.slice(1)} waited on ${DEPENDENCY_NAMES[p.dependency]}, which answered again at ${new Date(p.at).toISOString()}, and had no successful pass in the minute after (${lines.length} failed${failed ? `: ${failed}` : ''})`);
            }
          }
        }
      },
    };
  },
};

export const outageRate: Invariant = {
  name: 'outage-calls-bounded',
  description: '≤ 1 call per waiting order per minute during an outage (plus the dependency\'s probe)',
  watch(world, report) {
    const ended = endedFaults(world);
    return {
      check() {
        for (const span of ended()) {
          if (span.to === undefined || (span.dependency !== 'keystone' && span.dependency !== 'openbao')) continue;
          const lines = world.reconciles;
          // From a minute after the first pass that waited on it: that minute the probe's pauses grow from 1 s to 15 s.
          const end = span.to;
          const failed = lines.filter((l) => l.result === 'error' && Date.parse(String(l.time)) >= span.from && Date.parse(String(l.time)) < end);
          const first = failed.find((l) => waitsOn(l, span.dependency));
          if (!first) continue;
          const reached = firstSends(world.network.calls.filter((c) => c.dependency === span.dependency && c.at >= span.from && c.at < end), span.fault);
          for (let from = Date.parse(String(first.time)) + 60_000; from + 60_000 <= span.to; from += 60_000) {
            const to = from + 60_000;
            // A restart (its first passes) or an event (the passes it starts) in or just before the window is no outage's.
            if (world.restartedBetween(from - 120_000, to) || (world.nextEventAfter(from - 10_000) ?? Infinity) <= to) continue;
            const calls = passesOf(reached.filter((c) => c.at >= from && c.at < to));
            const failing = new Set(failed.filter((l) => Date.parse(String(l.time)) < to).map(failingKeyOf));
            // An object that starts failing in the window learns to wait in its first passes: the one due, and the one or
            // two its own status write wakes (an event is a reason to look again). Two passes more for each.
            const entering = [...failing].filter((key) => Date.parse(String(failed.find((l) => failingKeyOf(l) === key)?.time)) >= from).length;
            // So does a waiter that acts in the window (its rotation fell due: a park, a mint): its writes wake it as a new
            // failure's do. Two passes more for each.
            const acting = new Set(world.lines.filter((l) => l.msg === 'action' && l.outcome === 'done' && Date.parse(String(l.time)) >= from && Date.parse(String(l.time)) < to).map((l) => `${String(l.kind)}/${keyOf(l)}`));
            const woken = [...failing].filter((key) => acting.has(key)).length;
            // The informers' periodic resync hands every object to its controller once: a pass of each waiter more.
            const resync = world.resyncedBetween(from, to - 1);
            // Each dependency they wait on has its probe, and a probe's pass reaches every dependency its waiter needs.
            const probes = Math.max(1, new Set(failed.filter((l) => Date.parse(String(l.time)) < to).flatMap((l) => String(l.waitsOn ?? '').split(', ').filter(Boolean))).size);
            const allowed = failing.size * (resync ? 2 : 1) + 2 * (entering + woken) + PROBE_PASSES * probes;
            if (calls > allowed) {
              report(`${span.dependency} ${span.fault.mode}: ${calls} passes reached it in the minute from ${new Date(from).toISOString()}, with ${failing.size} objects failing, ${entering} of them new, ${woken} acting, waiting on ${probes} dependencies (allowed: ${allowed}: one of each, two more of a new one or one that acted, and each probe's ${PROBE_PASSES})`);
              break;
            }
          }
        }
      },
    };
  },
};
