/**
 * The consumer handoff's driver over the in-memory cluster (for speed; test/e2e/consumer-handoff.test.ts proves the
 * same with the real API server and the real deployment, replicaset, statefulset and daemonset controllers): the
 * workloads it rolls and leaves alone, the value it writes, an Event per rolled workload, a second pass that writes
 * nothing, a failed roll retried, the Warning and the metrics of an overdue rollout, and the mapping of a workload's
 * change to its orders.
 */
import { Registry } from 'prom-client';
import type { KeystoneApplicationCredential, KeystoneApplicationCredentialStatus } from '../../../src/api';
import { OPT_IN, TEMPLATE_GENERATIONS } from '../../../src/handoff';
import { KubeApiError, Kinds, MemoryCluster } from '../../../src/kube';
import { KubeApi } from '../../../src/kube/api';
import { registerHandoff } from '../../../src/operator/handoff/controller';
import { optedInWorkloads, reportHandoffOff } from '../../../src/operator/handoff/off';
import { jsonLogger } from '../../../src/operator/runtime/log';
import { Manager } from '../../../src/operator/runtime/manager';
import { OperatorMetrics } from '../../../src/operator/runtime/metrics';
import { FakeApiServer } from '../kube/fake-api-server';
import { until } from './runtime/until';
import { HandoffMetrics } from '../../../src/operator/handoff/metrics';
import { HandoffReason, HandoffReconciler } from '../../../src/operator/handoff/reconciler';
import { CONSUMERS_INDEX, ClusterWorkloads, WorkloadKinds, WorkloadMetadataKinds, consumerIndex, ordersConsumedBy, type WorkloadObject } from '../../../src/operator/handoff/workloads';
import { METADATA_ACCEPT } from '../../../src/kube/transport';

const NS = 'team-a';
const T0 = new Date('2026-12-01T00:00:00Z');
const SECRET = 'app-credentials';

function world() {
  let now = T0;
  const cluster = new MemoryCluster(() => now);
  for (const kind of Object.values(WorkloadKinds)) cluster.index(kind, CONSUMERS_INDEX, consumerIndex);
  const registry = new Registry();
  const handoff = new HandoffReconciler({
    reads: cluster,
    workloads: new ClusterWorkloads(cluster),
    event: (order, e) => cluster.event(order, e),
    metrics: new HandoffMetrics(registry),
    clock: () => now,
  });
  const order = (status: KeystoneApplicationCredentialStatus, gracePeriod = '20m') =>
    cluster.put(Kinds.KeystoneApplicationCredential, {
      apiVersion: 'c5c3.io/v1alpha1',
      kind: 'KeystoneApplicationCredential',
      metadata: { name: 'app', namespace: NS },
      spec: { controlPlaneRef: { name: 'cp', namespace: 'cp' }, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, rotation: { interval: '1h', gracePeriod } },
      status,
    } as KeystoneApplicationCredential);
  const workload = (kind: keyof typeof WorkloadKinds, name: string, options: { namespace?: string; optIn?: string; template?: string; paused?: boolean } = {}) =>
    cluster.put(WorkloadKinds[kind], {
      apiVersion: 'apps/v1',
      kind,
      metadata: { name, namespace: options.namespace ?? NS, ...(options.optIn !== undefined ? { annotations: { [OPT_IN]: options.optIn } } : {}) },
      spec: {
        replicas: 1,
        ...(options.paused ? { paused: true } : {}),
        template: { metadata: { annotations: { keep: 'me', ...(options.template ? { [TEMPLATE_GENERATIONS]: options.template } : {}) } } },
      },
    } as WorkloadObject);
  /** Plays the workload's controller: the rollout of its current template finished. */
  const rolledOut = (kind: keyof typeof WorkloadKinds, name: string) => {
    const w = cluster.get(WorkloadKinds[kind], NS, name) as WorkloadObject;
    cluster.put(WorkloadKinds[kind], { ...w, status: { observedGeneration: w.metadata.generation, replicas: 1, updatedReplicas: 1, availableReplicas: 1, readyReplicas: 1, currentRevision: 'r', updateRevision: 'r' } } as WorkloadObject);
  };
  const template = (kind: keyof typeof WorkloadKinds, name: string, namespace = NS) => (cluster.get(WorkloadKinds[kind], namespace, name) as WorkloadObject).spec?.template?.metadata?.annotations;
  const metric = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels.name === 'app')?.value;
  return { cluster, handoff, order, workload, rolledOut, template, metric, setNow: (t: Date) => (now = t), key: { namespace: NS, name: 'app' } };
}

