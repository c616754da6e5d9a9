/**
 * The KeystoneUser (identity-plane.md, KeystoneUser; Shared behaviour), through the driver on in-memory ports.
 */
import { parse } from 'yaml';
import type { KeystoneUser } from '../../../src/api';
import { ownerMarker, passwordSecretName, reconcileUser, type SecretObject } from '../../../src/plane';
import { CP_NS, NS, adminReady, assignment, condition, controlPlane, credential, plane, user } from './fakes';

const key = { namespace: NS, name: 'alice' };
const loc = { namespace: NS, name: 'alice' };
const FINALIZER = 'c5c3.io/keystoneuser-teardown';
const parked = (cluster: ReturnType<typeof plane>['cluster'], g: number) => cluster.secret({ namespace: CP_NS, name: passwordSecretName(loc, g) })?.data.password;
const delivered = (cluster: ReturnType<typeof plane>['cluster']) => cluster.secret({ namespace: NS, name: 'alice-credentials' });

describe('KeystoneUser', () => {
  it('UserProvisioned: the password is parked before Keystone sees it, the user is created with the ownership marker, the Secret is delivered', async () => {
    const { cluster, keystone, deps } = plane();
    const order = cluster.put('KeystoneUser', user());
    const create = keystone.createUser.bind(keystone);
    let parkedWhenCreated: string | undefined;
    keystone.createUser = async (input) => {
      parkedWhenCreated = parked(cluster, 1);
      return create(input);
    };
    const result = await reconcileUser(key, deps);
    expect(result.actions).toEqual(['add-finalizer', 'park', 'create-user', 'deliver']);
    const [created] = [...keystone.users.values()];
    expect(created).toMatchObject({ name: 'alice', domainId: 'default', password: 'pw-1' });
    expect(created.description).toContain(ownerMarker(order.metadata.uid as string));
    expect(parkedWhenCreated).toBe('pw-1');
    expect(parked(cluster, 1)).toBe('pw-1');
    const now = cluster.object('KeystoneUser', key) as KeystoneUser;
    expect(now.metadata.finalizers).toEqual([FINALIZER]);
    expect(now.status).toMatchObject({ userID: created.id, passwordGeneration: 1, lastPasswordRotation: '2026-12-01T00:00:00Z', secretName: 'alice-credentials', secretKeys: ['clouds.yaml', 'password'] });
    expect(condition(now, 'UserReady')).toMatchObject({ status: 'True', reason: 'UserProvisioned' });
    expect(condition(now, 'DeliveryReady')).toMatchObject({ status: 'True', reason: 'Delivered' });
    expect(condition(now, 'Ready')).toMatchObject({ status: 'True', reason: 'AllReady' });
  });

  // A status is written on the copy the pass decided from (ClusterPort.writeStatus): the pass's own finalizer write
  // moves that copy on, a change somebody else made during the pass makes the write lose.
  it('a new order\'s pass writes its status on the copy its own finalizer write returned; an order changed during a pass loses that pass\'s status write (409), and the next pass decides from the change', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    const create = keystone.createUser.bind(keystone);
    keystone.createUser = async (input) => {
      // The order raised while Keystone creates the user: the pass decided from the copy before the raise.
      const current = cluster.object('KeystoneUser', key) as KeystoneUser;
      cluster.put('KeystoneUser', { ...current, spec: { ...current.spec, passwordGeneration: 2 } });
      return create(input);
    };
    await expect(reconcileUser(key, deps)).rejects.toThrow(/409 Conflict/);
    expect(cluster.object('KeystoneUser', key)?.status).toBeUndefined();
    keystone.createUser = create;
    const result = await reconcileUser(key, deps);
    expect(result.actions).toEqual(['park', 'set-password', 'deliver', 'discard']);
    expect(cluster.object('KeystoneUser', key)?.status).toMatchObject({ passwordGeneration: 2 });
  });

  it('the parked password carries the three child labels and the child name <name>-<8 hex>-user-password-v<N>', async () => {
    const { cluster, deps } = plane();
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    const child = cluster.secret({ namespace: CP_NS, name: passwordSecretName(loc, 1) });
    expect(child?.metadata.name).toMatch(/^alice-[0-9a-f]{8}-user-password-v1$/);
    expect(child?.metadata.labels).toEqual({ 'c5c3.io/keystoneuser-name': 'alice', 'c5c3.io/keystoneuser-namespace': NS, 'c5c3.io/keystoneuser-cluster': '' });
  });

  it('the delivered Secret: controller owner reference, labels, clouds.yaml (password cloud, no project, no CA bundle) and password', async () => {
    const { cluster, deps } = plane();
    const order = cluster.put('KeystoneUser', user('alice', { userName: 'svc-alice' }));
    await reconcileUser(key, deps);
    const secret = delivered(cluster);
    expect(secret?.metadata.ownerReferences).toEqual([{ apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', name: 'alice', uid: order.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(secret?.metadata.labels).toEqual({ 'c5c3.io/keystoneuser-name': 'alice', 'c5c3.io/keystoneuser-namespace': NS });
    expect(secret?.data.password).toBe('pw-1');
    expect(parse(secret?.data['clouds.yaml'] as string)).toEqual({
      clouds: {
        openstack: {
          auth_type: 'password',
          auth: { auth_url: 'https://keystone.example.com/v3', username: 'svc-alice', password: 'pw-1', user_domain_name: 'Default' },
          region_name: 'RegionOne',
          interface: 'public',
          identity_api_version: 3,
        },
      },
    });
    expect(secret?.data['clouds.yaml']).not.toMatch(/project|cacert/);
  });

  it('a steady pass writes nothing and changes nothing in Keystone', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    const writes = cluster.writes.length;
    keystone.calls.length = 0;
    const again = await reconcileUser(key, deps);
    expect(again.actions).toEqual([]);
    expect(cluster.writes.length).toBe(writes);
    expect(keystone.calls).toEqual(['domainId', 'findUser']);
  });

  it('a raised passwordGeneration rotates the password: parked first, set in Keystone, delivered, the old generation swept', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    cluster.put('KeystoneUser', { ...(cluster.object('KeystoneUser', key) as KeystoneUser), spec: { ...user().spec, passwordGeneration: 2 } });
    const later = { ...deps, clock: () => new Date('2026-12-02T00:00:00Z') };
    const result = await reconcileUser(key, later);
    expect(result.actions).toEqual(['park', 'set-password', 'deliver', 'discard']);
    expect([...keystone.users.values()][0].password).toBe('pw-2');
    expect(parked(cluster, 1)).toBeUndefined();
    expect(parked(cluster, 2)).toBe('pw-2');
    expect(delivered(cluster)?.data.password).toBe('pw-2');
    expect(cluster.object('KeystoneUser', key)?.status).toMatchObject({ passwordGeneration: 2, lastPasswordRotation: '2026-12-02T00:00:00Z' });
  });

  it('a raised passwordGeneration is never held, also while a credential holds the user', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    cluster.put('KeystoneApplicationCredential', credential());
    cluster.put('KeystoneUser', { ...(cluster.object('KeystoneUser', key) as KeystoneUser), spec: { ...user().spec, passwordGeneration: 3 } });
    await reconcileUser(key, deps);
    expect([...keystone.users.values()][0].password).toBe('pw-2');
    expect(cluster.object('KeystoneUser', key)?.status?.passwordGeneration).toBe(3);
  });

  it('a crash between parking and Keystone: the parked password is used, never generated again', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    keystone.failNext('createUser', new Error('process killed'));
    await expect(reconcileUser(key, deps)).rejects.toThrow('create-user failed');
    expect(parked(cluster, 1)).toBe('pw-1');
    await reconcileUser(key, deps);
    expect([...keystone.users.values()]).toHaveLength(1);
    expect([...keystone.users.values()][0].password).toBe('pw-1');
    expect(delivered(cluster)?.data.password).toBe('pw-1');
  });

  it('a crash between "created in Keystone" and "status written" is recognised as ours: no duplicate, the parked password delivered', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    keystone.failNext('createUser', new Error('process killed'), true);
    await expect(reconcileUser(key, deps)).rejects.toThrow('process killed');
    expect(cluster.object('KeystoneUser', key)?.status?.userID).toBeUndefined();
    await reconcileUser(key, deps);
    expect([...keystone.users.values()]).toHaveLength(1);
    expect(cluster.object('KeystoneUser', key)?.status).toMatchObject({ userID: [...keystone.users.keys()][0], passwordGeneration: 1 });
    expect(delivered(cluster)?.data.password).toBe([...keystone.users.values()][0].password);
  });

  it('a crash after a rotation reached Keystone but before the status: the same parked password is set again', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    cluster.put('KeystoneUser', { ...(cluster.object('KeystoneUser', key) as KeystoneUser), spec: { ...user().spec, passwordGeneration: 2 } });
    keystone.failNext('setPassword', new Error('process killed'), true);
    await expect(reconcileUser(key, deps)).rejects.toThrow('set-password failed');
    await reconcileUser(key, deps);
    expect([...keystone.users.values()][0].password).toBe('pw-2');
    expect(delivered(cluster)?.data.password).toBe('pw-2');
  });

  it('an edited key is rewritten and a deleted Secret is written again; a key somebody else added stays', async () => {
    const { cluster, deps } = plane();
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    const secret = delivered(cluster);
    cluster.putSecret({ metadata: { ...(secret as SecretObject).metadata }, data: { ...secret?.data, password: 'edited', extra: 'mine' } });
    expect((await reconcileUser(key, deps)).actions).toEqual(['deliver']);
    expect(delivered(cluster)?.data).toMatchObject({ password: 'pw-1', extra: 'mine' });
    cluster.secrets.delete(`${NS}/alice-credentials`);
    expect((await reconcileUser(key, deps)).actions).toEqual(['deliver']);
    expect(delivered(cluster)?.data.password).toBe('pw-1');
  });

  it('DeliveryRefused: a Secret of the delivered name the order does not own is never taken over', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.putSecret({ metadata: { name: 'alice-credentials', namespace: NS }, data: { mine: 'yes' } });
    cluster.put('KeystoneUser', user());
    const result = await reconcileUser(key, deps);
    expect(result.actions).not.toContain('deliver');
    expect(delivered(cluster)?.data).toEqual({ mine: 'yes' });
    const now = cluster.object('KeystoneUser', key);
    expect(condition(now, 'DeliveryReady')).toMatchObject({ status: 'False', reason: 'DeliveryRefused', message: expect.stringContaining('alice-credentials') });
    expect(condition(now, 'UserReady')).toMatchObject({ status: 'True' });
    expect(now?.status?.secretName).toBeUndefined();
    expect(keystone.users.size).toBe(1);
    // teardown never deletes it either
    cluster.remove('KeystoneUser', key);
    await reconcileUser(key, deps);
    expect(delivered(cluster)?.data).toEqual({ mine: 'yes' });
  });

  it('UserCollision: a user of that name this order did not create is never adopted and never deleted', async () => {
    const { cluster, keystone, deps } = plane();
    keystone.users.set('u-foreign', { id: 'u-foreign', name: 'alice', domainId: 'default', password: 'theirs', description: 'a human' });
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    const now = cluster.object('KeystoneUser', key);
    expect(condition(now, 'UserReady')).toMatchObject({ status: 'False', reason: 'UserCollision', message: expect.stringContaining('u-foreign') });
    expect(keystone.users.get('u-foreign')?.password).toBe('theirs');
    expect(delivered(cluster)).toBeUndefined();
    cluster.remove('KeystoneUser', key);
    expect((await reconcileUser(key, deps)).actions).toEqual(['release']);
    expect(keystone.users.has('u-foreign')).toBe(true);
  });

  it('UserFailed: a Keystone failure; DeliveryError: a failure writing the delivered Secret', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    keystone.failNext('findUser');
    await expect(reconcileUser(key, deps)).rejects.toThrow();
    expect(condition(cluster.object('KeystoneUser', key), 'UserReady')).toMatchObject({ reason: 'UserFailed' });
    cluster.beforeWrite = (w) => {
      if (w.startsWith('apply:')) throw new Error('the API server said no');
    };
    await expect(reconcileUser(key, deps)).rejects.toThrow('deliver failed');
    const now = cluster.object('KeystoneUser', key);
    expect(condition(now, 'DeliveryReady')).toMatchObject({ status: 'False', reason: 'DeliveryError', message: expect.stringContaining('the API server said no') });
  });

  it('KeystoneNotPublished: an order on another cluster with no publicEndpoint gets no document', async () => {
    const cp = controlPlane({ spec: { namespaceAssignments: [{ namespace: NS, targetClusterRef: { name: 'edge-1' } }] } });
    const { cluster, deps } = plane({ cp });
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps, { cluster: 'edge-1' });
    expect(condition(cluster.object('KeystoneUser', key), 'DeliveryReady')).toMatchObject({ status: 'False', reason: 'KeystoneNotPublished' });
    expect(delivered(cluster)).toBeUndefined();
    cluster.put('ControlPlane', { ...controlPlane({ spec: { ...cp.spec, services: { keystone: { external: { authURL: 'https://k.internal/v3' }, publicEndpoint: 'https://k.example.com/v3' } } } }), status: adminReady() });
    await reconcileUser(key, deps, { cluster: 'edge-1' });
    expect(parse(delivered(cluster)?.data['clouds.yaml'] as string).clouds.openstack.auth.auth_url).toBe('https://k.example.com/v3');
    expect(cluster.secret({ namespace: CP_NS, name: passwordSecretName({ ...loc, cluster: 'edge-1' }, 1) })?.metadata.labels?.['c5c3.io/keystoneuser-cluster']).toBe('edge-1');
  });

  it('NamespaceNotAssigned: frozen — nothing created, changed, delivered, repaired or swept', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    cluster.put('ControlPlane', { ...controlPlane({ spec: { namespaceAssignments: [] } }), status: adminReady() });
    cluster.secrets.delete(`${NS}/alice-credentials`);
    cluster.put('KeystoneUser', { ...(cluster.object('KeystoneUser', key) as KeystoneUser), spec: { ...user().spec, passwordGeneration: 2 } });
    keystone.calls.length = 0;
    const result = await reconcileUser(key, deps);
    expect(result.actions).toEqual([]);
    expect(keystone.calls).toEqual([]);
    expect(delivered(cluster)).toBeUndefined();
    expect(parked(cluster, 1)).toBe('pw-1');
    const now = cluster.object('KeystoneUser', key);
    for (const type of ['UserReady', 'DeliveryReady', 'Ready']) expect(condition(now, type)).toMatchObject({ status: 'False', reason: 'NamespaceNotAssigned' });
    expect(now?.status).toMatchObject({ passwordGeneration: 1 });
  });

  it('WaitingForAdminCredential on both sub-conditions; nothing reaches Keystone', async () => {
    const { cluster, keystone, deps } = plane({ ready: false });
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    const now = cluster.object('KeystoneUser', key);
    expect(condition(now, 'UserReady')).toMatchObject({ reason: 'WaitingForAdminCredential' });
    expect(condition(now, 'DeliveryReady')).toMatchObject({ reason: 'WaitingForAdminCredential' });
    expect(keystone.calls).toEqual([]);
  });

  it('ReferencedByRoleAssignments, ReferencedByApplicationCredentials; teardown deletes the user, the parked passwords and the delivered Secret', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    cluster.put('KeystoneRoleAssignment', assignment());
    cluster.remove('KeystoneUser', key);
    expect((await reconcileUser(key, deps)).actions).toEqual([]);
    expect(condition(cluster.object('KeystoneUser', key), 'UserReady')).toMatchObject({ reason: 'ReferencedByRoleAssignments' });
    expect(condition(cluster.object('KeystoneUser', key), 'Ready')).toMatchObject({ reason: 'ReferencedByRoleAssignments' });
    cluster.remove('KeystoneRoleAssignment', { namespace: NS, name: 'alice-member' });
    cluster.put('KeystoneApplicationCredential', credential());
    await reconcileUser(key, deps);
    expect(condition(cluster.object('KeystoneUser', key), 'UserReady')).toMatchObject({ reason: 'ReferencedByApplicationCredentials' });
    expect(keystone.users.size).toBe(1);
    cluster.remove('KeystoneApplicationCredential', { namespace: NS, name: 'app' });
    expect((await reconcileUser(key, deps)).actions).toEqual(['delete-user', 'discard', 'withdraw', 'release']);
    expect(keystone.users.size).toBe(0);
    expect(parked(cluster, 1)).toBeUndefined();
    expect(delivered(cluster)).toBeUndefined();
    expect(cluster.object('KeystoneUser', key)).toBeUndefined();
  });

  it('with the ControlPlane gone the teardown removes the children and releases without Keystone', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    cluster.remove('ControlPlane', { namespace: CP_NS, name: 'cp' });
    cluster.remove('KeystoneUser', key);
    keystone.calls.length = 0;
    expect((await reconcileUser(key, deps)).actions).toEqual(['discard', 'withdraw', 'release']);
    expect(keystone.calls).toEqual([]);
  });

  it('a parked password lost while Keystone holds it: a new one is parked and set', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    await reconcileUser(key, deps);
    cluster.secrets.delete(`${CP_NS}/${passwordSecretName(loc, 1)}`);
    expect((await reconcileUser(key, deps)).actions).toEqual(['park', 'set-password', 'deliver']);
    expect([...keystone.users.values()][0].password).toBe('pw-2');
    expect(delivered(cluster)?.data.password).toBe('pw-2');
  });
});
