/**
 * 3. Steady state at each size (converged orders topped up in batches, orders.ts `topUp`): one full resync (the
 * `--resync-period` timer) makes 0 Keystone calls and 0 API writes; its CPU per order and the RSS; the slope from the
 * smallest size to the largest. At each size, with unrelated Secrets asked for, the memory row of part 6.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { waitReady, type OperatorProcess } from '../../test/support/operator';
import type { RecordingProxy } from '../../test/support/recording-proxy';
import type { Figure } from '../report';
import { RESYNC_S, launch } from './launch';
import { memoryRow, type Unrelated } from './memory';
import { topUp } from './orders';
import { CLK_TCK, cpuTicks, heapSnapshot, memoryOf, metricSum, quiet, rssMiB, rssParts, scrape } from './process';
import type { Run } from './run';

/** The RSS goal at `orders` converged orders, MiB: a base of 105 and 10 per 1,000 orders (issue 48), 305 at 20,000. */
export const rssGoalMiB = (orders: number): number => 105 + (10 * orders) / 1000;

/** The steady state at one size. */
export interface Steady {
  readonly size: number;
  /** The CPU of one full resync, the idle rate taken off, in ms. */
  readonly cpuMs: number;
  /** The RSS after it, in MiB. */
  readonly rss: number;
}

/** Measures one resync of a quiet operator: Keystone calls, API writes, reconciles, CPU ms, RSS MiB. */
async function resync(op: OperatorProcess, proxy: RecordingProxy): Promise<{ calls: number; writes: number; reconciles: number; cpuMs: number; rss: number; memory: string }> {
  await quiet(op, proxy);
  const before = await scrape(op);
  const mark = proxy.calls.length;
  const pid = op.server.process.pid as number;
  // Sample the CPU every 100 ms over more than one resync period; no scrape in between (a scrape costs CPU too).
  const samples: number[] = [cpuTicks(pid)];
  const end = Date.now() + (RESYNC_S + 3) * 1000;
  while (Date.now() < end) {
    await sleep(100);
    samples.push(cpuTicks(pid));
  }
  const calls = proxy.since(mark).length;
  const after = await scrape(op);
  const deltas = samples.slice(1).map((s, i) => s - samples[i]);
  // The resync is the busiest 6 s (it may spread over several samples); the rest is the idle rate.
  const width = 60;
  let peak = 0;
  let best = -1;
  for (let i = 0; i + width <= deltas.length; i++) {
    const sum = deltas.slice(i, i + width).reduce((a, b) => a + b, 0);
    if (sum > best) [best, peak] = [sum, i];
  }
  const outside = [...deltas.slice(0, peak), ...deltas.slice(peak + width)];
  const idlePerSample = outside.reduce((a, b) => a + b, 0) / Math.max(1, outside.length);
  const cpuMs = ((best - idlePerSample * width) * 1000) / CLK_TCK;
  return {
    calls,
    writes: metricSum(after, 'keystone_appcred_api_writes_total') - metricSum(before, 'keystone_appcred_api_writes_total'),
    reconciles: metricSum(after, 'keystone_appcred_reconcile_total') - metricSum(before, 'keystone_appcred_reconcile_total'),
    cpuMs,
    rss: rssMiB(pid),
    // Where the RSS is: the V8 heap in use and held, and memory outside it (Buffers, native TLS and zlib state).
    memory: `${rssParts(pid)}; ${memoryOf(after)}`,
  };
}

/**
 * Tops the orders up to each size in turn and measures a resync of the operator running now (four rows a size); with
 * `unrelated` sets, a memory row at each size too (into `memoryRows`), the steady operator stopped meanwhile. The
 * operator running at the end is a steady one.
 */
export async function steadyState(run: Run, sizes: readonly number[], unrelated: readonly Unrelated[], memoryRows: string[][]): Promise<Steady[]> {
  const { env, figures } = run;
  const { proxy } = env;
  const steady: Steady[] = [];
  for (const size of sizes) {
    await topUp(run, size);
    const s = await resync(run.op, proxy);
    steady.push({ size, cpuMs: s.cpuMs, rss: s.rss });
    process.stderr.write(`[bench] ${size} orders: resync ${s.reconciles} reconciles, ${s.calls} Keystone calls, ${s.writes} API writes, CPU ${s.cpuMs.toFixed(0)} ms, RSS ${s.rss.toFixed(0)} MiB (${s.memory})\n`);
    const perOrder = s.cpuMs / size;
    figures.push({ figure: `${size} converged orders: Keystone calls in one full resync`, value: String(s.calls), goal: '0', met: s.calls === 0 });
    figures.push({ figure: `${size} converged orders: API writes in one full resync`, value: String(s.writes), goal: '0', met: s.writes === 0 });
    figures.push({ figure: `${size} converged orders: CPU per order per resync`, value: `${perOrder.toFixed(3)} ms (${s.cpuMs.toFixed(0)} ms, ${s.reconciles} reconciles)`, goal: '≤ 0.1 ms', met: perOrder <= 0.1 });
    const rssGoal = rssGoalMiB(size);
    figures.push({ figure: `${size} converged orders: RSS`, value: `${s.rss.toFixed(0)} MiB (${s.memory})`, goal: `≤ ${rssGoal} MiB (105 + 10 per 1,000 orders)`, met: s.rss <= rssGoal });
    if (process.env.KAC_BENCH_HEAP_DIR) await heapSnapshot(run.op, process.env.KAC_BENCH_HEAP_DIR, `${size} orders`);
    // 6. The memory row of this size: fresh operators, the steady one stopped meanwhile.
    if (unrelated.length > 0) {
      await run.op.server.stop(10_000);
      await memoryRow(env, size, unrelated, memoryRows, figures);
      run.op = await launch(env, `bench-steady-${size}`, false);
      await waitReady(run.op, 600_000);
    }
    // The figures so far, in case a long run is stopped before the largest size.
    process.stderr.write(`[bench] so far:\n${figures.map((f) => `  ${f.figure}: ${f.value}${f.baseline ? ` (baseline ${f.baseline})` : ''}`).join('\n')}\n`);
  }
  return steady;
}

/** The slope from the smallest size to the largest (a row when there are two sizes or more). */
export function slope(figures: Figure[], steady: readonly Steady[]): void {
  if (steady.length > 1) {
    const [a, b] = [steady[0], steady[steady.length - 1]];
    const per1000 = (x: number) => ((x / (b.size - a.size)) * 1000).toFixed(2);
    figures.push({ figure: `slope ${a.size} → ${b.size} orders`, value: `RSS +${per1000(b.rss - a.rss)} MiB, resync CPU +${per1000(b.cpuMs - a.cpuMs)} ms per 1000 orders` });
  }
}
