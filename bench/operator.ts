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
 * heap snapshot of the steady operator there after each size's resync (to see what the RSS is made of).
 *
 * KAC_BENCH_KEYSTONE_CPU=0 pins Keystone to CPU 0 and everything else to the other CPUs (`taskset`): the convergence
 * without the operator's API server and etcd taking Keystone's core, to tell the operator's own cost from the machine's.
 *
 * (tsx: it borrows the test environment's starters from test/support; lib/ must be built: the operator runs from it.)
 */
import { execFileSync } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_WORKERS, KeystoneLimitDefaults, OperatorRuntimeEnv } from '../src/api/operator-env';
import { startLocalKeystone } from '../src/testbed/keystone';
import { KeystoneLimits } from '../src/keystone/limits';
import { startKube } from '../test/support/kube';
import { kubeRequest, type KubeObject } from '../test/support/kubectl';
import { startOpenBao } from '../test/support/openbao';
import { installCrds, metricsText, startOperator, waitReady, type OperatorProcess } from '../test/support/operator';
import { describeInFlight, inFlightProfile, peakRate, startRecordingProxy, type RecordedCall, type RecordingProxy } from '../test/support/recording-proxy';
import { synthesizeManifests } from '../test/support/synth';
import { conditions, median, ms, printTable, type Figure } from './report';

const REPO = resolve(__dirname, '..');
const API = 'c5c3.io/v1alpha1';
const CP_NS = 'bench-cp';
const NS = 'bench-tenant';
const OP_NS = 'bench-operator';
const CP_REF = { name: 'cp', namespace: CP_NS };
/**
 * Orders per Keystone user. A pass lists the user's credentials, and Keystone's list costs about 3 ms per credential
 * held (measured at 100 per user: 300 ms per list on this machine), so this is kept as a service user's would be.
 */
const PER_USER = 10;
const RESYNC_S = 20;
const CLK_TCK = 100;
/** Where the unrelated Secrets of part 6 live. */
const UNRELATED_NS = 'bench-unrelated';

/**
 * The operator's limit of requests in flight per Keystone (its default, which the bench does not change outside 3a):
 * the bare script runs that many lanes when the operator has more workers, as the limit, not the worker count,
 * decides what reaches Keystone.
 */
const KEYSTONE_IN_FLIGHT_LIMIT = KeystoneLimitDefaults.inFlight;

/** Requests the operator may have in flight at Keystone with `workers` workers per kind. */
const keystoneLanes = (workers: number): number => Math.min(workers, KEYSTONE_IN_FLIGHT_LIMIT > 0 ? KEYSTONE_IN_FLIGHT_LIMIT : workers);

const sleep = (msecs: number) => new Promise((done) => setTimeout(done, msecs));

interface Order extends KubeObject {
  status?: { credentialGeneration?: number; conditions?: { type: string; status: string }[] };
}

async function ok(method: string, path: string, body?: unknown): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const res = await kubeRequest(method, path, body === undefined ? {} : { body, headers: method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json' } : {} });
    if (res.status < 300) return res.body;
    if (res.status === 409 && method === 'POST') return res.body; // already there
    if (attempt >= 5 || res.status < 500) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
    await sleep(200);
  }
}

const path = (kind: string, namespace: string) => `/apis/${API.split('/')[0]}/v1alpha1/namespaces/${namespace}/${kind}`;

/** Creates objects through the API, `parallel` requests in flight. */
async function createAll(objects: readonly KubeObject[], parallel = 8): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < objects.length) {
        const o = objects[next++];
        const plural = `${o.kind.toLowerCase()}s`;
        await ok('POST', o.kind === 'Secret' ? `/api/v1/namespaces/${o.metadata.namespace}/secrets` : path(plural, o.metadata.namespace as string), o);
      }
    }),
  );
}

