/**
 * Outages with many orders waiting (issue 40): the operator (`keystone-appcred operator` from lib/, a child process) on
 * a real API server, Keystone and OpenBao, every Keystone and every OpenBao call counted by a recording proxy in front
 * of each. C orders (200; grace period 0s, so each outage's raise mints at once: no rotation starts while a grace period
 * runs) are converged; then, per outage:
 *
 * - **OpenBao refusing** for N minutes (the operator's policy for the orders' paths replaced by a deny rule, as a
 *   platform team's mistake would): every order's `spec.credentialGeneration` is raised at the start (a mass rotation,
 *   as `keystone-appcred rotate` on each), so every order mints its successor and waits with `BackupNotSynced`; the
 *   policy restored after N minutes;
 * - **Keystone down** for N minutes (every request answered 503 at the proxy, Keystone's load balancer without a
 *   backend): the same raise, every pass fails on Keystone; Keystone back after N minutes.
 *
 * It reports, per outage: the Keystone and OpenBao calls per minute during it (the first minute and the median of the
 * later ones), and the recovery: from the fix until the last order delivers the raised generation with every condition
 * True (and the first, and the median). With KAC_BENCH_BEFORE=<a checkout with lib/ compiled> every outage runs again
 * with that build's operator on the same orders, and each figure is given against it (e.g. main before issue 40, whose
 * failing orders back off on their own up to 5 minutes).
 *
 *   npm run build && npx tsx bench/outage.ts [orders=200] [openbao=1,3,10] [keystone=10] [bcrypt=4]
 *     (outage lengths in minutes, comma-separated; `0` or `none`: no such outage)
 *
 * The operator runs with `--resync-period 1h` (the default: a resync queues every order, failing ones too).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitReady, type OperatorProcess } from '../test/support/operator';
import { startRecordingProxy, type RecordingProxy } from '../test/support/recording-proxy';
import { NS, createAll, ok, path, untilReadyWatched, type Order } from './operator/api';
import { startCluster, type Env } from './operator/cluster';
import { launch } from './operator/launch';
import { ensureUsers, order, userOf } from './operator/orders';
import { conditions, median, printTable, type Figure } from './report';
import { finish, runBench, stopOnSignals } from './stops';

const LABEL = 'bench/batch=outage';
const list = (text: string | undefined, fallback: string) => ((text ?? fallback) === 'none' ? [] : (text ?? fallback).split(',').map(Number).filter((n) => n > 0));
const orders = Number(process.argv[2] ?? 200);
const openBaoMinutes = list(process.argv[3], '1,3,10');
const keystoneMinutes = list(process.argv[4], '10');
const bcryptRounds = Number(process.argv[5] ?? 4);
const before = process.env.KAC_BENCH_BEFORE ? resolve(process.env.KAC_BENCH_BEFORE) : undefined;
const log = (line: string) => process.stderr.write(`[bench outage] ${line}\n`);

/** One outage as one build lived through it. */
interface Outage {
  readonly dependency: 'OpenBao' | 'Keystone';
  readonly minutes: number;
  /** Calls per minute of the outage, minute by minute. */
  readonly keystone: readonly number[];
  readonly openBao: readonly number[];
  /** Seconds from the fix until each order delivered the raised generation, all True. */
  readonly recovered: readonly number[];
}

/** The operator's OpenBao policy on the bench's ControlPlane's paths, or a deny rule there. */
const policy = (deny: boolean) =>
  deny
    ? 'path "openstack/data/keystone/bench-cp/*" { capabilities = ["deny"] }\npath "openstack/metadata/keystone/bench-cp/*" { capabilities = ["deny"] }'
    : 'path "openstack/data/keystone/bench-cp/*" { capabilities = ["create", "read", "update"] }\npath "openstack/metadata/keystone/bench-cp/*" { capabilities = ["delete"] }';

async function openBao(env: Env, method: string, where: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${env.bao.addr}/v1/${where}`, { method, headers: { 'x-vault-token': env.bao.token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`OpenBao ${method} ${where}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}

