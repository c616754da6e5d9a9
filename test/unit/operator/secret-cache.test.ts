/**
 * Which Secrets the operator reads whole (src/operator/secret-cache.ts) and how the port reads them
 * (src/operator/plane-cluster.ts), on the runtime's real caches over the fake API server: its own Secrets from the
 * whole cache, the Secrets a ControlPlane or an identity references read by name once per change, every other Secret
 * as metadata, its data never requested.
 */
import { KubeApi } from '../../../src/kube/api';
import { Kinds, MetadataKinds } from '../../../src/kube/kinds';
import { MemoryCluster } from '../../../src/kube/memory';
import { ReadThrough } from '../../../src/kube/read-through';
import type { KubeObject } from '../../../src/kube/object';
import { PlaneCluster } from '../../../src/operator/plane-cluster';
import { Manager } from '../../../src/operator/runtime/manager';
import { OWN_SECRET_LABELS, cacheSecrets, readsWhole } from '../../../src/operator/secret-cache';
import { FakeApiServer } from '../kube/fake-api-server';
import { until } from './runtime/until';

const SECRETS = '/api/v1/secrets';
const CP = '/apis/c5c3.io/v1alpha1/controlplanes';
const IDENTITIES = '/apis/c5c3.io/v1alpha1/keystoneclusteridentities';
const ORDERS = '/apis/c5c3.io/v1alpha1/keystoneapplicationcredentials';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const secret = (namespace: string, name: string, value: string, metadata: Record<string, unknown> = {}) => ({ metadata: { name, namespace, ...metadata }, data: { v: b64(value) } });
const controlPlane = {
  metadata: { name: 'cp', namespace: 'openstack' },
  spec: {
    services: { keystone: { external: { authURL: 'https://keystone.invalid/v3', caBundleSecretRef: { name: 'ca', key: 'ca.crt' } } } },
    adminCredential: { cloudCredentialsRef: { secretName: 'admin' } },
  },
};
const identity = { metadata: { name: 'shared' }, spec: { secretRef: { namespace: 'vault', name: 'source' } } };

