// @needs keystone openbao prometheus
/**
 * Alerts that tell the truth at a platform team's scrape interval (issue 40): real Prometheus servers scraping the real
 * operator every 15 s and every 30 s (prometheus-operator's ServiceMonitor default), and for the healthy check every
 * 1 s and 60 s too, each with the rule file `keystone-appcred alerts` prints (its windows shortened by its own flags,
 * `--expiry-warning` above the healthy orders' grace periods, the case that paged on every healthy rotation),
 * evaluating every second.
 *
 * This file runs its own API server (etcd and kube-apiserver from the cached binaries, on free ports) instead of the
 * run's shared one, so it holds no cluster lock and runs beside the other e2e files, observability.test.ts included;
 * Keystone and OpenBao are the run's, the operator's OpenBao token has a policy of its own (only this file's paths).
 *
 * Side by side, on separate ControlPlanes (and Keystone endpoints) so one scenario's trouble is not another's:
 * - **healthy**: two orders rotating every minute (grace periods 30 s and 0 s) through two scheduled rotations each and
 *   their sweeps: no alert was ever pending or firing, on any of the four, at any moment of that range (ALERTS and
 *   ALERTS_FOR_STATE over the whole range, not only at its end);
 * - **OpenBao denied**: the operator's policy for one ControlPlane's paths replaced by a deny rule and the order's
 *   `credentialGeneration` raised: the successor is minted, `BackupNotSynced` fires while every pass fails; allowed
 *   again after a longer outage than a backoff would forgive, the switch completes within 60 s and the alert resolves;
 * - **Keystone down past the grace** (a resetting proxy in front of the ControlPlane's Keystone, cut before the order's
 *   rotation falls due, held past the delivered credential's expiry): the expiry, overdue, not-ready (CredentialError)
 *   and unreachable alerts fire; Keystone back, the switch completes within 60 s and they resolve;
 * - **CredentialFailed** (Keystone answering 403 to the order's create, injected by a recording proxy): fires;
 * - **a person needed, and a wait**: an order whose delivered Secret name is taken (DeliveryRefused) and one without a
 *   role on its project (NoRoleOnProject): NeedsAction and NotReady fire.
 *
 * It prints what it measured: when each alert fired, the recovery times, and the file's own wall time.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Projects, Users } from '../../src/keystone';
import type { AlertName } from '../../src/observability/alert-rule';
import { condition, credentialFixtures, type CredentialFixtures } from '../support/credential-fixtures';
import { startCutProxy, type CutProxy } from '../support/cut-proxy';
import { adminSession, uniqueName } from '../support/keystone-fixtures';
import { startKubeCluster, type KubeCluster } from '../support/kube';
import { applyOk, eventually, kubectl } from '../support/kubectl';
import { installCrds, operatorKubeconfig, startOperator, waitReady, type OperatorProcess } from '../support/operator';
import { promAlerts, promQuery, promTargets, reloadPrometheus, startPrometheusServer, type PrometheusServer } from '../support/prometheus';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(900_000);

const started = Date.now();
const REPO = resolve(__dirname, '..', '..');
const JOB = 'keystone-appcred-operator';
const IDENTITY = { namespace: 'kac-truth-operator', binding: 'kac-truth-operator' };
const say = (line: string) => process.stdout.write(`[alert-truth] ${line}\n`);
const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** The alert windows for a run of minutes; `--expiry-warning` above the healthy grace periods (30 s, 0 s). */
const ALERT_FLAGS = [
  '--rotation-overdue-after', '45s',
  '--successor-due-after', '30s',
  '--expiry-warning', '45s',
  '--credential-failed-for', '10s',
  '--needs-action-for', '10s',
  '--not-ready-for', '20s',
  '--backup-not-synced-for', '20s',
  '--keystone-window', '1m',
  '--keystone-unreachable-for', '10s',
];