/** The generation every order is at (they move together). */
async function generations(): Promise<Order[]> {
  return (JSON.parse(await ok('GET', `${path('keystoneapplicationcredentials', NS)}?labelSelector=${encodeURIComponent(LABEL)}`)) as { items: Order[] }).items;
}

const allTrue = (o: Order) => o.status?.conditions?.every((c) => c.status === 'True') === true;

/** Raises every order's `spec.credentialGeneration` to `generation`, 8 requests in flight. */
async function raiseAll(generation: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < orders) await ok('PATCH', `${path('keystoneapplicationcredentials', NS)}/o${next++}`, { spec: { credentialGeneration: generation } });
    }),
  );
}

/** Calls of a proxy per minute from `from`, for `minutes` minutes. */
/** The outage's calls by method and path (ids folded), most first: what the calls per minute are made of. */
const breakdown = (proxy: RecordingProxy, from: number, minutes: number) => {
  const counts = new Map<string, number>();
  for (const c of proxy.calls.filter((x) => (x.at ?? 0) >= from && (x.at ?? 0) < from + minutes * 60_000)) {
    const key = `${c.method} ${c.path.split('?')[0].replace(/[0-9a-f]{32}|[0-9a-f-]{36}/g, '{id}').replace(/\/(keystone|openstack)\/.*$/, '/$1/…')}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} ${k}`).join(', ');
};
const perMinute = (proxy: RecordingProxy, from: number, minutes: number) =>
  Array.from({ length: minutes }, (_, m) => proxy.calls.filter((c) => (c.at ?? 0) >= from + m * 60_000 && (c.at ?? 0) < from + (m + 1) * 60_000).length);

/** One outage of `dependency` for `minutes`, the orders raised to `generation` at its start. */
async function outage(dependency: Outage['dependency'], minutes: number, generation: number, env: Env, bao: RecordingProxy): Promise<Outage> {
  const { proxy } = env;
  if (dependency === 'OpenBao') await openBao(env, 'PUT', 'sys/policies/acl/bench-operator', { policy: policy(true) });
  else proxy.fault = () => 503;
  const from = Date.now();
  log(`${dependency} out for ${minutes} min; every order raised to generation ${generation}`);
  await raiseAll(generation);
  await sleep(Math.max(0, from + minutes * 60_000 - Date.now()));
  const held = (await generations()).filter((o) => (o.status?.credentialGeneration ?? 0) >= generation).length;
  if (held > 0) throw new Error(`${held} orders switched during the outage: it did not hold them`);
  if (dependency === 'OpenBao') await openBao(env, 'PUT', 'sys/policies/acl/bench-operator', { policy: policy(false) });
  else proxy.fault = undefined;
  const fixed = Date.now();
  const recovered = new Map<string, number>();
  while (recovered.size < orders) {
    for (const o of await generations()) if (!recovered.has(o.metadata.name) && (o.status?.credentialGeneration ?? 0) >= generation && allTrue(o)) recovered.set(o.metadata.name, (Date.now() - fixed) / 1000);
    if (Date.now() - fixed > 20 * 60_000) throw new Error(`${orders - recovered.size} orders not recovered 20 minutes after the fix`);
    await sleep(500);
  }
  // The superseded generations swept (grace period 0s) before the next outage starts, so its calls are its own.
  while ((await generations()).some((o) => (o.status as { previousCredentialID?: string } | undefined)?.previousCredentialID !== undefined)) await sleep(1_000);
  await sleep(5_000);
  const result = { dependency, minutes, keystone: perMinute(proxy, from, minutes), openBao: perMinute(bao, from, minutes), recovered: [...recovered.values()] };
  log(`${dependency} ${minutes} min, the calls by endpoint: Keystone ${breakdown(proxy, from, minutes)}; OpenBao ${breakdown(bao, from, minutes)}`);
  log(`${dependency} ${minutes} min: recovered in ${Math.max(...result.recovered).toFixed(1)} s; calls per minute Keystone ${result.keystone.join(' ')}, OpenBao ${result.openBao.join(' ')}`);
  return result;
}