describe('the operator\'s Secret caches', () => {
  const running: Manager[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((m) => m.shutdown()));
  });

  async function start(server: FakeApiServer) {
    const manager = new Manager(new KubeApi(server, 't'), { identity: 'a', namespace: 'ops', leaseName: 'l', leaderElect: false });
    cacheSecrets(manager);
    manager.cache(Kinds.ControlPlane);
    manager.cache(Kinds.KeystoneClusterIdentity);
    manager.cache(Kinds.KeystoneApplicationCredential);
    manager.start();
    running.push(manager);
    await manager.waitForCacheSync();
    await until(() => server.openWatches === 7);
    return { manager, port: new PlaneCluster(manager.cluster) };
  }

  /** The GETs of single Secrets the port made, as `accept namespace/name`. */
  const gets = (server: FakeApiServer) =>
    server.requests.filter((r) => r.method === 'GET' && !r.watch && /\/secrets\/[^/]+$/.test(r.path)).map((r) => `${r.accept === undefined ? 'whole' : 'metadata'} ${r.path.replace(/^.*namespaces\/([^/]+)\/secrets\//, '$1/')}`);

  it('reads its own Secrets from the whole cache, a foreign one at a delivered name as metadata without a request', async () => {
    const server = new FakeApiServer();
    const ownerRef = { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneApplicationCredential', name: 'app', uid: 'u-app', controller: true };
    server.seed(SECRETS, secret('tenant', 'app-credentials', 'delivered', { labels: { 'c5c3.io/keystoneapplicationcredential-name': 'app' }, ownerReferences: [ownerRef] }));
    server.seed(SECRETS, secret('tenant', 'other-credentials', 'FOREIGN-PAYLOAD', { labels: { app: 'helm' } }));
    const { port } = await start(server);
    expect((await port.getSecret({ namespace: 'tenant', name: 'app-credentials' }))?.data).toEqual({ v: 'delivered' });
    const foreign = await port.getSecret({ namespace: 'tenant', name: 'other-credentials' });
    expect(foreign).toEqual({ metadata: expect.objectContaining({ name: 'other-credentials', namespace: 'tenant', labels: { app: 'helm' } }), data: {} });
    expect(await port.getSecret({ namespace: 'tenant', name: 'missing' })).toBeUndefined();
    expect(gets(server)).toEqual([]);
    // A live read asks for the metadata first, and for the whole Secret only when it is the operator's.
    expect((await port.readSecret({ namespace: 'tenant', name: 'other-credentials' }))?.data).toEqual({});
    expect((await port.readSecret({ namespace: 'tenant', name: 'app-credentials' }))?.data).toEqual({ v: 'delivered' });
    expect(await port.readSecret({ namespace: 'tenant', name: 'missing' })).toBeUndefined();
    expect(gets(server)).toEqual(['metadata tenant/other-credentials', 'metadata tenant/app-credentials', 'whole tenant/app-credentials', 'metadata tenant/missing']);
    expect(JSON.stringify(server.requests)).not.toContain(b64('FOREIGN-PAYLOAD'));
  });

  it('reads a referenced Secret by name once, serves the copy while unchanged, and reads the new version after a change', async () => {
    const server = new FakeApiServer();
    server.seed(CP, controlPlane);
    server.seed(IDENTITIES, identity);
    server.seed(SECRETS, secret('openstack', 'admin', 'password-1'));
    server.seed(SECRETS, secret('openstack', 'ca', 'bundle'));
    server.seed(SECRETS, secret('vault', 'source', 'identity-source'));
    server.seed(SECRETS, secret('openstack', 'unreferenced', 'nobody-reads-me'));
    const { manager, port } = await start(server);
    const admin = { namespace: 'openstack', name: 'admin' };
    const reads = await Promise.all([port.getSecret(admin), port.getSecret(admin), port.getSecret({ namespace: 'openstack', name: 'ca' })]);
    expect(reads.map((s) => s?.data.v)).toEqual(['password-1', 'password-1', 'bundle']);
    for (let i = 0; i < 5; i++) expect((await port.getSecret(admin))?.data.v).toBe('password-1');
    expect((await port.getSecret({ namespace: 'vault', name: 'source' }))?.data.v).toBe('identity-source');
    expect((await port.getSecret({ namespace: 'openstack', name: 'unreferenced' }))?.data).toEqual({});
    // Concurrent reads shared one GET; later reads used the copy.
    expect(gets(server)).toEqual(['whole openstack/admin', 'whole openstack/ca', 'whole vault/source']);

    server.seed(SECRETS, secret('openstack', 'admin', 'password-2'));
    await until(() => manager.cluster.get(MetadataKinds.Secret, 'openstack', 'admin')?.metadata.resourceVersion === server.object(SECRETS, 'openstack', 'admin')?.metadata.resourceVersion);
    expect((await port.getSecret(admin))?.data.v).toBe('password-2');
    expect((await port.getSecret(admin))?.data.v).toBe('password-2');
    expect(gets(server).filter((g) => g === 'whole openstack/admin')).toHaveLength(2);

    server.remove(SECRETS, 'openstack', 'admin');
    await until(() => manager.cluster.get(MetadataKinds.Secret, 'openstack', 'admin') === undefined);
    expect(await port.getSecret(admin)).toBeUndefined();
  });

  it('reads whole the Secret an order names to adopt a credential from (issue 49), only until the order holds one', async () => {
    const server = new FakeApiServer();
    const adopting = { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneApplicationCredential', metadata: { name: 'app', namespace: 'tenant' }, spec: { adopt: { credentialID: 'c'.repeat(32), secretRef: { name: 'legacy' } } } };
    server.seed(ORDERS, adopting);
    server.seed(SECRETS, secret('tenant', 'legacy', 'hand-made-secret'));
    server.seed(SECRETS, secret('tenant', 'other', 'not-read'));
    const { manager, port } = await start(server);
    expect((await port.readSecret({ namespace: 'tenant', name: 'legacy' }))?.data.v).toBe('hand-made-secret');
    expect((await port.readSecret({ namespace: 'tenant', name: 'other' }))?.data).toEqual({});
    server.seed(ORDERS, { ...adopting, status: { credentialGeneration: 1 } });
    await until(() => (manager.cluster.get(Kinds.KeystoneApplicationCredential, 'tenant', 'app') as { status?: unknown } | undefined)?.status !== undefined);
    expect((await port.readSecret({ namespace: 'tenant', name: 'legacy' }))?.data).toEqual({});
  });

  it('lists the Secrets of a label selection whole', async () => {
    const server = new FakeApiServer();
    const labels = { 'c5c3.io/keystoneapplicationcredential-name': 'app', 'c5c3.io/keystoneapplicationcredential-namespace': 'tenant' };
    server.seed(SECRETS, secret('openstack', 'app-x-secret-v2', 's2', { labels }));
    server.seed(SECRETS, secret('openstack', 'app-x-secret-v1', 's1', { labels }));
    server.seed(SECRETS, secret('openstack', 'helm-release', 'h', { labels: { owner: 'helm' } }));
    const { port } = await start(server);
    expect((await port.listSecrets('openstack', labels)).map((s) => `${s.metadata.name}=${s.data.v}`)).toEqual(['app-x-secret-v1=s1', 'app-x-secret-v2=s2']);
    // A selection no own label covers sees the others' metadata.
    expect(await port.listSecrets('openstack', { owner: 'helm' })).toEqual([{ metadata: expect.objectContaining({ name: 'helm-release' }), data: {} }]);
  });
});