const users = { healthy: uniqueName('truth'), waits: uniqueName('truth-waits'), bao: uniqueName('truth-bao'), ks: uniqueName('truth-ks'), failed: uniqueName('truth-failed') };
const fixtures = (name: keyof typeof users, cpNamespace: string) => credentialFixtures({ namespace: name === 'healthy' ? 'kac-truth' : `kac-truth-${name}`, cpNamespace, userName: users[name], projectName: users[name] });
const healthy = fixtures('healthy', 'kac-truth-cp');
const waits = fixtures('waits', 'kac-truth-cp');
const bao = fixtures('bao', 'kac-truth-bao-cp');
const ks = fixtures('ks', 'kac-truth-ks-cp');
const failed = fixtures('failed', 'kac-truth-failed-cp');
const ALL = [healthy, waits, bao, ks, failed];
const NAMESPACES = ['kac-truth', 'kac-truth-waits', 'kac-truth-bao', 'kac-truth-ks', 'kac-truth-failed'];
const CP_NAMESPACES = ['kac-truth-cp', 'kac-truth-bao-cp', 'kac-truth-ks-cp', 'kac-truth-failed-cp'];

let cluster: KubeCluster | undefined;
let operator: OperatorProcess | undefined;
let keystoneCut: CutProxy | undefined;
let keystoneFaults: RecordingProxy | undefined;
/** The Prometheus servers; `scenarios`: the ones every alert scenario is checked on (the others prove silence). */
const prometheus: { name: string; server: PrometheusServer; from: number; scenarios: boolean }[] = [];
let workDir = '';
let baoToken = '';
/** When the credential orders were created. */
let ordersAt = 0;

/** OpenBao's HTTP API as its root (the run's dev server). */
async function openBao(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${process.env.KAC_BAO_ADDR}/v1/${path}`, {
    method,
    headers: { 'x-vault-token': process.env.KAC_BAO_TOKEN as string, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`OpenBao ${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}

/** The operator's policy: its documented rules (docs/install/openbao.md) on each ControlPlane's paths; `denied` ones denied. */
const policy = (denied: readonly string[] = []) =>
  CP_NAMESPACES.map((ns) =>
    denied.includes(ns)
      ? `path "openstack/data/keystone/${ns}/*" { capabilities = ["deny"] }\npath "openstack/metadata/keystone/${ns}/*" { capabilities = ["deny"] }`
      : `path "openstack/data/keystone/${ns}/*" { capabilities = ["create", "read", "update"] }\npath "openstack/metadata/keystone/${ns}/*" { capabilities = ["delete"] }`,
  ).join('\n');
const writePolicy = (denied: readonly string[] = []) => openBao('PUT', 'sys/policies/acl/kac-alert-truth', { policy: policy(denied) });

/** `keystone-appcred …` of this repository, as a user runs it. */
function cli(args: readonly string[]): Promise<string> {
  return new Promise((ok, fail) => {
    execFile(process.execPath, ['--import', 'tsx', join(REPO, 'src/cli/main.ts'), ...args], { cwd: REPO, timeout: 60_000 }, (error, out, err) => (error ? fail(new Error(`${error.message}\n${err}`)) : ok(out)));
  });
}

/** Whether `alert` is firing on the scenarios' Prometheus (15 s and 30 s) for the labels given. */
async function firingEverywhere(alert: AlertName, labels: Record<string, string>): Promise<boolean> {
  for (const { server } of prometheus.filter((p) => p.scenarios)) {
    const now = await promAlerts(server.url);
    if (!now.some((a) => a.state === 'firing' && a.labels.alertname === alert && Object.entries(labels).every(([k, v]) => a.labels[k] === v))) return false;
  }
  return true;
}

/** Whether `alert` is neither pending nor firing on the scenarios' Prometheus for the labels given. */
async function quietEverywhere(alert: AlertName, labels: Record<string, string>): Promise<boolean> {
  for (const { server } of prometheus.filter((p) => p.scenarios)) {
    const now = await promAlerts(server.url);
    if (now.some((a) => a.labels.alertname === alert && Object.entries(labels).every(([k, v]) => a.labels[k] === v))) return false;
  }
  return true;
}

/** Waits until `alert` fires on the scenarios' Prometheus; returns the seconds since `since` (the moment `what` happened). */
async function fires(alert: AlertName, labels: Record<string, string>, since: number, what: string, timeoutMs = 240_000): Promise<number> {
  await until(() => firingEverywhere(alert, labels), timeoutMs, 1_000);
  const after = seconds(Date.now() - since);
  say(`${alert} ${JSON.stringify(labels)} seen firing at 15 s and 30 s scrapes ${after} s after ${what}`);
  return after;
}

/** The generation an order delivers with every condition True (undefined while it does not). */
async function readyGeneration(fx: CredentialFixtures, name: string): Promise<number | undefined> {
  const o = await fx.order(name);
  return condition(o, 'Ready')?.status === 'True' && o.status?.secretName ? o.status.credentialGeneration : undefined;
}

/** Set once the file ends: the scenarios still running (a run of some of its tests, `-t`) stop at their next wait. */
let stopping = false;

/** Waits `ms`, or less once the file ends. */
async function pause(ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!stopping && Date.now() < end) await new Promise((r) => setTimeout(r, Math.min(1_000, end - Date.now())));
}