/**
 * Every outage with the operator of `repo` (its lib/): the orders (and their users) made by the first operator, and
 * converged; the operator stopped at the end.
 */
async function outages(name: string, repo: string | undefined, env: Env, bao: RecordingProxy, token: string, generation: { next: number }, users: Set<string>): Promise<Outage[]> {
  const op: OperatorProcess = await launch({ ...env, bao: { addr: bao.url, token } }, name, true, ['--resync-period', '1h'], false, repo);
  try {
    await waitReady(op);
    if (users.size === 0) {
      await ensureUsers(orders, users);
      await createAll(Array.from({ length: orders }, (_, i) => order(`o${i}`, userOf(i), 'outage', '0s')));
    }
    await untilReadyWatched(LABEL, orders, 600_000);
    const results: Outage[] = [];
    for (const minutes of openBaoMinutes) results.push(await outage('OpenBao', minutes, generation.next++, env, bao));
    for (const minutes of keystoneMinutes) results.push(await outage('Keystone', minutes, generation.next++, env, bao));
    return results;
  } finally {
    await op.server.stop(10_000);
  }
}

const seconds = (values: readonly number[]) => `${Math.max(...values).toFixed(1)} s (first ${Math.min(...values).toFixed(1)} s, median ${median(values).toFixed(1)} s)`;
const calls = (values: readonly number[]) => `${values[0]} in the first minute, ${values.length > 1 ? median(values.slice(1)) : '-'} a minute after (median)`;
const total = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'kac-bench-outage-'));
  const stops: (() => Promise<void>)[] = [];
  stopOnSignals(stops);
  try {
    const { env } = await startCluster(work, { bcryptRounds }, stops);
    // OpenBao through a recording proxy, the operator with a token of its own policy (the root token cannot be denied).
    const bao = await startRecordingProxy(env.bao.addr);
    stops.push(async () => void bao.close());
    await openBao(env, 'PUT', 'sys/policies/acl/bench-operator', { policy: policy(false) });
    const token = ((await openBao(env, 'POST', 'auth/token/create', { policies: ['bench-operator'], ttl: '8h', no_default_policy: true })) as { auth: { client_token: string } }).auth.client_token;
    const users = new Set<string>();
    const generation = { next: 2 };
    const after = await outages('bench-outage', undefined, env, bao, token, generation, users);
    const earlier = before ? await outages('bench-outage-before', before, env, bao, token, generation, users) : undefined;
    const figures: Figure[] = [];
    after.forEach((a, i) => {
      const b = earlier?.[i];
      const what = `${a.dependency} ${a.dependency === 'OpenBao' ? 'refusing' : 'down'} ${a.minutes} min, ${orders} orders`;
      figures.push({ figure: `${what}: fix → every order switched`, value: seconds(a.recovered), ...(b ? { baseline: seconds(b.recovered), ratio: Math.max(...a.recovered) / Math.max(...b.recovered) } : {}), goal: '≤ 60 s', met: Math.max(...a.recovered) <= 60 });
      for (const [which, of] of [['Keystone', (o: Outage) => o.keystone], ['OpenBao', (o: Outage) => o.openBao]] as const) {
        figures.push({ figure: `${what}: ${which} calls per minute`, value: calls(of(a)), ...(b ? { baseline: calls(of(b)), ratio: (total(of(a)) + 1) / (total(of(b)) + 1) } : {}) });
      }
    });
    printTable(
      'Outages with many orders waiting',
      conditions(`bcrypt cost ${bcryptRounds}; ${orders} orders (10 per Keystone user), every one raised at the outage's start; operator from lib/ (Node), --resync-period 1h${before ? `; baseline: the operator of ${before} on the same orders, after this build's outages (ratio of the last order's recovery, and of all the outage's calls)` : ''}`),
      figures,
    );
  } finally {
    await finish(stops, work);
  }
}

runBench(main);
