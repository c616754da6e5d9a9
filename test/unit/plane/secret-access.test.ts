/**
 * What a missing Secret grant means (src/plane/secret-access.ts, issue 34), one test per rule: where each kind needs
 * Secrets, when a pass waits, the refusal's message (namespace, Role, command, construct), consent, and each kind
 * through its driver on in-memory ports: frozen with SecretAccessNotGranted, nothing else written, no Keystone call.
 */
import { credentialAdmission, consentOf, decideIdentityStatus, deniedMessage, grantHintOf, pendingPlace, reconcileControlPlane, reconcileProject, reconcileUser, secretPlacesOf, type SecretAccess } from '../../../src/plane';
import { CP_NS, NS, adminCloudsYaml, adminReady, condition, controlPlane, credential, plane, project, user } from './fakes';

const hint = grantHintOf('keystone-appcred-operator', 'system:serviceaccount:kac-system:keystone-appcred-operator');
const FORBIDDEN = 'secrets is forbidden: User "system:serviceaccount:kac-system:keystone-appcred-operator" cannot list resource "secrets" in API group "" in the namespace "tenant-a"';
const denied: SecretAccess = { state: 'denied', detail: FORBIDDEN, grant: hint };

describe('where a pass needs Secrets', () => {
  it('a ControlPlane: its namespace (and its identity source\'s); an order: its ControlPlane\'s namespace, and its own for a kind that delivers there', () => {
    const cp = controlPlane();
    expect(secretPlacesOf('ControlPlane', cp)).toEqual([{ cluster: '', namespace: CP_NS }]);
    expect(secretPlacesOf('ControlPlane', cp, '', 'vault')).toEqual([{ cluster: '', namespace: CP_NS }, { cluster: '', namespace: 'vault' }]);
    expect(secretPlacesOf('KeystoneUser', user())).toEqual([{ cluster: '', namespace: CP_NS }, { cluster: '', namespace: NS }]);
    expect(secretPlacesOf('KeystoneApplicationCredential', credential(), 'edge-1')).toEqual([{ cluster: '', namespace: CP_NS }, { cluster: 'edge-1', namespace: NS }]);
    expect(secretPlacesOf('KeystoneProject', project(), 'edge-1')).toEqual([{ cluster: '', namespace: CP_NS }]);
    expect(secretPlacesOf('KeystoneRoleAssignment', { metadata: { namespace: NS }, spec: { controlPlaneRef: { name: 'cp' } } })).toEqual([{ cluster: '', namespace: NS }]);
  });

  it('a pass waits while one of its places is being filled, and only then', () => {
    const places = secretPlacesOf('KeystoneUser', user());
    const of = (states: Record<string, SecretAccess>) => (p: { namespace: string }) => states[p.namespace] ?? { state: 'granted' };
    expect(pendingPlace(places, of({ [NS]: { state: 'pending' } }))).toEqual({ cluster: '', namespace: NS });
    expect(pendingPlace(places, of({ [CP_NS]: { state: 'pending' } }))).toEqual({ cluster: '', namespace: CP_NS });
    for (const state of [{ state: 'granted' }, { state: 'unwatched' }, denied] as SecretAccess[]) expect(pendingPlace(places, of({ [NS]: state }))).toBeUndefined();
  });
});

