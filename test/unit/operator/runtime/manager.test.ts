import type { ControlPlane } from '../../../../src/api/identity-plane';
import { KubeApi } from '../../../../src/kube/api';
import { Kinds } from '../../../../src/kube/kinds';
import { Manager } from '../../../../src/operator/runtime/manager';
import { byOwner } from '../../../../src/operator/runtime/mapper';
import { OperatorMetrics } from '../../../../src/operator/runtime/metrics';
import { FakeApiServer } from '../../kube/fake-api-server';
import { until } from './until';

const CP = '/apis/c5c3.io/v1alpha1/controlplanes';
const SECRETS = '/api/v1/secrets';
const cp = (name: string) => ({ apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name, namespace: 'openstack' }, spec: {} });
const timing = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };

const running: Manager[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.shutdown()));
});

function replica(server: FakeApiServer, identity: string, reconcileMs = 0) {
  const reconciled: string[] = [];
  const manager = new Manager(new KubeApi(server, 'kac-test'), {
    identity, namespace: 'ops', leaseName: 'leader', ...timing, shutdownTimeoutMs: 2000, metrics: new OperatorMetrics({ defaultMetrics: false }),
  });
  const status = manager.statusWriter();
  manager.controller({
    kind: Kinds.ControlPlane,
    watches: [{ kind: Kinds.Secret, map: byOwner(Kinds.ControlPlane) }],
    reconcile: async ({ namespace, name }) => {
      reconciled.push(`${namespace}/${name}`);
      if (reconcileMs) await new Promise((r) => setTimeout(r, reconcileMs));
      const object = manager.cluster.get(Kinds.ControlPlane, namespace, name);
      if (!object) return;
      const secrets = manager.cluster.list(Kinds.Secret, { namespace: 'openstack' }).length;
      await status.write(Kinds.ControlPlane, object, { keystoneVersion: `secrets=${secrets}` } as ControlPlane['status'] & object);
    },
  });
  manager.start();
  running.push(manager);
  return { manager, reconciled };
}

const writes = async (m: Manager) => (await m.metrics.text()).split('\n').filter((l) => l.startsWith('keystone_appcred_api_writes_total'));