const ready = (o: Order, generation = 1) => (o.status?.credentialGeneration ?? 0) >= generation && o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** Waits until every listed object of `kind` with the label selector is Ready; polls every `everyMs`. */
async function untilReady(kind: string, selector: string, count: number, timeoutMs: number, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = JSON.parse(await ok('GET', `${path(kind, NS)}?labelSelector=${encodeURIComponent(selector)}`)) as { items: Order[] };
    const n = list.items.filter((o) => (kind === 'keystoneapplicationcredentials' ? ready(o) : o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))).length;
    if (n >= count) return;
    if (Date.now() > deadline) throw new Error(`${kind} ${selector}: ${n} of ${count} Ready after ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/**
 * {@link untilReady} through a watch: one list, then the API server's events, so that waiting for a convergence costs
 * the API server (on the cores the operator's writes need) one list and a stream, not a list of every order of the
 * batch every 100 ms. A watch that ends early is opened again from a fresh list.
 */
async function untilReadyWatched(selector: string, count: number, timeoutMs: number): Promise<void> {
  const kind = 'keystoneapplicationcredentials';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = JSON.parse(await ok('GET', `${path(kind, NS)}?labelSelector=${encodeURIComponent(selector)}`)) as { metadata: { resourceVersion: string }; items: Order[] };
    const readyNames = new Set(list.items.filter((o) => ready(o)).map((o) => o.metadata.name));
    if (readyNames.size >= count) return;
    const done = await new Promise<boolean>((resolveWatch, rejectWatch) => {
      const server = new URL(`${path(kind, NS)}?watch=1&allowWatchBookmarks=true&resourceVersion=${list.metadata.resourceVersion}&labelSelector=${encodeURIComponent(selector)}&timeoutSeconds=${Math.max(1, Math.ceil((deadline - Date.now()) / 1000))}`, process.env.KAC_KUBE_SERVER as string);
      const req = httpsRequest(server, { ca: readFileSync(process.env.KAC_KUBE_CA_FILE as string), cert: readFileSync(process.env.KAC_KUBE_ADMIN_CERT_FILE as string), key: readFileSync(process.env.KAC_KUBE_ADMIN_KEY_FILE as string) }, (res) => {
        let buffer = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          buffer += chunk;
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (!line.trim()) continue;
            const event = JSON.parse(line) as { type: string; object: Order };
            if (event.type === 'ERROR') return void req.destroy();
            if (event.type === 'BOOKMARK') continue;
            if (event.type !== 'DELETED' && ready(event.object)) readyNames.add(event.object.metadata.name);
            else readyNames.delete(event.object.metadata.name);
            if (readyNames.size >= count) {
              req.destroy();
              return void resolveWatch(true);
            }
          }
        });
        res.on('end', () => resolveWatch(false));
        res.on('error', () => resolveWatch(false));
      });
      req.on('error', (error) => (readyNames.size >= count ? resolveWatch(true) : Date.now() > deadline ? rejectWatch(error) : resolveWatch(false)));
      req.end();
    });
    if (done) return;
    if (Date.now() > deadline) throw new Error(`${kind} ${selector}: ${readyNames.size} of ${count} Ready after ${timeoutMs} ms`);
  }
}

/** The sum of a metric's samples (all labels). */
function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const m of text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? (\S+)$/gm)) if (m[1] === name) sum += Number(m[2]);
  return sum;
}

/** utime + stime of a process, in clock ticks. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU ticks of the Kubernetes side (the API server, etcd, the controller manager) and of this script. */
function clusterTicks(): number {
  let ticks = 0;
  for (const name of ['kube-apiserver', 'etcd', 'kube-controller']) {
    let pids: string[] = [];
    try {
      pids = execFileSync('pgrep', ['-x', name], { encoding: 'utf8' }).split('\n').filter(Boolean);
    } catch {
      // none running
    }
    for (const pid of pids) ticks += cpuTicks(Number(pid));
  }
  const own = process.cpuUsage();
  return ticks + ((own.user + own.system) / 1e6) * CLK_TCK;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

/** The RSS in its kernel parts: anonymous memory (heap, malloc, stacks) and file pages (the node binary's code touched). */
function rssParts(pid: number): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return `RssAnon ${(kb('RssAnon') / 1024).toFixed(0)} MiB, RssFile ${(kb('RssFile') / 1024).toFixed(0)} MiB`;
}

/** Waits until the proxy has seen no Keystone call and the operator's queues are empty for `quietMs`. */
async function quiet(op: OperatorProcess, proxy: RecordingProxy, quietMs = 3_000, timeoutMs = 600_000): Promise<void> {
  let last = -1;
  let since = Date.now();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() - since < quietMs) {
    if (Date.now() > deadline) throw new Error('the operator did not go quiet');
    const text = await metricsText(op);
    const now = proxy.calls.length * 1e6 + metricSum(text, 'keystone_appcred_api_writes_total');
    if (now !== last || metricSum(text, 'keystone_appcred_workqueue_depth') > 0) [last, since] = [now, Date.now()];
    await sleep(500);
  }
}

interface Env {
  readonly work: string;
  readonly keystoneUrl: string;
  readonly adminPassword: string;
  readonly proxy: RecordingProxy;
  readonly bao: { readonly addr: string; readonly token: string };
}

function launch(env: Env, name: string, backups: boolean, extra: readonly string[] = [], elect = false, repo = REPO): Promise<OperatorProcess> {
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

const user = (name: string): KubeObject => ({ apiVersion: API, kind: 'KeystoneUser', metadata: { name, namespace: NS }, spec: { controlPlaneRef: CP_REF, userName: `bench-${name}` } });
const assignment = (userName: string): KubeObject => ({
  apiVersion: API,
  kind: 'KeystoneRoleAssignment',
  metadata: { name: `${userName}-member`, namespace: NS },
  spec: { controlPlaneRef: CP_REF, userRef: { name: userName }, projectRef: { name: 'proj' }, role: 'member' },
});
const order = (name: string, userName: string, label: string, gracePeriod = '24h'): KubeObject => ({
  apiVersion: API,
  kind: 'KeystoneApplicationCredential',
  metadata: { name, namespace: NS, labels: { 'bench/batch': label } },
  spec: { controlPlaneRef: CP_REF, userRef: { name: userName }, projectRef: { name: 'proj' }, rotation: { interval: '720h', gracePeriod } },
});

/** Users for orders [from, to): one per PER_USER orders; creates the missing ones and waits until they are Ready. */
async function ensureUsers(to: number, made: Set<string>): Promise<void> {
  const needed: KubeObject[] = [];
  for (let u = 0; u * PER_USER < to; u++) {
    const name = `u${u}`;
    if (made.has(name)) continue;
    made.add(name);
    needed.push(user(name), assignment(name));
  }
  if (needed.length === 0) return;
  await createAll(needed.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { 'bench/plane': 'yes' } } })));
  await untilReady('keystoneusers', 'bench/plane=yes', made.size, 300_000, 500);
  await untilReady('keystoneroleassignments', 'bench/plane=yes', made.size, 300_000, 500);
}

const userOf = (i: number) => `u${Math.floor(i / PER_USER)}`;

/** The password the operator delivered for a KeystoneUser (never printed). */
async function passwordOf(name: string): Promise<string> {
  const secret = JSON.parse(await ok('GET', `/api/v1/namespaces/${NS}/secrets/${name}-credentials`)) as { data: Record<string, string> };
  return Buffer.from(secret.data.password, 'base64').toString('utf8');
}

/**
 * The bare script, as `fetch` calls: per order a create, and a login per order (`login: true`) or once per user
 * (`login: false`, shared by the lanes, as the operator with its tokens kept), and a list of the user's credentials per
 * order (`list: 'order'`), once per user after its login (`'user'`, as the operator with its known credentials) or
 * none; in `parallel` lanes (one per request the operator may have in flight), each taking the next order when its
 * last one is done.
 */
async function bareRound(
  env: Env,
  users: readonly string[],
  count: number,
  calls: { login: boolean; list: 'order' | 'user' | false },
  parallel = 1,
  rate = 0,
): Promise<{ ms: number; created: { user: string; token: string; id: string }[] }> {
  const passwords = new Map<string, string>();
  for (const u of new Set(users)) passwords.set(u, await passwordOf(u));
  const url = env.keystoneUrl;
  // With a rate: the operator's own limit (src/keystone/limits.ts, no bound in flight: the lanes are that), so both arms
  // of the comparison start their requests by the same rule.
  const limit = rate > 0 ? new KeystoneLimits({ requestsPerSecond: rate, inFlight: 0 }).of(url) : undefined;
  const fetch = (input: string, init?: RequestInit): Promise<Response> => (limit ? limit.schedule(() => globalThis.fetch(input, init)) : globalThis.fetch(input, init));
  const login = async (u: string) => {
    const res = await fetch(`${url}/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: `bench-${u}`, domain: { name: 'Default' }, password: passwords.get(u) } } }, scope: { project: { name: 'bench-proj', domain: { name: 'Default' } } } } }),
    });
    const body = (await res.json()) as { token: { user: { id: string } } };
    return { token: res.headers.get('x-subject-token') ?? '', userId: body.token.user.id };
  };
  const tokens = new Map<string, Promise<{ token: string; userId: string }>>();
  const created: { user: string; token: string; id: string }[] = [];
  const t0 = performance.now();
  let next = 0;
  const order = async (i: number) => {
    const u = users[i];
    let pending = tokens.get(u);
    const first = !pending;
    if (calls.login || !pending) tokens.set(u, (pending = login(u)));
    const t = await pending;
    const base = `${url}/users/${t.userId}/application_credentials`;
    if (calls.list === 'order' || (calls.list === 'user' && first)) await (await fetch(base, { headers: { 'x-auth-token': t.token } })).text();
    const res = await fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-token': t.token },
      body: JSON.stringify({ application_credential: { name: `bare-${randomBytes(6).toString('hex')}`, secret: randomBytes(32).toString('base64url'), unrestricted: false, expires_at: null } }),
    });
    const { application_credential: c } = (await res.json()) as { application_credential: { id: string } };
    created.push({ user: t.userId, token: t.token, id: c.id });
  };
  await Promise.all(
    Array.from({ length: Math.max(1, parallel) }, async () => {
      while (next < count) await order(next++);
    }),
  );
  return { ms: performance.now() - t0, created };
}

