/**
 * The operator as the image runs it: `keystone-appcred operator` from a checkout's compiled lib/, a child process with
 * the construct's process settings, on the bench's cluster, plus what the KAC_BENCH_OPERATOR_* variables add.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { OperatorRuntimeEnv } from '../../src/api/operator-env';
import { startOperator, type OperatorProcess } from '../../test/support/operator';
import { OP_NS } from './api';
import type { Env } from './cluster';

/** The checkout this bench is in, whose lib/ the operator runs from. */
const REPO = resolve(__dirname, '..', '..');
/** The operator's `--resync-period`, in seconds. */
export const RESYNC_S = 20;

/**
 * Starts an operator named `name` from `repo`'s lib/ (this checkout's by default; KAC_BENCH_BEFORE's for the build before):
 * OpenBao backups on with `backups`, leader election on with `elect` (else `--no-leader-elect`), `extra` flags added.
 */
export function launch(env: Env, name: string, backups: boolean, extra: readonly string[] = [], elect = false, repo = REPO): Promise<OperatorProcess> {
  const compiled = join(repo, 'lib', 'src', 'cli', 'main.js');
  if (!existsSync(compiled)) throw new Error(`${repo}/lib/ is missing: run \`npm run build\` (or \`npx tsc\`) there first`);
  return startOperator({
    name,
    kubeconfig: process.env.KAC_KUBECONFIG as string,
    namespace: OP_NS,
    logDir: env.work,
    // KAC_BENCH_OPERATOR_NODE_ARGS: Node flags for the operator, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it.
    command: [
      process.execPath,
      ...(process.env.KAC_BENCH_OPERATOR_NODE_ARGS ?? '').split(' ').filter(Boolean),
      ...(process.env.KAC_BENCH_HEAP_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${process.env.KAC_BENCH_HEAP_DIR}`] : []),
      compiled,
      'operator',
    ],
    // KAC_BENCH_OPERATOR_ARGS: operator flags for every operator of the run, e.g. `--heap-trim-interval 0s` to compare.
    args: [
      ...(elect ? [] : ['--no-leader-elect']),
      '--resync-period',
      `${RESYNC_S}s`,
      ...(backups ? ['--openbao-address', env.bao.addr] : []),
      ...extra,
      ...(process.env.KAC_BENCH_OPERATOR_ARGS ?? '').split(' ').filter(Boolean),
    ],
    // The process settings the construct's Deployment gives the operator, so the bench measures that process.
    // KAC_BENCH_OPERATOR_ENV='NAME=value ...' sets or overrides process settings, e.g. allocator variables, to compare.
    env: {
      ...OperatorRuntimeEnv,
      ...Object.fromEntries(
        (process.env.KAC_BENCH_OPERATOR_ENV ?? '')
          .split(' ')
          .filter((pair) => pair.indexOf('=') > 0)
          .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
      ),
      ...(backups ? { KAC_OPENBAO_AUTH_METHOD: 'token', KAC_OPENBAO_TOKEN: env.bao.token } : {}),
    },
  });
}
