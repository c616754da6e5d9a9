/**
 * The runtime with registered target clusters, over fake API servers: a target cluster engaged with the manager gets
 * its own informers and writes, its objects are reconciled with the cluster in the request once its caches synced, a
 * mapper reaches across clusters, an API server that stops answering is reported and, when it answers again, all its
 * objects are reconciled (the operator's controllers skip a cluster reported down), disengaging stops everything of it; and the kubeconfig provider that
 * engages clusters from the labelled Secrets (register, reconnect on a changed kubeconfig, an unusable one reported on the
 * Secret, deregister).
 */
import type { KeystoneUser } from '../../../../src/api/identity-plane';
import { KubeApi } from '../../../../src/kube/api';
import { Kinds, MetadataKinds } from '../../../../src/kube/kinds';
import type { Transport } from '../../../../src/kube/transport';
import { clusterKey, parseClusterKey } from '../../../../src/operator/runtime/clusters';
import { KubeconfigProvider } from '../../../../src/operator/runtime/kubeconfig-provider';
import { Manager } from '../../../../src/operator/runtime/manager';
import { byOwner } from '../../../../src/operator/runtime/mapper';
import { OperatorMetrics } from '../../../../src/operator/runtime/metrics';
import { cacheByLabels } from '../../../../src/operator/runtime/partition';
import { FakeApiServer } from '../../kube/fake-api-server';
import { Switchable } from './switchable';
import { until } from './until';

const USERS = '/apis/c5c3.io/v1alpha1/keystoneusers';
const CP = '/apis/c5c3.io/v1alpha1/controlplanes';
const SECRETS = '/api/v1/secrets';
const user = (name: string, namespace = 'tenant-a') => ({ apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', metadata: { name, namespace }, spec: { controlPlaneRef: { name: 'cp', namespace: 'openstack' } } });

const running: Manager[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.shutdown()));
});

/** A manager reconciling KeystoneUsers on every cluster: each pass stamps the user's status with the cluster it ran for. */
function fleetManager(management: FakeApiServer) {
  const reconciled: string[] = [];
  const manager = new Manager(new KubeApi(management, 'kac-test'), {
    identity: 'a', namespace: 'ops', leaseName: 'leader', leaderElect: false, metrics: new OperatorMetrics({ defaultMetrics: false }),
  });
  manager.cache(Kinds.Secret, { clusters: 'all' });
  manager.controller({
    kind: Kinds.KeystoneUser,
    clusters: 'all',
    watches: [
      { kind: Kinds.Secret, clusters: 'all', map: byOwner(Kinds.KeystoneUser) },
      // A ControlPlane (management only) requeues the users of every cluster.
      {
        kind: Kinds.ControlPlane,
        map: (_cp, reads, context) => [
          ...reads.list(Kinds.KeystoneUser).map((u) => `${u.metadata.namespace}/${u.metadata.name}`),
          ...(context?.fleet.targets() ?? []).flatMap((t) => (context?.fleet.readsOf(t)?.list(Kinds.KeystoneUser) ?? []).map((u) => ({ cluster: t, key: `${u.metadata.namespace}/${u.metadata.name}` }))),
        ],
      },
    ],
    reconcile: async ({ cluster, namespace, name }) => {
      reconciled.push(clusterKey(cluster, `${namespace}/${name}`));
      const there = manager.clusterNamed(cluster);
      const object = there?.get(Kinds.KeystoneUser, namespace, name);
      if (!there || !object || object.status?.userID === `on ${cluster || 'management'}`) return;
      await there.patchStatus(Kinds.KeystoneUser, object, { userID: `on ${cluster || 'management'}` } as KeystoneUser['status'] & object);
    },
  });
  manager.start();
  running.push(manager);
  return { manager, reconciled };
}

