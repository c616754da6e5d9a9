/**
 * Kinds cached per namespace (src/operator/runtime/namespaces.ts and `Manager.cacheByNamespace`), over the fake API
 * server with an RBAC-like authorizer: a namespace fills (pending → synced) with its probe first; a refused one (403)
 * drops its caches, is probed again with backoff (one request per attempt, counted) and fills without a restart once
 * allowed; a namespace no longer wanted is dropped; reads see every namespace's objects as one store; the wanted set
 * follows the objects it depends on; a target cluster gets per-namespace caches of its own.
 */
import { KubeApi } from '../../../../src/kube/api';
import { Kinds } from '../../../../src/kube/kinds';
import { metadataOf, type KubeObject } from '../../../../src/kube/object';
import { Manager } from '../../../../src/operator/runtime/manager';
import { OperatorMetrics } from '../../../../src/operator/runtime/metrics';
import { listWatchOf } from '../../../../src/operator/runtime/informer';
import { NamespaceCaches, type NamespaceAccess, type NamespaceShare } from '../../../../src/operator/runtime/namespaces';
import { FakeApiServer } from '../../kube/fake-api-server';
import { until } from './until';

const SECRETS = '/api/v1/secrets';
const CPS = '/apis/c5c3.io/v1alpha1/controlplanes';
const secret = (namespace: string, name: string, labels: Record<string, string> = {}) => ({ metadata: { name, namespace, labels }, data: { v: 'eA==' } });
const SHARES: NamespaceShare[] = [{ kind: metadataOf(Kinds.Secret), labelSelector: '!own' }, { kind: Kinds.Secret, labelSelector: 'own' }];
/** The list and watch requests of Secrets in a namespace (what a refused namespace costs). */
const secretRequests = (server: FakeApiServer, namespace: string) => server.requests.filter((r) => r.path === `/api/v1/namespaces/${namespace}/secrets`);

