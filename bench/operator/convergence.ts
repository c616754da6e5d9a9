/**
 * 2. Convergence at each worker count: rounds of new orders until every one is Ready, interleaved with the bare script
 * making the same Keystone calls at as many requests in flight as the operator may have (and once more under the
 * operator's requests per second); the build before (KAC_BENCH_BEFORE) at one worker; Keystone's requests in flight and
 * per second at the proxy, the CPU of each side, the API writes per new order.
 */
import { availableParallelism } from 'node:os';
import { KeystoneLimitDefaults } from '../../src/api/operator-env';
import { waitReady } from '../../test/support/operator';
import { describeInFlight, inFlightProfile, peakRate, type RecordedCall } from '../../test/support/recording-proxy';
import { median, ms } from '../report';
import { createAll, untilReadyWatched } from './api';
import { bareCleanup, bareRound } from './bare';
import { launch } from './launch';
import { ensureUsers, order, userOf } from './orders';
import { CLK_TCK, clusterTicks, cpuTicks, metricSum, quiet, scrape } from './process';
import type { Run } from './run';

/**
 * The operator's limit of requests in flight per Keystone (its default, which the bench does not change outside 3a):
 * the bare script runs that many lanes when the operator has more workers, as the limit, not the worker count,
 * decides what reaches Keystone.
 */
const KEYSTONE_IN_FLIGHT_LIMIT = KeystoneLimitDefaults.inFlight;

/** Requests the operator may have in flight at Keystone with `workers` workers per kind. */
const keystoneLanes = (workers: number): number => Math.min(workers, KEYSTONE_IN_FLIGHT_LIMIT > 0 ? KEYSTONE_IN_FLIGHT_LIMIT : workers);

/** Per-order call mix of a slice of the proxy's record. */
export function mix(calls: readonly RecordedCall[], orders: number): string {
  const logins = calls.filter((c) => c.method === 'POST' && c.path.includes('/auth/tokens')).length;
  const lists = calls.filter((c) => c.method === 'GET' && /application_credentials(\?|$)/.test(c.path)).length;
  const creates = calls.filter((c) => c.method === 'POST' && c.path.endsWith('/application_credentials')).length;
  const other = calls.length - logins - lists - creates;
  return `${(logins / orders).toFixed(2)} logins, ${(lists / orders).toFixed(2)} lists, ${(creates / orders).toFixed(2)} creates, ${(other / orders).toFixed(2)} other per order`;
}

/** What the convergence runs with (bench/operator.ts's arguments and environment). */
export interface ConvergenceOptions {
  /** Interleaved rounds at each worker count. */
  readonly rounds: number;
  /** New orders per round. */
  readonly convergeCount: number;
  /** The worker counts (`--workers`), in turn; the operator of the last one stays running for the parts after. */
  readonly workerCounts: readonly number[];
  /** The operator's requests per second per Keystone (0: none); the bare script also runs once under it. */
  readonly operatorRate: number;
  /** KAC_BENCH_BEFORE: a checkout with lib/ compiled whose operator converges a batch of its own in each round at one worker. */
  readonly before: string | undefined;
}

