// @needs kube keystone openbao
/**
 * Crash at every step (issue 13): the operator, a child process under the construct's RBAC on the real API server,
 * Keystone and OpenBao, is killed with SIGKILL right after each kind of action of a rotation (park, mint, backup,
 * deliver, status write, sweep delete, discard) and of a teardown (delete, remove-backup, discard, withdraw, finalizer
 * release), then started again. The kill is driven from outside, by the operator's own log line of that action
 * (test/support/kill-point.ts), at a random one of the orders' occurrences and after a random delay of 0–40 ms.
 *
 * Throughout, a sampler lists the ordered user's credentials in Keystone every 250 ms and a consumer probe per order
 * re-reads the delivered Secret and authenticates with it every second. Figures per kill point: credentials per order
 * in Keystone at any observation (must never exceed 2), credentials left after teardown (0), parked secrets lost (0: no
 * generation is skipped and every credential in Keystone has its `secret-v<N>`), failed probe authentications (0), and
 * the time from the restart to convergence.
 *
 * The operator runs as many workers per kind as there are orders (`--workers 3`), so the three orders' passes run side
 * by side and a kill lands among several passes in flight, as on a cluster that rotates many orders at once.
 *
 * Rounds per kill point: `KAC_RELIABILITY_ROUNDS` (CI's `npm test`: 2; `npm run test:reliability`: 20).
 */
import { randomInt } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Users } from '../../src/keystone';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures, type Probe } from '../support/credential-fixtures';
import { adminSession, uniqueName } from '../support/keystone-fixtures';
import { afterAction, afterStatusWrite, killAt, logOffset, type KillPoint } from '../support/kill-point';
import { applyOk, eventually, getJson, kubeRequest, kubectl, kubectlOk, type KubeObject } from '../support/kubectl';
import { installCrds, operatorKubeconfig, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess, QUICK_ELECTION, openBaoTokenEnv } from '../support/operator';
import { scanForSecrets } from '../support/secret-scan';
import { synthesizeManifests } from '../support/synth';

const ROUNDS = Number(process.env.KAC_RELIABILITY_ROUNDS ?? 2);
jest.setTimeout(Math.max(300_000, ROUNDS * 120_000));

const NS = 'kac-crash';
const CP_NS = 'kac-crash-cp';
const IDENTITY = { namespace: 'kac-crash-operator', binding: 'kac-crash-operator' };
const OPERATOR = 'crash';
const ORDERS = ['a', 'b', 'c'];
const ROTATION = { interval: '0s', gracePeriod: '3s' };
const USER = uniqueName('crash');
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: USER, projectName: uniqueName('crash') });

let unlock: (() => void) | undefined;
let operator: OperatorProcess;
let kubeconfig = '';
let workDir = '';
let userId = '';
/** The generation each order must converge to. */
const expected = new Map<string, number>(ORDERS.map((n) => [n, 1]));

const launch = async () => {
  operator = await startOperator({
    name: OPERATOR,
    kubeconfig,
    namespace: IDENTITY.namespace,
    logDir: workDir,
    args: [...QUICK_ELECTION, '--workers', String(ORDERS.length)],
    env: openBaoTokenEnv(),
  });
  return waitReady(operator);
};

/** An order as read now; undefined once it is gone. */
async function readOrder(name: string) {
  const res = await kubeRequest('GET', `/apis/c5c3.io/v1alpha1/namespaces/${NS}/keystoneapplicationcredentials/${name}`);
  return res.status === 404 ? undefined : fx.order(name);
}

let admin: ReturnType<typeof adminSession> | undefined;
/** The names of the ordered user's credentials in Keystone, per order (one list for all, so the sampler is cheap). */
async function credentialsByOrder(): Promise<Map<string, string[]>> {
  admin ??= adminSession();
  const res = await admin.request({ method: 'GET', path: admin.transport.pathOf(`users/${userId}/application_credentials`) });
  const names = (res.body as { application_credentials: { name: string }[] }).application_credentials.map((c) => c.name);
  return new Map(ORDERS.map((o) => [o, names.filter((n) => n.startsWith(`${fx.prefixOf(o)}-`)).sort()]));
}

/** The orders' uids, as last read: their backup paths name them (read again after a teardown, the order is gone). */
const uids = new Map<string, string>();
const backupOf = (name: string) => fx.backup(name, uids.get(name) ?? 'unknown');

