/**
 * The KeystoneRoleAssignment (identity-plane.md, KeystoneRoleAssignment; Shared behaviour), through the drivers on
 * in-memory ports: the user and project are provisioned by their own drivers first.
 */
import type { KeystoneRoleAssignment } from '../../../src/api';
import { reconcileAssignment, reconcileProject, reconcileUser } from '../../../src/plane';
import { CP_NS, NS, T0, adminReady, assignment, condition, controlPlane, credential, plane, project, user } from './fakes';

const key = { namespace: NS, name: 'alice-member' };
const FINALIZER = 'c5c3.io/keystoneroleassignment-teardown';

async function provisioned(options: Parameters<typeof plane>[0] = {}) {
  const world = plane(options);
  world.cluster.put('KeystoneUser', user());
  world.cluster.put('KeystoneProject', project());
  await reconcileUser({ namespace: NS, name: 'alice' }, world.deps);
  await reconcileProject({ namespace: NS, name: 'proj' }, world.deps);
  const userID = world.cluster.object('KeystoneUser', { namespace: NS, name: 'alice' })?.status?.userID as string;
  const projectID = world.cluster.object('KeystoneProject', { namespace: NS, name: 'proj' })?.status?.projectID as string;
  return { ...world, userID, projectID, grant: `${userID}/${projectID}/role-member` };
}

const ready = (cluster: ReturnType<typeof plane>['cluster'], name = 'alice-member') => condition(cluster.object('KeystoneRoleAssignment', { namespace: NS, name }), 'AssignmentReady');