describe('NamespaceCaches', () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((s) => s()));
  });

  function caches(server: FakeApiServer, options: { random?: () => number } = {}) {
    const api = new KubeApi(server, 't');
    const changes: string[] = [];
    const heard: string[] = [];
    const nc = new NamespaceCaches({
      listWatch: (kind, selection) => listWatchOf(api, kind, selection),
      handlerFor: () => ({ added: (o: KubeObject) => void heard.push(`${o.metadata.namespace}/${o.metadata.name}`) }),
      onAccess: (namespace, access: NamespaceAccess) => void changes.push(`${namespace} ${access.state}`),
      deniedBackoff: { baseMs: 20, maxMs: 80 },
      random: options.random ?? (() => 0),
    });
    stops.push(() => nc.stop());
    return { nc, changes, heard };
  }

  it('fills a granted namespace (probe first, then the other shares) and reads its objects as one store', async () => {
    const server = new FakeApiServer();
    server.seed(SECRETS, secret('a', 'mine', { own: 'x' }));
    server.seed(SECRETS, secret('a', 'foreign'));
    server.seed(SECRETS, secret('elsewhere', 'never'));
    const { nc, changes, heard } = caches(server);
    nc.set(new Map([['a', SHARES]]));
    expect(nc.access('a')).toEqual({ state: 'pending' });
    await until(() => nc.access('a').state === 'synced', 3000, 'a synced');
    expect(changes).toEqual(['a pending', 'a synced']);
    // The probe listed first; the whole share only after it.
    const lists = secretRequests(server, 'a').filter((r) => !('watch' in r));
    expect(lists.map((r) => r.query?.labelSelector)).toEqual(['!own', 'own']);
    expect(nc.partsOf(Kinds.Secret, 'a').flatMap((s) => s.keys())).toEqual(['a/mine']);
    expect(nc.partsOf(metadataOf(Kinds.Secret), 'a').flatMap((s) => s.keys())).toEqual(['a/foreign']);
    expect(nc.partsOf(Kinds.Secret, 'elsewhere')).toEqual([]);
    expect(heard.sort()).toEqual(['a/foreign', 'a/mine']);
    expect(server.requests.some((r) => r.path === '/api/v1/secrets')).toBe(false);
  });

  it('a refused namespace: caches dropped, probed again with backoff (one request per attempt), filled without a restart once allowed', async () => {
    const server = new FakeApiServer();
    server.seed(SECRETS, secret('b', 'delivered', { own: 'x' }));
    let granted = false;
    server.authorize = (r) => r.namespace !== 'b' || granted;
    const { nc, changes } = caches(server);
    nc.set(new Map([['b', SHARES]]));
    await until(() => nc.access('b').state === 'denied', 3000, 'b refused');
    expect(nc.access('b')).toMatchObject({ state: 'denied', error: expect.stringContaining('secrets is forbidden: User "system:serviceaccount:ops:operator" cannot list resource "secrets"') });
    expect(nc.partsOf(Kinds.Secret, 'b')).toEqual([]);
    // Probes go on (20, 40, 80, 80 ms ...), each a single list of the probe share: no other share is tried.
    await until(() => secretRequests(server, 'b').length >= 5, 3000, 'five probes');
    expect(secretRequests(server, 'b').every((r) => r.query?.labelSelector === '!own')).toBe(true);
    // A repeated refusal is no change: one `denied` for all of them.
    expect(changes).toEqual(['b pending', 'b denied']);

    granted = true;
    await until(() => nc.access('b').state === 'synced', 3000, 'b filled once granted');
    expect(changes).toEqual(['b pending', 'b denied', 'b synced']);
    expect(nc.partsOf(Kinds.Secret, 'b').flatMap((s) => s.keys())).toEqual(['b/delivered']);
  });

  it('the backoff of a refused namespace doubles to its bound: requests in a window stay few', async () => {
    const server = new FakeApiServer();
    server.authorize = (r) => r.namespace !== 'c';
    const { nc } = caches(server);
    nc.set(new Map([['c', SHARES]]));
    await new Promise((r) => setTimeout(r, 1000));
    // 20, 40, 80 then every 80 ms: about 14 in a second, never one per millisecond.
    const n = secretRequests(server, 'c').length;
    expect(n).toBeGreaterThan(5);
    expect(n).toBeLessThan(20);
  });

  it('a refusal of a watch (the Role removed while watching) drops the caches too', async () => {
    const server = new FakeApiServer();
    server.seed(SECRETS, secret('d', 'delivered', { own: 'x' }));
    let granted = true;
    server.authorize = (r) => r.namespace !== 'd' || granted;
    const { nc, changes } = caches(server);
    nc.set(new Map([['d', SHARES]]));
    await until(() => nc.access('d').state === 'synced', 3000, 'd synced');
    granted = false;
    server.closeWatches(); // the watches end; renewing them is refused
    await until(() => nc.access('d').state === 'denied', 3000, 'd refused');
    expect(nc.partsOf(Kinds.Secret, 'd')).toEqual([]);
    expect(changes).toEqual(['d pending', 'd synced', 'd denied']);
  });

  it('drops a namespace no longer wanted, and starts again one whose shares changed', async () => {
    const server = new FakeApiServer();
    server.seed(SECRETS, secret('e', 'x', { own: 'y' }));
    const { nc, changes } = caches(server);
    nc.set(new Map([['e', SHARES]]));
    await until(() => nc.access('e').state === 'synced');
    nc.set(new Map([['e', SHARES]])); // the same: nothing happens
    expect(changes).toEqual(['e pending', 'e synced']);
    nc.set(new Map([['e', [{ kind: metadataOf(Kinds.Secret), fieldSelector: 'metadata.name=x' }]]]));
    expect(nc.access('e').state).toBe('pending');
    await until(() => nc.access('e').state === 'synced');
    expect(nc.partsOf(metadataOf(Kinds.Secret), 'e').flatMap((s) => s.keys())).toEqual(['e/x']);
    nc.set(new Map());
    expect(nc.access('e')).toEqual({ state: 'unwatched' });
    expect(nc.partsOf(metadataOf(Kinds.Secret))).toEqual([]);
    expect(changes.slice(-1)).toEqual(['e unwatched']);
    expect(server.openWatches).toBe(0);
  });
});