/** {@link eventually}, polling every second by default, stopped once the file ends. */
const until = <T>(check: () => Promise<T | undefined | false>, timeoutMs: number, intervalMs = 1_000): Promise<T> => eventually(check, timeoutMs, intervalMs, { abort: () => stopping });

/** Runs a scenario from beforeAll on; its test awaits it (a rejection is reported by that test, not as unhandled). */
function scenario<T>(run: () => Promise<T>): Promise<T> {
  const promise = run();
  promise.catch(() => undefined);
  return promise;
}

let scenarios: { healthy: Promise<{ from: number; to: number }>; bao: Promise<void>; keystone: Promise<void> };

beforeAll(async () => {
  workDir = join(process.env.KAC_TEST_WORKDIR as string, 'alert-truth');
  mkdirSync(workDir, { recursive: true });
  // An API server of this file's own: the kubectl and operator helpers read these variables.
  cluster = await startKubeCluster(join(workDir, 'kube'), { name: 'alert-truth-kube', controllerManager: false });
  Object.assign(process.env, {
    KAC_KUBECONFIG: cluster.kubeconfig,
    KAC_KUBECONFIG_LIMITED: cluster.kubeconfigLimited,
    KAC_KUBECTL: cluster.kubectl,
    KAC_KUBE_SERVER: cluster.server,
    KAC_KUBE_CA_FILE: cluster.pki.ca,
    KAC_KUBE_ADMIN_CERT_FILE: cluster.pki.adminCert,
    KAC_KUBE_ADMIN_KEY_FILE: cluster.pki.adminKey,
  });
  const manifests = await installCrds(synthesizeManifests(workDir));
  const kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'operator.kubeconfig'));
  for (const ns of [...NAMESPACES, ...CP_NAMESPACES]) await kubectl(['create', 'namespace', ns]);

  // Keystone: directly for the healthy orders and the waits; cut for the outage; answering 403 to creates for CredentialFailed.
  keystoneCut = await startCutProxy(ks.env.authUrl);
  keystoneFaults = await startRecordingProxy(failed.env.authUrl);
  keystoneFaults.fault = (call) => (call.method === 'POST' && /\/application_credentials$/.test(call.path) ? 403 : undefined);
  await applyOk(
    [
      healthy.adminSecret(),
      healthy.controlPlane({ assignments: [{ namespace: 'kac-truth-waits' }] }),
      bao.adminSecret(),
      bao.controlPlane(),
      ks.adminSecret(),
      ks.controlPlane({ authUrl: keystoneCut.url }),
      failed.adminSecret(),
      failed.controlPlane({ authUrl: keystoneFaults.url }),
      ...healthy.identityOrders(),
      ...waits.identityOrders().filter((o) => o.kind !== 'KeystoneRoleAssignment'), // no role on the project: a wait
      ...bao.identityOrders(),
      ...ks.identityOrders(),
      ...failed.identityOrders(),
    ],
    { fieldManager: 'kac-test' },
  );
  // A foreign Secret at an order's delivered name: DeliveryRefused.
  await applyOk({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'taken-credentials', namespace: 'kac-truth-waits' }, stringData: { note: 'not the operator\'s' } } as never, { fieldManager: 'someone-else' });

  // OpenBao: the operator's own policy and token.
  await writePolicy();
  baoToken = ((await openBao('POST', 'auth/token/create', { policies: ['kac-alert-truth'], ttl: '2h', no_default_policy: true })) as { auth: { client_token: string } }).auth.client_token;

  operator = await startOperator({
    name: 'alert-truth',
    kubeconfig,
    namespace: IDENTITY.namespace,
    logDir: workDir,
    args: ['--openbao-address', process.env.KAC_BAO_ADDR as string, '--openbao-auth-method', 'token'],
    env: { KAC_OPENBAO_TOKEN: baoToken },
  });
  await waitReady(operator);

  // Prometheus servers at a platform team's scrape intervals (and the 1 s of observability.test.ts), each evaluating every
  // second (a rule that is true for a moment between two scrapes is seen), the documented scrape job and the printed
  // rule file. Every alert scenario is checked on the 15 s and 30 s ones; all four prove the healthy rotations silent.
  const rules = await cli(['alerts', ...ALERT_FLAGS]);
  for (const interval of ['1s', '15s', '30s', '60s']) {
    const server = await startPrometheusServer(join(workDir, `prometheus-${interval}`), { scrapeInterval: interval, evaluationInterval: '1s' });
    writeFileSync(join(server.scrapeDir, 'keystone-appcred.yaml'), JSON.stringify({ scrape_configs: [{ job_name: JOB, honor_labels: true, static_configs: [{ targets: [`127.0.0.1:${operator.metrics}`] }] }] }));
    writeFileSync(join(server.rulesDir, 'keystone-appcred.yaml'), rules);
    await reloadPrometheus(server.url);
    prometheus.push({ name: interval, server, from: 0, scenarios: interval === '15s' || interval === '30s' });
  }

  // The orders once their identity orders are Ready (a credential order waiting for its user is a wait, not health).
  for (const fx of [healthy, bao, ks, failed]) {
    await until(async () => condition(await fx.order('member', 'keystoneroleassignments'), 'AssignmentReady')?.status === 'True', 180_000, 1_000);
  }
  await until(async () => condition(await waits.order('svc', 'keystoneusers'), 'UserReady')?.status === 'True' && condition(await waits.order('proj', 'keystoneprojects'), 'ProjectReady')?.status === 'True', 180_000, 1_000);
  // The range the healthy check covers starts once each has scraped the operator (before its first scrape, the leader
  // alert's absent() is true for a moment on any Prometheus that just started), before the first rotation.
  for (const p of prometheus) {
    await until(async () => (await promTargets(p.server.url)).some((t) => t.health === 'up'), 120_000, 500);
    await until(async () => (await promQuery('keystone_appcred_leader', { url: p.server.url })).length > 0, 120_000, 500);
    p.from = Date.now() + 2_000;
  }
  ordersAt = Date.now();
  await applyOk(
    [
      healthy.credentialOrder('every-minute', { interval: '1m', gracePeriod: '30s' }),
      healthy.credentialOrder('no-grace', { interval: '1m', gracePeriod: '0s' }),
      bao.credentialOrder('held', { interval: '1h', gracePeriod: '10s' }),
      ks.credentialOrder('late', { interval: '1m', gracePeriod: '30s' }),
      failed.credentialOrder('refused', { interval: '1h', gracePeriod: '10s' }),
      waits.credentialOrder('waiting', { interval: '1h', gracePeriod: '10s' }),
      waits.credentialOrder('taken', { interval: '1h', gracePeriod: '10s' }),
    ],
    { fieldManager: 'kac-test' },
  );
  say(`set up in ${seconds(Date.now() - started)} s (own API server, operator, four Prometheus, 5 ControlPlanes' orders)`);

  scenarios = {
    healthy: scenario(healthyRotations),
    bao: scenario(openBaoDenied),
    keystone: scenario(keystoneDownPastTheGrace),
  };
}, 600_000);