describe('target clusters in the manager', () => {
  it('reconciles a target cluster\'s objects with the cluster in the request once its caches synced, and writes there', async () => {
    const management = new FakeApiServer();
    management.seed(USERS, user('alice'));
    const target = new FakeApiServer();
    target.seed(USERS, user('alice'));
    target.seed(USERS, user('bob'));
    const { manager, reconciled } = fleetManager(management);
    await until(() => reconciled.includes('tenant-a/alice'));
    const healths: boolean[] = [];
    await manager.engage('edge-1', new KubeApi(target, 'kac-test'), { onHealth: (connected) => healths.push(connected) });
    await until(() => (target.object(USERS, 'tenant-a', 'bob')?.status as { userID?: string } | undefined)?.userID === 'on edge-1');
    expect((target.object(USERS, 'tenant-a', 'alice')?.status as { userID?: string }).userID).toBe('on edge-1');
    expect((management.object(USERS, 'tenant-a', 'alice')?.status as { userID?: string }).userID).toBe('on management');
    expect(reconciled).toEqual(expect.arrayContaining(['edge-1:tenant-a/alice', 'edge-1:tenant-a/bob']));
    expect(manager.targetClusters()).toEqual(['edge-1']);
    expect(manager.connected('edge-1')).toBe(true);
    expect(healths[0]).toBe(true);
    // Readiness is the management cluster's: a target cluster never holds it up.
    expect(manager.unsynced()).toEqual([]);
  });

  it('maps a target cluster\'s changes on that cluster, and a management change across clusters', async () => {
    const management = new FakeApiServer();
    const target = new FakeApiServer();
    const alice = target.seed(USERS, user('alice'));
    const { manager, reconciled } = fleetManager(management);
    await manager.engage('edge-1', new KubeApi(target, 'kac-test'));
    await until(() => reconciled.includes('edge-1:tenant-a/alice'));
    const before = reconciled.length;
    target.seed(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alice-credentials', namespace: 'tenant-a', ownerReferences: [{ apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', name: 'alice', uid: alice.metadata.uid, controller: true }] } });
    await until(() => reconciled.slice(before).includes('edge-1:tenant-a/alice'), 3000, 'the owner requeued by its Secret on the target cluster');
    expect(reconciled.slice(before)).not.toContain('tenant-a/alice');
    const again = reconciled.length;
    management.seed(CP, { apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name: 'cp', namespace: 'openstack' }, spec: {} });
    await until(() => reconciled.slice(again).includes('edge-1:tenant-a/alice'), 3000, 'the target cluster\'s user requeued by a ControlPlane');
  });

  it('an API server that stops answering is reported (connected false); when it answers again every object of it is reconciled', async () => {
    const management = new FakeApiServer();
    const target = new Switchable(new FakeApiServer());
    target.inner.seed(USERS, user('alice'));
    const { manager, reconciled } = fleetManager(management);
    const healths: [boolean, string | undefined][] = [];
    await manager.engage('edge-1', new KubeApi(target, 'kac-test'), { onHealth: (connected, error) => healths.push([connected, error]) });
    await until(() => reconciled.includes('edge-1:tenant-a/alice'));
    target.cut();
    await until(() => healths.some(([c]) => !c), 5000, 'the outage reported');
    expect(manager.connected('edge-1')).toBe(false);
    expect(healths.find(([c]) => !c)?.[1]).toMatch(/connection reset|ECONNREFUSED/);
    const before = reconciled.length;
    target.down = false;
    await until(() => manager.connected('edge-1'), 8000, 'the reconnect');
    await until(() => reconciled.slice(before).includes('edge-1:tenant-a/alice'), 3000, 'every object reconciled again');
    expect(healths.map(([c]) => c)).toEqual([true, false, true]);
  });

  it('a kind cached in partitions for every cluster is cached in the same partitions on a target cluster: labelled Secrets whole, the rest as metadata', async () => {
    const management = new FakeApiServer();
    const target = new FakeApiServer();
    target.seed(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'own', namespace: 'tenant-a', labels: { 'example.com/own': 'x' } }, data: { k: 'b3du' } });
    target.seed(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'foreign', namespace: 'tenant-a' }, data: { k: 'Zm9yZWlnbg==' } });
    const manager = new Manager(new KubeApi(management, 'kac-test'), { identity: 'a', namespace: 'ops', leaseName: 'leader', leaderElect: false, metrics: new OperatorMetrics({ defaultMetrics: false }) });
    running.push(manager);
    cacheByLabels(manager, Kinds.Secret, ['example.com/own'], { clusters: 'all' });
    manager.start();
    await manager.engage('edge-1', new KubeApi(target, 'kac-test'));
    const edge = manager.clusterNamed('edge-1');
    expect(edge?.get(Kinds.Secret, 'tenant-a', 'own')?.data).toEqual({ k: 'b3du' });
    expect(edge?.get(Kinds.Secret, 'tenant-a', 'foreign')).toBeUndefined();
    const foreign = edge?.get(MetadataKinds.Secret, 'tenant-a', 'foreign');
    expect(foreign?.metadata.name).toBe('foreign');
    expect((foreign as unknown as { data?: unknown }).data).toBeUndefined();
    expect(edge?.get(MetadataKinds.Secret, 'tenant-a', 'own')).toBeUndefined();
  });

  it('disengage stops the cluster\'s informers and drops its caches; a queued key of it finds no cluster', async () => {
    const management = new FakeApiServer();
    const target = new FakeApiServer();
    target.seed(USERS, user('alice'));
    const { manager, reconciled } = fleetManager(management);
    await manager.engage('edge-1', new KubeApi(target, 'kac-test'));
    await until(() => reconciled.includes('edge-1:tenant-a/alice'));
    expect(target.openWatches).toBeGreaterThan(0);
    await manager.disengage('edge-1');
    expect(target.openWatches).toBe(0);
    expect(manager.clusterNamed('edge-1')).toBeUndefined();
    expect(manager.targetClusters()).toEqual([]);
    expect(parseClusterKey('edge-1:tenant-a/alice')).toEqual({ cluster: 'edge-1', key: 'tenant-a/alice' });
    expect(parseClusterKey('tenant-a/alice')).toEqual({ cluster: '', key: 'tenant-a/alice' });
  });

  it('a second engage of the same name replaces the first (a changed kubeconfig reconnects)', async () => {
    const management = new FakeApiServer();
    const first = new FakeApiServer();
    const second = new FakeApiServer();
    first.seed(USERS, user('alice'));
    second.seed(USERS, user('carol'));
    const { manager, reconciled } = fleetManager(management);
    await manager.engage('edge-1', new KubeApi(first, 'kac-test'));
    await manager.engage('edge-1', new KubeApi(second, 'kac-test'));
    await until(() => reconciled.includes('edge-1:tenant-a/carol'));
    expect(first.openWatches).toBe(0);
    expect(manager.clusterNamed('edge-1')?.get(Kinds.KeystoneUser, 'tenant-a', 'alice')).toBeUndefined();
  });
});

