// @needs kube keystone prometheus
/**
 * The alerts and the dashboard against a real Prometheus scraping the real operator (a child process under the
 * construct's RBAC on the real API server and Keystone), with the scrape configuration docs/configure/alerts.md shows and the
 * rule file `keystone-appcred alerts` prints, its windows shortened to seconds by its own flags:
 *
 * - a rotation held past its time (the user gone: its KeystoneUser order deleted and its finalizer taken off by hand
 *   while the credential order held it, so the order stands on UserNotFound and its schedule pauses; the user and the
 *   credential stay in Keystone): the overdue alert, and the expiry-without-successor alert, fire before the delivered
 *   credential expires in Keystone, naming the order and the reason;
 * - Keystone unreachable (a network outage through a resetting proxy, the shared Keystone keeps running) for longer than
 *   the alert's window: the Keystone alert fires (read from Prometheus's API), the delivered credential still
 *   authenticates; Keystone back: the alert resolves;
 * - a registered target cluster whose API server does not answer, and a memory limit below the process's resident
 *   memory: their alerts fire; a healthy operator raises neither the leader nor the readiness alert;
 * - every query of every dashboard panel returns data from this run;
 * - the ServiceMonitor, PodMonitor, PrometheusRule and dashboard ConfigMap of the constructs are accepted by the API
 *   server against prometheus-operator's own CRDs (a server-side dry run);
 * - no secret in the metrics or the alerts.
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Chart, Testing } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { MonitorKind, Operator, OperatorMonitor } from '../../constructs';
import { renderManifests } from '../../src/cli/manifests';
import { ALERT_NAMES, type AlertName } from '../../src/observability/alert-rule';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures } from '../support/credential-fixtures';
import { startCutProxy, type CutProxy } from '../support/cut-proxy';
import { Users } from '../../src/keystone';
import { adminSession, uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, kubectl, kubectlOk, waitEstablished } from '../support/kubectl';
import { fencedBlock } from '../support/markdown';
import { installCrds, metricsText, operatorKubeconfig, registrationSecret, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess, QUICK_ELECTION } from '../support/operator';
import { promAlerts, promQuery, promRules, promTargets, reloadPrometheus, type PromAlert } from '../support/prometheus';
import { freePort } from '../support/proc';
import { scanForSecrets } from '../support/secret-scan';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(240_000);

const REPO = resolve(__dirname, '..', '..');
const NS = 'kac-obs';
const HELD_NS = 'kac-obs-held';
const CP_NS = 'kac-obs-cp';
const IDENTITY = { namespace: 'kac-obs-operator', binding: 'kac-obs-operator' };
const JOB = 'keystone-appcred-operator';
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: uniqueName('obs'), projectName: uniqueName('obs') });
const HELD_USER = uniqueName('obs-held');
const held = credentialFixtures({ namespace: HELD_NS, cpNamespace: CP_NS, userName: HELD_USER, projectName: uniqueName('obs-held') });
/** The alert windows for a run of seconds (the flags of `keystone-appcred alerts`); the rest keep their defaults. */
const ALERT_FLAGS = [
  '--rotation-overdue-after', '5s',
  '--successor-due-after', '10s',
  '--expiry-warning', '45s',
  '--keystone-window', '20s',
  '--keystone-unreachable-for', '5s',
  '--target-cluster-for', '5s',
  '--memory-for', '5s',
  '--no-leader-for', '10s',
  '--not-ready-operator-for', '10s',
];
const say = (line: string) => process.stdout.write(`[observability] ${line}\n`);

let unlock: (() => void) | undefined;
let operator: OperatorProcess;
let keystone: CutProxy;
let workDir = '';
const firedSeen: PromAlert[] = [];
/** When the held order's generation 1 was due to rotate and when it expires in Keystone (ms). */
const heldTimes = { due: 0, expires: 0 };

/** `keystone-appcred …` of this repository, as a user runs it. */
function cli(args: readonly string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(process.execPath, ['--import', 'tsx', join(REPO, 'src/cli/main.ts'), ...args], { cwd: REPO, timeout: 60_000, maxBuffer: 16 * 2 ** 20 }, (error, out, err) =>
      error ? reject(new Error(`keystone-appcred ${args.join(' ')}: ${error.message}\n${err}`)) : resolvePromise(out),
    );
  });
}

