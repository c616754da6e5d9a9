/**
 * A fleet-wide generation raise beside another user of Keystone: does the operator's pacing keep Keystone's other users'
 * latency while the fleet converges?
 *
 * The operator (`keystone-appcred operator` from lib/, the construct's process settings, default flags: adaptive
 * pacing, 8 workers) on a real API server and Keystone, every operator call through a recording proxy:
 *
 * 1. N orders (10 per Keystone user) converged with Keystone at the setup cost (bcrypt 4: the setup's creates are not
 *    what is measured); then Keystone takes the measured cost for every hash from then on (bcrypt 12, Keystone's
 *    default) and a bare create's latency at it is measured (Keystone's capacity: its workers over that latency).
 * 2. The bystander: a Keystone user of its own, its password hashed at the measured cost, logging in in a loop in a
 *    process of its own (straight to Keystone, a pause between logins); its latency idle (the operator converged,
 *    making no call), then while every order's `spec.credentialGeneration` is raised at once, until every order is
 *    Ready at the new generation (the convergence time); with a comparison count, the same for that many orders under
 *    `--keystone-pacing fixed` (the pacing of before: `--keystone-in-flight`, 8) in the same run.
 *
 * Goal: the bystander's p99 during the raise ≤ 2× its idle p99, the fleet converging at Keystone's capacity less the
 * bystander's share. A ratio in one run is the figure: the machine is shared, no test asserts a time.
 *
 *   npm run build && npx tsx bench/raise.ts [orders=2000] [bcryptRounds=12] [keystoneProcesses=1] [compareFixed=200]
 *
 * KAC_BENCH_BYSTANDER_PAUSE_MS (default 1000) is the pause between two logins; KAC_BENCH_IDLE_LOGINS (default 150) the
 * idle logins; KAC_BENCH_SETUP_ROUNDS (default 4) the setup's bcrypt cost. KAC_BENCH_OPERATOR_ARGS, _ENV and _NODE_ARGS
 * as in bench/operator.ts. `keystoneProcesses` above 1 serves Keystone from that many processes on one socket (as
 * uWSGI's workers; src/testbed/keystone), for how the pacing shares a Keystone of several workers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_WORKERS, KeystoneLimitDefaults } from '../src/api/operator-env';
import { startCluster } from './operator/cluster';
import { raiseBesideBystander } from './operator/raise';
import { PER_USER } from './operator/orders';
import { Run } from './operator/run';
import { conditions, printTable } from './report';
import { stopOnSignals } from './stops';

async function main(): Promise<void> {
  const [orders, bcryptRounds, keystoneProcesses, compareFixed] = [process.argv[2] ?? '2000', process.argv[3] ?? '12', process.argv[4] ?? '1', process.argv[5] ?? '200'].map(Number);
  const setupRounds = Number(process.env.KAC_BENCH_SETUP_ROUNDS ?? 4);
  const pauseMs = Number(process.env.KAC_BENCH_BYSTANDER_PAUSE_MS ?? 1000);
  const idleLogins = Number(process.env.KAC_BENCH_IDLE_LOGINS ?? 150);
  const work = mkdtempSync(join(tmpdir(), 'kac-bench-raise-'));
  const stops: (() => Promise<void>)[] = [];
  stopOnSignals(stops);
  try {
    const { env, keystone } = await startCluster(work, { bcryptRounds: setupRounds, keystoneProcesses }, stops);
    const run = new Run(env, keystone, stops);
    stops.push(() => run.stopOperator());
    await raiseBesideBystander(run, { orders, bcryptRounds, idleLogins, pauseMs, compareFixed });
    const context = `${conditions(`bcrypt cost ${bcryptRounds} (the setup at ${setupRounds})`)}; Keystone ${keystoneProcesses} process${keystoneProcesses > 1 ? 'es' : ''} of one thread (wsgiref); operator from lib/ (Node), ${DEFAULT_WORKERS} workers per kind, Keystone limit ${KeystoneLimitDefaults.inFlight} in flight and ${KeystoneLimitDefaults.requestsPerSecond}/s, ${KeystoneLimitDefaults.pacing} pacing (${KeystoneLimitDefaults.spareWorkers} spare worker) unless said; ${PER_USER} orders per Keystone user; the bystander ${pauseMs} ms between logins, in a process of its own, straight to Keystone; API server, etcd, Keystone and the operator on the same cores`;
    printTable('A fleet-wide raise beside another user of Keystone', context, run.figures);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    if (process.env.KAC_BENCH_KEEP) process.stderr.write(`[bench] kept ${work}\n`);
    else rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
