/**
 * 7. A fleet-wide generation raise beside another user of Keystone (bench/raise.ts runs it): N converged orders (set
 * up at the cluster's cost), Keystone switched to the measured cost, a bystander logging in as a user of its own in a
 * loop; its login latency idle (the operator converged, making no call), then while every order's generation is raised
 * at once, until every order is Ready at it; with `compareFixed`, once more for that many other orders (converged with
 * the first N: no rotation starts while a grace period runs, so the raised ones could not rotate again) under
 * `--keystone-pacing fixed` (the pacing of before) in the same run. The figures: the bystander's p50 and p99 idle and
 * during each raise and their ratio (goal p99 ≤ 2× idle), the convergence time against Keystone's capacity (its
 * workers over a bare create's latency at that cost) less the bystander's share, Keystone's requests in flight at the
 * proxy, its workers' busy time, and the operator's paced limit and measured capacity.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitReady } from '../../test/support/operator';
import { describeInFlight, inFlightProfile } from '../../test/support/recording-proxy';
import { median, ms } from '../report';
import { NS, ok, path, untilReadyWatched } from './api';
import { bystanderUser, loginsBetween, percentile, startBystander, untilLogins, type Bystander } from './bystander';
import { mix } from './convergence';
import { launch } from './launch';
import { passwordOf, topUp } from './orders';
import { CLK_TCK, cpuTicks, metricSum, quiet, scrape } from './process';
import type { Run } from './run';

/** What the raise runs with (bench/raise.ts's arguments and environment). */
export interface RaiseOptions {
  /** Orders converged, then raised together. */
  readonly orders: number;
  /** Keystone's bcrypt cost during the raises (the orders are set up at the cluster's). */
  readonly bcryptRounds: number;
  /** The bystander's logins before the raise (the idle figures). */
  readonly idleLogins: number;
  /** The pause between two of the bystander's logins, ms. */
  readonly pauseMs: number;
  /** Orders raised once more under `--keystone-pacing fixed` (0: none). */
  readonly compareFixed: number;
}

/** Raises `spec.credentialGeneration` of orders `o<from>` … `o<to-1>` to 2, labelled `bench/raise=<label>`, 16 requests in flight. */
async function raiseGeneration(from: number, to: number, label: string): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < to) await ok('PATCH', `${path('keystoneapplicationcredentials', NS)}/o${next++}`, { metadata: { labels: { 'bench/raise': label } }, spec: { credentialGeneration: 2 } });
    }),
  );
}

