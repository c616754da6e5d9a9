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
 * Rounds per kill point: `KAC_RELIABILITY_ROUNDS` (CI's `npm test`: 2; `npm run test:reliability`: 20).
 */
import { randomInt } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { childPrefix } from '../../src/api';
import { OpenBaoBackup } from '../../src/backup/openbao';
import { Users, authenticateApplicationCredential } from '../../src/keystone';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { adminSession, keystoneTestEnv, uniqueName } from '../support/keystone-fixtures';
import { afterAction, afterStatusWrite, killAt, logOffset, type KillPoint } from '../support/kill-point';
import { applyOk, eventually, getJson, kubeRequest, kubectl, kubectlOk, type KubeObject } from '../support/kubectl';
import { installCrds, operatorKubeconfig, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess } from '../support/operator';
import { scanForSecrets } from '../support/secret-scan';
import { synthesizeManifests } from '../support/synth';

const ROUNDS = Number(process.env.KAC_RELIABILITY_ROUNDS ?? 2);
jest.setTimeout(Math.max(300_000, ROUNDS * 120_000));

const env = keystoneTestEnv();
const NS = 'kac-crash';
const CP_NS = 'kac-crash-cp';
const IDENTITY = { namespace: 'kac-crash-operator', binding: 'kac-crash-operator' };
const OPERATOR = 'crash';
const ORDERS = ['a', 'b', 'c'];
const GRACE = '3s';
const PROJECT = uniqueName('crash');
const USER = uniqueName('crash');
const ref = { controlPlaneRef: { name: 'cp', namespace: CP_NS } };
const prefixOf = (name: string) => childPrefix({ namespace: NS, name });

interface Order extends KubeObject {
  spec: Record<string, unknown>;
  status?: { credentialGeneration?: number; credentialID?: string; previousCredentialID?: string; conditions?: { type: string; status: string; reason: string; message: string }[] };
}

let unlock: (() => void) | undefined;
let operator: OperatorProcess;
let kubeconfig = '';
let workDir = '';
let userId = '';
/** The generation each order must converge to. */
const expected = new Map<string, number>(ORDERS.map((n) => [n, 1]));
/** Every minted secret seen in a delivered Secret, every status read: for the scan at the end. */
const secretsSeen = new Set<string>();
const statusesRead: string[] = [];

const launch = async () => {
  operator = await startOperator({
    name: OPERATOR,
    kubeconfig,
    namespace: IDENTITY.namespace,
    logDir: workDir,
    args: ['--lease-duration', '4s', '--renew-deadline', '3s', '--retry-period', '500ms'],
    env: { KAC_OPENBAO_ADDRESS: process.env.KAC_BAO_ADDR as string, KAC_OPENBAO_AUTH_METHOD: 'token', KAC_OPENBAO_TOKEN: process.env.KAC_BAO_TOKEN as string },
  });
  await waitReady(operator);
};

const credentialOrder = (name: string) => ({
  apiVersion: 'c5c3.io/v1alpha1',
  kind: 'KeystoneApplicationCredential',
  metadata: { name, namespace: NS },
  spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, rotation: { interval: '0s', gracePeriod: GRACE } },
});

async function readOrder(name: string): Promise<Order | undefined> {
  const res = await kubeRequest('GET', `/apis/c5c3.io/v1alpha1/namespaces/${NS}/keystoneapplicationcredentials/${name}`);
  if (res.status === 404) return undefined;
  const o = res.json<Order>();
  statusesRead.push(JSON.stringify(o.status ?? {}));
  return o;
}

async function delivered(name: string): Promise<Record<string, string> | undefined> {
  const res = await kubeRequest('GET', `/api/v1/namespaces/${NS}/secrets/${name}-credentials`);
  if (res.status !== 200) return undefined;
  const data = res.json<{ data?: Record<string, string> }>().data ?? {};
  const out = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  if (out.application_credential_secret) secretsSeen.add(out.application_credential_secret);
  return out;
}