afterAll(async () => {
  stopping = true;
  if (keystoneCut) keystoneCut.down = false;
  await writePolicy().catch(() => undefined);
  await operator?.server.stop(5_000);
  // What the orders left outside this file's API server: their backups, and the users and projects in Keystone (their
  // credentials go with the users).
  for (const fx of ALL) {
    for (const name of ['every-minute', 'no-grace', 'held', 'late', 'refused']) {
      const uid = (await fx.order(name).catch(() => undefined))?.metadata.uid;
      if (uid) await fx.backup(name, uid).remove().catch(() => undefined);
    }
  }
  const admin = adminSession(healthy.env);
  for (const name of Object.values(users)) {
    const user = await new Users(admin).findByName(name).catch(() => undefined);
    if (user) await new Users(admin).delete(user.id).catch(() => undefined);
    const project = await new Projects(admin).findByName(name).catch(() => undefined);
    if (project) await new Projects(admin).delete(project.id).catch(() => undefined);
  }
  if (baoToken) await openBao('POST', 'auth/token/revoke', { token: baoToken }).catch(() => undefined);
  await openBao('DELETE', 'sys/policies/acl/kac-alert-truth').catch(() => undefined);
  for (const p of prometheus) say(`Prometheus ${p.name}: peak RSS ${await p.server.stop()} MiB`);
  await keystoneCut?.close();
  await keystoneFaults?.close();
  await cluster?.stop();
  say(`wall time of the file: ${seconds(Date.now() - started)} s`);
});