/** A bare create's latency at Keystone's cost now, straight to Keystone as one of the bench's users (median of `n`, one at a time). */
async function bareCreateMs(run: Run, n: number): Promise<number> {
  const url = run.keystone.authUrl;
  const password = await passwordOf('u0');
  const login = await fetch(`${url}/auth/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: 'bench-u0', domain: { name: 'Default' }, password } } }, scope: { project: { name: 'bench-proj', domain: { name: 'Default' } } } } }) });
  const token = login.headers.get('x-subject-token') ?? '';
  const userId = ((await login.json()) as { token: { user: { id: string } } }).token.user.id;
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(`${url}/users/${userId}/application_credentials`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-auth-token': token }, body: JSON.stringify({ application_credential: { name: `bare-raise-${i}`, secret: randomBytes(32).toString('base64url'), unrestricted: false } }) });
    const id = ((await res.json()) as { application_credential: { id: string } }).application_credential.id;
    times.push(performance.now() - t0);
    await (await fetch(`${url}/users/${userId}/application_credentials/${id}`, { method: 'DELETE', headers: { 'x-auth-token': token } })).text();
  }
  return median(times);
}

/** CPU ticks of every Keystone server process. */
const keystoneTicks = (run: Run) => run.keystone.serverPids().reduce((sum, pid) => sum + cpuTicks(pid), 0);

/**
 * One raise of orders `o<from>` … `o<to-1>` (converged at generation 1) to generation 2 with the operator running now,
 * the bystander logging in throughout; its rows, labelled `what`.
 */
async function raiseBeside(run: Run, bystander: Bystander, [from, to]: readonly [number, number], label: string, what: string, idle: { p50: number; p99: number }, createMs: number): Promise<void> {
  const { env, figures, keystone } = run;
  const { proxy } = env;
  await quiet(run.op, proxy);
  const mark = proxy.calls.length;
  const ticks0 = keystoneTicks(run);
  const t0 = Date.now();
  const p0 = performance.now();
  const count = to - from;
  await raiseGeneration(from, to, label);
  await untilReadyWatched(`bench/raise=${label}`, count, 4 * 3_600_000, 2);
  const t1 = Date.now();
  const seconds = (t1 - t0) / 1000;
  const busy = (keystoneTicks(run) - ticks0) / CLK_TCK / seconds / keystone.processes;
  const calls = proxy.since(mark);
  const flight = inFlightProfile(proxy.spans.slice(mark), p0, performance.now());
  const during = loginsBetween(bystander, t0, t1).map((l) => l.ms);
  const p50 = percentile(during, 50);
  const p99 = percentile(during, 99);
  const text = await scrape(run.op);
  // Keystone's capacity: its workers over a bare create's latency; the bystander's share: its logins' cost (their idle
  // median: what a worker spends on one, the wait left out) over the workers' time.
  const capacity = keystone.processes / (createMs / 1000);
  const bystanderShare = (during.length * idle.p50) / 1000 / seconds / keystone.processes;
  figures.push({ figure: `${what}: the bystander's login latency, p50 / p99 (${during.length} logins)`, value: `${ms(p50)} / ${ms(p99)}`, baseline: `${ms(idle.p50)} / ${ms(idle.p99)} idle`, ratio: p99 / idle.p99, goal: '≤ 2× idle p99', met: p99 <= 2 * idle.p99 });
  figures.push({ figure: `${what}: every order Ready at the new generation`, value: `${seconds.toFixed(0)} s (${(count / seconds).toFixed(2)} orders/s)`, baseline: `Keystone's capacity ${capacity.toFixed(2)} creates/s (${keystone.processes} worker${keystone.processes > 1 ? 's' : ''}, ${ms(createMs)} a create)`, ratio: count / seconds / capacity });
  figures.push({ figure: `${what}: the shares of Keystone's workers' time: the fleet's creates, the bystander's logins, Keystone's CPU busy`, value: `${((100 * count * createMs) / 1000 / seconds / keystone.processes).toFixed(0)} %, ${(100 * bystanderShare).toFixed(0)} %, ${(100 * busy).toFixed(0)} %` });
  const failed = calls.filter((c) => (c.status ?? 0) >= 400).length;
  figures.push({ figure: `${what}: Keystone requests in flight at the proxy (${mix(calls, count)}; ${failed} answered with an error)`, value: describeInFlight(flight) });
  figures.push({ figure: `${what}: the operator's limit and measured capacity at the end (metrics)`, value: `${metricSum(text, 'keystone_appcred_keystone_in_flight_limit')}, ${/keystone_appcred_keystone_capacity\{/.test(text) ? metricSum(text, 'keystone_appcred_keystone_capacity') : '-'} (peak in flight ${metricSum(text, 'keystone_appcred_keystone_in_flight_peak')})` });
  process.stderr.write(`[bench] ${what}: ${seconds.toFixed(0)} s, bystander p50 ${p50.toFixed(0)} p99 ${p99.toFixed(0)} ms (idle ${idle.p50.toFixed(0)} / ${idle.p99.toFixed(0)}), max ${Math.max(...during).toFixed(0)} ms; Keystone in flight ${describeInFlight(flight)}; busy ${(100 * busy).toFixed(0)} %\n`);
}

/** Runs the part (the operator running now is replaced by its own); its rows into `run.figures`. */
export async function raiseBesideBystander(run: Run, options: RaiseOptions): Promise<void> {
  const { env, keystone } = run;
  run.op = await launch(env, 'bench-raise', false);
  await waitReady(run.op);
  await topUp(run, options.orders + options.compareFixed);
  await quiet(run.op, env.proxy);
  await keystone.setBcryptRounds(options.bcryptRounds);
  const createMs = await bareCreateMs(run, 5);
  const password = await bystanderUser(keystone, 'bystander', 'bench-proj');
  const bystander = startBystander(keystone.authUrl, 'bystander', password, 'bench-proj', options.pauseMs);
  run.stops.push(() => bystander.stop());
  try {
    const idleFrom = Date.now();
    await untilLogins(bystander, options.idleLogins);
    const idleLogins = loginsBetween(bystander, idleFrom, Date.now()).map((l) => l.ms);
    const idle = { p50: percentile(idleLogins, 50), p99: percentile(idleLogins, 99) };
    run.figures.push({ figure: `the bystander idle (the orders converged, no operator call): login latency p50 / p99 (${idleLogins.length} logins, ${options.pauseMs} ms apart), max`, value: `${ms(idle.p50)} / ${ms(idle.p99)}, ${ms(Math.max(...idleLogins))}` });
    await raiseBeside(run, bystander, [0, options.orders], 'adaptive', `raise of ${options.orders} orders, adaptive pacing`, idle, createMs);
    if (options.compareFixed > 0) {
      await quiet(run.op, env.proxy);
      await run.op.server.stop(10_000);
      run.op = await launch(env, 'bench-raise-fixed', false, ['--keystone-pacing', 'fixed']);
      await waitReady(run.op);
      await sleep(2_000);
      await raiseBeside(run, bystander, [options.orders, options.orders + options.compareFixed], 'fixed', `raise of ${options.compareFixed} other orders, --keystone-pacing fixed (before)`, idle, createMs);
    }
  } finally {
    await bystander.stop();
  }
}
