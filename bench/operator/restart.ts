/**
 * 4. A restart with every order converged, and 5. a failover to a standby with warm caches (the leader killed with
 * SIGKILL): the Keystone calls at the proxy and the new process's API writes until quiet; goal 0 and 0. The restart's
 * time from the new process's spawn until it has passed every order once with nothing left queued; goal ≤ 60 s.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { metricsText, waitReady, type OperatorProcess } from '../../test/support/operator';
import { launch } from './launch';
import { metricSum, metricSumWith, quiet, scrape } from './process';
import type { Run } from './run';

/** The restart's goal: converged within a minute of the spawn, whatever the number of orders. */
const RESTART_GOAL_MS = 60_000;

/**
 * Milliseconds from `op`'s spawn until it has reconciled `orders` orders once (any result) with no key queued or
 * being reconciled, its metrics polled every 250 ms.
 */
async function convergedAfter(op: OperatorProcess, orders: number, timeoutMs = 1_800_000): Promise<number> {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(250)) {
    const text = await metricsText(op, 60_000); // 20,000 orders' scrape takes seconds; one that fails is one more poll
    const passed = metricSumWith(text, 'keystone_appcred_reconcile_total', 'kind="KeystoneApplicationCredential"');
    if (passed >= orders && metricSum(text, 'keystone_appcred_workqueue_depth') === 0 && metricSum(text, 'keystone_appcred_active_workers') === 0) return Date.now() - op.spawnedAt;
    if (Date.now() > deadline) throw new Error(`the restarted operator passed ${passed} of ${orders} orders in ${timeoutMs} ms`);
  }
}

/** Stops the operator running now and starts a new one: its first pass over every order, until quiet; one row. */
export async function restart(run: Run): Promise<void> {
  const { env, figures } = run;
  const { proxy } = env;
  await quiet(run.op, proxy);
  await run.op.server.stop(10_000);
  const mark = proxy.calls.length;
  run.op = await launch(env, 'bench-restarted', false);
  const readyMs = await waitReady(run.op, 600_000);
  const convergedMs = await convergedAfter(run.op, run.total);
  await sleep(2_000);
  await quiet(run.op, proxy);
  const calls = proxy.since(mark).length;
  const text = await scrape(run.op);
  const writes = metricSum(text, 'keystone_appcred_api_writes_total');
  const reconciles = metricSum(text, 'keystone_appcred_reconcile_total');
  figures.push({ figure: `restart with ${run.total} converged orders: Keystone calls (proxy), API writes (operator metric)`, value: `${calls}, ${writes} (${reconciles} reconciles)`, goal: '0, 0', met: calls === 0 && writes === 0 });
  figures.push({ figure: `restart with ${run.total} converged orders: from the spawn until every order was passed once, nothing queued`, value: `${(convergedMs / 1000).toFixed(1)} s (ready after ${(readyMs / 1000).toFixed(1)} s)`, goal: `≤ ${RESTART_GOAL_MS / 1000} s`, met: convergedMs <= RESTART_GOAL_MS });
  process.stderr.write(`[bench] restart with ${run.total} orders: ${calls} Keystone calls, ${writes} API writes, ${reconciles} reconciles; every order passed ${(convergedMs / 1000).toFixed(1)} s after the spawn (ready after ${(readyMs / 1000).toFixed(1)} s)\n`);
  await run.op.server.stop(10_000);
}

/** Two replicas with leader election, the leader killed with SIGKILL, the standby takes over; one row. */
export async function failover(run: Run): Promise<void> {
  const { env, figures } = run;
  const { proxy } = env;
  const leaderOf = async (p: OperatorProcess) => metricSum(await metricsText(p), 'keystone_appcred_leader') === 1;
  const a = await launch(env, 'bench-leader', false, [], true);
  run.stops.push(() => a.server.stop(1_000));
  await waitReady(a);
  for (const deadline = Date.now() + 60_000; !(await leaderOf(a)); await sleep(250)) if (Date.now() > deadline) throw new Error('no leader');
  await quiet(a, proxy);
  const b = await launch(env, 'bench-standby', false, [], true);
  run.stops.push(() => b.server.stop(10_000));
  await waitReady(b);
  await sleep(2_000);
  const mark = proxy.calls.length;
  a.server.process.kill('SIGKILL');
  // The standby takes over once the Lease (the default 15 s) expired unrenewed.
  for (const deadline = Date.now() + 90_000; !(await leaderOf(b)); await sleep(250)) if (Date.now() > deadline) throw new Error('the standby did not take over');
  await sleep(2_000);
  await quiet(b, proxy);
  const calls = proxy.since(mark).length;
  const text = await scrape(b);
  const writes = metricSum(text, 'keystone_appcred_api_writes_total');
  figures.push({ figure: `failover to the standby with ${run.total} converged orders: Keystone calls (proxy), API writes (operator metric)`, value: `${calls}, ${writes} (${metricSum(text, 'keystone_appcred_reconcile_total')} reconciles)`, goal: '0, 0', met: calls === 0 && writes === 0 });
  process.stderr.write(`[bench] failover with ${run.total} orders: ${calls} Keystone calls, ${writes} API writes\n`);
  await a.server.stop(1_000).catch(() => undefined);
}
