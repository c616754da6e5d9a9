/**
 * What a watched change requeues across clusters (src/operator/controllers.ts over the plane's `dependents`): a target
 * cluster's caches hold only the order kinds and Secrets, so its changes map without reading a ControlPlane; a
 * ControlPlane on the management cluster requeues its orders on every cluster; a child on the management cluster names
 * its order's cluster in its label; a delivered Secret on a target cluster requeues the order there.
 */
import { KubeApi } from '../../../src/kube/api';
import { Kinds, type Secret } from '../../../src/kube/kinds';
import { LiveCluster } from '../../../src/kube/live-cluster';
import type { KubeObject, ResourceKind } from '../../../src/kube/object';
import { Store } from '../../../src/kube/store';
import { objectDependents, secretDependentKeys } from '../../../src/operator/watches';
import type { MapContext } from '../../../src/operator/runtime/mapper';
import { childLabels } from '../../../src/plane/naming';
import { FakeApiServer } from '../kube/fake-api-server';
import { controlPlane, credential, user } from '../plane/fakes';

/** A cluster's caches of only these kinds: reading any other fails, as the runtime's caches do. */
function caches(kinds: readonly ResourceKind<KubeObject>[], objects: readonly KubeObject[]): LiveCluster {
  const stores = new Map(kinds.map((k) => [k.kind, new Store<KubeObject>()]));
  for (const o of objects) stores.get(o.kind)?.upsert(o);
  return new LiveCluster(new KubeApi(new FakeApiServer(), 't'), { storeOf: <T extends KubeObject>(k: ResourceKind<T>) => stores.get(k.kind) as Store<T> | undefined }, { reportingController: 'c', reportingInstance: 'i' });
}

const ORDER_KINDS = [Kinds.KeystoneUser, Kinds.KeystoneProject, Kinds.KeystoneRoleAssignment, Kinds.KeystoneApplicationCredential, Kinds.Secret];
const management = caches([...ORDER_KINDS, Kinds.ControlPlane], [controlPlane() as KubeObject, user() as KubeObject, credential() as KubeObject]);
const edge = caches(ORDER_KINDS, [user() as KubeObject, credential() as KubeObject]);
const fleet = { readsOf: (c: string) => (c === '' ? management : c === 'edge-1' ? edge : undefined), targets: () => ['edge-1'] };
const on = (cluster: string): MapContext => ({ cluster, fleet });

describe('the order controllers\' watches across clusters', () => {
  it('a change on a target cluster maps there without reading a ControlPlane (none is cached there)', () => {
    expect(objectDependents('KeystoneApplicationCredential', 'KeystoneUser', user() as KubeObject, edge, on('edge-1'))).toEqual(['tenant-a/app']);
  });

  it('a ControlPlane change requeues its orders on the management cluster and on every target cluster', () => {
    expect(objectDependents('KeystoneApplicationCredential', 'ControlPlane', controlPlane() as KubeObject, management, on(''))).toEqual(['tenant-a/app', { cluster: 'edge-1', key: 'tenant-a/app' }]);
    expect(objectDependents('KeystoneUser', 'ControlPlane', controlPlane() as KubeObject, management, on(''))).toEqual(['tenant-a/alice', { cluster: 'edge-1', key: 'tenant-a/alice' }]);
  });

  it('a child on the management cluster requeues its order on the cluster its label names; a delivered Secret on a target cluster its order there', () => {
    const child = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'app-x-applicationcredential-secret-v1', namespace: 'cp-system', labels: childLabels('KeystoneApplicationCredential', { cluster: 'edge-1', namespace: 'tenant-a', name: 'app' }) } } as Secret;
    expect(secretDependentKeys('KeystoneApplicationCredential', child, management, on(''))).toEqual([{ cluster: 'edge-1', key: 'tenant-a/app' }]);
    const foreign = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'app-credentials', namespace: 'tenant-a' } } as Secret;
    expect(secretDependentKeys('KeystoneApplicationCredential', foreign, edge, on('edge-1'))).toEqual(['tenant-a/app']);
  });
});
