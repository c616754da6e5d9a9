/**
 * A ControlPlane with `adminCredential.identityRef` (issue 11): IdentityAllowed and CredentialsMirrored, the mirror
 * `keystone-creds-<identity>` written, rewritten, never taken over, deleted when revoked; and the identity's status rule.
 */
import { sourceHash, type KeystoneClusterIdentity } from '../../../src/api';
import { decideIdentityStatus, reconcileControlPlane } from '../../../src/plane';
import { releasedMirrors } from '../../../src/plane/cluster-identity';
import { ADMIN_PASSWORD, CP_NS, FakeCluster, FakeKeystone, T0, adminCloudsYaml, condition, controlPlane } from './fakes';

const key = { namespace: CP_NS, name: 'cp' };
const MIRROR = { namespace: CP_NS, name: 'keystone-creds-shared' };
const SOURCE = { namespace: 'platform', name: 'admin-src' };

function identity(allowedNamespaces?: KeystoneClusterIdentity['spec']['allowedNamespaces']): KeystoneClusterIdentity {
  return { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneClusterIdentity', metadata: { name: 'shared' }, spec: { secretRef: SOURCE, ...(allowedNamespaces ? { allowedNamespaces } : {}) } };
}

function setup(allowed?: KeystoneClusterIdentity['spec']['allowedNamespaces'], labels: Record<string, string> = {}) {
  const cluster = new FakeCluster();
  const keystone = new FakeKeystone();
  cluster.put('ControlPlane', controlPlane({ spec: { adminCredential: { identityRef: { name: 'shared' } } } }));
  cluster.identities.set('shared', identity(allowed));
  cluster.namespaces.set(CP_NS, labels);
  cluster.putSecret({ metadata: SOURCE, data: { 'clouds.yaml': adminCloudsYaml() } });
  return { cluster, keystone, deps: { cluster, keystone, clock: () => T0 } };
}

const cond = (cluster: FakeCluster, type: string) => condition(cluster.object('ControlPlane', key), type);

describe('ControlPlane with identityRef', () => {
  it('allowed by list: mirrors the source (label, source hash, non-controller owner) and logs in with it', async () => {
    const { cluster, keystone, deps } = setup({ list: [CP_NS] });
    await reconcileControlPlane(key, deps);
    expect(cond(cluster, 'IdentityAllowed')).toMatchObject({ status: 'True', reason: 'IdentityAllowed' });
    expect(cond(cluster, 'CredentialsMirrored')).toMatchObject({ status: 'True', reason: 'CredentialsMirrored' });
    expect(cond(cluster, 'AdminCredentialReady')).toMatchObject({ status: 'True' });
    expect(cond(cluster, 'Ready')).toMatchObject({ status: 'True' });
    const mirror = cluster.secret(MIRROR);
    expect(mirror?.metadata.labels).toEqual({ 'c5c3.io/mirrored': 'true' });
    expect(mirror?.metadata.annotations).toEqual({ 'c5c3.io/source-hash': sourceHash({ 'clouds.yaml': adminCloudsYaml() }) });
    expect(mirror?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'ControlPlane', name: 'cp', controller: false })]);
    expect(mirror?.data).toEqual({ 'clouds.yaml': adminCloudsYaml() });
    expect(keystone.calls).toEqual(['verify']);
    // Converged: a second pass writes nothing.
    const writes = cluster.writes.length;
    await reconcileControlPlane(key, deps);
    expect(cluster.writes.length).toBe(writes);
  });

  it('an application credential as the identity\'s admin (issue 42): mirrored and logged in with, its expiry reported', async () => {
    const { cluster, keystone, deps } = setup({ list: [CP_NS] });
    const document = `clouds:\n  admin:\n    auth_type: v3applicationcredential\n    auth:\n      application_credential_id: ac-1\n      application_credential_secret: ${ADMIN_PASSWORD}\n`;
    cluster.putSecret({ metadata: SOURCE, data: { 'clouds.yaml': document } });
    keystone.adminCredential = { id: 'ac-1', name: 'shared-admin', expiresAt: new Date(T0.getTime() + 3 * 86_400_000) };
    await reconcileControlPlane(key, deps);
    expect(cluster.secret(MIRROR)?.data).toEqual({ 'clouds.yaml': document });
    expect(cond(cluster, 'AdminCredentialReady')).toMatchObject({ status: 'True', reason: 'AdminCredentialExpiring', message: expect.stringContaining('application credential shared-admin (ac-1)') });
    expect(cluster.object('ControlPlane', key)?.status?.adminCredentialExpiresAt).toBe('2026-12-04T00:00:00Z');
  });

  it('allowed by selector, and by the empty selector', async () => {
    const bySelector = setup({ selector: { matchLabels: { tier: 'plane' } } }, { tier: 'plane' });
    await reconcileControlPlane(key, bySelector.deps);
    expect(cond(bySelector.cluster, 'IdentityAllowed')).toMatchObject({ status: 'True' });
    expect(bySelector.cluster.secret(MIRROR)).toBeDefined();
    const all = setup({ selector: {} });
    await reconcileControlPlane(key, all.deps);
    expect(cond(all.cluster, 'Ready')).toMatchObject({ status: 'True' });
  });

  it('not allowed: NamespaceNotAllowed, no mirror, AdminCredentialReady False; IdentityNotFound without the identity', async () => {
    const { cluster, keystone, deps } = setup({ selector: { matchLabels: { tier: 'plane' } } }, { tier: 'other' });
    await reconcileControlPlane(key, deps);
    expect(cond(cluster, 'IdentityAllowed')).toMatchObject({ status: 'False', reason: 'NamespaceNotAllowed' });
    expect(cond(cluster, 'CredentialsMirrored')).toMatchObject({ status: 'False', reason: 'IdentityNotAllowed' });
    expect(cond(cluster, 'AdminCredentialReady')).toMatchObject({ status: 'False', reason: 'WaitingForCloudsYaml' });
    expect(cond(cluster, 'Ready')).toMatchObject({ status: 'False', reason: 'NamespaceNotAllowed' });
    expect(cluster.secret(MIRROR)).toBeUndefined();
    expect(keystone.calls).toEqual([]);
    cluster.identities.clear();
    await reconcileControlPlane(key, deps);
    expect(cond(cluster, 'IdentityAllowed')).toMatchObject({ status: 'False', reason: 'IdentityNotFound' });
  });

  it('revoked: the mirror is deleted and the ControlPlane is no longer Ready', async () => {
    const { cluster, deps } = setup({ list: [CP_NS] });
    await reconcileControlPlane(key, deps);
    expect(cluster.secret(MIRROR)).toBeDefined();
    cluster.identities.set('shared', identity({ list: ['elsewhere'] }));
    await reconcileControlPlane(key, deps);
    expect(cluster.secret(MIRROR)).toBeUndefined();
    expect(cond(cluster, 'Ready')).toMatchObject({ status: 'False', reason: 'NamespaceNotAllowed' });
  });

  it('source missing: SourceSecretNotFound, nothing mirrored', async () => {
    const { cluster, deps } = setup({ list: [CP_NS] });
    cluster.secrets.delete(`${SOURCE.namespace}/${SOURCE.name}`);
    await reconcileControlPlane(key, deps);
    expect(cond(cluster, 'CredentialsMirrored')).toMatchObject({ status: 'False', reason: 'SourceSecretNotFound', message: 'source Secret platform/admin-src not found' });
    expect(cond(cluster, 'AdminCredentialReady')).toMatchObject({ status: 'False' });
    expect(cluster.secret(MIRROR)).toBeUndefined();
  });

  it('conflict: a Secret of the mirror name without the label is never taken over nor deleted', async () => {
    const { cluster, deps } = setup({ list: [CP_NS] });
    cluster.putSecret({ metadata: MIRROR, data: { 'clouds.yaml': 'theirs' } });
    await reconcileControlPlane(key, deps);
    expect(cond(cluster, 'CredentialsMirrored')).toMatchObject({ status: 'False', reason: 'MirrorConflict' });
    expect(cluster.secret(MIRROR)?.data).toEqual({ 'clouds.yaml': 'theirs' });
    cluster.identities.set('shared', identity({ list: ['elsewhere'] }));
    await reconcileControlPlane(key, deps);
    expect(cluster.secret(MIRROR)?.data).toEqual({ 'clouds.yaml': 'theirs' });
  });

  it('source changed: the mirror is rewritten with the new hash', async () => {
    const { cluster, deps } = setup({ list: [CP_NS] });
    await reconcileControlPlane(key, deps);
    const before = cluster.secret(MIRROR)?.metadata.annotations?.['c5c3.io/source-hash'];
    const changed = adminCloudsYaml().replace(/\n$/, '') + '\n# rotated\n';
    cluster.putSecret({ metadata: SOURCE, data: { 'clouds.yaml': changed } });
    await reconcileControlPlane(key, deps);
    const after = cluster.secret(MIRROR);
    expect(after?.metadata.annotations?.['c5c3.io/source-hash']).toBe(sourceHash({ 'clouds.yaml': changed }));
    expect(after?.metadata.annotations?.['c5c3.io/source-hash']).not.toBe(before);
    expect(after?.data['clouds.yaml']).toBe(changed);
  });

  it('a second ControlPlane of the namespace joins the owners', async () => {
    const { cluster, deps } = setup({ list: [CP_NS] });
    cluster.put('ControlPlane', controlPlane({ name: 'cp2', spec: { adminCredential: { identityRef: { name: 'shared' } } } }));
    await reconcileControlPlane(key, deps);
    await reconcileControlPlane({ namespace: CP_NS, name: 'cp2' }, deps);
    expect(cluster.secret(MIRROR)?.metadata.ownerReferences?.map((o) => o.name)).toEqual(['cp', 'cp2']);
  });
});