async function bareCleanup(env: Env, created: readonly { user: string; token: string; id: string }[]): Promise<void> {
  for (const c of created) await (await fetch(`${env.keystoneUrl}/users/${c.user}/application_credentials/${c.id}`, { method: 'DELETE', headers: { 'x-auth-token': c.token } })).text();
}

/** Per-order call mix of a slice of the proxy's record. */
function mix(calls: readonly RecordedCall[], orders: number): string {
  const logins = calls.filter((c) => c.method === 'POST' && c.path.includes('/auth/tokens')).length;
  const lists = calls.filter((c) => c.method === 'GET' && /application_credentials(\?|$)/.test(c.path)).length;
  const creates = calls.filter((c) => c.method === 'POST' && c.path.endsWith('/application_credentials')).length;
  const other = calls.length - logins - lists - creates;
  return `${(logins / orders).toFixed(2)} logins, ${(lists / orders).toFixed(2)} lists, ${(creates / orders).toFixed(2)} creates, ${(other / orders).toFixed(2)} other per order`;
}

/** Measures one resync of a quiet operator: Keystone calls, API writes, reconciles, CPU ms, RSS MiB. */
async function resync(op: OperatorProcess, proxy: RecordingProxy): Promise<{ calls: number; writes: number; reconciles: number; cpuMs: number; rss: number; memory: string }> {
  await quiet(op, proxy);
  const before = await metricsText(op);
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
  const after = await metricsText(op);
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
 * Where an operator's RSS is, from its metrics: the V8 heap in use and held, memory outside it (Buffers, native TLS and
 * zlib state), and what the heap trimmer gave back so far.
 */
function memoryOf(text: string): string {
  const mib = (name: string) => (metricSum(text, name) / 2 ** 20).toFixed(0);
  return [
    `heap used ${mib('nodejs_heap_size_used_bytes')} MiB, held ${mib('nodejs_heap_size_total_bytes')} MiB, external ${mib('nodejs_external_memory_bytes')} MiB`,
    `${metricSum(text, 'keystone_appcred_heap_trims_total')} heap trims so far (${mib('keystone_appcred_heap_trimmed_bytes_total')} MiB given back, ${(metricSum(text, 'keystone_appcred_heap_trim_seconds_total') * 1000).toFixed(0)} ms of pauses)`,
  ].join('; ');
}

/** Writes a heap snapshot of the operator into `dir` (SIGUSR2, see KAC_BENCH_HEAP_DIR) and waits until it is complete. */
async function heapSnapshot(op: OperatorProcess, dir: string, what: string): Promise<void> {
  const before = new Set(readdirSync(dir));
  op.server.process.kill('SIGUSR2');
  for (;;) {
    await sleep(2_000);
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const size = statSync(join(dir, file)).size;
    await sleep(2_000);
    if (size > 0 && statSync(join(dir, file)).size === size) {
      process.stderr.write(`[bench] heap snapshot at ${what}: ${join(dir, file)}\n`);
      return;
    }
  }
}

/** A set of unrelated Secrets: `2000x100KiB` is 2,000 Secrets with 100 KiB of data each. */
interface Unrelated {
  readonly label: string;
  readonly count: number;
  readonly bytes: number;
}