/**
 * Two scheduled rotations of each healthy order, and the sweep after the second: the range they span, from the moment
 * both deliver generation 1 and every Prometheus has scraped the operator.
 */
async function healthyRotations(): Promise<{ from: number; to: number }> {
  for (const name of ['every-minute', 'no-grace']) await until(async () => (await readyGeneration(healthy, name)) === 1, 120_000, 1_000);
  const from = Math.max(Date.now(), ...prometheus.map((p) => p.from));
  // generation 3 delivered and generation 2 swept (no superseded credential in grace any more)
  await until(async () => {
    for (const name of ['every-minute', 'no-grace']) {
      const o = await healthy.order(name);
      if ((await readyGeneration(healthy, name)) !== 3 || o.status?.previousCredentialID) return false;
    }
    return true;
  }, 360_000, 1_000);
  // one more scrape of the slowest Prometheus after the last sweep, and a few evaluations after it
  await pause(65_000);
  return { from, to: Date.now() };
}

/** OpenBao denied the operator on the order's ControlPlane's paths, long past a backoff's patience; then allowed. */
async function openBaoDenied(): Promise<void> {
  await until(async () => (await readyGeneration(bao, 'held')) === 1, 120_000, 1_000);
  await writePolicy(['kac-truth-bao-cp']);
  const deniedAt = Date.now();
  await bao.merge('keystoneapplicationcredentials', 'held', { spec: { credentialGeneration: 2 } });
  await until(async () => condition(await bao.order('held'), 'DeliveryReady')?.reason === 'BackupNotSynced', 60_000, 1_000);
  const order = { namespace: 'kac-truth-bao', name: 'held' };
  await fires('KeystoneAppCredBackupNotSynced', order, deniedAt, 'the deny');
  // The successor exists (minted before the backup was refused): the expiry alert stays silent.
  expect(await quietEverywhere('KeystoneAppCredExpiresWithoutSuccessor', order)).toBe(true);
  // Denied for 3 minutes: a backoff per order would have grown past a minute by then.
  await pause(deniedAt + 180_000 - Date.now());
  const o = await bao.order('held');
  expect(o.status?.credentialGeneration).toBe(1);
  await writePolicy();
  const allowedAt = Date.now();
  await until(async () => (await readyGeneration(bao, 'held')) === 2, 60_000, 500);
  const switched = Date.now() - allowedAt;
  say(`OpenBao denied ${seconds(allowedAt - deniedAt)} s: the switch completed ${seconds(switched)} s after it was allowed again`);
  expect(switched).toBeLessThan(60_000);
  await until(() => quietEverywhere('KeystoneAppCredBackupNotSynced', order), 120_000, 1_000);
  say(`OpenBao back: BackupNotSynced resolved at 15 s and 30 s scrapes ${seconds(Date.now() - allowedAt)} s after`);
}