describe('the message of a refused grant', () => {
  it('names the namespace, what is needed there, the API server\'s words, the Role and RoleBinding, the kubectl commands and the construct', () => {
    const message = deniedMessage({ cluster: '', namespace: NS }, denied as Extract<SecretAccess, { state: 'denied' }>, 'the Secret app delivers');
    expect(message).toContain('not granted Secrets in namespace tenant-a, which it needs for the Secret app delivers');
    expect(message).toContain(FORBIDDEN);
    expect(message).toContain('the Role and RoleBinding keystone-appcred-operator-secrets there are missing');
    expect(message).toContain('beside the ControlPlane\'s assignment');
    expect(message).toContain(
      'kubectl create role keystone-appcred-operator-secrets -n tenant-a --verb=get,list,watch,create,patch,delete --resource=secrets && kubectl create rolebinding keystone-appcred-operator-secrets -n tenant-a --role=keystone-appcred-operator-secrets --serviceaccount=kac-system:keystone-appcred-operator',
    );
    expect(message).toContain("the Operator construct with secretAccess 'namespaced'");
    expect(message).toContain('keystone-appcred manifests --secret-namespaces with tenant-a in the list');
  });

  it('on a target cluster: the context and the target cluster\'s construct and command; for a source Secret: a read-only Role of that Secret', () => {
    const access = denied as Extract<SecretAccess, { state: 'denied' }>;
    const target = deniedMessage({ cluster: 'edge-1', namespace: NS }, access, 'x');
    expect(target).toContain('namespace tenant-a on cluster edge-1');
    expect(target).toContain('kubectl --context edge-1 create role keystone-appcred-operator-secrets -n tenant-a');
    expect(target).toContain('keystone-appcred manifests --target-cluster --secret-namespaces tenant-a | kubectl --context edge-1 apply --server-side -f -');
    const source = deniedMessage({ cluster: '', namespace: 'vault' }, access, 'the source', 'keystone-admin');
    expect(source).toContain('the Role and RoleBinding keystone-appcred-operator-source-keystone-admin there are missing');
    expect(source).toContain('--verb=get,list,watch --resource=secrets --resource-name=keystone-admin');
    expect(source).toContain('--secret-namespaces with vault/keystone-admin in the list');
  });

  it('binds the identity the API server authenticated: a service account, a user, or none known', () => {
    expect(grantHintOf('kac', 'system:serviceaccount:ops:op')).toEqual({ operator: 'kac', subject: { kind: 'ServiceAccount', namespace: 'ops', name: 'op' } });
    expect(grantHintOf('kac', 'alice@example.com')).toEqual({ operator: 'kac', subject: { kind: 'User', name: 'alice@example.com' } });
    expect(grantHintOf('kac', undefined)).toEqual({ operator: 'kac' });
    const message = deniedMessage({ cluster: '', namespace: NS }, { state: 'denied', detail: 'd', grant: grantHintOf('kac', 'alice') }, 'x');
    expect(message).toContain('--user=alice');
    expect(deniedMessage({ cluster: '', namespace: NS }, { state: 'denied', detail: 'd', grant: { operator: 'kac' } }, 'x')).toContain("and a RoleBinding kac-secrets of it to the operator's identity");
  });
});

describe('consent', () => {
  const ready = { ...controlPlane(), status: adminReady() };
  const loc = { namespace: NS, name: 'alice' };
  const key = { namespace: CP_NS, name: 'cp' };

  it('SecretAccessNotGranted: assigned, but the API server refused the operator the namespace\'s Secrets; frozen like NamespaceNotAssigned', () => {
    expect(consentOf(loc, key, ready, denied)).toMatchObject({ state: 'refused', reason: 'SecretAccessNotGranted', controlPlane: ready, message: expect.stringContaining('keystone-appcred-operator-secrets') });
  });

  it('consent comes first: an unassigned namespace reads NamespaceNotAssigned, also without a grant', () => {
    const other = { ...ready, spec: { ...ready.spec, namespaceAssignments: [{ namespace: 'tenant-b' }] } };
    expect(consentOf(loc, key, other, denied)).toMatchObject({ reason: 'NamespaceNotAssigned' });
  });

  it('granted, being filled or unwatched: no refusal (a filling cache makes the pass wait before it gets here)', () => {
    for (const access of [{ state: 'granted' }, { state: 'pending' }, { state: 'unwatched' }] as SecretAccess[]) expect(consentOf(loc, key, ready, access)).toMatchObject({ state: 'assigned' });
  });

  it('a KeystoneApplicationCredential\'s admission carries it: frozen', () => {
    expect(credentialAdmission(credential(), { controlPlane: ready, assignments: [], secretAccess: denied })).toEqual({ admission: { reason: 'SecretAccessNotGranted', message: expect.stringContaining('tenant-a') } });
  });
});