describe('the consumer handoff', () => {
  it('rolls the opted-in Deployment, StatefulSet and DaemonSet of the namespace to the delivered generation, and nothing else', async () => {
    const w = world();
    w.order({ credentialGeneration: 2, secretName: SECRET });
    w.workload('Deployment', 'api', { optIn: SECRET, template: 'app-credentials=1,db-credentials=4' });
    w.workload('StatefulSet', 'db', { optIn: `other-credentials, ${SECRET}` });
    w.workload('DaemonSet', 'agent', { optIn: SECRET });
    w.workload('Deployment', 'plain');
    w.workload('Deployment', 'other-secret', { optIn: 'db-credentials' });
    w.workload('Deployment', 'elsewhere', { namespace: 'team-b', optIn: SECRET });
    w.cluster.writes.length = 0;

    expect(await w.handoff.reconcile(w.key)).toMatchObject({ rolled: 3, warned: 0 });
    expect(w.template('Deployment', 'api')).toEqual({ keep: 'me', [TEMPLATE_GENERATIONS]: 'app-credentials=2,db-credentials=4' });
    expect(w.template('StatefulSet', 'db')).toEqual({ keep: 'me', [TEMPLATE_GENERATIONS]: 'app-credentials=2' });
    expect(w.template('DaemonSet', 'agent')).toEqual({ keep: 'me', [TEMPLATE_GENERATIONS]: 'app-credentials=2' });
    for (const [kind, name, ns] of [['Deployment', 'plain', NS], ['Deployment', 'other-secret', NS], ['Deployment', 'elsewhere', 'team-b']] as const) {
      expect(w.template(kind, name, ns)).toEqual({ keep: 'me' });
    }
    // The roll is a template change: the workload's generation moves, so its controller rolls it.
    expect((w.cluster.get(WorkloadKinds.Deployment, NS, 'api') as WorkloadObject).metadata.generation).toBe(2);
    expect(w.cluster.writes.filter((x) => x.verb === 'apply').map((x) => `${x.kind} ${x.key}`)).toEqual([`Deployment ${NS}/api`, `StatefulSet ${NS}/db`, `DaemonSet ${NS}/agent`]);
    expect(w.cluster.events.map((e) => [e.type, e.reason, e.regarding.name, e.note])).toEqual([
      ['Normal', HandoffReason.Rolled, 'app', `rolled Deployment api from generation 1 to generation 2 of Secret ${SECRET} (pod-template annotation ${TEMPLATE_GENERATIONS})`],
      ['Normal', HandoffReason.Rolled, 'app', `rolled StatefulSet db to generation 2 of Secret ${SECRET} (pod-template annotation ${TEMPLATE_GENERATIONS})`],
      ['Normal', HandoffReason.Rolled, 'app', `rolled DaemonSet agent to generation 2 of Secret ${SECRET} (pod-template annotation ${TEMPLATE_GENERATIONS})`],
    ]);
    expect(await w.metric('keystone_appcred_handoff_rolls_total')).toBe(3);
    expect(await w.metric('keystone_appcred_handoff_rollouts_pending')).toBe(3);

    // A second pass writes nothing: the templates record generation 2.
    w.cluster.writes.length = 0;
    expect(await w.handoff.reconcile(w.key)).toMatchObject({ rolled: 0 });
    expect(w.cluster.writes).toEqual([]);
  });

  it('rolls nothing while the delivered Secret does not carry the current generation', async () => {
    const w = world();
    w.order({ credentialGeneration: 2 }); // switched in the status, the Secret not yet rewritten (e.g. BackupNotSynced)
    w.workload('Deployment', 'api', { optIn: SECRET, template: 'app-credentials=1' });
    w.cluster.writes.length = 0;
    expect(await w.handoff.reconcile(w.key)).toMatchObject({ rolled: 0 });
    expect(w.cluster.writes).toEqual([]);
    expect(w.template('Deployment', 'api')).toEqual({ keep: 'me', [TEMPLATE_GENERATIONS]: 'app-credentials=1' });
  });

  it('retries a roll that met a newer workload: the others are rolled, the pass fails, the next one rolls it', async () => {
    const w = world();
    w.order({ credentialGeneration: 3, secretName: SECRET });
    w.workload('Deployment', 'a', { optIn: SECRET });
    w.workload('Deployment', 'b', { optIn: SECRET });
    w.cluster.failNext('apply', new KubeApiError(409, 'Conflict', 'the object has been modified', 'PATCH'));
    await expect(w.handoff.reconcile(w.key)).rejects.toThrow('the object has been modified');
    expect(w.template('Deployment', 'a')).toEqual({ keep: 'me' });
    expect(w.template('Deployment', 'b')).toEqual({ keep: 'me', [TEMPLATE_GENERATIONS]: 'app-credentials=3' });
    expect(await w.handoff.reconcile(w.key)).toMatchObject({ rolled: 1 });
    expect(w.template('Deployment', 'a')).toEqual({ keep: 'me', [TEMPLATE_GENERATIONS]: 'app-credentials=3' });
  });

  it('guards a roll by the resourceVersion it observed: a workload changed since is not overwritten', async () => {
    const w = world();
    const stale = w.workload('Deployment', 'a', { optIn: SECRET });
    w.workload('Deployment', 'a', { optIn: SECRET, template: 'db-credentials=9' });
    const port = new ClusterWorkloads(w.cluster);
    await expect(port.roll({ kind: 'Deployment', namespace: NS, name: 'a', resourceVersion: stale.metadata.resourceVersion as string }, 'app-credentials=1')).rejects.toThrow('has been modified');
    expect(w.template('Deployment', 'a')).toEqual({ keep: 'me', [TEMPLATE_GENERATIONS]: 'db-credentials=9' });
  });

  it('does not send a roll again while its cache still shows the workload as it was before the roll', async () => {
    const w = world();
    w.order({ credentialGeneration: 2, secretName: SECRET });
    w.workload('Deployment', 'api', { optIn: SECRET, template: 'app-credentials=1' });
    const live = new ClusterWorkloads(w.cluster);
    const stale = await live.consumers(NS, SECRET); // the cache as it was before the roll
    const rolls: string[] = [];
    const lagging = new HandoffReconciler({
      reads: w.cluster,
      workloads: { consumers: async () => (rolls.length === 0 ? live.consumers(NS, SECRET) : stale), roll: async (ref, value) => (rolls.push(value), live.roll(ref, value)) },
      event: async () => undefined,
      clock: () => T0,
    });
    expect(await lagging.reconcile(w.key)).toMatchObject({ rolled: 1 });
    expect(await lagging.reconcile(w.key)).toMatchObject({ rolled: 0 });
    expect(rolls).toEqual(['app-credentials=2']);
  });

  it('warns once about a rollout that has not finished halfway through the grace period, and wakes up for it', async () => {
    const w = world();
    const deleteAt = new Date(T0.getTime() + 20 * 60_000);
    w.order({ credentialGeneration: 2, secretName: SECRET, previousCredentialGeneration: 1, previousCredentialDeleteAt: deleteAt.toISOString() });
    w.workload('Deployment', 'api', { optIn: SECRET, template: 'app-credentials=1' });
    w.workload('Deployment', 'stuck', { optIn: SECRET, template: 'app-credentials=1', paused: true });

    const first = await w.handoff.reconcile(w.key);
    expect(first).toMatchObject({ rolled: 2, warned: 0, requeueAfterMs: 10 * 60_000 });
    w.rolledOut('Deployment', 'api');
    expect(await w.handoff.reconcile(w.key)).toMatchObject({ rolled: 0, warned: 0, requeueAfterMs: 10 * 60_000 });
    expect(await w.metric('keystone_appcred_handoff_rollouts_pending')).toBe(1);
    expect(await w.metric('keystone_appcred_handoff_rollouts_overdue')).toBe(0);

    w.setNow(new Date(T0.getTime() + 10 * 60_000));
    expect(await w.handoff.reconcile(w.key)).toMatchObject({ rolled: 0, warned: 1 });
    const warnings = w.cluster.events.filter((e) => e.type === 'Warning');
    expect(warnings.map((e) => [e.reason, e.note])).toEqual([
      [HandoffReason.Overdue, `Deployment stuck has not finished its rollout to generation 2: its rollout is paused (spec.paused); generation 1 is deleted in Keystone at ${deleteAt.toISOString()}`],
    ]);
    expect(await w.metric('keystone_appcred_handoff_rollouts_overdue')).toBe(1);
    // Once per workload and generation.
    expect(await w.handoff.reconcile(w.key)).toMatchObject({ warned: 0 });
    expect(w.cluster.events.filter((e) => e.type === 'Warning')).toHaveLength(1);

    // The next switch starts afresh: rolled again, warned again when overdue.
    w.order({ credentialGeneration: 3, secretName: SECRET, previousCredentialGeneration: 2, previousCredentialDeleteAt: new Date(T0.getTime() + 15 * 60_000).toISOString() });
    expect(await w.handoff.reconcile(w.key)).toMatchObject({ rolled: 2, warned: 2 });
    expect(w.cluster.events.filter((e) => e.type === 'Warning')).toHaveLength(3);
  });

  it('drops an order\'s gauges when it delivers nothing any more or is gone', async () => {
    const w = world();
    w.order({ credentialGeneration: 2, secretName: SECRET });
    w.workload('Deployment', 'api', { optIn: SECRET });
    await w.handoff.reconcile(w.key);
    expect(await w.metric('keystone_appcred_handoff_rollouts_pending')).toBe(1);
    w.cluster.drop(Kinds.KeystoneApplicationCredential, NS, 'app');
    expect(await w.handoff.reconcile(w.key)).toEqual({ rolled: 0, warned: 0 });
    expect(await w.metric('keystone_appcred_handoff_rollouts_pending')).toBeUndefined();
  });

  it('maps a workload\'s change to the orders in its namespace whose Secret it names, by its metadata only', () => {
    const w = world();
    w.order({});
    const api = w.workload('Deployment', 'api', { optIn: `${SECRET},db-credentials,not-an-order` });
    expect(ordersConsumedBy(api, w.cluster)).toEqual([`${NS}/app`]);
    expect(consumerIndex(api)).toEqual([`${NS}/${SECRET}`, `${NS}/db-credentials`, `${NS}/not-an-order`]);
    const elsewhere = w.workload('Deployment', 'x', { namespace: 'team-b', optIn: SECRET });
    expect(ordersConsumedBy(elsewhere, w.cluster)).toEqual([]);
    expect(ordersConsumedBy(w.workload('Deployment', 'plain'), w.cluster)).toEqual([]);
  });
});

