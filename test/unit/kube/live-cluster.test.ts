import { KubeApi } from '../../../src/kube/api';
import { isAlreadyExists, isConflict, KubeApiError } from '../../../src/kube/errors';
import { Kinds, type Lease } from '../../../src/kube/kinds';
import { LiveCluster, microTime } from '../../../src/kube/live-cluster';
import { Store } from '../../../src/kube/store';
import type { ControlPlane } from '../../../src/api/identity-plane';
import { FakeApiServer } from './fake-api-server';

const CP = '/apis/c5c3.io/v1alpha1/controlplanes';
const cp = (name: string): ControlPlane => ({ apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name, namespace: 'openstack' }, spec: {} as ControlPlane['spec'] });

function setup() {
  const server = new FakeApiServer();
  const api = new KubeApi(server, 'kac-test');
  const store = new Store<ControlPlane>();
  const writes: string[] = [];
  const cluster = new LiveCluster(api, { storeOf: (kind) => ((kind as unknown) === Kinds.ControlPlane ? (store as never) : undefined) }, {
    reportingController: 'c5c3.io/test',
    reportingInstance: 'pod-0',
    onWrite: (verb, kind) => writes.push(`${verb} ${kind}`),
    now: () => new Date('2026-12-01T10:00:00.123Z'),
  });
  return { server, api, store, cluster, writes };
}