/** Measures the convergence at each worker count (the rotation's operator is stopped already); its rows. */
export async function convergence(run: Run, options: ConvergenceOptions): Promise<void> {
  const { env, figures, users, keystone } = run;
  const { proxy } = env;
  const { rounds, convergeCount, workerCounts, operatorRate, before } = options;
  const writesPerOrder: number[] = [];
  for (const [i, workers] of workerCounts.entries()) {
    if (i > 0) await run.op.server.stop(10_000); // the rotation's operator is stopped already
    run.op = await launch(env, `bench-w${workers}`, false, ['--workers', String(workers)]);
    await waitReady(run.op);
    await ensureUsers(rounds * convergeCount * (workerCounts.length + (before && workerCounts.includes(1) ? 1 : 0)), users); // the first time only: they stay
    const lanes = keystoneLanes(workers);
    const nWorkers = `${workers} worker${workers > 1 ? 's' : ''}`;
    const opMs: number[] = [];
    const bareMs: number[] = [];
    const bareMinMs: number[] = [];
    const bareLimitedMs: number[] = [];
    let callMix = '';
    let loginPerOrder = false;
    let lists: 'order' | 'user' = 'order';
    const flightTime: number[] = [];
    let flightPeak = 0;
    // CPU seconds (utime + stime) of the operator and of Keystone (one process, one thread) over each timed run.
    const opCpu: { operator: number; keystone: number; cluster: number }[] = [];
    const bareKeystoneCpu: number[] = [];
    const beforeMs: number[] = []; // KAC_BENCH_BEFORE's operator, at one worker
    const perSecond: { peak: number; mean: number }[] = []; // Keystone requests per second at the proxy
    for (let r = 0; r < rounds; r++) {
      const names = Array.from({ length: convergeCount }, (_, k) => run.total + k);
      const who = names.map(userOf);
      let flight = inFlightProfile([], 0, 1);
      const operatorRun = async () => {
        await quiet(run.op, proxy);
        const mark = proxy.calls.length;
        const writesBefore = metricSum(await scrape(run.op), 'keystone_appcred_api_writes_total');
        const cpu0 = { operator: cpuTicks(run.op.server.process.pid as number), keystone: cpuTicks(keystone.pid), cluster: clusterTicks() };
        const t0 = performance.now();
        await createAll(names.map((k) => order(`o${k}`, userOf(k), `c${workers}-${r}`)));
        await untilReadyWatched(`bench/batch=c${workers}-${r}`, convergeCount, 3_600_000);
        const t1 = performance.now();
        opMs.push(t1 - t0);
        opCpu.push({ operator: (cpuTicks(run.op.server.process.pid as number) - cpu0.operator) / CLK_TCK, keystone: (cpuTicks(keystone.pid) - cpu0.keystone) / CLK_TCK, cluster: (clusterTicks() - cpu0.cluster) / CLK_TCK });
        const calls = proxy.since(mark);
        callMix = mix(calls, convergeCount);
        perSecond.push({ peak: peakRate(calls), mean: calls.length / ((t1 - t0) / 1000) });
        // The same Keystone calls: a login per order if the operator made one per order, else one per user.
        loginPerOrder = calls.filter((c) => c.method === 'POST' && c.path.includes('/auth/tokens')).length >= convergeCount / 2;
        // And a list per order if the operator made one per order, else one per user (its known credentials).
        lists = calls.filter((c) => c.method === 'GET' && /application_credentials(\?|$)/.test(c.path)).length >= convergeCount / 2 ? 'order' : 'user';
        flight = inFlightProfile(proxy.spans, t0, t1);
        flightPeak = Math.max(flightPeak, flight.peak);
        flight.share.forEach((x, n) => (flightTime[n] = (flightTime[n] ?? 0) + x * (t1 - t0)));
        await quiet(run.op, proxy);
        writesPerOrder.push((metricSum(await scrape(run.op), 'keystone_appcred_api_writes_total') - writesBefore) / convergeCount);
      };
      const bareRun = async () => {
        const keystoneCpu0 = cpuTicks(keystone.pid);
        const bare = await bareRound(env, who, convergeCount, { login: loginPerOrder, list: lists }, lanes);
        bareMs.push(bare.ms);
        bareKeystoneCpu.push((cpuTicks(keystone.pid) - keystoneCpu0) / CLK_TCK);
        await bareCleanup(env, bare.created);
        const minimal = await bareRound(env, who, convergeCount, { login: loginPerOrder, list: false }, lanes);
        bareMinMs.push(minimal.ms);
        await bareCleanup(env, minimal.created);
        if (operatorRate > 0) {
          const limited = await bareRound(env, who, convergeCount, { login: loginPerOrder, list: lists }, lanes, operatorRate);
          bareLimitedMs.push(limited.ms);
          await bareCleanup(env, limited.created);
        }
      };
      // The build before (KAC_BENCH_BEFORE) with one worker (`--workers 1`: a build that knows no --workers ran one
      // worker and set KAC_BENCH_BEFORE_ARGS=' ' to pass nothing; one that does defaults to 8) on a batch of its own, the same size
      // and as many orders per user, in place of this build's operator (two operators would both reconcile).
      const beforeRun = async () => {
        if (!before || workers !== 1) return;
        await quiet(run.op, proxy);
        await run.op.server.stop(10_000);
        const old = await launch(env, `bench-before-${r}`, false, (process.env.KAC_BENCH_BEFORE_ARGS ?? '--workers 1').split(' ').filter(Boolean), false, before);
        await waitReady(old);
        await quiet(old, proxy);
        const t0 = performance.now();
        await createAll(Array.from({ length: convergeCount }, (_, k) => run.total + convergeCount + k).map((k) => order(`o${k}`, userOf(k), `b${r}`)));
        await untilReadyWatched(`bench/batch=b${r}`, convergeCount, 3_600_000);
        beforeMs.push(performance.now() - t0);
        await quiet(old, proxy);
        await old.server.stop(10_000);
        run.op = await launch(env, `bench-w${workers}-${r}`, false, ['--workers', String(workers)]);
        await waitReady(run.op);
      };
      // Operator first in even rounds, the bare script first in odd ones (its logins as the round before counted them).
      if (r % 2 === 0) {
        await operatorRun();
        await bareRun();
        await beforeRun();
      } else {
        await beforeRun();
        await bareRun();
        await operatorRun();
      }
      run.total += convergeCount * (before && workers === 1 ? 2 : 1);
      process.stderr.write(`[bench] ${nWorkers}, round ${r}: operator ${opMs[r].toFixed(0)} ms, bare ${bareMs[r].toFixed(0)} ms, bare without the list ${bareMinMs[r].toFixed(0)} ms,${operatorRate > 0 ? ` bare under the operator's ${operatorRate}/s ${bareLimitedMs[r].toFixed(0)} ms,` : ''} ${lanes} in flight (${callMix})${beforeMs[r] === undefined ? '' : `, the build before ${beforeMs[r].toFixed(0)} ms`}; Keystone requests in flight: ${describeInFlight(flight)}\n`);
    }
    const cr = median(opMs) / median(bareMs);
    const all = flightTime.reduce((a, b) => a + b, 0);
    const logins = loginPerOrder ? 'a login per order' : 'a login per user';
    figures.push({ figure: `converge ${convergeCount} new orders, ${nWorkers} per kind`, value: ms(median(opMs)), baseline: `${ms(median(bareMs))} (${logins}, ${lists === 'order' ? 'list + create per order' : 'a list per user, a create per order'}, ${lanes} in flight)`, ratio: cr, goal: '≤ 1.15×', met: cr <= 1.15 });
    if (operatorRate > 0) {
      const lr = median(opMs) / median(bareLimitedMs);
      figures.push({ figure: `converge ${convergeCount} new orders, ${nWorkers}: against the bare script under the same limit`, value: ms(median(opMs)), baseline: `${ms(median(bareLimitedMs))} (the same calls, ${lanes} in flight, at most ${operatorRate} started per second)`, ratio: lr, goal: '≤ 1.15×', met: lr <= 1.15 });
    }
    figures.push({ figure: `converge ${convergeCount} new orders, ${nWorkers}: against the same logins + creates only`, value: ms(median(opMs)), baseline: ms(median(bareMinMs)), ratio: median(opMs) / median(bareMinMs) });
    figures.push({ figure: `Keystone calls per new order (operator, ${nWorkers})`, value: callMix });
    if (beforeMs.length > 0) {
      const b = median(beforeMs) / median(bareMs);
      figures.push({ figure: `converge ${convergeCount} new orders, the build before (${before}), 1 worker`, value: ms(median(beforeMs)), baseline: ms(median(bareMs)), ratio: b, goal: `this build's ${cr.toFixed(2)}× not above it`, met: cr <= b });
    }
    // Keystone is busy (its CPU over the wall time) as long as it has work: what the operator leaves idle shows here.
    const busy = (cpu: number, wallMs: number) => `${((100 * cpu) / (wallMs / 1000)).toFixed(0)} %`;
    figures.push({
      figure: `CPU while ${nWorkers} converge (median round): operator, Keystone (its busy share of the wall time)`,
      value: `${median(opCpu.map((c) => c.operator)).toFixed(1)} s (${((1000 * median(opCpu.map((c) => c.operator))) / convergeCount).toFixed(1)} ms per order), ${median(opCpu.map((c) => c.keystone)).toFixed(1)} s (${busy(median(opCpu.map((c) => c.keystone)), median(opMs))})`,
      baseline: `Keystone ${median(bareKeystoneCpu).toFixed(1)} s (${busy(median(bareKeystoneCpu), median(bareMs))}) under the bare script`,
    });
    // The other side of the operator's work: the API server, etcd and the controller manager serving its writes and
    // watches (and the bench's creates and polls), beside the operator's own CPU; with Keystone pinned, these share
    // the remaining cores, and their sum over the wall time says how busy those cores were.
    const clusterCpu = median(opCpu.map((c) => c.cluster));
    const operatorCpu = median(opCpu.map((c) => c.operator));
    const otherCores = Math.max(1, availableParallelism() - (process.env.KAC_BENCH_KEYSTONE_CPU === undefined ? 0 : 1));
    figures.push({
      figure: `CPU while ${nWorkers} converge (median round): the API server, etcd, the controller manager and the bench; with the operator, the share of ${otherCores} core(s) busy`,
      value: `${clusterCpu.toFixed(1)} s (${((1000 * clusterCpu) / convergeCount).toFixed(1)} ms per order); ${((100 * (clusterCpu + operatorCpu)) / otherCores / (median(opMs) / 1000)).toFixed(0)} %`,
    });
    figures.push({
      figure: `Keystone requests in flight while ${nWorkers} converge (at the proxy)`,
      value: describeInFlight({ peak: flightPeak, share: flightTime.map((t) => t / Math.max(1e-9, all)) }),
      goal: KEYSTONE_IN_FLIGHT_LIMIT > 0 ? `≤ ${KEYSTONE_IN_FLIGHT_LIMIT} (--keystone-in-flight)` : 'no limit configured',
      ...(KEYSTONE_IN_FLIGHT_LIMIT > 0 ? { met: flightPeak <= KEYSTONE_IN_FLIGHT_LIMIT } : {}),
    });
    figures.push({
      figure: `Keystone requests per second while ${nWorkers} converge (at the proxy): the most in any 1 s, the mean`,
      value: `${Math.max(...perSecond.map((x) => x.peak))}, ${median(perSecond.map((x) => x.mean)).toFixed(1)}`,
      goal: operatorRate > 0 ? `≤ ${operatorRate + 1} (--keystone-rate ${operatorRate})` : 'no limit configured',
    });
  }
  const wpo = Math.max(...writesPerOrder);
  figures.push({ figure: 'API writes per new order, Events included (operator metric)', value: wpo.toFixed(2), goal: '≤ 6', met: wpo <= 6 });
}