describe('KeystoneRoleAssignment', () => {
  it('RoleAssigned: the role is granted to the user on the project; status.roleID, userID and projectID are reported', async () => {
    const { cluster, keystone, deps, userID, projectID, grant } = await provisioned();
    cluster.put('KeystoneRoleAssignment', assignment());
    expect((await reconcileAssignment(key, deps)).actions).toEqual(['add-finalizer', 'grant']);
    expect(keystone.grants.has(grant)).toBe(true);
    const now = cluster.object('KeystoneRoleAssignment', key);
    expect(now?.metadata.finalizers).toEqual([FINALIZER]);
    expect(now?.status).toMatchObject({ roleID: 'role-member', userID, projectID, observedGeneration: 1 });
    expect(ready(cluster)).toMatchObject({ status: 'True', reason: 'RoleAssigned' });
    expect(condition(now, 'Ready')).toMatchObject({ status: 'True' });
    const writes = cluster.writes.length;
    expect((await reconcileAssignment(key, deps)).actions).toEqual([]);
    expect(cluster.writes.length).toBe(writes);
  });

  it('RoleNotAllowed: a role outside the namespace\'s allowedRoles is not granted', async () => {
    const { cluster, keystone, deps } = await provisioned();
    cluster.put('KeystoneRoleAssignment', assignment('alice-admin', { role: 'admin' }));
    await reconcileAssignment({ namespace: NS, name: 'alice-admin' }, deps);
    expect(ready(cluster, 'alice-admin')).toMatchObject({ status: 'False', reason: 'RoleNotAllowed', message: expect.stringContaining('(member, reader)') });
    expect(keystone.grants.size).toBe(0);
  });

  it('RoleNotAllowed after a grant: allowedRoles narrowed, the grant this order made is revoked', async () => {
    const { cluster, keystone, deps, grant } = await provisioned();
    cluster.put('KeystoneRoleAssignment', assignment());
    await reconcileAssignment(key, deps);
    cluster.put('ControlPlane', { ...controlPlane({ spec: { namespaceAssignments: [{ namespace: NS, allowedRoles: ['reader'] }] } }), status: adminReady() });
    expect((await reconcileAssignment(key, deps)).actions).toEqual(['revoke']);
    expect(keystone.grants.has(grant)).toBe(false);
    expect(cluster.object('KeystoneRoleAssignment', key)?.status?.roleID).toBeUndefined();
  });

  it('UserNotFound and ProjectNotFound', async () => {
    const { cluster, deps } = await provisioned();
    cluster.put('KeystoneRoleAssignment', assignment('x', { userRef: { name: 'bob' } }));
    await reconcileAssignment({ namespace: NS, name: 'x' }, deps);
    expect(ready(cluster, 'x')).toMatchObject({ reason: 'UserNotFound', message: 'no KeystoneUser bob in namespace tenant-a' });
    cluster.put('KeystoneRoleAssignment', assignment('y', { projectRef: { name: 'nope' } }));
    await reconcileAssignment({ namespace: NS, name: 'y' }, deps);
    expect(ready(cluster, 'y')).toMatchObject({ reason: 'ProjectNotFound' });
  });

  it('ControlPlaneMismatch: the user belongs to another ControlPlane', async () => {
    const { cluster, deps } = await provisioned();
    cluster.put('ControlPlane', { ...controlPlane({ name: 'cp2' }), status: adminReady() });
    cluster.put('KeystoneRoleAssignment', assignment('x', { controlPlaneRef: { name: 'cp2', namespace: CP_NS } }));
    await reconcileAssignment({ namespace: NS, name: 'x' }, deps);
    expect(ready(cluster, 'x')).toMatchObject({ reason: 'ControlPlaneMismatch', message: expect.stringContaining('cp-system/cp, this order to cp-system/cp2') });
  });

  it('WaitingForUser and WaitingForProject: not provisioned yet', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    cluster.put('KeystoneProject', project());
    cluster.put('KeystoneRoleAssignment', assignment());
    await reconcileAssignment(key, deps);
    expect(ready(cluster)).toMatchObject({ reason: 'WaitingForUser', message: expect.stringContaining('UserReady: not reported') });
    await reconcileUser({ namespace: NS, name: 'alice' }, deps);
    await reconcileAssignment(key, deps);
    expect(ready(cluster)).toMatchObject({ reason: 'WaitingForProject' });
    expect(keystone.grants.size).toBe(0);
  });

  it('DuplicateRoleAssignment: the older order owns the grant; the younger never grants, and takes over when the older is deleted', async () => {
    const { cluster, keystone, deps, grant } = await provisioned();
    cluster.put('KeystoneRoleAssignment', { ...assignment('first'), metadata: { ...assignment('first').metadata, creationTimestamp: '2026-11-01T00:00:00Z' } });
    cluster.put('KeystoneRoleAssignment', { ...assignment('second'), metadata: { ...assignment('second').metadata, creationTimestamp: '2026-11-02T00:00:00Z' } });
    await reconcileAssignment({ namespace: NS, name: 'first' }, deps);
    keystone.calls.length = 0;
    expect((await reconcileAssignment({ namespace: NS, name: 'second' }, deps)).actions).toEqual(['add-finalizer']);
    expect(ready(cluster, 'second')).toMatchObject({ reason: 'DuplicateRoleAssignment', message: expect.stringContaining('first') });
    expect(keystone.calls).not.toContain('grantRole');
    // the owner hands over instead of revoking
    cluster.remove('KeystoneRoleAssignment', { namespace: NS, name: 'first' });
    expect((await reconcileAssignment({ namespace: NS, name: 'first' }, deps)).actions).toEqual(['release']);
    expect(keystone.grants.has(grant)).toBe(true);
    await reconcileAssignment({ namespace: NS, name: 'second' }, deps);
    expect(ready(cluster, 'second')).toMatchObject({ status: 'True', reason: 'RoleAssigned' });
    // a deleted duplicate releases without revoking
    cluster.put('KeystoneRoleAssignment', { ...assignment('third'), metadata: { ...assignment('third').metadata, creationTimestamp: '2026-11-03T00:00:00Z' } });
    await reconcileAssignment({ namespace: NS, name: 'third' }, deps);
    cluster.remove('KeystoneRoleAssignment', { namespace: NS, name: 'third' });
    expect((await reconcileAssignment({ namespace: NS, name: 'third' }, deps)).actions).toEqual(['release']);
    expect(keystone.grants.has(grant)).toBe(true);
  });

  it('RoleAssignmentFailed: the role does not exist in Keystone, or Keystone fails', async () => {
    const { cluster, keystone, deps } = await provisioned({ cp: controlPlane({ spec: { namespaceAssignments: [{ namespace: NS, allowedRoles: ['member', 'auditor'] }] } }) });
    cluster.put('KeystoneRoleAssignment', assignment('x', { role: 'auditor' }));
    await reconcileAssignment({ namespace: NS, name: 'x' }, deps);
    expect(ready(cluster, 'x')).toMatchObject({ reason: 'RoleAssignmentFailed', message: 'role auditor does not exist in Keystone' });
    cluster.put('KeystoneRoleAssignment', assignment());
    keystone.failNext('grantRole');
    await expect(reconcileAssignment(key, deps)).rejects.toThrow('grant failed');
    expect(ready(cluster)).toMatchObject({ reason: 'RoleAssignmentFailed', message: expect.stringContaining('grant:') });
  });

  it('NamespaceNotAssigned: frozen — the grant stays and status.roleID is kept', async () => {
    const { cluster, keystone, deps, grant } = await provisioned();
    cluster.put('KeystoneRoleAssignment', assignment());
    await reconcileAssignment(key, deps);
    cluster.put('ControlPlane', { ...controlPlane({ spec: { namespaceAssignments: [] } }), status: adminReady() });
    keystone.calls.length = 0;
    expect((await reconcileAssignment(key, deps)).actions).toEqual([]);
    expect(keystone.calls).toEqual([]);
    expect(keystone.grants.has(grant)).toBe(true);
    expect(cluster.object('KeystoneRoleAssignment', key)?.status?.roleID).toBe('role-member');
    expect(ready(cluster)).toMatchObject({ reason: 'NamespaceNotAssigned' });
  });

  it('WaitingForAdminCredential: nothing reaches Keystone', async () => {
    const { cluster, keystone, deps } = await provisioned();
    cluster.put('ControlPlane', { ...controlPlane(), status: adminReady('KeystoneUnreachable', 'False') });
    cluster.put('KeystoneRoleAssignment', assignment());
    keystone.calls.length = 0;
    await reconcileAssignment(key, deps);
    expect(ready(cluster)).toMatchObject({ reason: 'WaitingForAdminCredential' });
    expect(keystone.calls).toEqual([]);
  });

  it('ReferencedByApplicationCredentials holds the deletion; then the grant is revoked and the order released', async () => {
    const { cluster, keystone, deps, grant } = await provisioned();
    cluster.put('KeystoneRoleAssignment', assignment());
    await reconcileAssignment(key, deps);
    cluster.put('KeystoneApplicationCredential', credential());
    cluster.remove('KeystoneRoleAssignment', key);
    expect((await reconcileAssignment(key, deps)).actions).toEqual([]);
    expect(condition(cluster.object('KeystoneRoleAssignment', key), 'Ready')).toMatchObject({ reason: 'ReferencedByApplicationCredentials' });
    expect(keystone.grants.has(grant)).toBe(true);
    cluster.remove('KeystoneApplicationCredential', { namespace: NS, name: 'app' });
    expect((await reconcileAssignment(key, deps)).actions).toEqual(['revoke', 'release']);
    expect(keystone.grants.has(grant)).toBe(false);
    expect(cluster.object('KeystoneRoleAssignment', key)).toBeUndefined();
  });

  it('a crash between the grant and the status write: teardown still revokes what Keystone holds', async () => {
    const { cluster, keystone, deps, grant } = await provisioned();
    cluster.put('KeystoneRoleAssignment', assignment());
    keystone.failNext('grantRole', new Error('process killed'), true);
    await expect(reconcileAssignment(key, deps)).rejects.toThrow('process killed');
    expect(keystone.grants.has(grant)).toBe(true);
    const now = cluster.object('KeystoneRoleAssignment', key) as KeystoneRoleAssignment;
    expect(now.status?.roleID).toBeUndefined();
    cluster.remove('KeystoneRoleAssignment', key);
    expect((await reconcileAssignment(key, deps)).actions).toEqual(['revoke', 'release']);
    expect(keystone.grants.size).toBe(0);
  });

  it('the full order of deletion leaves nothing in Keystone', async () => {
    const { cluster, keystone, deps } = await provisioned();
    cluster.put('KeystoneRoleAssignment', assignment());
    await reconcileAssignment(key, deps);
    for (const [kind, name] of [['KeystoneUser', 'alice'], ['KeystoneProject', 'proj'], ['KeystoneRoleAssignment', 'alice-member']] as const) cluster.remove(kind, { namespace: NS, name });
    const clock = () => T0;
    await reconcileUser({ namespace: NS, name: 'alice' }, { ...deps, clock });
    await reconcileProject({ namespace: NS, name: 'proj' }, deps);
    expect(keystone.users.size + keystone.projects.size).toBe(2); // held by the assignment
    await reconcileAssignment(key, deps);
    await reconcileUser({ namespace: NS, name: 'alice' }, deps);
    await reconcileProject({ namespace: NS, name: 'proj' }, deps);
    expect(keystone.users.size + keystone.projects.size + keystone.grants.size).toBe(0);
    expect([...cluster.secrets.keys()]).toEqual([`${CP_NS}/admin-cloud`]);
  });
});