describe('readsWhole', () => {
  const cluster = new MemoryCluster();
  cluster.put(Kinds.ControlPlane, { apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', ...controlPlane } as never);
  cluster.put(Kinds.KeystoneClusterIdentity, { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneClusterIdentity', ...identity } as never);
  const meta = (namespace: string, name: string, metadata: Partial<KubeObject['metadata']> = {}): KubeObject => ({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name, namespace, ...metadata } });

  it.each([
    ['an own label', meta('any', 'x', { labels: { [OWN_SECRET_LABELS[1]]: 'u' } }), true],
    ['the mirror label', meta('any', 'x', { labels: { 'c5c3.io/mirrored': 'true' } }), true],
    ['an order controlling it (labels taken off)', meta('any', 'x', { ownerReferences: [{ apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneApplicationCredential', name: 'a', uid: 'u', controller: true }] }), true],
    ['the admin clouds.yaml of a ControlPlane', meta('openstack', 'admin'), true],
    ['the CA bundle of a ControlPlane', meta('openstack', 'ca'), true],
    ['an identity\'s source', meta('vault', 'source'), true],
    ['a name a ControlPlane of another namespace references', meta('elsewhere', 'admin'), false],
    ['a non-controller owner of this group', meta('any', 'x', { ownerReferences: [{ apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', name: 'a', uid: 'u' }] }), false],
    ['a controller of another group', meta('any', 'x', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'a', uid: 'u', controller: true }] }), false],
    ['anything else', meta('openstack', 'helm.release.v1', { labels: { owner: 'helm' } }), false],
  ])('%s', (_what, secret, expected) => {
    expect(readsWhole(cluster, secret)).toBe(expected);
  });

  it('on a target cluster (references: false) only the own label or an order\'s control counts: a target cluster holds no ControlPlane or identity to reference one', () => {
    const target = new MemoryCluster();
    expect(readsWhole(target, meta('openstack', 'admin'), false)).toBe(false);
    expect(readsWhole(target, meta('any', 'x', { labels: { [OWN_SECRET_LABELS[0]]: 'a' } }), false)).toBe(true);
    expect(readsWhole(target, meta('any', 'x', { ownerReferences: [{ apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneApplicationCredential', name: 'a', uid: 'u', controller: true }] }), false)).toBe(true);
    expect(readsWhole(cluster, meta('openstack', 'admin'), false)).toBe(false);
  });
});

describe('ReadThrough', () => {
  it('reads once per resourceVersion, shares concurrent reads, and keeps what retain keeps', async () => {
    const stored = new Map<string, KubeObject>([['ns/a', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a', namespace: 'ns', uid: 'u', resourceVersion: '5', managedFields: [{}] } as never }]]);
    const reads: string[] = [];
    const read = async (namespace: string | undefined, name: string) => (reads.push(`${namespace}/${name}`), stored.get(`${namespace}/${name}`));
    const copies = new ReadThrough({ read: ((_kind: unknown, namespace: string | undefined, name: string) => read(namespace, name)) as never }, Kinds.Secret);
    const meta = (rv: string, uid = 'u') => ({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'a', namespace: 'ns', uid, resourceVersion: rv } });
    const [x, y] = await Promise.all([copies.get(meta('5')), copies.get(meta('5'))]);
    expect(x).toBe(y);
    expect(x?.metadata).not.toHaveProperty('managedFields');
    // A metadata cache lagging behind the copy still finds it current.
    expect(copies.current(meta('4'))).toBe(x);
    expect(reads).toEqual(['ns/a']);
    stored.set('ns/a', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a', namespace: 'ns', uid: 'u', resourceVersion: '6' } });
    expect(copies.current(meta('6'))).toBeUndefined();
    expect((await copies.get(meta('6')))?.metadata.resourceVersion).toBe('6');
    // A new object of the same name is read again.
    stored.set('ns/a', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a', namespace: 'ns', uid: 'v', resourceVersion: '7' } });
    expect((await copies.get(meta('7', 'v')))?.metadata.uid).toBe('v');
    expect(reads).toEqual(['ns/a', 'ns/a', 'ns/a']);
    expect(copies.size).toBe(1);
    copies.retain(() => false);
    expect(copies.size).toBe(0);
    stored.clear();
    expect(await copies.get(meta('8', 'v'))).toBeUndefined();
    expect(copies.size).toBe(0);
  });
});