describe('the handoff on a running manager (in-memory API server)', () => {
  const ORDERS = '/apis/c5c3.io/v1alpha1/keystoneapplicationcredentials';
  const DEPLOYMENTS = '/apis/apps/v1/deployments';
  const running: Manager[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((m) => m.shutdown()));
  });

  const orderObject = (status: KeystoneApplicationCredentialStatus) => ({
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneApplicationCredential',
    metadata: { name: 'app', namespace: NS },
    spec: { controlPlaneRef: { name: 'cp', namespace: 'cp' }, userRef: { name: 'svc' }, projectRef: { name: 'proj' } },
    status,
  });
  const deployment = (name: string, annotations: Record<string, string> = {}) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: NS, annotations }, spec: { replicas: 1, template: { metadata: {} } } });
  /** A manager with the handoff on `server`, once it rolled the Deployment `api` to generation 1. */
  const startHandoff = async (server: FakeApiServer) => {
    const manager = new Manager(new KubeApi(server, 'kac-test'), { identity: 'a', namespace: 'ops', leaseName: 'leader', leaderElect: false, metrics: new OperatorMetrics({ defaultMetrics: false }) });
    registerHandoff(manager);
    manager.start();
    running.push(manager);
    const template = (name: string) => (server.object(DEPLOYMENTS, NS, name) as unknown as { spec: { template: { metadata: { annotations?: Record<string, string> } } } }).spec.template.metadata.annotations;
    await until(() => template('api')?.[TEMPLATE_GENERATIONS] === 'app-credentials=1');
    return { manager, template };
  };

  it('rolls at start-up what a switch left unrolled, and on the next switch; an opt-in added later is rolled then', async () => {
    const server = new FakeApiServer();
    server.seed(ORDERS, orderObject({ credentialGeneration: 1, secretName: SECRET }));
    server.seed(DEPLOYMENTS, deployment('api', { [OPT_IN]: SECRET }));
    server.seed(DEPLOYMENTS, deployment('plain'));
    const { manager, template } = await startHandoff(server);

    server.seed(ORDERS, orderObject({ credentialGeneration: 2, secretName: SECRET }));
    await until(() => template('api')?.[TEMPLATE_GENERATIONS] === 'app-credentials=2');
    server.seed(DEPLOYMENTS, { ...deployment('plain', { [OPT_IN]: SECRET }) });
    await until(() => template('plain')?.[TEMPLATE_GENERATIONS] === 'app-credentials=2');
    expect(manager.unsynced()).toEqual([]);
  });

  it('caches every workload as metadata only, and reads an opted-in one whole by name, again only after it changed', async () => {
    const server = new FakeApiServer();
    server.seed(ORDERS, orderObject({ credentialGeneration: 1, secretName: SECRET }));
    server.seed(DEPLOYMENTS, { ...deployment('api', { [OPT_IN]: SECRET, 'example.com/owner': 'team-a' }), metadata: { name: 'api', namespace: NS, labels: { app: 'api' }, annotations: { [OPT_IN]: SECRET, 'example.com/owner': 'team-a' } } });
    server.seed(DEPLOYMENTS, { ...deployment('plain'), spec: { replicas: 1, template: { metadata: {}, spec: { containers: [{ name: 'c', image: 'big', env: [{ name: 'X', value: 'y'.repeat(10_000) }] }] } } } });
    const { manager, template } = await startHandoff(server);

    // Every list and watch of the workload kinds asked for the metadata view; the cache holds no spec, no status.
    const workloadReads = server.requests.filter((r) => r.method === 'GET' && /\/apis\/apps\/v1\/(deployments|statefulsets|daemonsets)$/.test(r.path));
    expect(workloadReads.length).toBeGreaterThanOrEqual(6);
    expect(workloadReads.every((r) => r.accept === METADATA_ACCEPT.list || (r.watch === true && r.accept === METADATA_ACCEPT.object))).toBe(true);
    expect(manager.storeOf(WorkloadKinds.Deployment)).toBeUndefined();
    const cached = manager.storeOf(WorkloadMetadataKinds.Deployment)?.list() ?? [];
    expect(cached.map((o) => o.metadata.name)).toEqual(['api', 'plain']);
    expect(cached.every((o) => o.kind === 'PartialObjectMetadata' && !('spec' in o) && !('status' in o))).toBe(true);
    // Of the metadata, what the index and the copies' freshness check read: the opt-in annotation alone, no labels.
    expect(cached[0].metadata.annotations).toEqual({ [OPT_IN]: SECRET });
    expect(cached[0].metadata.labels).toBeUndefined();
    expect(cached[0].metadata.resourceVersion).toBeDefined();

    // The opted-in one was read whole by name; the other never.
    const gets = (name: string) => server.requests.filter((r) => r.method === 'GET' && r.path === `/apis/apps/v1/namespaces/${NS}/deployments/${name}` && r.accept !== METADATA_ACCEPT.object).length;
    expect(gets('plain')).toBe(0);
    const first = gets('api');
    expect(first).toBeGreaterThanOrEqual(1);

    // Passes over an unchanged workload read nothing more; a change of it (here the next switch) is read once more.
    const port = new ClusterWorkloads(manager.cluster);
    await port.consumers(NS, SECRET);
    const readsBefore = gets('api');
    await port.consumers(NS, SECRET);
    await port.consumers(NS, SECRET);
    expect(gets('api')).toBe(readsBefore);
    expect(port.copiesKept).toBe(1);
    server.seed(ORDERS, orderObject({ credentialGeneration: 2, secretName: SECRET }));
    await until(() => template('api')?.[TEMPLATE_GENERATIONS] === 'app-credentials=2');
    expect(gets('api')).toBeGreaterThan(first);
    expect(gets('plain')).toBe(0);
  });

  it('with the handoff off, finds the opted-in workloads at start-up, or says it cannot list them', async () => {
    const server = new FakeApiServer();
    server.seed(DEPLOYMENTS, deployment('api', { [OPT_IN]: SECRET }));
    server.seed(DEPLOYMENTS, deployment('plain'));
    server.seed('/apis/apps/v1/statefulsets', { ...deployment('db', { [OPT_IN]: SECRET }), kind: 'StatefulSet' });
    const api = new KubeApi(server, 'kac-test');
    expect(await optedInWorkloads(api)).toEqual([`Deployment ${NS}/api`, `StatefulSet ${NS}/db`]);
    const lines: string[] = [];
    const logger = jsonLogger({ level: 'debug', write: (line) => lines.push(line) });
    await reportHandoffOff(api, logger);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'warn', msg: expect.stringContaining('consumer handoff is off'), annotation: OPT_IN, workloads: 2, first: `Deployment ${NS}/api, StatefulSet ${NS}/db` });

    server.failNext((r) => r.path.endsWith('/deployments'), 403, 'Forbidden');
    expect(await optedInWorkloads(api)).toBeUndefined();
    server.failNext((r) => r.path.endsWith('/deployments'), 403, 'Forbidden');
    lines.length = 0;
    await reportHandoffOff(api, logger);
    expect(lines.map((l) => JSON.parse(l).level)).toEqual(['debug']);

    // Page by page: the scan never holds the cluster's workloads at once.
    const many = new FakeApiServer();
    for (let i = 0; i < 1_200; i++) many.seed(DEPLOYMENTS, deployment(`w${String(i).padStart(4, '0')}`, i % 400 === 7 ? { [OPT_IN]: SECRET } : {}));
    expect(await optedInWorkloads(new KubeApi(many, 'kac-test'))).toEqual([`Deployment ${NS}/w0007`, `Deployment ${NS}/w0407`, `Deployment ${NS}/w0807`]);
    const deploymentPages = many.requests.filter((r) => r.path === DEPLOYMENTS);
    expect(deploymentPages).toHaveLength(3);
    expect(deploymentPages.every((r) => r.query?.limit === 500 && r.accept === METADATA_ACCEPT.list)).toBe(true);

    const quiet = new FakeApiServer();
    lines.length = 0;
    await reportHandoffOff(new KubeApi(quiet, 'kac-test'), logger);
    expect(lines).toEqual([]);
  });
});
