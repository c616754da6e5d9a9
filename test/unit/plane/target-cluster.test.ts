/**
 * Orders on a registered target cluster (spec: "The order lives in the assigned namespace, on the cluster that namespace
 * is assigned on ... Its children live in the ControlPlane's namespace on the management cluster"), for the three
 * identity-plane kinds, through the drivers on two in-memory clusters: the order, its status, finalizer and delivered
 * Secret on the target cluster; the ControlPlane, its admin Secret and the children on the management cluster, named
 * from the hash of `<cluster>/<namespace>/<name>` and labelled with the cluster.
 */
import { parse } from 'yaml';
import { orderHash, type ControlPlane, type KeystoneUser } from '../../../src/api';
import { ConvergedPasses, passwordSecretName, planePrefix, reconcileAssignment, reconcileProject, reconcileUser, type PlaneDeps } from '../../../src/plane';
import { CP_NS, FakeCluster, NS, adminReady, assignment, condition, controlPlane, plane, project, user } from './fakes';

const EDGE = 'edge-1';
const PUBLIC = 'https://keystone.example.com/v3';
const edgePlane = (spec: Partial<ControlPlane['spec']> = {}) =>
  controlPlane({
    spec: {
      services: { keystone: { external: { authURL: 'https://keystone.internal/v3' }, publicEndpoint: PUBLIC } },
      namespaceAssignments: [{ namespace: NS, targetClusterRef: { name: EDGE }, allowedRoles: ['member'] }],
      ...spec,
    },
  });

/** A management cluster with the ControlPlane and a target cluster holding the orders. */
function fleet(cp: ControlPlane = edgePlane()) {
  const { cluster: management, keystone, deps } = plane({ cp });
  const target = new FakeCluster();
  return { management, target, keystone, deps, site: { cluster: EDGE, orders: target } };
}

const userKey = { namespace: NS, name: 'alice' };
const location = { cluster: EDGE, namespace: NS, name: 'alice' };

