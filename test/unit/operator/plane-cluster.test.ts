/**
 * The operator's ClusterPort (src/operator/plane-cluster.ts): a status or finalizer write is conditioned on the copy its
 * pass decided from when the pass names it (`basis`), else on the newest copy the port knows.
 */
import type { ControlPlane } from '../../../src/api';
import { Kinds } from '../../../src/kube/kinds';
import { MemoryCluster } from '../../../src/kube/memory';
import { PlaneCluster } from '../../../src/operator/plane-cluster';

const key = { namespace: 'openstack', name: 'cp' };
const ready = { conditions: [{ type: 'Ready', status: 'True', reason: 'AllReady', message: 'AdminCredentialReady is True', lastTransitionTime: '2027-01-04T08:00:00Z' }], adminCredentialExpiresAt: '2027-04-04T08:00:00Z' };
const unreachable = { conditions: [{ type: 'Ready', status: 'False', reason: 'KeystoneUnreachable', message: 'Keystone POST /v3/auth/tokens: 503', lastTransitionTime: '2027-01-04T08:00:09Z' }] };

function setup() {
  const cluster = new MemoryCluster();
  cluster.put(Kinds.ControlPlane, {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'ControlPlane',
    metadata: { name: 'cp', namespace: 'openstack' },
    spec: { services: { keystone: { external: { authURL: 'https://keystone.invalid/v3' } } }, adminCredential: { cloudCredentialsRef: { secretName: 'admin' } } },
  } as never);
  return { cluster, port: new PlaneCluster(cluster) };
}

describe('PlaneCluster.writeStatus', () => {
  it('with the copy the pass decided from: a copy the object has moved on from loses with 409, and the newer status stays', async () => {
    const { cluster, port } = setup();
    const decidedFrom = (await port.get('ControlPlane', key)) as ControlPlane;
    await port.writeStatus('ControlPlane', key, ready as never);
    await expect(port.writeStatus('ControlPlane', key, unreachable as never, decidedFrom)).rejects.toMatchObject({ status: 409 });
    expect(cluster.get(Kinds.ControlPlane, 'openstack', 'cp')?.status).toMatchObject({ adminCredentialExpiresAt: '2027-04-04T08:00:00Z' });
    // Decided from the newest copy, it is written.
    await port.writeStatus('ControlPlane', key, unreachable as never, (await port.get('ControlPlane', key)) as ControlPlane);
    expect(cluster.get(Kinds.ControlPlane, 'openstack', 'cp')?.status).toMatchObject({ conditions: [{ reason: 'KeystoneUnreachable' }] });
  });

  it('without one, on the newest copy the port knows (its own last write)', async () => {
    const { cluster, port } = setup();
    await port.writeStatus('ControlPlane', key, ready as never);
    await port.writeStatus('ControlPlane', key, unreachable as never);
    expect(cluster.get(Kinds.ControlPlane, 'openstack', 'cp')?.status).toMatchObject({ conditions: [{ reason: 'KeystoneUnreachable' }] });
  });
});

describe('PlaneCluster.addFinalizer', () => {
  const finalizer = 'c5c3.io/test';

  it('with the copy the pass decided from: returns the copy written, on which the pass\'s status write holds; the copy before it loses', async () => {
    const { cluster, port } = setup();
    const decidedFrom = (await port.get('ControlPlane', key)) as ControlPlane;
    const written = await port.addFinalizer('ControlPlane', key, finalizer, decidedFrom);
    expect(written?.metadata.finalizers).toEqual([finalizer]);
    expect(written?.metadata.resourceVersion).not.toBe(decidedFrom.metadata.resourceVersion);
    await expect(port.writeStatus('ControlPlane', key, ready as never, decidedFrom)).rejects.toMatchObject({ status: 409 });
    await port.writeStatus('ControlPlane', key, ready as never, written);
    expect(cluster.get(Kinds.ControlPlane, 'openstack', 'cp')).toMatchObject({ metadata: { finalizers: [finalizer] }, status: { adminCredentialExpiresAt: '2027-04-04T08:00:00Z' } });
  });

  it('on a copy the object has moved on from, loses with 409 and adds nothing; present already, writes nothing', async () => {
    const { cluster, port } = setup();
    const decidedFrom = (await port.get('ControlPlane', key)) as ControlPlane;
    await port.writeStatus('ControlPlane', key, ready as never);
    await expect(port.addFinalizer('ControlPlane', key, finalizer, decidedFrom)).rejects.toMatchObject({ status: 409 });
    expect(cluster.get(Kinds.ControlPlane, 'openstack', 'cp')?.metadata.finalizers).toBeUndefined();
    const written = await port.addFinalizer('ControlPlane', key, finalizer);
    cluster.clear();
    expect(await port.addFinalizer('ControlPlane', key, finalizer, written)).toBe(written);
    expect(cluster.writes).toEqual([]);
  });
});