describe('the kubeconfig provider', () => {
  const registration = (name: string, kubeconfig?: string, labels = { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' }) => ({
    apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'ops', labels },
    data: kubeconfig === undefined ? {} : { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
  });

  function provided(targets: Record<string, Transport>) {
    const management = new FakeApiServer();
    const { manager, reconciled } = fleetManager(management);
    const connects: string[] = [];
    const provider = new KubeconfigProvider(manager, new KubeApi(management, 'kac-test'), {
      namespace: 'ops',
      connect: (kubeconfig, source) => {
        connects.push(`${kubeconfig} from ${source}`);
        const transport = targets[kubeconfig];
        if (!transport) throw new Error('invalid kubeconfig: no current context');
        return new KubeApi(transport, 'kac-test');
      },
    });
    provider.start();
    const gauge = async (cluster: string) => (await manager.metrics.text()).split('\n').find((l) => l.startsWith(`keystone_appcred_target_cluster_connected{cluster="${cluster}"}`));
    const events = () => management.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/events')).map((r) => r.body as { reason: string; type: string; note: string; regarding: { name: string } });
    return { management, manager, reconciled, provider, connects, gauge, events, stop: () => provider.stop() };
  }

  it('a labelled Secret in the operator\'s namespace registers its cluster, named after the Secret; a changed kubeconfig reconnects; deleting it deregisters', async () => {
    const one = new FakeApiServer();
    one.seed(USERS, user('alice'));
    const two = new FakeApiServer();
    two.seed(USERS, user('carol'));
    const p = provided({ one, two });
    p.management.seed(SECRETS, registration('edge-1', 'one'));
    p.management.seed(SECRETS, registration('elsewhere', 'one', { other: 'x' } as never));
    await until(() => p.reconciled.includes('edge-1:tenant-a/alice'));
    expect(p.connects).toEqual(['one from the kubeconfig Secret ops/edge-1']);
    expect(p.provider.clusters).toEqual(['edge-1']);
    expect(await p.gauge('edge-1')).toBe('keystone_appcred_target_cluster_connected{cluster="edge-1"} 1');
    expect(p.events().map((e) => `${e.type} ${e.reason} ${e.regarding.name}`)).toEqual(['Normal ClusterConnected edge-1']);

    // A label change is no reconnect; a kubeconfig change is.
    p.management.seed(SECRETS, { ...registration('edge-1', 'one'), metadata: { ...registration('edge-1', 'one').metadata, annotations: { a: 'b' } } });
    p.management.seed(SECRETS, registration('edge-1', 'two'));
    await until(() => p.reconciled.includes('edge-1:tenant-a/carol'));
    expect(p.connects).toHaveLength(2);
    expect(one.openWatches).toBe(0);

    p.management.remove(SECRETS, 'ops', 'edge-1');
    await until(() => p.manager.targetClusters().length === 0);
    expect(two.openWatches).toBe(0);
    expect(await p.gauge('edge-1')).toBeUndefined();
    await p.stop();
  });

  it('a kubeconfig that does not parse, or no kubeconfig key: a Warning Event on the Secret and the gauge at 0; the other clusters carry on', async () => {
    const good = new FakeApiServer();
    good.seed(USERS, user('alice'));
    const p = provided({ good });
    p.management.seed(SECRETS, registration('broken', 'garbage'));
    p.management.seed(SECRETS, registration('empty'));
    p.management.seed(SECRETS, registration('fine', 'good'));
    await until(() => p.reconciled.includes('fine:tenant-a/alice'));
    await until(() => p.events().filter((e) => e.reason === 'KubeconfigInvalid').length === 2);
    const invalid = p.events().filter((e) => e.reason === 'KubeconfigInvalid');
    expect(invalid.map((e) => `${e.type} ${e.regarding.name}: ${e.note}`).sort()).toEqual([
      'Warning broken: the kubeconfig of Secret ops/broken cannot be used: invalid kubeconfig: no current context',
      'Warning empty: the kubeconfig of Secret ops/empty cannot be used: the Secret has no "kubeconfig" key',
    ]);
    expect(await p.gauge('broken')).toBe('keystone_appcred_target_cluster_connected{cluster="broken"} 0');
    expect(p.manager.targetClusters()).toEqual(['fine']);
    await p.stop();
  });

  it('an API server that cannot be reached: a Warning Event ClusterUnreachable, the gauge at 0, nothing of it reconciled', async () => {
    const down = new Switchable(new FakeApiServer());
    down.down = true;
    const p = provided({ down });
    p.management.seed(SECRETS, registration('edge-down', 'down'));
    await until(() => p.events().some((e) => e.reason === 'ClusterUnreachable'), 5000);
    expect(p.events().find((e) => e.reason === 'ClusterUnreachable')?.note).toContain('does not answer (connect ECONNREFUSED https://fake.invalid)');
    expect(await p.gauge('edge-down')).toBe('keystone_appcred_target_cluster_connected{cluster="edge-down"} 0');
    expect(p.manager.targetClusters()).toEqual([]);
    expect(p.reconciled.some((k) => k.startsWith('edge-down:'))).toBe(false);
    await p.stop();
  });
});

