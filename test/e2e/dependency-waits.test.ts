// @needs kube keystone openbao
/**
 * Orders waiting on a dependency while another controller runs on their keys (issue 46, finding 2), with the real API
 * server, Keystone and OpenBao: the operator a child process with `--consumer-handoff`, whose controller reconciles
 * every KeystoneApplicationCredential's key too, under the RBAC `manifests --consumer-handoff` prints. Three converged
 * orders are rotated (a raised generation) while OpenBao answers 503 (a recording proxy in front of it): each mints its
 * successor, fails its backup, records BackupNotSynced and waits on OpenBao. Meanwhile a Deployment that consumes the
 * three delivered Secrets (opted in to the handoff) changes every few seconds, and each change runs the handoff's pass
 * of every order's key, which succeeds without reaching OpenBao: it must neither end an order's wait nor wake the
 * waiters. Proven: in the first 30 s OpenBao gets each order's own pass and the probes (one line of waiters for the
 * whole outage), not a pass of every waiter per handoff pass; and once OpenBao answers again, every order switches
 * within the probe interval.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderManifests } from '../../src/cli/manifests';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures, type Order } from '../support/credential-fixtures';
import { uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, kubectl, kubectlOk, type KubeObject } from '../support/kubectl';
import { installCrds, operatorKubeconfig, operatorLog, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess } from '../support/operator';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(180_000);

const NS = 'kac-waits';
const CP_NS = 'kac-waits-cp';
const IDENTITY = { namespace: 'kac-waits-operator', binding: 'kac-waits-operator' };
const ORDERS = ['app-a', 'app-b', 'app-c'];
const WINDOW_MS = 30_000;
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: uniqueName('waits'), projectName: uniqueName('waits') });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let unlock: (() => void) | undefined;
let operator: OperatorProcess | undefined;
let openBao: RecordingProxy;

const ready = (o: Order) => condition(o, 'Ready')?.status === 'True';
/** A Deployment that consumes the orders' delivered Secrets and opts in to the handoff (no pod runs: 0 replicas). */
const consumer: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'consumer', namespace: NS, annotations: { 'c5c3.io/rollout-on-credential-switch': ORDERS.map((o) => `${o}-credentials`).join(',') } },
  spec: { replicas: 0, selector: { matchLabels: { app: 'consumer' } }, template: { metadata: { labels: { app: 'consumer' } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } } },
} as KubeObject;
const orders = () => Promise.all(ORDERS.map((name) => fx.order(name)));

beforeAll(async () => {
  unlock = await lockCluster('dependency-waits.test.ts');
  const workDir = process.env.KAC_TEST_WORKDIR as string;
  openBao = await startRecordingProxy(process.env.KAC_BAO_ADDR as string);
  await installCrds(synthesizeManifests());
  // The operator's RBAC as `keystone-appcred manifests --consumer-handoff` prints it.
  const manifests = mkdtempSync(join(workDir, 'waits-manifests-'));
  writeFileSync(join(manifests, 'operator.k8s.yaml'), renderManifests({ image: 'keystone-appcred', tag: '0.2.0', consumerHandoff: true }));
  const kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'waits.kubeconfig'));
  for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  await applyOk([fx.adminSecret(), fx.controlPlane()], { fieldManager: 'kac-test' });
  await applyOk(fx.identityOrders(), { fieldManager: 'kac-test' });
  operator = await startOperator({
    name: 'waits',
    kubeconfig,
    namespace: IDENTITY.namespace,
    logDir: workDir,
    args: ['--consumer-handoff', '--log-level', 'debug'],
    env: { KAC_OPENBAO_ADDRESS: openBao.url, KAC_OPENBAO_AUTH_METHOD: 'token', KAC_OPENBAO_TOKEN: process.env.KAC_BAO_TOKEN as string },
  });
  await waitReady(operator);
  await applyOk(ORDERS.map((name) => fx.credentialOrder(name, { interval: '1h', gracePeriod: '10m' })), { fieldManager: 'kac-test' });
  await eventually(async () => (await orders()).every((o) => o.status?.credentialGeneration === 1 && ready(o)), 120_000, 500);
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await operator?.server.stop(5_000);
  await releaseLeftovers([NS, CP_NS]);
  for (const ns of [NS, CP_NS, IDENTITY.namespace]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  await openBao?.close();
  unlock?.();
});

describe('orders waiting on OpenBao, the consumer handoff on their keys', () => {
  it('rotated while OpenBao answers 503: each waits, probed; the handoff\'s passes of their keys (a consumer changing) neither end a wait nor wake the others; OpenBao back, all switch within seconds', async () => {
    openBao.fault = () => 503;
    const from = Date.now();
    for (const name of ORDERS) await fx.merge('keystoneapplicationcredential', name, { spec: { credentialGeneration: 2 } });
    // The consumer changes every few seconds while the orders wait: each change is a handoff pass of every order's key.
    await applyOk(consumer, { fieldManager: 'kac-test' });
    for (let i = 0; Date.now() < from + WINDOW_MS - 4_000; i++) {
      await sleep(4_000);
      await kubectlOk(['annotate', 'deployment', 'consumer', '-n', NS, `example.com/poke=${i}`, '--overwrite']);
    }
    await sleep(Math.max(0, from + WINDOW_MS - Date.now()));
    const inside = openBao.calls.filter((c) => (c.at ?? 0) >= from && (c.at ?? 0) < from + WINDOW_MS).length;
    const all = await orders();
    expect(all.map((o) => [o.metadata.name, o.status?.credentialGeneration, condition(o, 'DeliveryReady')?.reason])).toEqual(ORDERS.map((name) => [name, 1, 'BackupNotSynced']));
    // The handoff reconciled the orders' keys meanwhile (for each change of the consumer: its passes log at debug), and
    // they still wait.
    const log = operatorLog(operator as OperatorProcess);
    const handoffPasses = log.filter((l) => l.msg === 'reconcile' && l.controller === 'ConsumerHandoff' && (l.time as string) >= new Date(from).toISOString()).length;
    const waits = log.filter((l) => l.msg === 'dependency does not answer: the objects that need it wait, one of them probes it').length;
    process.stderr.write(`[dependency-waits] ${ORDERS.length} orders rotating, OpenBao answering 503: ${inside} OpenBao requests in the first ${WINDOW_MS / 1000} s, ${handoffPasses} handoff passes on their keys, OpenBao's line of waiters opened ${waits} time(s)\n`);
    expect(handoffPasses).toBeGreaterThanOrEqual(5 * ORDERS.length);
    // Each order's own pass (its backup read, its refused write) and the probes (one order at a time after 1, 2, 4, 8
    // and 15 s); a wake of every waiter per handoff pass would add a pass of each order per change of the consumer.
    expect(inside).toBeLessThanOrEqual(3 * ORDERS.length + 12);
    // One line of waiters for the whole outage: a handoff pass that ended it would open it again at the next failure.
    expect(waits).toBe(1);
    openBao.fault = undefined;
    const answered = Date.now();
    await eventually(async () => (await orders()).every((o) => o.status?.credentialGeneration === 2 && ready(o)), 60_000, 250);
    const switched = Date.now() - answered;
    process.stderr.write(`[dependency-waits] OpenBao answering again: all ${ORDERS.length} switched in ${switched} ms\n`);
    expect(switched).toBeLessThan(30_000);
  });
});