function parseUnrelated(spec: string): Unrelated {
  const m = /^(\d+)x(\d+)(KiB|MiB)$/.exec(spec);
  if (!m) throw new Error(`--unrelated ${spec}: expected COUNTxSIZE with SIZE in KiB or MiB, e.g. 2000x100KiB`);
  return { label: spec, count: Number(m[1]), bytes: Number(m[2]) * (m[3] === 'KiB' ? 1024 : 1024 * 1024) };
}

/** Makes the unrelated namespace hold exactly `set` (none: empty), 16 creates in flight. */
async function setUnrelated(set: Unrelated | undefined): Promise<void> {
  // A collection delete of thousands of Secrets can outlast any request timeout: the API server goes on after the
  // client gave up, and the loop below waits until the namespace is empty.
  const deleted = await kubeRequest('DELETE', `/api/v1/namespaces/${UNRELATED_NS}/secrets`, { timeoutMs: 600_000 }).catch((error: unknown) => ({ status: 0, body: String(error) }));
  if (deleted.status >= 300 && deleted.status !== 404) process.stderr.write(`[bench] DELETE of the unrelated Secrets: ${deleted.status} ${deleted.body.slice(0, 200)}; waiting for the namespace to empty\n`);
  for (;;) {
    const left = JSON.parse(await ok('GET', `/api/v1/namespaces/${UNRELATED_NS}/secrets?limit=1`)) as { items: unknown[] };
    if (left.items.length === 0) break;
    await sleep(500);
  }
  if (!set) return;
  const t0 = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < set.count) {
        const i = next++;
        // Random bytes, so nothing compresses or dedupes; every other one carries kubectl apply's annotation, a second copy.
        const data = { payload: randomBytes(set.bytes).toString('base64') };
        const applied = i % 2 === 1 ? { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `unrelated-${i}`, namespace: UNRELATED_NS }, data }) } } : {};
        await ok('POST', `/api/v1/namespaces/${UNRELATED_NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `unrelated-${i}`, namespace: UNRELATED_NS, labels: { 'bench/unrelated': 'yes' }, ...applied }, data });
      }
    }),
  );
  process.stderr.write(`[bench] ${set.label} unrelated Secrets in place in ${Date.now() - t0} ms\n`);
}

/** The fresh operators of part 6 running now (stopped on Ctrl-C too). */
const fresh = new Set<OperatorProcess>();

/** A fresh operator's RSS on the cluster as it is: the peak from spawn to quiet, and the idle RSS after. */
async function freshRss(env: Env, name: string): Promise<{ peak: number; idle: number; readyMs: number; quietMs: number; memory: string }> {
  const op = await launch(env, name, false);
  fresh.add(op);
  const pid = op.server.process.pid as number;
  const samples: { at: number; rss: number }[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      try {
        samples.push({ at: Date.now(), rss: rssMiB(pid) });
      } catch {
        // Not there yet, or gone.
      }
      await sleep(250);
    }
  })();
  try {
    const readyMs = await waitReady(op, 600_000);
    await quiet(op, env.proxy, 5_000, 3_600_000);
    const quietMs = Date.now() - op.spawnedAt;
    const idleFrom = Date.now() + 10_000;
    await sleep(30_000);
    const text = await metricsText(op);
    const memory = `${rssParts(pid)}; ${memoryOf(text)}`;
    sampling = false;
    await sampler;
    const idle = median(samples.filter((s) => s.at >= idleFrom).map((s) => s.rss));
    return { peak: Math.max(...samples.map((s) => s.rss)), idle, readyMs, quietMs, memory };
  } finally {
    sampling = false;
    await op.server.stop(10_000);
    fresh.delete(op);
  }
}

/** One row of the memory table: a fresh operator without unrelated Secrets and with each set. */
async function memoryRow(env: Env, orders: number, sets: readonly Unrelated[], rows: string[][], figures: Figure[]): Promise<void> {
  let base = 0;
  const cells: string[] = [];
  for (const set of [undefined, ...sets]) {
    await setUnrelated(set);
    const label = set?.label ?? 'none';
    const m = await freshRss(env, `bench-memory-${orders}-${label}`);
    process.stderr.write(`[bench] memory, ${orders} orders, unrelated ${label}: peak ${m.peak.toFixed(0)} MiB, idle ${m.idle.toFixed(0)} MiB (ready after ${m.readyMs} ms, quiet after ${m.quietMs} ms; ${m.memory})\n`);
    cells.push(`${m.idle.toFixed(0)} (peak ${m.peak.toFixed(0)})`);
    if (!set) base = m.idle;
    else if (set.count === 2000 && set.bytes === 100 * 1024) {
      figures.push({ figure: `${orders} orders: idle RSS with 2,000 unrelated Secrets of 100 KiB`, value: `${m.idle.toFixed(0)} MiB`, baseline: `${base.toFixed(0)} MiB without them`, goal: '≤ baseline + 64 MB', met: (m.idle - base) * 1.048576 <= 64 });
    } else {
      figures.push({ figure: `${orders} orders: idle RSS with ${set.label} unrelated Secrets`, value: `${m.idle.toFixed(0)} MiB`, baseline: `${base.toFixed(0)} MiB without them` });
    }
  }
  await setUnrelated(undefined);
  rows.push([String(orders), ...cells]);
}

async function main(): Promise<void> {
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
  const stops: (() => Promise<void>)[] = [async () => void (await Promise.all([...fresh].map((op) => op.server.stop(10_000))))];
  // Ctrl-C or a timeout: stop what was started (the servers run in process groups of their own) before leaving.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void (async () => {
        for (const stop of [...stops].reverse()) await stop().catch(() => undefined);
        process.exit(130);
      })();
    });
  }
  try {
    const started = Date.now();
    // KAC_BENCH_KEYSTONE_CPU=0: Keystone alone on CPU 0, everything else (this script, the API server, etcd, OpenBao,
    // the operator) on the other CPUs, so that neither arm of a comparison takes Keystone's core from it.
    const keystoneCpu = process.env.KAC_BENCH_KEYSTONE_CPU;
    const others = keystoneCpu === undefined ? undefined : Array.from({ length: availableParallelism() }, (_, i) => i).filter((i) => String(i) !== keystoneCpu).join(',');
    if (others) execFileSync('taskset', ['-a', '-p', '-c', others, String(process.pid)], { stdio: 'ignore' });
    const keystone = await startLocalKeystone({ dir: join(work, 'keystone'), bcryptRounds });
    stops.push(keystone.stop);
    if (keystoneCpu !== undefined) {
      const group = execFileSync('pgrep', ['-g', String(keystone.pid)], { encoding: 'utf8' }).split('\n').filter(Boolean);
      for (const pid of group) execFileSync('taskset', ['-a', '-p', '-c', keystoneCpu, pid], { stdio: 'ignore' });
      process.stderr.write(`[bench] Keystone (${group.length} processes) on CPU ${keystoneCpu}; everything else on ${others}\n`);
    }
    // The unrelated Secrets are hundreds of MB, made and deleted once per cell: more than etcd's test quota of 1 GiB.
    if (unrelated.length > 0) process.env.KAC_KUBE_ETCD_QUOTA_BYTES ??= String(4 * 2 ** 30);
    const kube = await startKube(join(work, 'kube'));
    stops.push(kube.stop);
    Object.assign(process.env, kube.env);
    const bao = await startOpenBao(join(work, 'openbao'));
    stops.push(bao.stop);
    const proxy = await startRecordingProxy(keystone.authUrl);
    // Not awaited: `close` waits for keep-alive connections, which a process being stopped may still hold.
    stops.push(async () => void proxy.close());
    const env: Env = { work, keystoneUrl: keystone.authUrl, adminPassword: keystone.adminPassword, proxy, bao: { addr: bao.env.KAC_BAO_ADDR, token: bao.env.KAC_BAO_TOKEN } };
    mkdirSync(join(work, 'synth'));
    await installCrds(synthesizeManifests(join(work, 'synth')));
    for (const ns of [CP_NS, NS, OP_NS, UNRELATED_NS]) await ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const clouds = `clouds:\n  admin:\n    auth:\n      auth_url: ${proxy.url}\n      username: admin\n      password: "${keystone.adminPassword}"\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n`;
    await createAll([
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keystone-admin', namespace: CP_NS }, stringData: { 'clouds.yaml': clouds } } as KubeObject,
      { apiVersion: API, kind: 'ControlPlane', metadata: { name: 'cp', namespace: CP_NS }, spec: { services: { keystone: { external: { authURL: proxy.url } } }, adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } }, namespaceAssignments: [{ namespace: NS, allowedRoles: ['member'] }] } },
      { apiVersion: API, kind: 'KeystoneProject', metadata: { name: 'proj', namespace: NS, labels: { 'bench/plane': 'yes' } }, spec: { controlPlaneRef: CP_REF, projectName: 'bench-proj' } },
    ]);
    process.stderr.write(`[bench] components up in ${Date.now() - started} ms\n`);
    const figures: Figure[] = [];
    const users = new Set<string>();
    const memoryRows: string[][] = [];

    // 6 (first row). Memory with no orders: only the ControlPlane and the project.
    if (unrelated.length > 0) await memoryRow(env, 0, unrelated, memoryRows, figures);

    let op: OperatorProcess;
    let total = 0;
    if (!memoryOnly && !steadyOnly) {
      // 1. Rotation latency, backups on.
      op = await launch(env, 'bench-rotation', true);
      stops.push(() => op.server.stop(10_000));
      await waitReady(op);
      await untilReady('keystoneprojects', 'bench/plane=yes', 1, 120_000, 500);
      await ensureUsers(1, users);
      const rot = 'rot';
      // No grace period: the superseded credential goes at once, so the next rotation may start (one at a time).
      await createAll([order(rot, 'u0', 'rotation', '0s')]);
      await untilReady('keystoneapplicationcredentials', 'bench/batch=rotation', 1, 120_000);
      const latencies: number[] = [];
      const bareRotation: number[] = [];
      const secretPath = `/api/v1/namespaces/${NS}/secrets/${rot}-credentials`;
      const deliveredId = async () => {
        const res = await kubeRequest('GET', secretPath);
        return res.status === 200 ? Buffer.from((JSON.parse(res.body) as { data: Record<string, string> }).data.application_credential_id ?? '', 'base64').toString() : '';
      };
      const password = await passwordOf('u0');
      for (let i = 0; i < 5; i++) {
        await quiet(op, proxy, 2_000);
        // The baseline first: one bare create (token at hand) and one bare OpenBao write of a document of the same size.
        const t = await fetch(`${keystone.authUrl}/auth/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: 'bench-u0', domain: { name: 'Default' }, password } } }, scope: { project: { name: 'bench-proj', domain: { name: 'Default' } } } } }) });
        const token = t.headers.get('x-subject-token') ?? '';
        const userId = ((await t.json()) as { token: { user: { id: string } } }).token.user.id;
        const t0 = performance.now();
        const c = await fetch(`${keystone.authUrl}/users/${userId}/application_credentials`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-auth-token': token }, body: JSON.stringify({ application_credential: { name: `bare-rot-${i}`, secret: randomBytes(32).toString('base64url'), unrestricted: false } }) });
        const id = ((await c.json()) as { application_credential: { id: string } }).application_credential.id;
        const createMs = performance.now() - t0;
        const t1 = performance.now();
        await (await fetch(`${env.bao.addr}/v1/openstack/data/keystone/bench/bare-${i}`, { method: 'POST', headers: { 'X-Vault-Token': env.bao.token, 'content-type': 'application/json' }, body: JSON.stringify({ data: { 'clouds.yaml': 'x'.repeat(400), application_credential_id: id, application_credential_secret: randomBytes(32).toString('base64url') } }) })).text();
        bareRotation.push(createMs + (performance.now() - t1));
        await (await fetch(`${keystone.authUrl}/users/${userId}/application_credentials/${id}`, { method: 'DELETE', headers: { 'x-auth-token': token } })).text();

        const old = await deliveredId();
        const due = performance.now();
        await ok('PATCH', `${path('keystoneapplicationcredentials', NS)}/${rot}`, { spec: { credentialGeneration: i + 2 } });
        for (;;) {
          const now = await deliveredId();
          if (now && now !== old) break;
          if (performance.now() - due > 20_000) {
            const o = JSON.parse(await ok('GET', `${path('keystoneapplicationcredentials', NS)}/${rot}`)) as { status?: { credentialID?: string } };
            const sec = JSON.parse(await ok('GET', secretPath)) as { metadata: { resourceVersion: string; managedFields: unknown[] } };
            throw new Error(`the rotation did not reach the Secret in 20 s (credential ${old} → ${now}; status ${o.status?.credentialID}; secret rv ${sec.metadata.resourceVersion} ${JSON.stringify(sec.metadata.managedFields)})`);
          }
          await sleep(10);
        }
        latencies.push(performance.now() - due);
      }
      const rotationGoal = median(bareRotation) + 1000;
      figures.push({ figure: 'rotation latency, due → Secret carries the new generation (backups on)', value: ms(median(latencies)), baseline: `${ms(median(bareRotation))} (create + OpenBao write) + 1 s`, ratio: median(latencies) / rotationGoal, goal: `≤ ${ms(rotationGoal)}`, met: median(latencies) <= rotationGoal });
      process.stderr.write(`[bench] rotation latencies ${latencies.map((x) => x.toFixed(0)).join(', ')} ms\n`);
      await ok('DELETE', `${path('keystoneapplicationcredentials', NS)}/${rot}`);
      await sleep(3_000);
      await op.server.stop(10_000);

      // 2. Convergence of new orders at each worker count, interleaved with the bare script at the same number of
      // requests in flight; backups off. The operator of the last worker count stays for what follows.
      const writesPerOrder: number[] = [];
      for (const [i, workers] of workerCounts.entries()) {
        if (i > 0) await op.server.stop(10_000); // the rotation's operator is stopped already
        op = await launch(env, `bench-w${workers}`, false, ['--workers', String(workers)]);
        await waitReady(op);
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
          const names = Array.from({ length: convergeCount }, (_, k) => total + k);
          const who = names.map(userOf);
          let flight = inFlightProfile([], 0, 1);
          const operatorRun = async () => {
            await quiet(op, proxy);
            const mark = proxy.calls.length;
            const writesBefore = metricSum(await metricsText(op), 'keystone_appcred_api_writes_total');
            const cpu0 = { operator: cpuTicks(op.server.process.pid as number), keystone: cpuTicks(keystone.pid), cluster: clusterTicks() };
            const t0 = performance.now();
            await createAll(names.map((k) => order(`o${k}`, userOf(k), `c${workers}-${r}`)));
            await untilReadyWatched(`bench/batch=c${workers}-${r}`, convergeCount, 3_600_000);
            const t1 = performance.now();
            opMs.push(t1 - t0);
            opCpu.push({ operator: (cpuTicks(op.server.process.pid as number) - cpu0.operator) / CLK_TCK, keystone: (cpuTicks(keystone.pid) - cpu0.keystone) / CLK_TCK, cluster: (clusterTicks() - cpu0.cluster) / CLK_TCK });
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
            await quiet(op, proxy);
            writesPerOrder.push((metricSum(await metricsText(op), 'keystone_appcred_api_writes_total') - writesBefore) / convergeCount);
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
            await quiet(op, proxy);
            await op.server.stop(10_000);
            const old = await launch(env, `bench-before-${r}`, false, (process.env.KAC_BENCH_BEFORE_ARGS ?? '--workers 1').split(' ').filter(Boolean), false, before);
            await waitReady(old);
            await quiet(old, proxy);
            const t0 = performance.now();
            await createAll(Array.from({ length: convergeCount }, (_, k) => total + convergeCount + k).map((k) => order(`o${k}`, userOf(k), `b${r}`)));
            await untilReadyWatched(`bench/batch=b${r}`, convergeCount, 3_600_000);
            beforeMs.push(performance.now() - t0);
            await quiet(old, proxy);
            await old.server.stop(10_000);
            op = await launch(env, `bench-w${workers}-${r}`, false, ['--workers', String(workers)]);
            await waitReady(op);
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
          total += convergeCount * (before && workers === 1 ? 2 : 1);
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
      if (sizes.length === 0) {
        printTable('The operator: rotation latency, convergence', context, figures);
        return;
      }

      // 2b. 20 orders of one user rotating together: the user's logins, counted at the proxy (not estimated).
      {
        const converged = total;
        await ensureUsers(converged + PER_USER * 3, users); // a user of its own beyond the others
        const solo = `u${Math.ceil(converged / PER_USER) + 2}`;
        if (!users.has(solo)) {
          users.add(solo);
          await createAll([user(solo), assignment(solo)].map((o) => ({ ...o, metadata: { ...o.metadata, labels: { 'bench/plane': 'yes' } } })));
          await untilReady('keystoneusers', 'bench/plane=yes', users.size, 300_000, 500);
          await untilReady('keystoneroleassignments', 'bench/plane=yes', users.size, 300_000, 500);
        }
        await quiet(op, proxy);
        const markCreate = proxy.calls.length;
        await createAll(Array.from({ length: 20 }, (_, k) => order(`solo${k}`, solo, 'solo')));
        await untilReady('keystoneapplicationcredentials', 'bench/batch=solo', 20, 600_000, 200);
        await quiet(op, proxy);
        const markRotate = proxy.calls.length;
        await Promise.all(Array.from({ length: 20 }, (_, k) => ok('PATCH', `${path('keystoneapplicationcredentials', NS)}/solo${k}`, { spec: { credentialGeneration: 2 } })));
        for (const deadline = Date.now() + 600_000; ; ) {
          const list = JSON.parse(await ok('GET', `${path('keystoneapplicationcredentials', NS)}?labelSelector=bench/batch%3Dsolo`)) as { items: Order[] };
          if (list.items.filter((o) => ready(o, 2)).length >= 20) break;
          if (Date.now() > deadline) throw new Error('the 20 orders of one user did not rotate in 10 minutes');
          await sleep(200);
        }
        await quiet(op, proxy);
        const password = await passwordOf(solo);
        const userId = ((await (await fetch(`${keystone.authUrl}/auth/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: `bench-${solo}`, domain: { name: 'Default' }, password } } }, scope: { project: { name: 'bench-proj', domain: { name: 'Default' } } } } }) })).json()) as { token: { user: { id: string } } }).token.user.id;
        const logins = (calls: readonly RecordedCall[]) => calls.filter((c) => c.login === userId).length;
        const created = logins(proxy.calls.slice(markCreate, markRotate));
        const rotated = logins(proxy.since(markRotate));
        figures.push({ figure: 'logins of one user: 20 of its orders created, then all 20 rotated together (counted at the proxy)', value: `${created} + ${rotated}`, goal: '1 per token lifetime (1 + 0)', met: created + rotated === 1 });
        process.stderr.write(`[bench] one user, 20 orders: ${created} logins while creating, ${rotated} while rotating together (${mix(proxy.since(markRotate), 20)})\n`);
        for (let k = 0; k < 20; k++) await ok('DELETE', `${path('keystoneapplicationcredentials', NS)}/solo${k}`);
        await quiet(op, proxy);
      }

      // 3a. A burst of new orders (up to 500) with the operator at a Keystone limit it must hold: requests in flight and
      // per second at the proxy against the configured --keystone-in-flight and --keystone-rate.
      const [limitRate, limitInFlight] = (process.env.KAC_BENCH_LIMIT ?? '10,2').split(',').map(Number);
      await op.server.stop(10_000);
      op = await launch(env, 'bench-limited', false, ['--keystone-rate', String(limitRate), '--keystone-in-flight', String(limitInFlight)]);
      await waitReady(op);
      {
        const burst = Math.min(500, Math.max(0, (sizes[0] ?? 0) - total));
        if (burst > 0) {
          await ensureUsers(total + burst, users);
          await quiet(op, proxy);
          const mark = proxy.calls.length;
          proxy.resetPeak();
          const t0 = Date.now();
          await createAll(Array.from({ length: burst }, (_, k) => order(`o${total + k}`, userOf(total + k), `f${total}`)));
          await untilReady('keystoneapplicationcredentials', `bench/batch=f${total}`, burst, 3_600_000, 1000);
          const seconds = (Date.now() - t0) / 1000;
          const calls = proxy.since(mark);
          const metricPeak = metricSum(await metricsText(op), 'keystone_appcred_keystone_in_flight_peak');
          const rate = peakRate(calls);
          figures.push({ figure: `burst of ${burst} new orders: Keystone requests in flight, peak at the proxy (operator metric)`, value: `${proxy.peakInFlight} (${metricPeak})`, goal: `≤ ${limitInFlight} (--keystone-in-flight)`, met: proxy.peakInFlight <= limitInFlight });
          figures.push({ figure: `burst of ${burst} new orders: Keystone requests per second, peak over any 1 s`, value: `${rate} (mean ${(calls.length / seconds).toFixed(1)} over ${seconds.toFixed(0)} s)`, goal: `≤ ${limitRate} (--keystone-rate) + 1`, met: rate <= limitRate + 1 });
          process.stderr.write(`[bench] burst of ${burst} under the limit (${limitRate}/s, ${limitInFlight} in flight): ${seconds.toFixed(0)} s, ${calls.length} Keystone calls, peak ${proxy.peakInFlight} in flight, ${rate} in the busiest second\n`);
          total += burst;
        }
      }
      await op.server.stop(10_000);
      op = await launch(env, 'bench-steady-2', false);
      await waitReady(op);
    } else {
      op = await launch(env, 'bench-steady', false);
      stops.push(() => op.server.stop(10_000));
      await waitReady(op);
    }

    // 3. Steady state at each size.
    const steady: { size: number; cpuMs: number; rss: number }[] = [];
    for (const size of sizes) {
      while (total < size) {
        const batch = Math.min(500, size - total);
        await ensureUsers(total + batch, users);
        const t0 = Date.now();
        await createAll(Array.from({ length: batch }, (_, k) => order(`o${total + k}`, userOf(total + k), `f${total}`)));
        await untilReady('keystoneapplicationcredentials', `bench/batch=f${total}`, batch, 3_600_000, 1000);
        process.stderr.write(`[bench] ${batch} more orders converged in ${Date.now() - t0} ms (total ${total + batch})\n`);
        total += batch;
      }
      const s = await resync(op, proxy);
      steady.push({ size, cpuMs: s.cpuMs, rss: s.rss });
      process.stderr.write(`[bench] ${size} orders: resync ${s.reconciles} reconciles, ${s.calls} Keystone calls, ${s.writes} API writes, CPU ${s.cpuMs.toFixed(0)} ms, RSS ${s.rss.toFixed(0)} MiB (${s.memory})\n`);
      const perOrder = s.cpuMs / size;
      figures.push({ figure: `${size} converged orders: Keystone calls in one full resync`, value: String(s.calls), goal: '0', met: s.calls === 0 });
      figures.push({ figure: `${size} converged orders: API writes in one full resync`, value: String(s.writes), goal: '0', met: s.writes === 0 });
      figures.push({ figure: `${size} converged orders: CPU per order per resync`, value: `${perOrder.toFixed(3)} ms (${s.cpuMs.toFixed(0)} ms, ${s.reconciles} reconciles)`, goal: '≤ 0.1 ms', met: perOrder <= 0.1 });
      figures.push({ figure: `${size} converged orders: RSS`, value: `${s.rss.toFixed(0)} MiB`, goal: '≤ 200 MB', met: s.rss * 1.048576 <= 200 });
      if (process.env.KAC_BENCH_HEAP_DIR) await heapSnapshot(op, process.env.KAC_BENCH_HEAP_DIR, `${size} orders`);
      // 6. The memory row of this size: fresh operators, the steady one stopped meanwhile.
      if (unrelated.length > 0) {
        await op.server.stop(10_000);
        await memoryRow(env, size, unrelated, memoryRows, figures);
        op = await launch(env, `bench-steady-${size}`, false);
        await waitReady(op, 600_000);
      }
      // The figures so far, in case a long run is stopped before the largest size.
      process.stderr.write(`[bench] so far:\n${figures.map((f) => `  ${f.figure}: ${f.value}${f.baseline ? ` (baseline ${f.baseline})` : ''}`).join('\n')}\n`);
    }
    // 4. A restart with every order converged: a new process, its first pass over every order, until quiet.
    if (!memoryOnly) {
      await quiet(op, proxy);
      await op.server.stop(10_000);
      const mark = proxy.calls.length;
      op = await launch(env, 'bench-restarted', false);
      await waitReady(op);
      await sleep(2_000);
      await quiet(op, proxy);
      const calls = proxy.since(mark).length;
      const writes = metricSum(await metricsText(op), 'keystone_appcred_api_writes_total');
      const reconciles = metricSum(await metricsText(op), 'keystone_appcred_reconcile_total');
      figures.push({ figure: `restart with ${total} converged orders: Keystone calls (proxy), API writes (operator metric)`, value: `${calls}, ${writes} (${reconciles} reconciles)`, goal: '0, 0', met: calls === 0 && writes === 0 });
      process.stderr.write(`[bench] restart with ${total} orders: ${calls} Keystone calls, ${writes} API writes, ${reconciles} reconciles\n`);
      await op.server.stop(10_000);
    }
    // 5. A failover: two replicas with leader election, the leader killed with SIGKILL, the standby (caches warm) takes over.
    if (!memoryOnly) {
      const leaderOf = async (p: OperatorProcess) => metricSum(await metricsText(p), 'keystone_appcred_leader') === 1;
      const a = await launch(env, 'bench-leader', false, [], true);
      stops.push(() => a.server.stop(1_000));
      await waitReady(a);
      for (const deadline = Date.now() + 60_000; !(await leaderOf(a)); await sleep(250)) if (Date.now() > deadline) throw new Error('no leader');
      await quiet(a, proxy);
      const b = await launch(env, 'bench-standby', false, [], true);
      stops.push(() => b.server.stop(10_000));
      await waitReady(b);
      await sleep(2_000);
      const mark = proxy.calls.length;
      a.server.process.kill('SIGKILL');
      // The standby takes over once the Lease (the default 15 s) expired unrenewed.
      for (const deadline = Date.now() + 90_000; !(await leaderOf(b)); await sleep(250)) if (Date.now() > deadline) throw new Error('the standby did not take over');
      await sleep(2_000);
      await quiet(b, proxy);
      const calls = proxy.since(mark).length;
      const text = await metricsText(b);
      const writes = metricSum(text, 'keystone_appcred_api_writes_total');
      figures.push({ figure: `failover to the standby with ${total} converged orders: Keystone calls (proxy), API writes (operator metric)`, value: `${calls}, ${writes} (${metricSum(text, 'keystone_appcred_reconcile_total')} reconciles)`, goal: '0, 0', met: calls === 0 && writes === 0 });
      process.stderr.write(`[bench] failover with ${total} orders: ${calls} Keystone calls, ${writes} API writes\n`);
      await a.server.stop(1_000).catch(() => undefined);
    }
    if (steady.length > 1) {
      const [a, b] = [steady[0], steady[steady.length - 1]];
      const per1000 = (x: number) => ((x / (b.size - a.size)) * 1000).toFixed(2);
      figures.push({ figure: `slope ${a.size} → ${b.size} orders`, value: `RSS +${per1000(b.rss - a.rss)} MiB, resync CPU +${per1000(b.cpuMs - a.cpuMs)} ms per 1000 orders` });
    }
    if (memoryRows.length > 0) {
      const head = ['converged orders', 'no unrelated Secrets', ...unrelated.map((u) => `${u.count.toLocaleString('en')} unrelated of ${u.label.split('x')[1]}`)];
      process.stdout.write(`\n## The operator's RSS by orders × unrelated Secrets (MiB, idle after 30 s quiet; peak from spawn)\n\n${[head, head.map(() => '---'), ...memoryRows].map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
    }
    printTable('The operator: rotation latency, convergence, steady state', context, figures);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    // KAC_BENCH_KEEP=1 keeps the work dir (the operators' logs) for a look after the run.
    if (process.env.KAC_BENCH_KEEP) process.stderr.write(`[bench] kept ${work}\n`);
    else rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