describe('KeystoneUser on a target cluster', () => {
  it('status, finalizer and delivered Secret on the target cluster; the parked password on the management cluster, hashed over <cluster>/<namespace>/<name>, with the cluster label', async () => {
    const { management, target, keystone, deps, site } = fleet();
    target.put('KeystoneUser', user());
    const result = await reconcileUser(userKey, deps, site);
    expect(result.actions).toEqual(['add-finalizer', 'park', 'create-user', 'deliver']);

    const order = target.object('KeystoneUser', userKey) as KeystoneUser;
    expect(order.metadata.finalizers).toEqual(['c5c3.io/keystoneuser-teardown']);
    expect(condition(order, 'Ready')).toMatchObject({ status: 'True', reason: 'AllReady' });
    expect(management.object('KeystoneUser', userKey)).toBeUndefined();

    const child = management.secret({ namespace: CP_NS, name: passwordSecretName(location, 1) });
    expect(child?.metadata.name).toBe(`alice-${orderHash(location)}-user-password-v1`);
    expect(orderHash(location)).not.toBe(orderHash({ namespace: NS, name: 'alice' }));
    expect(child?.metadata.labels).toEqual({ 'c5c3.io/keystoneuser-name': 'alice', 'c5c3.io/keystoneuser-namespace': NS, 'c5c3.io/keystoneuser-cluster': EDGE });
    expect(target.secrets.has(`${CP_NS}/${passwordSecretName(location, 1)}`)).toBe(false);

    const delivered = target.secret({ namespace: NS, name: 'alice-credentials' });
    expect(parse(delivered?.data['clouds.yaml'] as string).clouds.openstack.auth.auth_url).toBe(PUBLIC);
    expect(management.secret({ namespace: NS, name: 'alice-credentials' })).toBeUndefined();
    expect([...keystone.users.values()][0].description).toContain(`${EDGE}/${NS}/alice`);
  });

  it('the same name and namespace on the management cluster is another order with other children', async () => {
    const cp = edgePlane({ namespaceAssignments: [{ namespace: NS, allowedRoles: [] }, { namespace: NS, targetClusterRef: { name: EDGE }, allowedRoles: [] }] });
    const { management, target, deps, site } = fleet(cp);
    target.put('KeystoneUser', user('alice', { userName: 'edge-alice' }));
    management.put('KeystoneUser', user('alice', { userName: 'mgmt-alice' }));
    await reconcileUser(userKey, deps, site);
    await reconcileUser(userKey, deps);
    expect(management.secret({ namespace: CP_NS, name: passwordSecretName(location, 1) })?.data.password).toBe('pw-1');
    expect(management.secret({ namespace: CP_NS, name: passwordSecretName({ namespace: NS, name: 'alice' }, 1) })?.data.password).toBe('pw-2');
    expect(parse(management.secret({ namespace: NS, name: 'alice-credentials' })?.data['clouds.yaml'] as string).clouds.openstack.auth.auth_url).toBe('https://keystone.internal/v3');
  });

  it('KeystoneNotPublished: no public endpoint, nothing delivered on the target cluster', async () => {
    const { target, deps, site } = fleet(edgePlane({ services: { keystone: { external: { authURL: 'https://keystone.internal/v3' } } } }));
    target.put('KeystoneUser', user());
    await reconcileUser(userKey, deps, site);
    expect(condition(target.object('KeystoneUser', userKey), 'DeliveryReady')).toMatchObject({ status: 'False', reason: 'KeystoneNotPublished' });
    expect(target.secret({ namespace: NS, name: 'alice-credentials' })).toBeUndefined();
  });

  it('consent removed: NamespaceNotAssigned, frozen; an unresolved controlPlaneRef is NamespaceNotAssigned too', async () => {
    const { management, target, keystone, deps, site } = fleet();
    target.put('KeystoneUser', user());
    await reconcileUser(userKey, deps, site);
    management.put('ControlPlane', { ...edgePlane({ namespaceAssignments: [{ namespace: NS, allowedRoles: [] }] }), status: adminReady() });
    target.put('KeystoneUser', { ...(target.object('KeystoneUser', userKey) as KeystoneUser), spec: { ...user().spec, passwordGeneration: 2 } });
    keystone.calls.length = 0;
    expect((await reconcileUser(userKey, deps, site)).actions).toEqual([]);
    expect(keystone.calls).toEqual([]);
    expect(condition(target.object('KeystoneUser', userKey), 'Ready')).toMatchObject({ status: 'False', reason: 'NamespaceNotAssigned', message: expect.stringContaining(EDGE) });
    management.remove('ControlPlane', { namespace: CP_NS, name: 'cp' });
    expect((await reconcileUser(userKey, deps, site)).actions).toEqual([]);
    expect(condition(target.object('KeystoneUser', userKey), 'UserReady')).toMatchObject({ status: 'False', reason: 'NamespaceNotAssigned', message: expect.stringContaining('does not resolve') });
  });

  it('ClusterNameTooLong: a cluster name of 64 characters creates nothing, not even the finalizer', async () => {
    const long = 'c'.repeat(64);
    const { management, target, keystone, deps } = fleet(edgePlane({ namespaceAssignments: [{ namespace: NS, targetClusterRef: { name: long }, allowedRoles: [] }] }));
    target.put('KeystoneUser', user());
    expect((await reconcileUser(userKey, deps, { cluster: long, orders: target })).actions).toEqual([]);
    const order = target.object('KeystoneUser', userKey);
    expect(condition(order, 'Ready')).toMatchObject({ status: 'False', reason: 'ClusterNameTooLong' });
    expect(order?.metadata.finalizers ?? []).toEqual([]);
    expect(keystone.calls).toEqual([]);
    expect(management.writes.filter((w) => !w.startsWith('status:'))).toEqual([]);
  });

  it('teardown: the user, the parked password on the management cluster and the delivered Secret on the target cluster', async () => {
    const { management, target, keystone, deps, site } = fleet();
    target.put('KeystoneUser', user());
    await reconcileUser(userKey, deps, site);
    target.remove('KeystoneUser', userKey);
    expect((await reconcileUser(userKey, deps, site)).actions).toEqual(['delete-user', 'discard', 'withdraw', 'release']);
    expect(keystone.users.size).toBe(0);
    expect(management.secret({ namespace: CP_NS, name: passwordSecretName(location, 1) })).toBeUndefined();
    expect(target.secret({ namespace: NS, name: 'alice-credentials' })).toBeUndefined();
    expect(target.object('KeystoneUser', userKey)).toBeUndefined();
  });
});