/** Lists Keystone every 250 ms; remembers the most credentials any order held at one observation. */
function sampler() {
  let running = true;
  let max = 0;
  let observations = 0;
  const loop = (async () => {
    while (running) {
      try {
        for (const names of (await credentialsByOrder()).values()) max = Math.max(max, names.length);
        observations++;
      } catch {
        // Keystone busy: the next sample counts.
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    take: () => {
      const m = max;
      max = 0;
      return m;
    },
    get observations() {
      return observations;
    },
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/**
 * The consumers: one probe per order, re-reading its delivered Secret and authenticating every second. A teardown
 * withdraws the Secret and deletes the credential on purpose, so the probes stop before one and start again after.
 */
const consumers = {
  running: [] as Probe[],
  stopped: { attempts: 0, failures: [] as string[] },
  start() {
    this.running = ORDERS.map((name) => fx.probe(name));
  },
  async stop() {
    await Promise.all(this.running.map((p) => p.stop()));
    this.stopped = { attempts: this.attempts(), failures: this.failures() };
    this.running = [];
  },
  attempts(): number {
    return this.stopped.attempts + this.running.reduce((n, p) => n + p.attempts, 0);
  },
  /** Every failed authentication so far: when, and the credential id it used. */
  failures(): string[] {
    return [...this.stopped.failures, ...this.running.flatMap((p) => p.failures.map((f) => `${new Date(f.at).toISOString()} ${f.id}`))];
  },
};

/** What keeps the orders from having converged ('' when each holds exactly its expected generation, swept, delivered, backed up and parked alone). */
async function notConverged(): Promise<string> {
  const creds = await credentialsByOrder();
  for (const name of ORDERS) {
    const g = expected.get(name) as number;
    const o = await readOrder(name);
    if (o?.metadata.uid) uids.set(name, o.metadata.uid);
    if (o?.status?.credentialGeneration !== g || condition(o, 'Ready')?.status !== 'True') return `${name}: generation ${o?.status?.credentialGeneration}, Ready ${condition(o, 'Ready')?.reason}, expected ${g}`;
    if (o.status.previousCredentialID !== undefined) return `${name}: generation ${g - 1} not swept yet`;
    if (JSON.stringify(creds.get(name)) !== JSON.stringify([`${fx.prefixOf(name)}-credential-v${g}`])) return `${name}: Keystone holds ${JSON.stringify(creds.get(name))}`;
    if ((await fx.delivered(name))?.application_credential_id !== o.status.credentialID) return `${name}: the delivered Secret does not carry generation ${g}`;
    if ((await backupOf(name).read()) !== o.status.credentialID) return `${name}: the backup does not hold generation ${g}`;
    const parked = [...(await fx.parkedSecrets(name)).keys()];
    if (JSON.stringify(parked) !== JSON.stringify([g])) return `${name}: parked generations ${JSON.stringify(parked)}`;
  }
  return '';
}

/** What is left of the orders ('' when nothing is: no order, credential, parked secret, backup or delivered Secret). */
async function notTornDown(): Promise<string> {
  const creds = await credentialsByOrder();
  for (const name of ORDERS) {
    if ((await readOrder(name)) !== undefined) return `${name}: the order still exists`;
    if ((creds.get(name) ?? []).length > 0) return `${name}: Keystone holds ${JSON.stringify(creds.get(name))}`;
    if ((await fx.parkedSecrets(name)).size > 0) return `${name}: parked secrets left`;
    if ((await fx.delivered(name)) !== undefined) return `${name}: the delivered Secret is left`;
    if ((await backupOf(name).readDocument()) !== undefined) return `${name}: the backup is left`;
  }
  return '';
}

/** Waits until `check` finds nothing wrong; on timeout the error says what was still wrong. */
const until = (check: () => Promise<string>, timeoutMs = 120_000) =>
  eventually(
    async () => {
      const wrong = await check();
      if (wrong) throw new Error(wrong);
      return true;
    },
    timeoutMs,
    200,
  );

/** One row of the report. */
interface Figures {
  point: string;
  runs: number;
  maxPerOrder: number;
  leftAfterTeardown: number;
  parkedLost: number;
  probeFailures: number;
  convergeMs: number[];
  /** From the restart to /readyz (the start-up inside convergeMs). */
  readyMs: number[];
  killedAfterMs: number[];
}

const ROTATION_POINTS: KillPoint[] = [
  afterAction('park', 'park'),
  afterAction('mint', 'mint'),
  afterAction('backup', 'backup'),
  afterAction('deliver', 'deliver'),
  afterStatusWrite(),
  afterAction('sweep delete', 'delete', /^(?!teardown)/),
  afterAction('discard', 'discard', /^(?!teardown)/),
];
const TEARDOWN_POINTS: KillPoint[] = [
  afterAction('teardown delete', 'delete', /^teardown$/),
  afterAction('remove-backup', 'remove-backup'),
  afterAction('teardown discard', 'discard', /^teardown$/),
  afterAction('withdraw', 'withdraw'),
  afterAction('finalizer release', 'release'),
];

const report: Figures[] = [];
let keystoneSampler: ReturnType<typeof sampler>;

beforeAll(async () => {
  unlock = await lockCluster('crash.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  const manifests = await installCrds(synthesizeManifests());
  kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'crash.kubeconfig'));
  for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  await applyOk([fx.adminSecret(), fx.controlPlane(), ...fx.identityOrders(), ...ORDERS.map((n) => fx.credentialOrder(n, ROTATION))], { fieldManager: 'kac-test' });
  await launch();
  userId = await eventually(async () => (await new Users(adminSession()).findByName(USER))?.id, 60_000);
  await until(notConverged);
  keystoneSampler = sampler();
  consumers.start();
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await consumers.stop();
  await keystoneSampler?.stop();
  await operator?.server.stop(5_000);
  await releaseLeftovers([NS, CP_NS]);
  for (const ns of [NS, CP_NS, IDENTITY.namespace]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  unlock?.();
});

/**
 * Parked secrets lost in the log since `offset`: a mint beyond the generation the order must reach, or a successor
 * deleted because its parked secret was gone (either means a secret-v<N> went missing under a credential).
 */
function parkedSecretsLost(offset: number): number {
  const lines = readFileSync(operator.server.log, 'utf8').slice(offset).split('\n').filter((l) => l.startsWith('{'));
  let lost = 0;
  for (const text of lines) {
    const line = JSON.parse(text) as { msg?: string; action?: string; key?: string; generation?: number; why?: string };
    if (line.msg !== 'action') continue;
    const name = String(line.key).split('/')[1] ?? '';
    if ((line.action === 'mint' && (line.generation ?? 0) > (expected.get(name) ?? 0)) || /lost/.test(line.why ?? '')) lost++;
  }
  return lost;
}

/** Kills the operator at `point` while `trigger` runs, restarts it and waits until `done`; returns the figures' inputs. */
async function crashRun(point: KillPoint, trigger: () => Promise<void>, done: () => Promise<string>): Promise<{ convergeMs: number; readyMs: number; killedAfterMs: number; parkedLost: number }> {
  const offset = logOffset(operator.server.log);
  const nth = randomInt(1, ORDERS.length + 1);
  const kill = killAt(operator, point, { offset, nth, delayMs: randomInt(0, 41), timeoutMs: 90_000 });
  await trigger();
  const { afterMs } = await kill;
  await eventually(async () => operator.server.exited() !== undefined, 10_000, 20);
  const readyMs = await launch();
  const restarted = operator.spawnedAt;
  await until(done);
  return { convergeMs: Date.now() - restarted, readyMs, killedAfterMs: afterMs, parkedLost: parkedSecretsLost(offset) };
}

/** Adds one run to a kill point's figures. */
function tally(figures: Figures, run: Awaited<ReturnType<typeof crashRun>>): void {
  figures.runs++;
  figures.parkedLost += run.parkedLost;
  figures.convergeMs.push(run.convergeMs);
  figures.readyMs.push(run.readyMs);
  figures.killedAfterMs.push(run.killedAfterMs);
}

describe('the operator killed with SIGKILL right after each kind of action, then restarted', () => {

  it.each(ROTATION_POINTS.map((p) => [p.name, p] as const))('a rotation killed after %s converges with nothing lost', async (_name, point) => {
    const figures: Figures = { point: `rotation: ${point.name}`, runs: 0, maxPerOrder: 0, leftAfterTeardown: 0, parkedLost: 0, probeFailures: 0, convergeMs: [], readyMs: [], killedAfterMs: [] };
    const probeBefore = consumers.failures().length;
    for (let round = 0; round < ROUNDS; round++) {
      keystoneSampler.take();
      const run = await crashRun(
        point,
        async () => {
          for (const name of ORDERS) {
            const g = (expected.get(name) as number) + 1;
            expected.set(name, g);
            await kubectlOk(['patch', 'keystoneapplicationcredential', name, '-n', NS, '--type=merge', '-p', JSON.stringify({ spec: { credentialGeneration: g } })]);
          }
        },
        notConverged,
      );
      tally(figures, run);
      figures.maxPerOrder = Math.max(figures.maxPerOrder, keystoneSampler.take());
    }
    // notConverged() also demands exactly the expected generation and a secret-v<N> beside the one credential.
    figures.probeFailures = consumers.failures().length - probeBefore;
    report.push(figures);
    expect(figures.maxPerOrder).toBeLessThanOrEqual(2);
    expect(figures.parkedLost).toBe(0);
    expect(consumers.failures().slice(probeBefore)).toEqual([]);
  });

  it.each(TEARDOWN_POINTS.map((p) => [p.name, p] as const))('a teardown killed after %s leaves nothing, and the orders come back', async (_name, point) => {
    const figures: Figures = { point: `teardown: ${point.name}`, runs: 0, maxPerOrder: 0, leftAfterTeardown: 0, parkedLost: 0, probeFailures: 0, convergeMs: [], readyMs: [], killedAfterMs: [] };
    const probeBefore = consumers.failures().length;
    for (let round = 0; round < ROUNDS; round++) {
      keystoneSampler.take();
      await consumers.stop();
      const run = await crashRun(
        point,
        async () => {
          await kubectlOk(['delete', 'keystoneapplicationcredential', ...ORDERS, '-n', NS, '--wait=false']);
        },
        notTornDown,
      );
      tally(figures, run);
      figures.leftAfterTeardown += [...(await credentialsByOrder()).values()].reduce((n, names) => n + names.length, 0);
      figures.maxPerOrder = Math.max(figures.maxPerOrder, keystoneSampler.take());
      // The orders come back as new ones: generation 1, delivered, for the next round.
      for (const name of ORDERS) expected.set(name, 1);
      await applyOk(ORDERS.map((n) => fx.credentialOrder(n, ROTATION)), { fieldManager: 'kac-test' });
      await until(notConverged);
      consumers.start();
    }
    figures.probeFailures = consumers.failures().length - probeBefore;
    report.push(figures);
    expect(figures.leftAfterTeardown).toBe(0);
    expect(figures.parkedLost).toBe(0);
    expect(figures.maxPerOrder).toBeLessThanOrEqual(2);
    expect(consumers.failures().slice(probeBefore)).toEqual([]);
  });

  it('ran the orders\' passes side by side, one worker per order', () => {
    const lines = readFileSync(operator.server.log, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const started = lines.filter((l) => l.msg === 'controller started' && l.controller === 'KeystoneApplicationCredential');
    expect(started.length).toBeGreaterThan(0);
    for (const l of started) expect(l.workers).toBe(ORDERS.length);
    // Reconciles of different orders whose spans (end time minus duration) overlapped: passes that ran at once.
    const spans = lines
      .filter((l) => l.msg === 'reconcile' && l.controller === 'KeystoneApplicationCredential' && l.reason !== 'Unchanged')
      .map((l) => ({ key: String(l.key), end: Date.parse(String(l.time)), start: Date.parse(String(l.time)) - Number(l.durationMs) }));
    const overlapping = spans.filter((a) => spans.some((b) => b.key !== a.key && b.start < a.end && a.start < b.end));
    expect(overlapping.length).toBeGreaterThan(0);
  });

  it('no minted secret or password appears in any log line, Event or status read', async () => {
    const password = (await getJson<KubeObject & { data: Record<string, string> }>('secret', 'svc-credentials', { namespace: NS })).data.password;
    const texts = [{ source: 'operator log', text: readFileSync(operator.server.log, 'utf8') }, ...(await fx.eventTexts([NS, CP_NS])), ...fx.statusesRead];
    const secrets = [...fx.secretsSeen, fx.env.adminPassword, Buffer.from(password, 'base64').toString()];
    expect(fx.secretsSeen.size).toBeGreaterThanOrEqual(ORDERS.length);
    expect(scanForSecrets(texts, secrets)).toEqual([]);
  });

  it('reports the figures', () => {
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    const lines = [
      `crash at every step: ${ROUNDS} runs per kill point, ${ORDERS.length} orders, grace ${ROTATION.gracePeriod}; probes: ${consumers.attempts()} authentications, ${consumers.failures().length} failed; Keystone sampled ${keystoneSampler.observations} times`,
      '| kill point | runs | max credentials per order | left after teardown | parked secrets lost | failed probe authentications | restart to ready, median (ms) | restart to converged, median / max (ms) |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
      ...report.map((f) => `| ${f.point} | ${f.runs} | ${f.maxPerOrder} | ${f.point.startsWith('teardown') ? f.leftAfterTeardown : '—'} | ${f.parkedLost} | ${f.probeFailures} | ${med(f.readyMs)} | ${med(f.convergeMs)} / ${Math.max(...f.convergeMs)} |`),
    ];
    process.stderr.write(`[crash] ${lines.join('\n')}\n`);
    if (process.env.KAC_RELIABILITY_REPORT) appendFileSync(process.env.KAC_RELIABILITY_REPORT, `${lines.join('\n')}\n\n`);
    expect(report).toHaveLength(ROTATION_POINTS.length + TEARDOWN_POINTS.length);
  });
});