describe('through the drivers', () => {
  it('a KeystoneUser without the grant: SecretAccessNotGranted on every condition, no finalizer, nothing parked or delivered, no Keystone call; once granted, provisioned', async () => {
    const { cluster, keystone, deps } = plane();
    cluster.put('KeystoneUser', user());
    cluster.access.set(NS, denied);
    const result = await reconcileUser({ namespace: NS, name: 'alice' }, deps);
    expect(result.actions).toEqual([]);
    const now = cluster.object('KeystoneUser', { namespace: NS, name: 'alice' });
    for (const type of ['UserReady', 'DeliveryReady']) expect(condition(now, type)).toMatchObject({ status: 'False', reason: 'SecretAccessNotGranted', message: expect.stringContaining('kubectl create role keystone-appcred-operator-secrets -n tenant-a') });
    expect(condition(now, 'Ready')).toMatchObject({ status: 'False' });
    expect(now?.metadata.finalizers).toBeUndefined();
    expect(cluster.writes).toEqual(['status:KeystoneUser/alice']);
    expect(keystone.calls).toEqual([]);

    cluster.access.delete(NS);
    const granted = await reconcileUser({ namespace: NS, name: 'alice' }, deps);
    expect(granted.actions).toEqual(['add-finalizer', 'park', 'create-user', 'deliver']);
    expect(condition(cluster.object('KeystoneUser', { namespace: NS, name: 'alice' }), 'Ready')).toMatchObject({ status: 'True' });
  });

  it('a KeystoneProject needs no Secret in its own namespace: it is provisioned there without a grant', async () => {
    const { cluster, deps } = plane();
    cluster.put('KeystoneProject', project());
    cluster.access.set(NS, denied);
    await reconcileProject({ namespace: NS, name: 'proj' }, deps);
    expect(condition(cluster.object('KeystoneProject', { namespace: NS, name: 'proj' }), 'ProjectReady')).toMatchObject({ status: 'True' });
  });

  it('a ControlPlane whose namespace is not granted: AdminCredentialReady=False/SecretAccessNotGranted, no login, nothing written but its status', async () => {
    const { cluster, keystone, deps } = plane({ ready: false });
    cluster.access.set(CP_NS, { ...denied, detail: 'secrets is forbidden (cp-system)' } as SecretAccess);
    await reconcileControlPlane({ namespace: CP_NS, name: 'cp' }, deps);
    const admin = condition(cluster.object('ControlPlane', { namespace: CP_NS, name: 'cp' }), 'AdminCredentialReady');
    expect(admin).toMatchObject({ status: 'False', reason: 'SecretAccessNotGranted', message: expect.stringContaining('namespace cp-system, which it needs for the admin credential and the children of ControlPlane cp') });
    expect(keystone.calls).toEqual([]);
    expect(cluster.writes).toEqual(['status:ControlPlane/cp']);
  });

  it('a ControlPlane whose identity\'s source Secret is not granted: the read-only Role of that Secret is named', async () => {
    const { cluster, keystone, deps } = plane({ cp: controlPlane({ spec: { adminCredential: { identityRef: { name: 'shared' } } } }), ready: false });
    cluster.identities.set('shared', { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneClusterIdentity', metadata: { name: 'shared' }, spec: { secretRef: { namespace: 'vault', name: 'keystone-admin' }, allowedNamespaces: { list: [CP_NS] } } });
    cluster.putSecret({ metadata: { name: 'keystone-admin', namespace: 'vault' }, data: { 'clouds.yaml': adminCloudsYaml() } });
    cluster.access.set('vault', denied);
    await reconcileControlPlane({ namespace: CP_NS, name: 'cp' }, deps);
    const admin = condition(cluster.object('ControlPlane', { namespace: CP_NS, name: 'cp' }), 'AdminCredentialReady');
    expect(admin).toMatchObject({ reason: 'SecretAccessNotGranted', message: expect.stringContaining('keystone-appcred-operator-source-keystone-admin') });
    expect(keystone.calls).toEqual([]);
    expect(cluster.writes.filter((w) => !w.startsWith('status:'))).toEqual([]);
  });

  it('a KeystoneClusterIdentity whose source is not granted: SecretNotFound, saying why', () => {
    const identity = { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneClusterIdentity', metadata: { name: 'shared' }, spec: { secretRef: { namespace: 'vault', name: 'keystone-admin' } } } as const;
    expect(decideIdentityStatus(identity, { sourceFound: false, mirroredNamespaces: [], sourceRefused: 'no Role' })).toMatchObject({ status: 'False', reason: 'SecretNotFound', message: 'Secret vault/keystone-admin cannot be read: no Role' });
  });
});
