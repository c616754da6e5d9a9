/**
 * A fleet's mass rotation through jitter and windows (issue 48): when do 20,000 orders created by one GitOps sync rotate
 * a month later, and what does the operator ask of Keystone meanwhile?
 *
 * The simulation (test/sim/fleet-rotation.ts over test/sim's world: the real manager, controllers, reconcilers, caches
 * and work queue of one operator process, default flags but `--resync-period 24h`; a fake API server, Keystone and
 * OpenBao; a virtual clock), twice in one process:
 *
 * 1. N orders (10 per Keystone user) created in one burst, every rotation field left to the ControlPlane's fleet default
 *    (interval 720h, grace period 24h, jitter 10%, window `0 2 * * 1-5` Europe/Berlin for 2h: weekdays 02:00–04:00);
 *    once every order holds its first credential the virtual clock runs through the whole rotation period (to the last
 *    due time plus the grace period); `raise` orders (default N / 20) get their generation raised at the median
 *    recorded nextRotation, outside the window.
 * 2. The same fleet without window and jitter (interval 720h, grace 24h), no raise: the reference's rotation.
 *
 * Figures: rotations started per day and per hour, the peak per minute and per second, the share of scheduled starts
 * inside a window opening, the spread against the run without policy, the operator's Keystone requests in flight at
 * once and per second (against `--keystone-in-flight` and `--keystone-rate`), convergence before each due time, the
 * forced rotations, the most credentials one order held at the fake, the wall time and the peak RSS of the process.
 * Then the invariants (test/sim/fleet-rotation.ts `violationsOf`): the bench exits 1 naming each violation.
 *
 * What it does not measure: Keystone's cost (the fake answers at once, so "in flight" is only what the operator's limiter
 * lets through together and adaptive pacing sees no queue), the API server's and etcd's, real time (the wall time is
 * the simulation's own work on the virtual clock), or memory at fleet size (bench/operator.ts does, with real
 * components; the RSS here is the whole simulation's: fakes, records and the operator in one process).
 *
 *   npx tsx bench/fleet-rotation.ts [orders=20000] [raise=orders/20] [--policy-only]
 */
