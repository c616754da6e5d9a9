/**
 * The operator (`keystone-appcred operator`, the compiled lib/ as the image runs it, a child process) on a real API
 * server, Keystone (bcrypt cost stated) and OpenBao, every Keystone call counted by a recording proxy:
 *
 * 1. Rotation latency: from "due" (the PATCH raising `spec.credentialGeneration`, as `keystone-appcred rotate` does) to
 *    the delivered Secret carrying the new credential, with OpenBao backups on; goal ≤ a bare Keystone create + a bare
 *    OpenBao write + 1 s, measured in the same run.
 * 2. Convergence, at each worker count W (`--workers`, e.g. 1 and the default): R rounds of C new orders (created
 *    through the API, 8 requests in flight) until every one is Ready (seen through a watch), interleaved with a bare script making the same
 *    Keystone calls (per order a create; a list of the user's credentials per user as the operator keeps what it knows
 *    of them, or per order when the proxy counted one per order; a login per user as the operator keeps its tokens, or
 *    per order when the proxy counted one per order) with as many requests in flight as the
 *    operator may have: W, or the per-Keystone limit (`--keystone-in-flight`, default 8) when that is lower; goal
 *    ≤ 1.15×. The bare script also runs once more under the operator's requests per second (`--keystone-rate`, the
 *    default 20 or the one in KAC_BENCH_OPERATOR_ARGS; `--keystone-rate 0`: no such run), so that the operator's own
 *    cost is told from the limit's. Operator first in even rounds, the bare script first in odd ones. Keystone's requests in flight over each
 *    convergence, counted at the proxy: the peak and the share of the time at each count, next to the limit; requests
 *    per second (the most in any 1 s, the mean) next to `--keystone-rate`; the CPU seconds of the operator and of
 *    Keystone (one process, one thread: its CPU over the wall time is how busy it was) in the operator's runs and the
 *    bare script's. With KAC_BENCH_BEFORE=<checkout with lib/ compiled> each round at one worker also converges a batch
 *    of its own with that build's operator (e.g. main's) at `--workers 1` (KAC_BENCH_BEFORE_ARGS replaces that, ' ' for
 *    a build without the flag), for "one worker is no worse than before" in the same run.
 *    Backups off here, as the bare script makes Keystone calls only. The API writes per new order (the operator's
 *    `keystone_appcred_api_writes_total`, Events included); goal ≤ 6. Then 20 orders of one user are created and
 *    rotated together, the user's logins counted at the proxy; goal one per token lifetime.
 * 3a. A burst of up to 500 new orders with the operator at a Keystone limit (KAC_BENCH_LIMIT=rate,inFlight, default
 *    10,2): the peak requests in flight and per second at the proxy against the limit.
 * 3. Steady state at each size (e.g. 500, 1000, 2000, 5000 converged orders, topped up in batches of at most 500): one
 *    full resync (the `--resync-period` timer) makes 0 Keystone calls and 0 API writes (the operator's
 *    `keystone_appcred_api_writes_total`), its CPU per order (utime + stime from /proc around the resync, minus the idle
 *    rate), and the RSS; the slope from the smallest to the largest size.
 *
 * 4. A restart with every order converged, and 5. a failover to a standby with warm caches (the leader killed with
 *    SIGKILL): Keystone calls at the proxy and the new leader's API writes until quiet; goal 0 and 0.
 * 6. Memory by orders × unrelated Secrets (`--unrelated 2000x100KiB,10000x10KiB`): with no orders, and at each size, a
 *    fresh operator (the steady one stopped) is started on the cluster as it is, once without unrelated Secrets and
 *    once with each set of them (in a namespace of their own, random data, every other one carrying the last-applied
 *    annotation a client-side `kubectl apply` leaves, a second copy of the data); its RSS (from /proc, every 250 ms)
 *    peaks while it lists and passes every order, then settles: the table has the peak and the idle RSS (the median of
 *    the last 20 s of 30 s quiet). Goal: the idle RSS with 2,000 unrelated Secrets of 100 KiB ≤ the RSS without + 64 MB.
 *
 *   npm run build && npx tsx bench/operator.ts [sizes=500,1000,2000,5000|none] [rounds=2] [convergeCount=200] [bcryptRounds=4]
 *     [workers=1,8] [--unrelated 2000x100KiB,10000x10KiB] [--memory-only | --steady-only]
 *     (--memory-only: parts 3 and 6 only; --steady-only: 3 to 6, e.g. the restart and failover at 5,000 orders)
 *
 * `none` for the sizes runs only 1 and 2 (the rotation and the convergence at each worker count).
 *
 * KAC_BENCH_OPERATOR_ARGS adds operator flags to every operator of the run (e.g. `--heap-trim-interval 0s`, the trimmer
 * off, to compare); KAC_BENCH_OPERATOR_ENV='NAME=value ...' sets process settings beside the construct's (e.g. allocator
 * variables). KAC_BENCH_OPERATOR_NODE_ARGS adds Node flags to the operator's command line, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`
 * for a CPU profile (written when the bench stops it) or `--max-semi-space-size=4`. KAC_BENCH_HEAP_DIR=/tmp/h writes a
 * heap snapshot of the steady operator there after each size's resync (to see what the RSS is made of; writing one
 * takes memory the process may keep, so the RSS of the sizes after the first is not comparable to a run without).
 *
 * KAC_BENCH_KEYSTONE_CPU=0 pins Keystone to CPU 0 and everything else to the other CPUs (`taskset`): the convergence
 * without the operator's API server and etcd taking Keystone's core, to tell the operator's own cost from the machine's.
 *
 * The parts live in bench/operator/, a file each (rotation, convergence, logins, burst, steady, restart, memory), with
 * what they share (the cluster, the API, the orders, the operator process, the bare script); main.ts runs them in order.
 *
 * (tsx: it borrows the test environment's starters from test/support; lib/ must be built: the operator runs from it.)
 */
import { main } from './operator/main';

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