describe('KeystoneProject and KeystoneRoleAssignment on a target cluster', () => {
  it('reference orders on the same cluster: a user and project on the management cluster do not count', async () => {
    const { management, target, keystone, deps, site } = fleet();
    target.put('KeystoneProject', project());
    target.put('KeystoneUser', user());
    await reconcileProject({ namespace: NS, name: 'proj' }, deps, site);
    await reconcileUser(userKey, deps, site);
    expect([...keystone.projects.values()][0].description).toContain(`${EDGE}/${NS}/proj`);

    management.put('KeystoneRoleAssignment', assignment());
    await reconcileAssignment({ namespace: NS, name: 'alice-member' }, deps);
    expect(condition(management.object('KeystoneRoleAssignment', { namespace: NS, name: 'alice-member' }), 'AssignmentReady')).toMatchObject({ status: 'False' });

    target.put('KeystoneRoleAssignment', assignment());
    await reconcileAssignment({ namespace: NS, name: 'alice-member' }, deps, site);
    const granted = target.object('KeystoneRoleAssignment', { namespace: NS, name: 'alice-member' });
    expect(condition(granted, 'AssignmentReady')).toMatchObject({ status: 'True', reason: 'RoleAssigned' });
    expect(granted?.status).toMatchObject({ roleID: expect.any(String) });
    expect(keystone.grants.size).toBe(1);
    expect(planePrefix('KeystoneProject', { ...location, name: 'proj' })).toBe(`proj-${orderHash({ ...location, name: 'proj' })}-project`);
  });

  it('a project on a cluster without consent is frozen; on a 64-character cluster it is ClusterNameTooLong', async () => {
    const { target, keystone, deps } = fleet();
    target.put('KeystoneProject', project());
    await reconcileProject({ namespace: NS, name: 'proj' }, deps, { cluster: 'edge-2', orders: target });
    expect(condition(target.object('KeystoneProject', { namespace: NS, name: 'proj' }), 'ProjectReady')).toMatchObject({ reason: 'NamespaceNotAssigned' });
    await reconcileProject({ namespace: NS, name: 'proj' }, deps, { cluster: 'p'.repeat(64), orders: target });
    expect(condition(target.object('KeystoneProject', { namespace: NS, name: 'proj' }), 'ProjectReady')).toMatchObject({ reason: 'ClusterNameTooLong' });
    expect(keystone.projects.size).toBe(0);
  });
});

describe('the Keystone economy on a target cluster', () => {
  const keys = { project: { namespace: NS, name: 'proj' }, user: userKey, assignment: { namespace: NS, name: 'alice-member' } };
  const all = async (deps: PlaneDeps, site: { cluster: string; orders: FakeCluster }) => [
    await reconcileProject(keys.project, deps, site),
    await reconcileUser(keys.user, deps, site),
    await reconcileAssignment(keys.assignment, deps, site),
  ];

  it('each pass records the status at most once, on the target cluster', async () => {
    const { management, target, deps, site } = fleet();
    target.put('KeystoneProject', project());
    target.put('KeystoneUser', user());
    target.put('KeystoneRoleAssignment', assignment());
    for (let i = 0; i < 3; i++) {
      for (const pass of [() => reconcileProject(keys.project, deps, site), () => reconcileUser(keys.user, deps, site), () => reconcileAssignment(keys.assignment, deps, site)]) {
        const before = target.writes.length;
        await pass();
        expect(target.writes.slice(before).filter((w) => w.startsWith('status:')).length).toBeLessThanOrEqual(1);
      }
    }
    expect(management.writes.filter((w) => w.startsWith('status:'))).toEqual([]);
    expect(target.writes.filter((w) => w.startsWith('status:')).sort()).toEqual(['status:KeystoneProject/proj', 'status:KeystoneRoleAssignment/alice-member', 'status:KeystoneUser/alice']);
  });

  it('after a restart (a new memo), orders on a target cluster settled by the cache make 0 Keystone calls and 0 writes on either cluster', async () => {
    const { management, target, keystone, deps: base, site } = fleet();
    target.put('KeystoneProject', project());
    target.put('KeystoneUser', user());
    target.put('KeystoneRoleAssignment', assignment());
    const before = { ...base, memo: new ConvergedPasses() };
    for (let i = 0; i < 3; i++) await all(before, site);
    expect(condition(target.object('KeystoneRoleAssignment', keys.assignment), 'Ready')).toMatchObject({ status: 'True' });
    keystone.calls.length = 0;
    const writes = { management: management.writes.length, target: target.writes.length };
    const restarted = { ...base, memo: new ConvergedPasses() };
    expect((await all(restarted, site)).map((r) => r.skipped)).toEqual([true, true, true]);
    expect((await all(restarted, site)).map((r) => r.skipped)).toEqual([true, true, true]);
    expect(keystone.calls).toEqual([]);
    expect({ management: management.writes.length, target: target.writes.length }).toEqual(writes);
    // What the cache does not show settled gets its full pass: the delivered Secret gone from the target cluster.
    target.secrets.delete(`${NS}/alice-credentials`);
    expect((await reconcileUser(keys.user, { ...base, memo: new ConvergedPasses() }, site)).actions).toEqual(['deliver']);
  });
});