import { conditions, printTable, type Figure } from './report';
import { FLEET_JITTER_PERCENT, FLEET_WINDOW, FORCED_WITHIN_MS, PASS_LATENCY_MS, PER_USER, forcedMint, forcedWait, inFleetWindow, massRotation, violationsOf, type MassRotation } from '../test/sim/fleet-rotation';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', weekday: 'short', month: '2-digit', day: '2-digit' });

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const orders = Number(args[0] ?? 20_000);
  const raise = Number(args[1] ?? Math.floor(orders / 20));
  const wall = stopwatch();
  const progress = (line: string) => process.stderr.write(`[bench ${wall().toFixed(0)} s] ${line}\n`);
  const policyWall = stopwatch();
  const policy = await massRotation({ orders, policy: true, raise, progress });
  const policySeconds = policyWall();
  const scheduled = policy.mints.filter((m) => m.why === 'schedule due');
  const forced = policy.mints.filter((m) => m.why !== 'schedule due');
  const inside = scheduled.filter((m) => inFleetWindow(m.at)).length;
  // A start decided inside a window may reach Keystone a pass's latency after it closed (the invariant's allowance).
  const justAfter = scheduled.filter((m) => !inFleetWindow(m.at) && inFleetWindow(m.at - PASS_LATENCY_MS));
  const lateBy = justAfter.map((m) => seconds(m.at - lastInside(m.at)));
  const margins = [...policy.due].flatMap(([key, { due }]) => (policy.converged.has(key) ? [due - (policy.converged.get(key) ?? 0)] : []));
  // A raise mints at once, or (the order in a grace period then) when its grace period ends.
  const raisedAt = policy.raisedAt ?? 0;
  const atOnce = [...policy.raised].filter(([, from]) => from === raisedAt).map(([key]) => key);
  const afterGrace = [...policy.raised].filter(([, from]) => from > raisedAt);
  const lag = (keys: readonly string[], from: (key: string) => number) => Math.max(0, ...keys.map((key) => (forcedMint(policy, key)?.at ?? Infinity) - from(key)));
  // Beyond Keystone's pace: the wait less the time the operator's Keystone requests meanwhile take at --keystone-rate.
  const beyondPace = (keys: readonly string[], from: (key: string) => number) => Math.max(0, ...keys.map((key) => forcedWait(policy, forcedMint(policy, key)?.at ?? Infinity, from(key))));
  const atOnceLag = lag(atOnce, () => raisedAt);
  const atOnceBeyond = beyondPace(atOnce, () => raisedAt);
  const afterGraceLag = lag(afterGrace.map(([key]) => key), (key) => policy.raised.get(key) ?? raisedAt);
  const afterGraceBeyond = beyondPace(afterGrace.map(([key]) => key), (key) => policy.raised.get(key) ?? raisedAt);
  const before = [...policy.due].filter(([key, { due }]) => (policy.converged.get(key) ?? Infinity) <= due).length;
  const figures: Figure[] = [
    { figure: 'orders (Keystone users), created in one burst', value: `${orders} (${Math.ceil(orders / PER_USER)}), first credentials in ${minutes(policy.filledAt - policy.createdAt)}` },
    { figure: 'scheduled rotations started (forced)', value: `${scheduled.length} (${forced.length})` },
    { figure: 'rotations started per day (UTC)', value: histogram(policy, 24 * HOUR_MS) },
    { figure: 'peak scheduled starts per hour / minute / second', value: `${peak(scheduled, HOUR_MS)} / ${peak(scheduled, MINUTE_MS)} / ${peak(scheduled, 1000)}` },
    { figure: "scheduled starts inside a window opening (+ decided inside: reached Keystone within a pass's latency, 10 s, after it closed)", value: `${inside} of ${scheduled.length}${justAfter.length > 0 ? ` (+${justAfter.length}, after the close by ${lateBy.slice(0, 5).join(', ')})` : ''}: ${percent(inside + justAfter.length, scheduled.length)}`, goal: '100%', met: inside + justAfter.length === scheduled.length },
    { figure: 'Keystone requests in flight at once, peak', value: `${policy.keystone.peakInFlight}`, baseline: `--keystone-in-flight ${policy.inFlightLimit}`, goal: `≤ ${policy.inFlightLimit}`, met: policy.keystone.peakInFlight <= policy.inFlightLimit },
    { figure: 'Keystone requests per second, peak (fill / rotation period)', value: `${policy.keystone.peakPerSecondFill} / ${policy.keystone.peakPerSecondRun}`, baseline: `--keystone-rate ${policy.rateLimit}`, goal: `≤ ${policy.rateLimit}`, met: Math.max(policy.keystone.peakPerSecondFill, policy.keystone.peakPerSecondRun) <= policy.rateLimit },
    { figure: 'orders converged at a new credential before their due time', value: `${before} of ${orders}; least margin ${hours(Math.min(...margins))}`, goal: `${orders}`, met: before === orders },
    { figure: `forced rotations (${raise} raised at ${policy.raisedAt === undefined ? '-' : iso(raisedAt)}, window closed)`, value: `${forced.length}` },
    { figure: '… of orders free to rotate: started after the raise, the last (beyond the pace of Keystone requests at --keystone-rate)', value: `${atOnce.length}, ${seconds(atOnceLag)} (${seconds(atOnceBeyond)})`, goal: '≤ 60 s beyond', met: atOnceBeyond <= FORCED_WITHIN_MS },
    { figure: '… of orders in a grace period then: started after it ended, the last (beyond the pace)', value: `${afterGrace.length}, ${seconds(afterGraceLag)} (${seconds(afterGraceBeyond)})`, goal: '≤ 60 s beyond', met: afterGraceBeyond <= FORCED_WITHIN_MS },
    { figure: 'most credentials one order held at the fake Keystone', value: `${policy.mostCredentials.count}`, goal: '≤ 2', met: policy.mostCredentials.count <= 2 },
    { figure: 'virtual time run (creation to the end)', value: `${hours(policy.endAt - policy.createdAt)}` },
    { figure: 'wall time', value: `${policySeconds.toFixed(0)} s` },
    { figure: 'peak RSS of the simulation process', value: `${(policy.peakRss / 2 ** 20).toFixed(0)} MiB` },
  ];
  const context = conditions(
    `the simulation (test/sim: the real operator on fake API server, Keystone and OpenBao, virtual clock; Keystone's cost not modelled); fleet default interval 720h, grace 24h, jitter ${FLEET_JITTER_PERCENT}%, window "${FLEET_WINDOW.schedule}" ${FLEET_WINDOW.timeZone} for ${FLEET_WINDOW.duration}; ${PER_USER} orders per Keystone user; operator default flags but --resync-period 24h`,
  );
  printTable('A fleet rotating through jitter and windows (simulated)', context, figures);
  process.stdout.write(`\nScheduled starts per hour (UTC), hours with any:\n\n${histogram(policy, HOUR_MS, '\n')}\n`);
  const violations = violationsOf(policy).map((v) => `with policy: ${v}`);
  if (!process.argv.includes('--policy-only')) {
    // The same fleet as the reference rotates it: due at lastRotation + interval, in the order and at the pace of the fill.
    const baselineWall = stopwatch();
    const baseline = await massRotation({ orders, policy: false, progress });
    const baselineSeconds = baselineWall();
    printTable('The same fleet without window and jitter (simulated)', `the same fleet and flags; the fleet default interval 720h and grace 24h only; wall time ${baselineSeconds.toFixed(0)} s`, spread(baseline, scheduled));
    violations.push(...violationsOf(baseline).map((v) => `without policy: ${v}`));
  }
  if (violations.length > 0) {
    process.stderr.write(`\nINVARIANTS VIOLATED:\n${violations.join('\n')}\n`);
    process.exitCode = 1;
  } else process.stderr.write('\nInvariants held: no scheduled rotation outside a window, no order past its due time, every order converged, at most two credentials per order, every raise minted within 60 s (of the end of its grace period, when one ran) beyond the time the Keystone requests of the operator meanwhile take at --keystone-rate.\n');
}

