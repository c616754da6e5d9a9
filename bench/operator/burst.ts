/**
 * 3a. A burst of up to 500 new orders with the operator at a Keystone limit it must hold (KAC_BENCH_LIMIT=rate,inFlight,
 * default 10,2): the peak requests in flight and per second at the proxy against the limit.
 */
import { waitReady } from '../../test/support/operator';
import { peakRate } from '../../test/support/recording-proxy';
import { createAll, untilReady } from './api';
import { launch } from './launch';
import { ensureUsers, order, userOf } from './orders';
import { metricSum, quiet, scrape } from './process';
import type { Run } from './run';

/**
 * Converges a burst of new orders (up to the first steady size, at most 500) under a limited operator of its own
 * (stopped at the end; the operator running before is stopped first); two rows.
 */
export async function burstUnderLimit(run: Run, sizes: readonly number[]): Promise<void> {
  const { env, figures, users } = run;
  const { proxy } = env;
  const [limitRate, limitInFlight] = (process.env.KAC_BENCH_LIMIT ?? '10,2').split(',').map(Number);
  await run.op.server.stop(10_000);
  run.op = await launch(env, 'bench-limited', false, ['--keystone-rate', String(limitRate), '--keystone-in-flight', String(limitInFlight)]);
  await waitReady(run.op);
  const burst = Math.min(500, Math.max(0, (sizes[0] ?? 0) - run.total));
  if (burst > 0) {
    await ensureUsers(run.total + burst, users);
    await quiet(run.op, proxy);
    const mark = proxy.calls.length;
    proxy.resetPeak();
    const t0 = Date.now();
    await createAll(Array.from({ length: burst }, (_, k) => order(`o${run.total + k}`, userOf(run.total + k), `f${run.total}`)));
    await untilReady('keystoneapplicationcredentials', `bench/batch=f${run.total}`, burst, 3_600_000, 1000);
    const seconds = (Date.now() - t0) / 1000;
    const calls = proxy.since(mark);
    const metricPeak = metricSum(await scrape(run.op), 'keystone_appcred_keystone_in_flight_peak');
    const rate = peakRate(calls);
    figures.push({ figure: `burst of ${burst} new orders: Keystone requests in flight, peak at the proxy (operator metric)`, value: `${proxy.peakInFlight} (${metricPeak})`, goal: `≤ ${limitInFlight} (--keystone-in-flight)`, met: proxy.peakInFlight <= limitInFlight });
    figures.push({ figure: `burst of ${burst} new orders: Keystone requests per second, peak over any 1 s`, value: `${rate} (mean ${(calls.length / seconds).toFixed(1)} over ${seconds.toFixed(0)} s)`, goal: `≤ ${limitRate} (--keystone-rate) + 1`, met: rate <= limitRate + 1 });
    process.stderr.write(`[bench] burst of ${burst} under the limit (${limitRate}/s, ${limitInFlight} in flight): ${seconds.toFixed(0)} s, ${calls.length} Keystone calls, peak ${proxy.peakInFlight} in flight, ${rate} in the busiest second\n`);
    run.total += burst;
  }
  await run.op.server.stop(10_000);
}