describe('Manager', () => {
  it('runs the controllers on the leader only; the standby keeps synced caches; a watched change requeues its owner; a steady pass writes nothing', async () => {
    const server = new FakeApiServer();
    const owner = server.seed(CP, cp('cp'));
    server.seed(CP, cp('other'));
    const a = replica(server, 'a');
    await until(() => a.manager.isLeader && a.reconciled.length >= 2);
    const b = replica(server, 'b');
    await b.manager.waitForCacheSync();
    expect(b.manager.unsynced()).toEqual([]);
    await until(() => a.reconciled.length >= 4, 3000, 'the reconciles caused by the status writes');
    await new Promise((r) => setTimeout(r, 200));
    // Each ControlPlane: one pass writes its status, the pass its own write triggers finds nothing to change.
    expect(a.reconciled.sort()).toEqual(['openstack/cp', 'openstack/cp', 'openstack/other', 'openstack/other']);
    expect(await writes(a.manager)).toEqual(['keystone_appcred_api_writes_total{kind="ControlPlane",verb="patchStatus"} 2']);
    expect([b.manager.isLeader, b.reconciled]).toEqual([false, []]);
    expect(await a.manager.metrics.text()).toContain('keystone_appcred_leader 1');
    expect(await b.manager.metrics.text()).toContain('keystone_appcred_leader 0');

    server.seed(SECRETS, { metadata: { name: 'admin', namespace: 'openstack', ownerReferences: [{ apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', name: 'cp', uid: owner.metadata.uid }] } });
    await until(() => a.reconciled.filter((k) => k === 'openstack/cp').length >= 3, 3000, 'the owner requeued by its Secret');
    expect(a.reconciled.filter((k) => k === 'openstack/other')).toHaveLength(2);

  });

  it('on shutdown finishes the reconcile in flight, then releases the Lease; the standby takes over at once', async () => {
    const server = new FakeApiServer();
    server.seed(CP, cp('slow'));
    const a = replica(server, 'a', 300);
    await until(() => a.reconciled.length === 1);
    const b = replica(server, 'b');
    await b.manager.waitForCacheSync();
    const result = await a.manager.shutdown();
    expect(result).toEqual({ drained: true, released: true });
    expect((server.object(CP, 'openstack', 'slow')?.status as { keystoneVersion?: string })?.keystoneVersion).toBe('secrets=0'); // the slow pass finished
    const released = Date.now();
    await until(() => b.manager.isLeader && b.reconciled.length >= 1);
    expect(Date.now() - released).toBeLessThan(timing.leaseDurationMs);
  });

  it('leaves the Lease to expire when work is still in flight at the deadline', async () => {
    const server = new FakeApiServer();
    server.seed(CP, cp('stuck'));
    const manager = new Manager(new KubeApi(server, 't'), { identity: 'a', namespace: 'ops', leaseName: 'leader', ...timing, shutdownTimeoutMs: 50 });
    let started = false;
    manager.controller({ kind: Kinds.ControlPlane, reconcile: async () => { started = true; await new Promise((r) => setTimeout(r, 500)); } });
    manager.start();
    running.push(manager);
    await until(() => started);
    expect(await manager.shutdown()).toEqual({ drained: false, released: false });
    expect((server.object('/apis/coordination.k8s.io/v1/leases', 'ops', 'leader')?.spec as { holderIdentity?: string }).holderIdentity).toBe('a');
  });

  it('without leader election reconciles at once', async () => {
    const server = new FakeApiServer();
    server.seed(CP, cp('cp'));
    const manager = new Manager(new KubeApi(server, 't'), { identity: 'a', namespace: 'ops', leaseName: 'leader', leaderElect: false });
    const seen: string[] = [];
    manager.controller({ kind: Kinds.ControlPlane, reconcile: async (r) => void seen.push(r.key) });
    manager.start();
    running.push(manager);
    await until(() => seen.length === 1);
    expect(server.requests.some((r) => r.path.includes('leases'))).toBe(false);
  });

  it('refuses registrations that cannot work', () => {
    const manager = new Manager(new KubeApi(new FakeApiServer(), 't'), { identity: 'a', namespace: 'ops', leaseName: 'leader', leaderElect: false });
    manager.cache(Kinds.Secret, { labelSelector: 'a=b' });
    manager.cache(Kinds.Secret, { labelSelector: 'a=b' });
    expect(() => manager.cache(Kinds.Secret, {})).toThrow('Secret is already cached by the selections {"labelSelector":"a=b"}');
    manager.controller({ kind: Kinds.ControlPlane, reconcile: async () => undefined });
    expect(() => manager.controller({ kind: Kinds.ControlPlane, reconcile: async () => undefined })).toThrow('a controller named ControlPlane is already registered');
    expect(() => manager.cluster.get(Kinds.KeystoneUser, 'a', 'b')).toThrow('KeystoneUser is not cached');
    manager.start();
    running.push(manager);
    expect(() => manager.controller({ kind: Kinds.KeystoneUser, reconcile: async () => undefined })).toThrow('before the manager starts');
  });

  it('gives each controller the workers of its kind, else the manager\'s, and runs that many objects of a kind at once', async () => {
    const server = new FakeApiServer();
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) server.seed(CP, cp(name));
    const manager = new Manager(new KubeApi(server, 'kac-test'), {
      identity: 'a', namespace: 'ops', leaseName: 'leader', leaderElect: false, metrics: new OperatorMetrics({ defaultMetrics: false }), workers: 3, workersPerKind: { KeystoneUser: 2 },
    });
    let inFlight = 0;
    let peak = 0;
    const done: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    manager.controller({
      kind: Kinds.ControlPlane,
      reconcile: async ({ name }) => {
        peak = Math.max(peak, ++inFlight);
        await gate;
        inFlight--;
        done.push(name);
      },
    });
    manager.controller({ kind: Kinds.KeystoneUser, reconcile: async () => undefined });
    manager.controller({ kind: Kinds.KeystoneProject, reconcile: async () => undefined, concurrency: 1 });
    manager.start();
    running.push(manager);
    await until(() => inFlight === 3);
    const text = await manager.metrics.text();
    expect(text).toContain('keystone_appcred_max_concurrent_reconciles{kind="ControlPlane"} 3');
    expect(text).toContain('keystone_appcred_max_concurrent_reconciles{kind="KeystoneUser"} 2');
    expect(text).toContain('keystone_appcred_max_concurrent_reconciles{kind="KeystoneProject"} 1');
    expect(text).toContain('keystone_appcred_active_workers{kind="ControlPlane"} 3');
    release();
    await until(() => done.length === 6);
    expect(peak).toBe(3);
    expect(await manager.metrics.text()).toContain('keystone_appcred_active_workers{kind="ControlPlane"} 0');
  });
});