describe('the identity status', () => {
  it('Ready SecretFound / SecretNotFound naming namespace/name; namespaces sorted and unique', () => {
    expect(decideIdentityStatus(identity(), { sourceFound: true, mirroredNamespaces: ['b', 'a', 'b'] })).toEqual({ status: 'True', reason: 'SecretFound', message: 'Secret platform/admin-src found', namespaces: ['a', 'b'] });
    expect(decideIdentityStatus(identity(), { sourceFound: false, mirroredNamespaces: [] })).toMatchObject({ status: 'False', reason: 'SecretNotFound', message: 'Secret platform/admin-src not found' });
  });
});

describe('a ControlPlane that stops using an identity releases its mirror', () => {
  const cp = (uid: string, identityRef?: string) => ({
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'ControlPlane',
    metadata: { name: `cp-${uid}`, namespace: CP_NS, uid },
    spec: {
      services: { keystone: { external: { authURL: 'http://127.0.0.1:5000/v3' } } },
      adminCredential: identityRef ? { identityRef: { name: identityRef } } : { cloudCredentialsRef: { secretName: 'admin' } },
    },
  }) as unknown as Parameters<typeof releasedMirrors>[0];
  const owner = (uid: string) => ({ apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', name: `cp-${uid}`, uid, controller: false });
  const mirror = (name: string, owners: string[], labels: Record<string, string> = { 'c5c3.io/mirrored': 'true' }) => ({
    metadata: { name, namespace: CP_NS, uid: `uid-${name}`, labels, annotations: { 'c5c3.io/source-hash': 'h' }, ownerReferences: owners.map(owner) },
    data: { 'clouds.yaml': 'x' },
  });

  it('switched to cloudCredentialsRef as the last owner: the mirror is deleted', () => {
    expect(releasedMirrors(cp('a'), [mirror('keystone-creds-shared', ['a'])])).toEqual([{ type: 'delete', key: MIRROR, uid: 'uid-keystone-creds-shared' }]);
  });

  it('with another owner left: only this owner reference is dropped, the rest of the mirror kept', () => {
    const [action] = releasedMirrors(cp('a'), [mirror('keystone-creds-shared', ['a', 'b'])]);
    expect(action).toMatchObject({ type: 'apply', manifest: { ...MIRROR, ownerReferences: [owner('b')], annotations: { 'c5c3.io/source-hash': 'h' }, data: { 'clouds.yaml': 'x' } } });
  });

  it('the mirror of the identity in use, a mirror it does not own, and a Secret without the label are left alone', () => {
    expect(releasedMirrors(cp('a', 'shared'), [mirror('keystone-creds-shared', ['a'])])).toEqual([]);
    expect(releasedMirrors(cp('a'), [mirror('keystone-creds-other', ['b'])])).toEqual([]);
    expect(releasedMirrors(cp('a'), [mirror('keystone-creds-shared', ['a'], {})])).toEqual([]);
  });
});