/** Keystone cut before the order's rotation falls due and kept down past its delivered credential's expiry. */
async function keystoneDownPastTheGrace(): Promise<void> {
  const cut = keystoneCut as CutProxy;
  await until(async () => (await readyGeneration(ks, 'late')) === 1, 120_000, 1_000);
  const before = await ks.order('late');
  const due = Date.parse(before.status?.nextRotation as string);
  const expires = Date.parse(before.status?.credentialExpiresAt as string);
  await pause(due - 15_000 - Date.now());
  cut.down = true;
  const cutAt = Date.now();
  const order = { namespace: 'kac-truth-ks', name: 'late' };
  const endpoint = new URL(cut.url).origin + '/v3';
  await Promise.all([
    fires('KeystoneAppCredExpiresWithoutSuccessor', order, due, 'the due time'),
    fires('KeystoneAppCredRotationOverdue', order, due, 'the due time'),
    fires('KeystoneAppCredNotReady', { ...order, type: 'CredentialReady', reason: 'CredentialError' }, cutAt, 'the cut'),
    fires('KeystoneAppCredKeystoneUnreachable', { endpoint, result: 'transport' }, cutAt, 'the cut'),
  ]);
  // past the grace: the delivered credential has expired in Keystone
  await pause(expires + 15_000 - Date.now());
  expect((await ks.order('late')).status?.credentialGeneration).toBe(1);
  cut.down = false;
  const backAt = Date.now();
  await until(async () => (await readyGeneration(ks, 'late')) === 2, 60_000, 500);
  const switched = Date.now() - backAt;
  say(`Keystone down ${seconds(backAt - cutAt)} s (from ${seconds(due - cutAt)} s before the due time to ${seconds(backAt - expires)} s past the expiry): the switch completed ${seconds(switched)} s after Keystone was back`);
  expect(switched).toBeLessThan(60_000);
  for (const alert of ['KeystoneAppCredExpiresWithoutSuccessor', 'KeystoneAppCredRotationOverdue', 'KeystoneAppCredNotReady'] as const) {
    await until(() => quietEverywhere(alert, order), 120_000, 1_000);
  }
  say(`Keystone back: the order's alerts resolved at 15 s and 30 s scrapes ${seconds(Date.now() - backAt)} s after`);
}

describe('alerts at real scrape intervals against the real operator, Keystone and OpenBao', () => {
  it('two healthy scheduled rotations and their sweeps per order: no alert ever pending or firing, scraped every 1 s, 15 s, 30 s or 60 s', async () => {
    const { from, to } = await scenarios.healthy;
    const range = Math.ceil((to - from) / 1000);
    // every alert of the healthy orders, and every alert not about one order or one Keystone endpoint (the operator's
    // own), or about the healthy orders' Keystone
    const endpoint = new URL(healthy.env.authUrl).origin + '/v3';
    const selector = `{namespace=~"kac-truth|", endpoint=~"|${endpoint}"}`;
    for (const p of prometheus) {
      for (const series of ['ALERTS', 'ALERTS_FOR_STATE']) {
        expect(await promQuery(`count_over_time(${series}${selector}[${range}s])`, { url: p.server.url, time: to })).toEqual([]);
      }
      // the range saw (at least) both rotations of each order, as this Prometheus scraped them
      const rotations = await promQuery(`max_over_time(keystone_appcred_credential_rotations_total{namespace="kac-truth"}[${range}s]) - min_over_time(keystone_appcred_credential_rotations_total{namespace="kac-truth"}[${range}s])`, { url: p.server.url, time: to });
      expect(rotations).toHaveLength(2);
      for (const r of rotations) expect(r.value).toBeGreaterThanOrEqual(2);
    }
    say(`healthy: ${range} s, two rotations and their sweeps per order, no ALERTS or ALERTS_FOR_STATE sample on any of the Prometheus (scraping every ${prometheus.map((p) => p.name).join(', ')})`);
  });

  it('OpenBao denied: BackupNotSynced fires while every pass fails; allowed again, the switch completes within 60 s and the alert resolves', async () => {
    await scenarios.bao;
  });

  it('Keystone down past the grace: the expiry, overdue, not-ready and unreachable alerts fire; Keystone back, the switch completes within 60 s and they resolve', async () => {
    await scenarios.keystone;
  });

  it('Keystone refusing the credential for good (403 to its create): CredentialFailed fires', async () => {
    await until(async () => condition(await failed.order('refused'), 'CredentialReady')?.reason === 'CredentialFailed', 120_000, 1_000);
    await fires('KeystoneAppCredCredentialFailed', { namespace: 'kac-truth-failed', name: 'refused', type: 'CredentialReady' }, ordersAt, 'the orders were created (checked after the scenarios above)');
  });

  it('a person needed, and a wait: NeedsAction (a foreign Secret at the delivered name) and NotReady (no role on the project) fire', async () => {
    await fires('KeystoneAppCredNeedsAction', { namespace: 'kac-truth-waits', name: 'taken', type: 'DeliveryReady', reason: 'DeliveryRefused' }, ordersAt, 'the orders were created (checked after the scenarios above)');
    await fires('KeystoneAppCredNotReady', { namespace: 'kac-truth-waits', name: 'waiting', type: 'CredentialReady', reason: 'NoRoleOnProject' }, ordersAt, 'the orders were created (checked after the scenarios above)');
  });
});
