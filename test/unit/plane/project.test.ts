/**
 * The KeystoneProject (identity-plane.md, KeystoneProject; Shared behaviour), through the driver on in-memory ports.
 */
import { decideProject, ownerMarker, reconcileProject } from '../../../src/plane';
import { CP_NS, NS, adminReady, assignment, condition, controlPlane, credential, plane, project } from './fakes';

const key = { namespace: NS, name: 'proj' };
const FINALIZER = 'c5c3.io/keystoneproject-teardown';

describe('KeystoneProject', () => {
  it('ProjectProvisioned: the project is created in the ControlPlane\'s domain with the order\'s ownership tag; the finalizer comes first', async () => {
    const { cluster, keystone, deps } = plane();
    const order = cluster.put('KeystoneProject', project('proj', { projectName: 'workflow-project' }));
    const result = await reconcileProject(key, deps);
    expect(result.actions).toEqual(['add-finalizer', 'create-project']);
    const [created] = [...keystone.projects.values()];
    expect(created).toMatchObject({ name: 'workflow-project', domainId: 'default', tags: [ownerMarker(order.metadata.uid as string)] });
    expect(created.description).toContain('KeystoneProject tenant-a/proj');
    const now = cluster.object('KeystoneProject', key);
    expect(now?.metadata.finalizers).toEqual([FINALIZER]);
    expect(now?.status).toMatchObject({ projectID: created.id, projectName: 'workflow-project', domainName: 'Default', observedGeneration: 1 });
    expect(condition(now, 'ProjectReady')).toMatchObject({ status: 'True', reason: 'ProjectProvisioned' });
    expect(condition(now, 'Ready')).toMatchObject({ status: 'True', reason: 'AllReady' });
  });

  it('projectName defaults to metadata.name; adminCredential.domainName selects the domain', async () => {
    const { cluster, keystone, deps } = plane({ cp: controlPlane({ spec: { adminCredential: { cloudCredentialsRef: { secretName: 'admin-cloud' }, domainName: 'Tenants' } } }) });
    keystone.domains.set('Tenants', 'dom-t');
    cluster.put('KeystoneProject', project());
    await reconcileProject(key, deps);
    expect([...keystone.projects.values()][0]).toMatchObject({ name: 'proj', domainId: 'dom-t' });
    expect(cluster.object('KeystoneProject', key)?.status?.domainName).toBe('Tenants');
  });

  it('a steady pass makes no Keystone write and no API write', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneProject', project());
    await reconcileProject(key, deps);
    const writes = cluster.writes.length;
    keystone.calls.length = 0;
    const again = await reconcileProject(key, deps);
    expect(again.actions).toEqual([]);
    expect(cluster.writes.length).toBe(writes);
    expect(keystone.calls.filter((c) => !c.startsWith('find') && c !== 'domainId')).toEqual([]);
  });

  it('ProjectCollision: a project of that name this order did not create is never adopted, and never deleted', async () => {
    const { cluster, keystone, deps } = plane();
    keystone.projects.set('p-foreign', { id: 'p-foreign', name: 'proj', domainId: 'default', tags: ['someone-else'] });
    cluster.put('KeystoneProject', project());
    await reconcileProject(key, deps);
    const now = cluster.object('KeystoneProject', key);
    expect(condition(now, 'ProjectReady')).toMatchObject({ status: 'False', reason: 'ProjectCollision', message: expect.stringContaining('p-foreign') });
    expect(now?.status?.projectID).toBeUndefined();
    cluster.remove('KeystoneProject', key);
    const teardown = await reconcileProject(key, deps);
    expect(teardown.actions).toEqual(['release']);
    expect(keystone.projects.has('p-foreign')).toBe(true);
    expect(cluster.object('KeystoneProject', key)).toBeUndefined();
  });

  it('a crash between "created in Keystone" and "status written" is recognised as ours on the next pass: no duplicate', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneProject', project());
    keystone.failNext('createProject', new Error('process killed'), true);
    await expect(reconcileProject(key, deps)).rejects.toThrow('create-project failed: process killed');
    expect(keystone.projects.size).toBe(1);
    expect(cluster.object('KeystoneProject', key)?.status?.projectID).toBeUndefined();
    await reconcileProject(key, deps);
    expect(keystone.projects.size).toBe(1);
    expect(condition(cluster.object('KeystoneProject', key), 'ProjectReady')).toMatchObject({ reason: 'ProjectProvisioned' });
  });

  it('ProjectFailed: a Keystone failure is reported and thrown for backoff; the domain must exist', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneProject', project());
    keystone.failNext('findProject');
    await expect(reconcileProject(key, deps)).rejects.toThrow('KeystoneProject tenant-a/proj');
    expect(condition(cluster.object('KeystoneProject', key), 'ProjectReady')).toMatchObject({ status: 'False', reason: 'ProjectFailed' });
    keystone.domains.clear();
    const result = await reconcileProject(key, deps);
    expect(condition(cluster.object('KeystoneProject', key), 'ProjectReady')).toMatchObject({ reason: 'ProjectFailed', message: expect.stringContaining('domain Default') });
    expect(result.requeueAfter).toBeGreaterThan(0);
  });

  it('NamespaceNotAssigned: frozen — nothing created or changed, no finalizer; what exists stays', async () => {
    const { cluster, keystone, deps } = plane({ cp: controlPlane({ spec: { namespaceAssignments: [] } }) });
    cluster.put('KeystoneProject', project());
    await reconcileProject(key, deps);
    expect(keystone.calls).toEqual([]);
    const now = cluster.object('KeystoneProject', key);
    expect(now?.metadata.finalizers).toBeUndefined();
    expect(condition(now, 'ProjectReady')).toMatchObject({ status: 'False', reason: 'NamespaceNotAssigned' });
    expect(condition(now, 'Ready')).toMatchObject({ status: 'False', reason: 'NamespaceNotAssigned' });
  });

  it('NamespaceNotAssigned after provisioning: the project and the recorded ids stay', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneProject', project());
    await reconcileProject(key, deps);
    cluster.put('ControlPlane', { ...controlPlane({ spec: { namespaceAssignments: [] } }), status: adminReady() });
    keystone.calls.length = 0;
    await reconcileProject(key, deps);
    expect(keystone.calls).toEqual([]);
    expect(keystone.projects.size).toBe(1);
    expect(cluster.object('KeystoneProject', key)?.status?.projectID).toBeDefined();
  });

  it('ControlPlaneNotFound and WaitingForAdminCredential: nothing reaches Keystone; the finalizer comes once assigned', async () => {
    const { cluster, keystone, deps } = plane({ ready: false });
    cluster.put('KeystoneProject', project('proj', { controlPlaneRef: { name: 'nope', namespace: CP_NS } }));
    await reconcileProject(key, deps);
    expect(condition(cluster.object('KeystoneProject', key), 'ProjectReady')).toMatchObject({ reason: 'ControlPlaneNotFound' });
    cluster.put('KeystoneProject', project());
    await reconcileProject(key, deps);
    const now = cluster.object('KeystoneProject', key);
    expect(condition(now, 'ProjectReady')).toMatchObject({ reason: 'WaitingForAdminCredential' });
    expect(now?.metadata.finalizers).toEqual([FINALIZER]);
    expect(keystone.calls).toEqual([]);
  });

  it('ReferencedByRoleAssignments and ReferencedByApplicationCredentials hold the deletion; then teardown deletes the project', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneProject', project());
    await reconcileProject(key, deps);
    cluster.put('KeystoneRoleAssignment', assignment());
    cluster.put('KeystoneApplicationCredential', credential());
    cluster.remove('KeystoneProject', key);
    const held = await reconcileProject(key, deps);
    expect(held.actions).toEqual([]);
    expect(held.requeueAfter).toBeGreaterThan(0);
    expect(condition(cluster.object('KeystoneProject', key), 'Ready')).toMatchObject({ status: 'False', reason: 'ReferencedByApplicationCredentials' });
    cluster.remove('KeystoneApplicationCredential', { namespace: NS, name: 'app' });
    await reconcileProject(key, deps);
    expect(condition(cluster.object('KeystoneProject', key), 'ProjectReady')).toMatchObject({ reason: 'ReferencedByRoleAssignments' });
    expect(keystone.projects.size).toBe(1);
    cluster.remove('KeystoneRoleAssignment', { namespace: NS, name: 'alice-member' });
    const done = await reconcileProject(key, deps);
    expect(done.actions).toEqual(['delete-project', 'release']);
    expect(keystone.projects.size).toBe(0);
    expect(cluster.object('KeystoneProject', key)).toBeUndefined();
  });

  it('teardown while frozen still deletes what the order created; with the ControlPlane gone it releases without Keystone', async () => {
    const a = plane();
    a.cluster.put('KeystoneProject', project());
    await reconcileProject(key, a.deps);
    a.cluster.put('ControlPlane', { ...controlPlane({ spec: { namespaceAssignments: [] } }), status: adminReady() });
    a.cluster.remove('KeystoneProject', key);
    expect((await reconcileProject(key, a.deps)).actions).toEqual(['delete-project', 'release']);

    const b = plane();
    b.cluster.put('KeystoneProject', project());
    await reconcileProject(key, b.deps);
    b.cluster.remove('ControlPlane', { namespace: CP_NS, name: 'cp' });
    b.cluster.remove('KeystoneProject', key);
    b.keystone.calls.length = 0;
    expect((await reconcileProject(key, b.deps)).actions).toEqual(['release']);
    expect(b.keystone.calls).toEqual([]);
  });

  it('teardown waits while the admin credential is not ready', async () => {
    const { cluster, deps } = plane();
    cluster.put('KeystoneProject', project());
    await reconcileProject(key, deps);
    cluster.put('ControlPlane', { ...controlPlane(), status: adminReady('AuthenticationFailed', 'False') });
    cluster.remove('KeystoneProject', key);
    expect((await reconcileProject(key, deps)).actions).toEqual([]);
    expect(condition(cluster.object('KeystoneProject', key), 'ProjectReady')).toMatchObject({ reason: 'WaitingForAdminCredential', message: expect.stringContaining('deletion waits') });
  });

  it('an order without its finalizer being deleted is left alone (decide)', () => {
    const order = { ...project(), metadata: { ...project().metadata, deletionTimestamp: '2026-12-01T00:00:00Z' } };
    const plan = decideProject(order, { consent: { state: 'refused', reason: 'ControlPlaneNotFound', message: 'x' } }, new Date());
    expect(plan.actions).toEqual([]);
  });
});