describe('KubeApi', () => {
  it('builds paths for core, grouped, namespaced and cluster-scoped kinds and subresources', () => {
    const api = new KubeApi(new FakeApiServer(), 'm');
    expect(api.path(Kinds.Secret, 'ns', 's')).toBe('/api/v1/namespaces/ns/secrets/s');
    expect(api.path(Kinds.ControlPlane, 'openstack', 'cp', 'status')).toBe('/apis/c5c3.io/v1alpha1/namespaces/openstack/controlplanes/cp/status');
    expect(api.path(Kinds.ControlPlane)).toBe('/apis/c5c3.io/v1alpha1/controlplanes');
    const Namespace = { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false } as const;
    expect(api.path(Namespace, 'ignored', 'a')).toBe('/api/v1/namespaces/a');
    expect(() => api.path(Kinds.Secret, undefined, 's')).toThrow('needs a namespace');
  });

  it('lists every page and fills in apiVersion and kind', async () => {
    const { server, api } = setup();
    for (let i = 0; i < 1203; i++) server.seed('/api/v1/secrets', { metadata: { name: `s${String(i).padStart(4, '0')}`, namespace: 'ns' } });
    const { items, resourceVersion } = await api.list(Kinds.Secret, { namespace: 'ns' });
    expect(items).toHaveLength(1203);
    expect(items[0]).toMatchObject({ apiVersion: 'v1', kind: 'Secret' });
    expect(resourceVersion).toEqual(expect.any(String));
    expect(server.requests.filter((r) => r.method === 'GET').map((r) => r.query?.continue)).toEqual([undefined, '500', '1000']);
  });

  it('applies with the field manager, force only when asked, as application/apply-patch+yaml', async () => {
    const { server, api } = setup();
    await api.apply(Kinds.Secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' }, data: { a: 'Yg==' } });
    await api.apply(Kinds.Secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' } }, { force: true });
    expect(server.requests.map((r) => [r.method, r.path, r.contentType, r.query])).toEqual([
      ['PATCH', '/api/v1/namespaces/ns/secrets/s', 'application/apply-patch+yaml', { fieldManager: 'kac-test', force: undefined }],
      ['PATCH', '/api/v1/namespaces/ns/secrets/s', 'application/apply-patch+yaml', { fieldManager: 'kac-test', force: true }],
    ]);
  });

  it('turns error answers into KubeApiErrors with the Status reason', async () => {
    const { server, api } = setup();
    server.failNext(() => true, 403, 'Forbidden');
    const error = (await api.get(Kinds.Secret, 'ns', 'x').catch((e: unknown) => e)) as KubeApiError;
    expect(error).toBeInstanceOf(KubeApiError);
    expect([error.status, error.reason, error.message]).toEqual([403, 'Forbidden', 'GET /api/v1/namespaces/ns/secrets/x: 403 Forbidden: injected']);
    expect(await api.get(Kinds.Secret, 'ns', 'x')).toBeUndefined();
  });
});

describe('LiveCluster', () => {
  it('reads from the cache only, and names an uncached kind', () => {
    const { store, cluster, server } = setup();
    store.upsert({ ...cp('cp'), metadata: { ...cp('cp').metadata, resourceVersion: '1' } });
    expect(cluster.get(Kinds.ControlPlane, 'openstack', 'cp')?.metadata.name).toBe('cp');
    expect(cluster.list(Kinds.ControlPlane, { namespace: 'openstack' })).toHaveLength(1);
    expect(() => cluster.get(Kinds.Secret, 'ns', 'x')).toThrow('Secret is not cached');
    expect(server.requests).toEqual([]);
  });

  it('patches only the difference of the status, guarded by resourceVersion; a stale object gets 409', async () => {
    const { server, cluster, writes } = setup();
    const stored = server.seed(CP, { ...cp('cp'), status: { conditions: [{ type: 'Ready', status: 'False' }], keystoneVersion: 'v3.14' } }) as unknown as ControlPlane;
    const updated = await cluster.patchStatus(Kinds.ControlPlane, stored, { conditions: [{ type: 'Ready', status: 'True' }] } as never);
    expect(server.requests[0]).toMatchObject({
      method: 'PATCH',
      path: '/apis/c5c3.io/v1alpha1/namespaces/openstack/controlplanes/cp/status',
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: stored.metadata.resourceVersion }, status: { conditions: [{ type: 'Ready', status: 'True' }], keystoneVersion: null } },
    });
    expect(updated.status).toEqual({ conditions: [{ type: 'Ready', status: 'True' }] });
    const stale = await cluster.patchStatus(Kinds.ControlPlane, stored, { conditions: [] } as never).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
    expect(await cluster.patchStatus(Kinds.ControlPlane, updated, updated.status as never)).toBe(updated); // nothing to send
    expect(writes).toEqual(['patchStatus ControlPlane']);
  });

  it('adds and removes finalizers with a merge patch carrying resourceVersion; the last one of a deleted object makes it gone', async () => {
    const { server, cluster, writes } = setup();
    let object = server.seed(CP, cp('cp')) as unknown as ControlPlane;
    object = await cluster.addFinalizer(Kinds.ControlPlane, object, 'c5c3.io/teardown');
    expect(object.metadata.finalizers).toEqual(['c5c3.io/teardown']);
    expect(await cluster.addFinalizer(Kinds.ControlPlane, object, 'c5c3.io/teardown')).toBe(object);
    expect(await cluster.delete(Kinds.ControlPlane, 'openstack', 'cp')).toBe(true);
    object = server.object(CP, 'openstack', 'cp') as unknown as ControlPlane;
    expect(object.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect(await cluster.removeFinalizer(Kinds.ControlPlane, object, 'c5c3.io/teardown')).toBeUndefined();
    expect(server.object(CP, 'openstack', 'cp')).toBeUndefined();
    expect(await cluster.delete(Kinds.ControlPlane, 'openstack', 'cp')).toBe(false);
    expect(writes).toEqual(['addFinalizer ControlPlane', 'delete ControlPlane', 'removeFinalizer ControlPlane']);
    expect(server.requests.filter((r) => r.method === 'PATCH').map((r) => (r.body as { metadata: { resourceVersion?: string } }).metadata.resourceVersion)).toEqual([
      expect.any(String),
      expect.any(String),
    ]);
  });

  it('deletes with uid and resourceVersion preconditions', async () => {
    const { server, cluster } = setup();
    const stored = server.seed('/api/v1/secrets', { metadata: { name: 's', namespace: 'ns' } });
    expect(isConflict(await cluster.delete(Kinds.Secret, 'ns', 's', { uid: 'other' }).catch((e: unknown) => e))).toBe(true);
    expect(await cluster.delete(Kinds.Secret, 'ns', 's', { uid: stored.metadata.uid as string })).toBe(true);
    expect(server.requests.at(-1)?.body).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: stored.metadata.uid }, propagationPolicy: 'Background' });
  });

  it('creates (AlreadyExists on a second create) and reads past the cache', async () => {
    const { cluster } = setup();
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'p', namespace: 'ns' }, data: { v: 'MQ==' } };
    await cluster.create(Kinds.Secret, secret);
    expect(isAlreadyExists(await cluster.create(Kinds.Secret, secret).catch((e: unknown) => e))).toBe(true);
    expect((await cluster.read(Kinds.Secret, 'ns', 'p'))?.metadata.uid).toEqual(expect.any(String));
    expect(await cluster.read(Kinds.Secret, 'ns', 'nope')).toBeUndefined();
  });

  it('records an events.k8s.io/v1 Event in the object\'s namespace with MicroTime and the reporting controller', async () => {
    const { server, cluster } = setup();
    const stored = server.seed(CP, cp('cp')) as unknown as ControlPlane;
    await cluster.event(stored, { type: 'Warning', reason: 'AuthenticationFailed', action: 'Reconcile', note: 'x'.repeat(2000) });
    const request = server.requests[0];
    expect([request.method, request.path]).toEqual(['POST', '/apis/events.k8s.io/v1/namespaces/openstack/events']);
    const event = request.body as Record<string, unknown> & { note: string; metadata: { name: string } };
    expect(event).toMatchObject({
      eventTime: '2026-12-01T10:00:00.123000Z',
      reportingController: 'c5c3.io/test',
      reportingInstance: 'pod-0',
      reason: 'AuthenticationFailed',
      type: 'Warning',
      regarding: { apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', name: 'cp', namespace: 'openstack', uid: stored.metadata.uid },
    });
    expect(event.note).toHaveLength(1024);
    expect(event.metadata.name).toMatch(/^cp\.[0-9a-f]+$/);
    expect(microTime(new Date('2026-01-01T00:00:00Z'))).toBe('2026-01-01T00:00:00.000000Z');
  });

  it('round-trips a Lease through create and replace', async () => {
    const { api } = setup();
    const lease = await api.create<Lease>(Kinds.Lease, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'ns' }, spec: { holderIdentity: 'a' } } as Lease);
    const replaced = await api.replace<Lease>(Kinds.Lease, { ...lease, spec: { holderIdentity: 'b' } } as Lease);
    expect(replaced.spec?.holderIdentity).toBe('b');
    expect(isConflict(await api.replace(Kinds.Lease, { ...lease, spec: {} } as Lease).catch((e: unknown) => e))).toBe(true);
  });
});