/** The alerts of `name` firing now (or pending, with `pending`), whose labels include `labels`. */
async function alerts(name: AlertName, labels: Record<string, string> = {}, pending = false): Promise<PromAlert[]> {
  const now = (await promAlerts()).filter((a) => a.labels.alertname === name && (pending || a.state === 'firing') && Object.entries(labels).every(([k, v]) => a.labels[k] === v));
  firedSeen.push(...now);
  return now;
}

/** Waits until `name` fires for `labels`; returns the alert and when the test saw it. */
async function firing(name: AlertName, labels: Record<string, string>, timeoutMs: number): Promise<{ alert: PromAlert; at: number }> {
  return eventually(async () => {
    const [alert] = await alerts(name, labels);
    return alert && { alert, at: Date.now() };
  }, timeoutMs, 500);
}

beforeAll(async () => {
  unlock = await lockCluster('observability.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  keystone = await startCutProxy(fx.env.authUrl);
  const manifests = await installCrds(synthesizeManifests());
  const kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'observability.kubeconfig'));
  for (const ns of [NS, HELD_NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  await applyOk([fx.adminSecret(), fx.controlPlane({ authUrl: keystone.url, assignments: [{ namespace: HELD_NS }] })], { fieldManager: 'kac-test' });
  await applyOk([...fx.identityOrders(), ...held.identityOrders()], { fieldManager: 'kac-test' });
  // A registered target cluster whose API server does not answer (nothing listens on the port).
  const closed = await freePort();
  const unreachable = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'edge',
    clusters: [{ name: 'edge', cluster: { server: `https://127.0.0.1:${closed}`, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'edge', user: { token: 'not-a-real-token' } }],
    contexts: [{ name: 'edge', context: { cluster: 'edge', user: 'edge' } }],
  });
  await applyOk(registrationSecret('edge-gone', IDENTITY.namespace, unreachable), { fieldManager: 'kac-test' });
  operator = await startOperator({
    name: 'observability',
    kubeconfig,
    namespace: IDENTITY.namespace,
    logDir: workDir,
    // a limit below what the process holds under tsx (~200 MiB): the memory alert must fire
    args: [...QUICK_ELECTION, '--memory-limit', '64Mi'],
  });
  await waitReady(operator);

  // Prometheus: the scrape configuration of docs/configure/alerts.md ("Without prometheus-operator"), its target this process,
  // and the rule file `keystone-appcred alerts` prints with the windows above.
  const documented = fencedBlock('docs/configure/alerts.md', 'yaml', '# prometheus.yml, without prometheus-operator');
  const scrape = parseAllDocuments(documented)[0].toJS() as { scrape_configs: { job_name: string; honor_labels: boolean }[] };
  const job = scrape.scrape_configs.find((c) => c.job_name === JOB);
  expect(job).toMatchObject({ honor_labels: true });
  writeFileSync(
    join(process.env.KAC_PROMETHEUS_SCRAPE_DIR as string, 'keystone-appcred.yaml'),
    JSON.stringify({ scrape_configs: [{ job_name: JOB, honor_labels: true, static_configs: [{ targets: [`127.0.0.1:${operator.metrics}`] }] }] }),
  );
  writeFileSync(join(process.env.KAC_PROMETHEUS_RULES_DIR as string, 'keystone-appcred.yaml'), await cli(['alerts', ...ALERT_FLAGS]));
  await reloadPrometheus();

  // Two orders: `app` (a long interval: the Keystone outage and the dashboard) and `held` (interval 1m, grace 30s: its
  // rotation is held once its user is gone).
  await applyOk([fx.credentialOrder('app', { interval: '24h', gracePeriod: '1h' }), held.credentialOrder('held', { interval: '1m', gracePeriod: '30s' })], { fieldManager: 'kac-test' });
  for (const [f, name] of [[fx, 'app'], [held, 'held']] as const) {
    await eventually(async () => {
      const o = await f.order(name);
      return o.status?.credentialGeneration === 1 && condition(o, 'Ready')?.status === 'True';
    }, 90_000);
  }

  // The held order's user goes now, so its rotation falls due (a minute after generation 1) while the other tests run:
  // its user order deleted, held by the operator for the credential that references it, then its finalizer taken off by
  // hand (the user stays in Keystone, and with it the delivered credential).
  const before = await held.order('held');
  heldTimes.due = Date.parse(before.status?.nextRotation as string);
  heldTimes.expires = Date.parse(before.status?.credentialExpiresAt as string);
  say(`held: generation 1 due ${new Date(heldTimes.due).toISOString()}, expires ${new Date(heldTimes.expires).toISOString()}`);
  await kubectlOk(['delete', 'keystoneuser', 'svc', '-n', HELD_NS, '--wait=false']);
  await eventually(async () => condition(await held.order('svc', 'keystoneusers'), 'UserReady')?.reason === 'ReferencedByApplicationCredentials', 30_000);
  await kubectlOk(['patch', 'keystoneuser', 'svc', '-n', HELD_NS, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  await eventually(async () => condition(await held.order('held'), 'CredentialReady')?.reason === 'UserNotFound', 30_000);
  expect(heldTimes.due - Date.now()).toBeGreaterThan(5_000); // the user went before the rotation fell due
}, LOCKED_SETUP_MS);

afterAll(async () => {
  for (const file of [join(process.env.KAC_PROMETHEUS_SCRAPE_DIR ?? '', 'keystone-appcred.yaml'), join(process.env.KAC_PROMETHEUS_RULES_DIR ?? '', 'keystone-appcred.yaml')]) rmSync(file, { force: true });
  await reloadPrometheus().catch(() => undefined);
  if (keystone) keystone.down = false;
  // Teardown through the operator (it needs Keystone), then nothing left behind.
  await kubectl(['delete', 'keystoneapplicationcredential', '--all', '-n', NS, '--wait=false']);
  await kubectl(['delete', 'keystoneapplicationcredential', '--all', '-n', HELD_NS, '--wait=false']);
  // `app` is torn down by the operator; `held` cannot be (its user order is gone): releaseLeftovers lets it go.
  await eventually(async () => (await kubectl(['get', 'keystoneapplicationcredential', '-n', NS, '-o', 'name'])).stdout.trim() === '', 60_000).catch(() => undefined);
  await operator?.server.stop(5_000);
  await keystone?.close();
  await releaseLeftovers([NS, HELD_NS, CP_NS]);
  // The held order's user lost its order: nothing tears it down but this (with its credentials).
  const user = await new Users(adminSession(held.env)).findByName(HELD_USER).catch(() => undefined);
  if (user) await new Users(adminSession(held.env)).delete(user.id).catch(() => undefined);
  for (const ns of [NS, HELD_NS, CP_NS, IDENTITY.namespace]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  unlock?.();
});

describe('the alerts and the dashboard against a real Prometheus scraping the real operator', () => {
  it('scrapes the operator with the documented configuration and loads every alert', async () => {
    const target = await eventually(async () => (await promTargets()).find((t) => t.labels.job === JOB && t.health === 'up'), 30_000, 500);
    expect(target.scrapeUrl).toBe(`http://127.0.0.1:${operator.metrics}/metrics`);
    const rules = (await promRules()).flatMap((g) => g.rules);
    expect(rules.map((r) => r.name).sort()).toEqual([...ALERT_NAMES].sort());
    await eventually(async () => (await promRules()).flatMap((g) => g.rules).every((r) => r.health === 'ok'), 30_000, 500);
    // the order's own namespace label survives the scrape (honor_labels)
    expect(await promQuery(`keystone_appcred_credential_condition{namespace="${NS}", name="app", type="Ready"}`)).toEqual([expect.objectContaining({ value: 1 })]);
  });

  it('Keystone unreachable past the window: the Keystone alert fires and the credential stays valid; Keystone back: it resolves', async () => {
    const endpoint = new URL(keystone.url).origin + '/v3';
    // The premise: Keystone answers the operator. On a loaded machine a request that ran past its deadline counts as a
    // transport failure and can leave the alert pending for a while; wait until none is pending or firing.
    await eventually(async () => (await alerts('KeystoneAppCredKeystoneUnreachable', {}, true)).length === 0, 90_000, 500);
    const g1 = await fx.delivered('app');
    keystone.down = true;
    const cut = Date.now();
    // a change of the order makes it list Keystone anew: the pass fails and is retried with backoff
    await kubectlOk(['annotate', 'keystoneapplicationcredential', 'app', '-n', NS, `example.com/recheck=${Date.now()}`, '--overwrite']);
    const { alert, at } = await firing('KeystoneAppCredKeystoneUnreachable', { endpoint }, 90_000);
    say(`Keystone cut: the alert fires ${Math.round((at - cut) / 1000)} s after the cut (window 20s, for 5s)`);
    expect(alert.labels).toMatchObject({ endpoint, result: 'transport', severity: 'critical' });
    expect(alert.annotations.summary).toContain(endpoint);
    const o = await fx.order('app');
    expect(condition(o, 'CredentialReady')).toMatchObject({ status: 'False', reason: 'CredentialError' });
    expect(o.status?.credentialGeneration).toBe(1);
    // the delivered credential, checked at Keystone itself (not through the cut proxy), still works
    expect((await fx.delivered('app'))?.application_credential_id).toBe(g1?.application_credential_id);
    expect(await fx.authenticates(g1?.application_credential_id, g1?.application_credential_secret)).toBe(true);

    keystone.down = false;
    const back = Date.now();
    await kubectlOk(['annotate', 'keystoneapplicationcredential', 'app', '-n', NS, `example.com/recheck=${Date.now()}`, '--overwrite']);
    await eventually(async () => (await alerts('KeystoneAppCredKeystoneUnreachable', { endpoint }, true)).length === 0, 90_000, 500);
    say(`Keystone back: the alert resolved ${Math.round((Date.now() - back) / 1000)} s later`);
    await eventually(async () => condition(await fx.order('app'), 'Ready')?.status === 'True', 60_000);
  });

  it('a rotation by hand: rotations counted, the successor switched to', async () => {
    const rotations = async () => (await promQuery(`keystone_appcred_credential_rotations_total{namespace="${NS}", name="app"}`))[0]?.value ?? 0;
    const before = await rotations();
    await cli(['rotate', 'app', '-n', NS, '--wait', '--timeout', '90s', '--kubeconfig', process.env.KAC_KUBECONFIG as string]);
    expect((await fx.order('app')).status?.credentialGeneration).toBe(2);
    await eventually(async () => (await rotations()) === before + 1, 30_000, 500);
    expect(await promQuery(`keystone_appcred_credential_successor_exists{namespace="${NS}", name="app"}`)).toEqual([expect.objectContaining({ value: 0 })]);
  });

  it('the user gone: the rotation is held, and the overdue and expiry alerts fire before the delivered credential expires in Keystone', async () => {
    const { due, expires } = heldTimes;
    const order = { namespace: HELD_NS, name: 'held' };
    const overdue = await firing('KeystoneAppCredRotationOverdue', order, expires - Date.now() + 30_000);
    const expiring = await firing('KeystoneAppCredExpiresWithoutSuccessor', order, Math.max(1_000, expires - Date.now() + 30_000));
    say(`held: overdue alert seen ${Math.round((overdue.at - due) / 1000)} s after nextRotation, expiry alert ${Math.round((expiring.at - due) / 1000)} s after; the credential expires ${Math.round((expires - due) / 1000)} s after`);
    for (const { alert, at } of [overdue, expiring]) {
      expect(at).toBeLessThan(expires);
      expect(Date.parse(alert.activeAt)).toBeLessThan(expires);
      expect(alert.labels).toMatchObject({ reason: 'UserNotFound' });
      expect(alert.annotations.summary).toContain(`${HELD_NS}/held`);
      expect(alert.annotations.description).toContain('UserNotFound');
      expect(alert.annotations.runbook_url).toMatch(/docs\/operate\/alerts\.md#keystoneappcred/);
    }
    // the consumer has not broken yet: the delivered credential still authenticates, nothing rotated
    const o = await held.order('held');
    expect(o.status?.credentialGeneration).toBe(1);
    const doc = await held.delivered('held');
    expect(await held.authenticates(doc?.application_credential_id, doc?.application_credential_secret)).toBe(true);
  });

  it('a target cluster that does not answer and a memory limit below the resident memory fire their alerts; a healthy operator has a leader and is ready', async () => {
    await firing('KeystoneAppCredTargetClusterDisconnected', { cluster: 'edge-gone' }, 60_000);
    const memory = await firing('KeystoneAppCredOperatorMemoryNearLimit', { job: JOB }, 60_000);
    expect(memory.alert.annotations.summary).toMatch(/uses \d+(\.\d+)?% of its memory limit/);
    expect(await alerts('KeystoneAppCredOperatorNoLeader', {}, true)).toEqual([]);
    expect(await alerts('KeystoneAppCredOperatorNotReady', {}, true)).toEqual([]);
  });

  it('every query of every dashboard panel returns data from this run', async () => {
    const dashboard = JSON.parse(readFileSync(join(REPO, 'src/observability/dashboard.json'), 'utf8')) as {
      panels: { type: string; title: string; targets?: { expr: string }[] }[];
      templating: { list: { name: string; query?: string }[] };
    };
    // The variables as Grafana fills them: every namespace, a rate window of a minute.
    const fill = (expr: string) => expr.replaceAll('$namespace', '.*').replaceAll('$__rate_interval', '1m');
    const empty: string[] = [];
    let queries = 0;
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(panel.targets?.length).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        queries++;
        if ((await promQuery(fill(target.expr))).length === 0) empty.push(`${panel.title}: ${target.expr}`);
      }
    }
    expect(empty).toEqual([]);
    // the namespace variable's label_values(keystone_appcred_credential_condition, namespace)
    const variable = dashboard.templating.list.find((v) => v.name === 'namespace');
    expect(variable?.query).toBe('label_values(keystone_appcred_credential_condition, namespace)');
    const res = await fetch(`${process.env.KAC_PROMETHEUS_URL}/api/v1/label/namespace/values?${new URLSearchParams({ 'match[]': 'keystone_appcred_credential_condition' }).toString()}`);
    expect(((await res.json()) as { data: string[] }).data).toEqual(expect.arrayContaining([NS, HELD_NS]));
    say(`dashboard: ${queries} queries of ${dashboard.panels.filter((p) => p.type !== 'row').length} panels, each with data`);
  });

  it('the monitoring objects of the constructs are valid against prometheus-operator\'s CRDs (server-side dry run)', async () => {
    const crds = join(REPO, 'test/e2e/fixtures/prometheus-operator-crds');
    for (const file of readdirSync(crds)) await kubectlOk(['apply', '--server-side', '--field-manager=kac-test', '-f', join(crds, file)]);
    try {
      await waitEstablished(['crd/servicemonitors.monitoring.coreos.com', 'crd/podmonitors.monitoring.coreos.com', 'crd/prometheusrules.monitoring.coreos.com']);
      const yaml = renderManifests({ image: 'registry.example/keystone-appcred', tag: '0.3.0', monitoring: true, namespace: IDENTITY.namespace });
      const objects = parseAllDocuments(yaml).map((d) => d.toJS() as { apiVersion: string; kind: string; metadata: { name: string } });
      const monitoring = objects.filter((o) => o.apiVersion === 'monitoring.coreos.com/v1' || (o.kind === 'ConfigMap' && o.metadata.name === 'keystone-appcred-dashboard'));
      expect(monitoring.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'PrometheusRule', 'ServiceMonitor']);
      // The PodMonitor variant of the construct.
      const app = Testing.app();
      const chart = new Chart(app, 'pod-monitor');
      const op = new Operator(chart, 'Operator', { image: 'registry.example/keystone-appcred', tag: '0.3.0', namespace: IDENTITY.namespace, openBao: { address: 'https://openbao.example:8200', auth: { method: 'kubernetes', role: 'r' } } });
      new OperatorMonitor(chart, 'Monitor', { operator: op, kind: MonitorKind.POD_MONITOR });
      const podMonitor = Testing.synth(chart).filter((o: { kind: string }) => o.kind === 'PodMonitor');
      expect(podMonitor).toHaveLength(1);
      const out = await kubectlOk(['apply', '--server-side', '--dry-run=server', '--field-manager=kac-test', '-o', 'name', '-f', '-'], {
        input: [...monitoring, ...podMonitor].map((o) => JSON.stringify(o)).join('\n'),
      });
      expect(out.trim().split('\n').sort()).toEqual(
        ['configmap/keystone-appcred-dashboard', 'podmonitor.monitoring.coreos.com/keystone-appcred-operator-metrics', 'prometheusrule.monitoring.coreos.com/keystone-appcred-operator-alerts', 'servicemonitor.monitoring.coreos.com/keystone-appcred-operator-metrics'].sort(),
      );
    } finally {
      for (const file of readdirSync(crds)) await kubectl(['delete', '-f', join(crds, file), '--wait=false']);
    }
  });

  it('no secret in the metrics or in any alert seen', async () => {
    await fx.delivered('app');
    await fx.parkedSecrets('app');
    await held.parkedSecrets('held');
    const texts = [
      { source: 'operator /metrics', text: await metricsText(operator) },
      { source: 'alerts seen', text: JSON.stringify(firedSeen) },
      { source: 'alerts now', text: JSON.stringify(await promAlerts()) },
    ];
    expect(scanForSecrets(texts, [...fx.secretsSeen, ...held.secretsSeen])).toEqual([]);
    expect(fx.secretsSeen.size).toBeGreaterThan(0);
  });
});
