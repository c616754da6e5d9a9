import { Kinds } from '../../../../src/kube/kinds';
import { MemoryCluster } from '../../../../src/kube/memory';
import { objectKey, type KubeObject } from '../../../../src/kube/object';
import type { KeystoneUser } from '../../../../src/api/identity-plane';
import { byIndex, byLabels, byOwner, MapperRegistry, self } from '../../../../src/operator/runtime/mapper';

const meta = (name: string, extra: Partial<KubeObject['metadata']> = {}) => ({ name, namespace: 'tenant', ...extra });
const secret = (name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: meta(name, extra) });
const user = (name: string, cp: string) => ({ apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', metadata: meta(name), spec: { controlPlaneRef: { name: cp, namespace: 'openstack' } } }) as unknown as KeystoneUser;
const cpKey = (u: KeystoneUser) => [objectKey((u.spec as unknown as { controlPlaneRef: { namespace: string } }).controlPlaneRef.namespace, (u.spec as unknown as { controlPlaneRef: { name: string } }).controlPlaneRef.name)];

describe('mappers', () => {
  const reads = new MemoryCluster();

  it('self maps an object to its own key', () => {
    expect(self().map(secret('s'), reads)).toEqual(['tenant/s']);
  });

  it('byOwner maps to owners of the kind (group and kind), optionally the controller only', () => {
    const refs = [
      { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', name: 'u1', uid: '1', controller: true },
      { apiVersion: 'c5c3.io/v1beta1', kind: 'KeystoneUser', name: 'u2', uid: '2' },
      { apiVersion: 'other.io/v1', kind: 'KeystoneUser', name: 'x', uid: '3' },
      { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneProject', name: 'p', uid: '4' },
    ];
    const s = secret('s', { ownerReferences: refs });
    expect(byOwner(Kinds.KeystoneUser).map(s, reads)).toEqual(['tenant/u1', 'tenant/u2']);
    expect(byOwner(Kinds.KeystoneUser, { controllerOnly: true }).map(s, reads)).toEqual(['tenant/u1']);
    expect(byOwner(Kinds.KeystoneUser).map(secret('plain'), reads)).toEqual([]);
  });

  it('byLabels maps to the order its labels name, in the labelled or its own namespace', () => {
    const labels = { name: 'c5c3.io/name', namespace: 'c5c3.io/namespace' };
    expect(byLabels(labels).map(secret('s', { labels: { 'c5c3.io/name': 'o', 'c5c3.io/namespace': 'elsewhere' } }), reads)).toEqual(['elsewhere/o']);
    expect(byLabels(labels).map(secret('s', { labels: { 'c5c3.io/name': 'o' } }), reads)).toEqual(['tenant/o']);
    expect(byLabels(labels).map(secret('s'), reads)).toEqual([]);
  });

  it('byIndex maps a ControlPlane to every order filed under it by the primary kind\'s index', () => {
    const cluster = new MemoryCluster();
    const mapper = byIndex(Kinds.KeystoneUser, 'controlPlane', cpKey);
    for (const index of mapper.indexes ?? []) cluster.index(index.kind, index.name, index.fn);
    cluster.put(Kinds.KeystoneUser, user('a', 'cp'));
    cluster.put(Kinds.KeystoneUser, user('b', 'cp'));
    cluster.put(Kinds.KeystoneUser, user('c', 'other'));
    const cp = { apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name: 'cp', namespace: 'openstack' } };
    expect(mapper.map(cp, cluster)).toEqual(['tenant/a', 'tenant/b']);
  });
});

describe('MapperRegistry', () => {
  it('feeds every registered target; updates map old and new (an owner change requeues both owners); resyncs reach only the primary', () => {
    const queued: string[] = [];
    const registry = new MapperRegistry(new MemoryCluster());
    registry.register(Kinds.Secret, { target: (k) => queued.push(`owner ${k}`), mapper: byOwner(Kinds.KeystoneUser), controller: 'user', resync: false });
    registry.register(Kinds.Secret, { target: (k) => queued.push(`self ${k}`), mapper: self(), controller: 'secret', resync: true });
    const handler = registry.handlerFor(Kinds.Secret);
    const ref = (name: string) => [{ apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', name, uid: name }];
    const before = secret('s', { ownerReferences: ref('u1') });
    const after = secret('s', { ownerReferences: ref('u2') });
    handler.updated?.(before, after);
    handler.resynced?.(after);
    handler.deleted?.(after);
    expect(queued).toEqual(['owner tenant/u1', 'owner tenant/u2', 'self tenant/s', 'self tenant/s', 'owner tenant/u2', 'self tenant/s']);
  });

  it('logs and skips a mapper that throws', () => {
    const errors: string[] = [];
    const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (m: string) => errors.push(m), child: () => logger };
    const registry = new MapperRegistry(new MemoryCluster(), logger);
    const queued: string[] = [];
    registry.register(Kinds.Secret, { target: (k) => queued.push(k), mapper: { map: () => { throw new Error('boom'); } }, controller: 'x', resync: false });
    registry.register(Kinds.Secret, { target: (k) => queued.push(k), mapper: self(), controller: 'y', resync: false });
    registry.handlerFor(Kinds.Secret).added?.(secret('s'));
    expect([errors, queued]).toEqual([['a mapper failed'], ['tenant/s']]);
  });
});