/** The names of the ordered user's credentials in Keystone, per order. */
let admin: ReturnType<typeof adminSession> | undefined;
async function credentialsByOrder(): Promise<Map<string, string[]>> {
  admin ??= adminSession();
  const res = await admin.request({ method: 'GET', path: admin.transport.pathOf(`users/${userId}/application_credentials`) });
  const names = (res.body as { application_credentials: { name: string }[] }).application_credentials.map((c) => c.name);
  return new Map(ORDERS.map((o) => [o, names.filter((n) => n.startsWith(`${prefixOf(o)}-`)).sort()]));
}

/** The parked `secret-v<N>` children of an order. */
async function parked(name: string): Promise<string[]> {
  const list = (await kubeRequest('GET', `/api/v1/namespaces/${CP_NS}/secrets`)).json<{ items: KubeObject[] }>();
  return list.items.map((s) => s.metadata.name).filter((n) => n.startsWith(`${prefixOf(name)}-secret-v`)).sort();
}

const backupOf = (name: string) =>
  new OpenBaoBackup({ address: process.env.KAC_BAO_ADDR as string, token: process.env.KAC_BAO_TOKEN as string, path: `keystone/${CP_NS}/${prefixOf(name)}/service-accounts/application-credential` });

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

/** The consumers: per order, re-read the delivered Secret and authenticate every second while it exists. */
function consumers() {
  let running = true;
  let attempts = 0;
  const failures: string[] = [];
  const paused = new Set<string>();
  const loops = ORDERS.map(async (name) => {
    while (running) {
      const t0 = Date.now();
      if (!paused.has(name)) {
        const doc = await delivered(name).catch(() => undefined);
        if (doc?.application_credential_id && !paused.has(name)) {
          attempts++;
          try {
            await authenticateApplicationCredential({ authUrl: env.authUrl, id: doc.application_credential_id, secret: doc.application_credential_secret ?? '', timeoutMs: 10_000 });
          } catch (error) {
            // A teardown in progress withdraws the Secret and deletes the credential: not a consumer's failure.
            if (!paused.has(name)) failures.push(`${new Date().toISOString()} ${name} ${doc.application_credential_id}: ${(error as Error).message}`);
          }
        }
      }
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - t0))));
    }
  });
  return {
    get attempts() {
      return attempts;
    },
    failures,
    pause: (on: boolean) => ORDERS.forEach((n) => (on ? paused.add(n) : paused.delete(n))),
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Every order holds exactly its expected generation, swept, delivered, backed up and parked alone. */
async function converged(): Promise<boolean> {
  const creds = await credentialsByOrder();
  for (const name of ORDERS) {
    const g = expected.get(name) as number;
    const o = await readOrder(name);
    const ready = o?.status?.conditions?.find((c) => c.type === 'Ready');
    if (o?.status?.credentialGeneration !== g || ready?.status !== 'True' || o.status.previousCredentialID !== undefined) return false;
    if (JSON.stringify(creds.get(name)) !== JSON.stringify([`${prefixOf(name)}-credential-v${g}`])) return false;
    if ((await delivered(name))?.application_credential_id !== o.status.credentialID) return false;
    if ((await backupOf(name).read()) !== o.status.credentialID) return false;
    if (JSON.stringify(await parked(name)) !== JSON.stringify([`${prefixOf(name)}-secret-v${g}`])) return false;
  }
  return true;
}

/** Nothing of any order is left: no order, credential, parked secret, backup or delivered Secret. */
async function tornDown(): Promise<boolean> {
  const creds = await credentialsByOrder();
  for (const name of ORDERS) {
    if ((await readOrder(name)) !== undefined || (creds.get(name) ?? []).length > 0 || (await parked(name)).length > 0) return false;
    if ((await delivered(name)) !== undefined || (await backupOf(name).readDocument()) !== undefined) return false;
  }
  return true;
}

/** One row of the report. */
interface Figures {
  point: string;
  runs: number;
  maxPerOrder: number;
  leftAfterTeardown: number;
  parkedLost: number;
  probeFailures: number;
  convergeMs: number[];
  killedAfterMs: number[];
}

const ROTATION: KillPoint[] = [
  afterAction('park', 'park'),
  afterAction('mint', 'mint'),
  afterAction('backup', 'backup'),
  afterAction('deliver', 'deliver'),
  afterStatusWrite(),
  afterAction('sweep delete', 'delete', /^(?!teardown)/),
  afterAction('discard', 'discard', /^(?!teardown)/),
];
const TEARDOWN: KillPoint[] = [
  afterAction('teardown delete', 'delete', /^teardown$/),
  afterAction('remove-backup', 'remove-backup'),
  afterAction('teardown discard', 'discard', /^teardown$/),
  afterAction('withdraw', 'withdraw'),
  afterAction('finalizer release', 'release'),
];

const report: Figures[] = [];
let probe: ReturnType<typeof consumers>;
let keystoneSampler: ReturnType<typeof sampler>;

beforeAll(async () => {
  unlock = await lockCluster('crash.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  const manifests = await installCrds(synthesizeManifests());
  kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'crash.kubeconfig'));
  for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  const clouds = `clouds:\n  admin:\n    auth:\n      auth_url: ${env.authUrl}\n      username: ${env.adminUser}\n      password: "${env.adminPassword}"\n      project_name: ${env.adminProject}\n      user_domain_name: ${env.domain}\n      project_domain_name: ${env.domain}\n`;
  await applyOk({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keystone-admin', namespace: CP_NS }, stringData: { 'clouds.yaml': clouds } } as KubeObject, { fieldManager: 'kac-test' });
  await applyOk([
    { apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name: 'cp', namespace: CP_NS }, spec: { services: { keystone: { external: { authURL: env.authUrl } } }, adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } }, namespaceAssignments: [{ namespace: NS, allowedRoles: ['member'] }] } },
    { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneProject', metadata: { name: 'proj', namespace: NS }, spec: { ...ref, projectName: PROJECT } },
    { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', metadata: { name: 'svc', namespace: NS }, spec: { ...ref, userName: USER } },
    { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneRoleAssignment', metadata: { name: 'member', namespace: NS }, spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, role: 'member' } },
    ...ORDERS.map(credentialOrder),
  ] as KubeObject[], { fieldManager: 'kac-test' });
  await launch();
  userId = await eventually(async () => (await new Users(adminSession()).findByName(USER))?.id, 60_000);
  await eventually(converged, 120_000, 500);
  keystoneSampler = sampler();
  probe = consumers();
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await probe?.stop();
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
async function crashRun(point: KillPoint, trigger: () => Promise<void>, done: () => Promise<boolean>): Promise<{ convergeMs: number; killedAfterMs: number; parkedLost: number }> {
  const offset = logOffset(operator.server.log);
  const nth = randomInt(1, ORDERS.length + 1);
  const kill = killAt(operator, point, { offset, nth, delayMs: randomInt(0, 41), timeoutMs: 90_000 });
  await trigger();
  const { afterMs } = await kill;
  await eventually(async () => operator.server.exited() !== undefined, 10_000, 20);
  await launch();
  const restarted = operator.spawnedAt;
  await eventually(done, 120_000, 200);
  return { convergeMs: Date.now() - restarted, killedAfterMs: afterMs, parkedLost: parkedSecretsLost(offset) };
}

describe('the operator killed with SIGKILL right after each kind of action, then restarted', () => {
  const failuresBefore = () => probe.failures.length;

  it.each(ROTATION.map((p) => [p.name, p] as const))('a rotation killed after %s converges with nothing lost', async (_name, point) => {
    const figures: Figures = { point: `rotation: ${point.name}`, runs: 0, maxPerOrder: 0, leftAfterTeardown: 0, parkedLost: 0, probeFailures: 0, convergeMs: [], killedAfterMs: [] };
    const probeBefore = failuresBefore();
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
        converged,
      );
      figures.runs++;
      figures.parkedLost += run.parkedLost;
      figures.convergeMs.push(run.convergeMs);
      figures.killedAfterMs.push(run.killedAfterMs);
      figures.maxPerOrder = Math.max(figures.maxPerOrder, keystoneSampler.take());
    }
    // converged() also demands exactly the expected generation and a secret-v<N> beside the one credential.
    figures.probeFailures = probe.failures.length - probeBefore;
    report.push(figures);
    expect(figures.maxPerOrder).toBeLessThanOrEqual(2);
    expect(figures.parkedLost).toBe(0);
    expect(probe.failures.slice(probeBefore)).toEqual([]);
  });

  it.each(TEARDOWN.map((p) => [p.name, p] as const))('a teardown killed after %s leaves nothing, and the orders come back', async (_name, point) => {
    const figures: Figures = { point: `teardown: ${point.name}`, runs: 0, maxPerOrder: 0, leftAfterTeardown: 0, parkedLost: 0, probeFailures: 0, convergeMs: [], killedAfterMs: [] };
    const probeBefore = failuresBefore();
    for (let round = 0; round < ROUNDS; round++) {
      keystoneSampler.take();
      probe.pause(true);
      const run = await crashRun(
        point,
        async () => {
          await kubectlOk(['delete', 'keystoneapplicationcredential', ...ORDERS, '-n', NS, '--wait=false']);
        },
        tornDown,
      );
      figures.runs++;
      figures.parkedLost += run.parkedLost;
      figures.convergeMs.push(run.convergeMs);
      figures.killedAfterMs.push(run.killedAfterMs);
      figures.leftAfterTeardown += [...(await credentialsByOrder()).values()].reduce((n, names) => n + names.length, 0);
      figures.maxPerOrder = Math.max(figures.maxPerOrder, keystoneSampler.take());
      // The orders come back as new ones: generation 1, delivered, for the next round.
      for (const name of ORDERS) expected.set(name, 1);
      await applyOk(ORDERS.map(credentialOrder) as KubeObject[], { fieldManager: 'kac-test' });
      await eventually(converged, 120_000, 500);
      probe.pause(false);
    }
    figures.probeFailures = probe.failures.length - probeBefore;
    report.push(figures);
    expect(figures.leftAfterTeardown).toBe(0);
    expect(figures.parkedLost).toBe(0);
    expect(figures.maxPerOrder).toBeLessThanOrEqual(2);
    expect(probe.failures.slice(probeBefore)).toEqual([]);
  });

  it('no minted secret or password appears in any log line, Event or status read', async () => {
    const events = await kubectlOk(['get', 'events', '-A', '-o', 'json']);
    const password = (await getJson<KubeObject & { data: Record<string, string> }>('secret', 'svc-credentials', { namespace: NS })).data.password;
    const texts = [
      { source: 'operator log', text: readFileSync(operator.server.log, 'utf8') },
      { source: 'events', text: events },
      ...statusesRead.map((text, i) => ({ source: `status read #${i}`, text })),
    ];
    const secrets = [...secretsSeen, env.adminPassword, Buffer.from(password, 'base64').toString()];
    expect(secretsSeen.size).toBeGreaterThanOrEqual(ORDERS.length);
    expect(scanForSecrets(texts, secrets)).toEqual([]);
  });

  it('reports the figures', () => {
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    const lines = [
      `crash at every step: ${ROUNDS} runs per kill point, ${ORDERS.length} orders, grace ${GRACE}; probe: ${probe.attempts} authentications, ${probe.failures.length} failed; Keystone sampled ${keystoneSampler.observations} times`,
      '| kill point | runs | max credentials per order | left after teardown | parked secrets lost | failed probe authentications | converge median / max (ms) |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      ...report.map((f) => `| ${f.point} | ${f.runs} | ${f.maxPerOrder} | ${f.point.startsWith('teardown') ? f.leftAfterTeardown : '—'} | ${f.parkedLost} | ${f.probeFailures} | ${med(f.convergeMs)} / ${Math.max(...f.convergeMs)} |`),
    ];
    process.stderr.write(`[crash] ${lines.join('\n')}\n`);
    if (process.env.KAC_RELIABILITY_REPORT) appendFileSync(process.env.KAC_RELIABILITY_REPORT, `${lines.join('\n')}\n\n`);
    expect(report).toHaveLength(ROTATION.length + TEARDOWN.length);
  });
});
