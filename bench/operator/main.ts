/**
 * The operator bench's run (see bench/operator.ts for what it measures and its arguments): the arguments, the cluster,
 * the parts in order (each its own file here), the report; everything it started stopped on the way out, Ctrl-C too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_WORKERS, KeystoneLimitDefaults } from '../../src/api/operator-env';
import { waitReady } from '../../test/support/operator';
import { conditions, printTable } from '../report';
import { stopOnSignals } from '../stops';
import { burstUnderLimit } from './burst';
import { startCluster } from './cluster';
import { convergence } from './convergence';
import { RESYNC_S, launch } from './launch';
import { loginsOfOneUser } from './logins';
import { memoryRow, parseUnrelated, printMemoryTable, stopFreshOperators } from './memory';
import { PER_USER } from './orders';
import { failover, restart } from './restart';
import { rotation } from './rotation';
import { Run } from './run';
import { slope, steadyState } from './steady';

/** Runs the bench with the process's arguments; the tables on stdout, the progress on stderr. */
export async function main(): Promise<void> {
  const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
  const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(all[i - 1] === '--unrelated'));
  const unrelatedAt = process.argv.indexOf('--unrelated');
  const unrelated = unrelatedAt > 0 ? (process.argv[unrelatedAt + 1] ?? '').split(',').filter(Boolean).map(parseUnrelated) : [];
  const memoryOnly = flags.includes('--memory-only');
  // The operator's requests per second per Keystone (--keystone-rate in KAC_BENCH_OPERATOR_ARGS, else the default):
  // the convergence's bare script also runs once under it, so the ratio tells the operator's cost from the limit's.
  const rateFlag = /--keystone-rate[ =](\S+)/.exec(process.env.KAC_BENCH_OPERATOR_ARGS ?? '');
  const operatorRate = rateFlag ? Number(rateFlag[1]) : KeystoneLimitDefaults.requestsPerSecond;
  const steadyOnly = flags.includes('--steady-only');
  const sizes = positional[0] === 'none' ? [] : (positional[0] ?? '500,1000,2000,5000').split(',').map(Number);
  const rounds = Number(positional[1] ?? 2);
  const convergeCount = Number(positional[2] ?? 200);
  const bcryptRounds = Number(positional[3] ?? 4);
  const workerCounts = (positional[4] ?? `1,${DEFAULT_WORKERS}`).split(',').map(Number);
  if (workerCounts.length === 0 || workerCounts.some((w) => !Number.isInteger(w) || w < 1)) throw new Error(`workers (${positional[4]}) must be a comma-separated list of worker counts`);
  // A checkout of an earlier build with its lib/ compiled, whose operator converges a batch of its own in each round at one worker.
  const before = process.env.KAC_BENCH_BEFORE ? resolve(process.env.KAC_BENCH_BEFORE) : undefined;
  const context = `${conditions(`bcrypt cost ${bcryptRounds}`)}; operator from lib/ (Node), ${memoryOnly ? '' : `${workerCounts.join(' then ')} workers per kind in the convergence (elsewhere `}the default, ${DEFAULT_WORKERS}${memoryOnly ? ' workers per kind' : ')'}, Keystone limit ${KeystoneLimitDefaults.inFlight} in flight and ${operatorRate > 0 ? `${operatorRate}/s` : 'no rate'} (3a: KAC_BENCH_LIMIT), --resync-period ${RESYNC_S}s, ${PER_USER} orders per Keystone user; ${process.env.KAC_BENCH_KEYSTONE_CPU === undefined ? 'API server, etcd, Keystone, OpenBao and the operator on the same cores' : `Keystone alone on CPU ${process.env.KAC_BENCH_KEYSTONE_CPU}, the API server, etcd, OpenBao, the operator and the bench on the others`}; ${rounds} interleaved convergence rounds (medians); rotation: median of 5`;
  const work = mkdtempSync(join(tmpdir(), 'kac-bench-operator-'));
  const stops: (() => Promise<void>)[] = [stopFreshOperators];
  // Ctrl-C or a timeout: stop what was started (the servers run in process groups of their own) before leaving.
  stopOnSignals(stops);
  try {
    // The unrelated Secrets are hundreds of MB, made and deleted once per cell, and 20,000 orders hold about 2 GiB
    // of revisions between compactions: more than etcd's test quota of 1 GiB.
    const largest = Math.max(0, ...sizes);
    const etcdQuotaBytes = unrelated.length > 0 || largest > 5000 ? 8 * 2 ** 30 : undefined;
    const { env, keystone } = await startCluster(work, { bcryptRounds, ...(etcdQuotaBytes ? { etcdQuotaBytes } : {}) }, stops);
    const run = new Run(env, keystone, stops);
    // The operator running now, whichever part launched it, stopped on the way out.
    stops.push(() => run.stopOperator());
    const memoryRows: string[][] = [];

    // 6 (first row). Memory with no orders: only the ControlPlane and the project.
    if (unrelated.length > 0) await memoryRow(env, 0, unrelated, memoryRows, run.figures);

    if (!memoryOnly && !steadyOnly) {
      await rotation(run);
      await convergence(run, { rounds, convergeCount, workerCounts, operatorRate, before });
      if (sizes.length === 0) {
        printTable('The operator: rotation latency, convergence', context, run.figures);
        return;
      }
      await loginsOfOneUser(run);
      await burstUnderLimit(run, sizes);
      run.op = await launch(env, 'bench-steady-2', false);
    } else {
      run.op = await launch(env, 'bench-steady', false);
    }
    await waitReady(run.op);

    const steady = await steadyState(run, sizes, unrelated, memoryRows);
    if (!memoryOnly) {
      await restart(run);
      // A failed failover is a row of the table, not the end of the run: the figures before it are still printed.
      await failover(run).catch((error: unknown) => {
        const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
        run.figures.push({ figure: `failover to the standby with ${run.total} converged orders`, value: `failed: ${reason}`, goal: '0, 0', met: false });
      });
    }
    slope(run.figures, steady);
    printMemoryTable(unrelated, memoryRows);
    printTable('The operator: rotation latency, convergence, steady state', context, run.figures);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    // KAC_BENCH_KEEP=1 keeps the work dir (the operators' logs) for a look after the run.
    if (process.env.KAC_BENCH_KEEP) process.stderr.write(`[bench] kept ${work}\n`);
    else rmSync(work, { recursive: true, force: true });
  }
}