/** The run without policy against the scheduled starts with it: how much of the fleet starts in the same second. */
function spread(baseline: MassRotation, scheduled: MassRotation['mints']): Figure[] {
  const plain = baseline.mints;
  const span = (mints: MassRotation['mints']) => (mints.length === 0 ? 0 : (mints[mints.length - 1]?.at ?? 0) - (mints[0]?.at ?? 0));
  return [
    { figure: 'peak starts in one second, with policy / without', value: `${peak(scheduled, 1000)}`, baseline: `${peak(plain, 1000)}` },
    { figure: 'peak starts in one minute, with policy / without', value: `${peak(scheduled, MINUTE_MS)}`, baseline: `${peak(plain, MINUTE_MS)}` },
    { figure: 'first to last start, with policy / without', value: hours(span(scheduled)), baseline: minutes(span(plain)) },
    { figure: 'seconds with a start, with policy / without', value: `${distinct(scheduled, 1000)}`, baseline: `${distinct(plain, 1000)}` },
  ];
}

const bucketsOf = (mints: MassRotation['mints'], size: number) => {
  const buckets = new Map<number, number>();
  for (const m of mints) buckets.set(Math.floor(m.at / size), (buckets.get(Math.floor(m.at / size)) ?? 0) + 1);
  return buckets;
};
const peak = (mints: MassRotation['mints'], size: number) => Math.max(0, ...bucketsOf(mints, size).values());
const distinct = (mints: MassRotation['mints'], size: number) => bucketsOf(mints, size).size;

/** Starts per bucket of `size` (a day: `Mon 01/02 500`; an hour: `Mon 01/02 01:00 250`). */
function histogram(run: MassRotation, size: number, separator = ', '): string {
  const mints = size < 24 * HOUR_MS ? run.mints.filter((m) => m.why === 'schedule due') : run.mints;
  return [...bucketsOf(mints, size)]
    .map(([bucket, count]) => `${DAY.format(new Date(bucket * size))}${size < 24 * HOUR_MS ? ` ${iso(bucket * size).slice(11, 16)}` : ''}: ${count}`)
    .join(separator);
}

const iso = (t: number) => new Date(t).toISOString();
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const minutes = (ms: number) => `${(ms / MINUTE_MS).toFixed(1)} min`;
const hours = (ms: number) => `${(ms / HOUR_MS).toFixed(1)} h`;
const percent = (part: number, whole: number) => `${whole === 0 ? '-' : ((100 * part) / whole).toFixed(1)}%`;

function stopwatch(): () => number {
  const start = process.hrtime.bigint();
  return () => Number(process.hrtime.bigint() - start) / 1e9;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

/** The last instant before `at` inside a fleet window (minute by minute back from it: a window ends on a minute). */
function lastInside(at: number): number {
  let t = Math.floor(at / MINUTE_MS) * MINUTE_MS;
  while (!inFleetWindow(t - 1) && at - t < 60 * MINUTE_MS) t -= MINUTE_MS;
  return t;
}