describe('Manager.cacheByNamespace', () => {
  const running: Manager[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((m) => m.shutdown()));
  });

  const cp = (namespace: string, assigned: string[]) => ({ apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name: 'cp', namespace }, spec: { namespaceAssignments: assigned.map((n) => ({ namespace: n })) } });

  it('follows the objects it depends on, never lists cluster-wide, and reads the namespaces as one store', async () => {
    const server = new FakeApiServer();
    server.seed(SECRETS, secret('openstack', 'admin'));
    server.seed(SECRETS, secret('tenant-a', 'app-credentials', { own: 'x' }));
    server.seed(SECRETS, secret('kube-system', 'token'));
    server.seed(CPS, cp('openstack', ['tenant-a']));
    const manager = new Manager(new KubeApi(server, 't'), { identity: 'a', namespace: 'ops', leaseName: 'l', leaderElect: false, metrics: new OperatorMetrics({ defaultMetrics: false }) });
    running.push(manager);
    const access: string[] = [];
    const reconciled: string[] = [];
    manager.cacheByNamespace({
      kinds: [Kinds.Secret, metadataOf(Kinds.Secret)],
      dependsOn: [Kinds.ControlPlane],
      wanted: () => {
        const wanted = new Map<string, NamespaceShare[]>();
        for (const c of manager.cluster.list(Kinds.ControlPlane) as { metadata: { namespace?: string }; spec: { namespaceAssignments?: { namespace: string }[] } }[]) {
          for (const ns of [c.metadata.namespace ?? '', ...(c.spec.namespaceAssignments ?? []).map((a) => a.namespace)]) wanted.set(ns, SHARES);
        }
        return wanted;
      },
      onAccess: (cluster, namespace, a) => void access.push(`${cluster}|${namespace} ${a.state}`),
    });
    manager.controller({
      kind: Kinds.ControlPlane,
      reconcile: async (r) => void reconciled.push(r.key),
      watches: [{ kind: Kinds.Secret, map: (o: KubeObject) => [`${o.metadata.namespace}/cp`] }],
    });
    manager.start();
    await manager.waitForCacheSync();
    await until(() => manager.namespaceAccess('', 'tenant-a')?.state === 'synced' && manager.namespaceAccess('', 'openstack')?.state === 'synced', 3000, 'both namespaces');
    expect(manager.cachedNamespaces()).toEqual(['openstack', 'tenant-a']);
    expect(manager.cluster.get(Kinds.Secret, 'tenant-a', 'app-credentials')).toBeDefined();
    expect(manager.cluster.get(metadataOf(Kinds.Secret), 'openstack', 'admin')).toBeDefined();
    expect(manager.cluster.list(metadataOf(Kinds.Secret)).map((s) => s.metadata.name)).toEqual(['admin']);
    expect(manager.cluster.get(metadataOf(Kinds.Secret), 'kube-system', 'token')).toBeUndefined();
    // Nothing was ever listed or watched across the cluster, nor in a namespace nobody names.
    expect(server.requests.filter((r) => r.path === '/api/v1/secrets' || r.path.includes('/namespaces/kube-system/'))).toEqual([]);
    // The Secret events reach the watches (the mapper ran for the delivered Secret).
    await until(() => reconciled.includes('tenant-a/cp'), 3000, 'the mapped Secret event');

    // A new assignment: its namespace fills; one removed: dropped, reads no longer see it.
    server.seed(SECRETS, secret('tenant-b', 'b-credentials', { own: 'x' }));
    server.seed(CPS, cp('openstack', ['tenant-b']));
    await until(() => manager.namespaceAccess('', 'tenant-b')?.state === 'synced', 3000, 'tenant-b');
    expect(manager.namespaceAccess('', 'tenant-a')).toEqual({ state: 'unwatched' });
    expect(manager.cluster.get(Kinds.Secret, 'tenant-a', 'app-credentials')).toBeUndefined();
    expect(manager.cluster.get(Kinds.Secret, 'tenant-b', 'b-credentials')).toBeDefined();
    // Each namespace's own history, in order.
    const of = (namespace: string) => access.filter((l) => l.startsWith(`|${namespace} `)).map((l) => l.split(' ')[1]);
    expect(of('openstack')).toEqual(['pending', 'synced']);
    expect(of('tenant-a')).toEqual(['pending', 'synced', 'unwatched']);
    expect(of('tenant-b')).toEqual(['pending', 'synced']);
    // Readiness is the cluster-wide caches' alone: a namespace that is refused never makes the process unready.
    expect(manager.unsynced()).toEqual([]);
  });

  it('a target cluster gets per-namespace caches of its own, from what the management cluster wants for it', async () => {
    const management = new FakeApiServer();
    const target = new FakeApiServer();
    target.seed(SECRETS, secret('tenant-t', 'delivered', { own: 'x' }));
    target.authorize = (r) => r.plural !== 'secrets' || r.namespace !== undefined;
    const manager = new Manager(new KubeApi(management, 't'), { identity: 'a', namespace: 'ops', leaseName: 'l', leaderElect: false, metrics: new OperatorMetrics({ defaultMetrics: false }) });
    running.push(manager);
    manager.cacheByNamespace({
      kinds: [Kinds.Secret, metadataOf(Kinds.Secret)],
      clusters: 'all',
      dependsOn: [Kinds.ControlPlane],
      wanted: (cluster) => new Map(cluster === 'edge' ? [['tenant-t', SHARES]] : []),
    });
    manager.controller({ kind: Kinds.KeystoneUser, clusters: 'all', reconcile: async () => undefined, watches: [{ kind: Kinds.Secret, clusters: 'all', map: () => [] }] });
    manager.start();
    await manager.waitForCacheSync();
    await manager.engage('edge', new KubeApi(target, 't'));
    await until(() => manager.namespaceAccess('edge', 'tenant-t')?.state === 'synced', 3000, 'the target namespace');
    expect(manager.clusterNamed('edge')?.get(Kinds.Secret, 'tenant-t', 'delivered')).toBeDefined();
    expect(manager.cachedNamespaces('edge')).toEqual(['tenant-t']);
    expect(management.requests.filter((r) => r.path.includes('/secrets'))).toEqual([]);
    await manager.disengage('edge');
    expect(manager.namespaceAccess('edge', 'tenant-t')).toEqual({ state: 'unwatched' });
  });
});
