/**
 * Consent and the shared admission reasons (identity-plane.md, Shared behaviour; spec, Consent), one test per rule.
 */
import { consentOf, controlPlaneKey, locationOf, needsFinalizer, teardownFinalizer, teardownPath } from '../../../src/plane';
import { CP_NS, NS, adminReady, controlPlane, user } from './fakes';

const ready = { ...controlPlane(), status: adminReady() };
const loc = { namespace: NS, name: 'alice' };
const key = { namespace: CP_NS, name: 'cp' };

describe('consent', () => {
  it('ControlPlaneNotFound: controlPlaneRef does not resolve, for an order on the management cluster', () => {
    expect(consentOf(loc, key, undefined)).toMatchObject({ state: 'refused', reason: 'ControlPlaneNotFound', message: 'ControlPlane cp-system/cp not found' });
  });

  it('NamespaceNotAssigned: no namespaceAssignments entry for the namespace', () => {
    const other = { ...ready, spec: { ...ready.spec, namespaceAssignments: [{ namespace: 'tenant-b' }] } };
    expect(consentOf(loc, key, other)).toMatchObject({ state: 'refused', reason: 'NamespaceNotAssigned' });
  });

  it('NamespaceNotAssigned: an entry for the namespace on another cluster is no consent for the management cluster, and the reverse', () => {
    const remote = { ...ready, spec: { ...ready.spec, namespaceAssignments: [{ namespace: NS, targetClusterRef: { name: 'edge-1' } }] } };
    expect(consentOf(loc, key, remote)).toMatchObject({ reason: 'NamespaceNotAssigned' });
    expect(consentOf({ ...loc, cluster: 'edge-1' }, key, remote)).toMatchObject({ state: 'assigned' });
    expect(consentOf({ ...loc, cluster: 'edge-2' }, key, remote)).toMatchObject({ reason: 'NamespaceNotAssigned' });
  });

  it('NamespaceNotAssigned: on a target cluster, a controlPlaneRef that does not resolve', () => {
    expect(consentOf({ ...loc, cluster: 'edge-1' }, key, undefined)).toMatchObject({ state: 'refused', reason: 'NamespaceNotAssigned' });
  });

  it('ClusterNameTooLong: a target cluster name longer than a label value carries', () => {
    expect(consentOf({ ...loc, cluster: 'c'.repeat(64) }, key, ready)).toMatchObject({ state: 'refused', reason: 'ClusterNameTooLong' });
    expect(consentOf({ ...loc, cluster: 'c'.repeat(63) }, key, { ...ready, spec: { ...ready.spec, namespaceAssignments: [{ namespace: NS, targetClusterRef: { name: 'c'.repeat(63) } }] } })).toMatchObject({
      state: 'assigned',
    });
  });

  it('WaitingForAdminCredential: the ControlPlane has not reported AdminCredentialReady=True', () => {
    expect(consentOf(loc, key, controlPlane())).toMatchObject({ state: 'assigned', wait: { reason: 'WaitingForAdminCredential', message: expect.stringContaining('not reported yet') } });
    expect(consentOf(loc, key, { ...controlPlane(), status: adminReady('AuthenticationFailed', 'False') })).toMatchObject({
      wait: { reason: 'WaitingForAdminCredential', message: expect.stringContaining('False/AuthenticationFailed') },
    });
  });

  it('WaitingForCABundle: orders report it when that is why the admin credential is not ready', () => {
    expect(consentOf(loc, key, { ...controlPlane(), status: adminReady('WaitingForCABundle', 'False') })).toMatchObject({ wait: { reason: 'WaitingForCABundle' } });
  });

  it('an assigned namespace with a ready admin credential admits the order, with its allowedRoles', () => {
    const consent = consentOf(loc, key, ready);
    expect(consent).toMatchObject({ state: 'assigned', assignment: { namespace: NS, allowedRoles: ['member', 'reader'] } });
    expect(consent.wait).toBeUndefined();
  });

  it('controlPlaneRef.namespace left out means the order\'s own namespace', () => {
    const u = user('alice', { controlPlaneRef: { name: 'cp' } as never });
    expect(controlPlaneKey(u)).toEqual({ namespace: NS, name: 'cp' });
    expect(controlPlaneKey(user())).toEqual(key);
  });
});

describe('the teardown finalizer', () => {
  it('is installed once the namespace is assigned, also while the admin credential is not ready', () => {
    const meta = user().metadata;
    expect(needsFinalizer(consentOf(loc, key, controlPlane()), meta, teardownFinalizer('KeystoneUser'))).toBe(true);
    expect(needsFinalizer(consentOf(loc, key, undefined), meta, teardownFinalizer('KeystoneUser'))).toBe(false);
    expect(needsFinalizer(consentOf(loc, key, ready), { ...meta, finalizers: [teardownFinalizer('KeystoneUser')] }, teardownFinalizer('KeystoneUser'))).toBe(false);
  });

  it('is named c5c3.io/<kind>-teardown per kind, the credential\'s as the spec names it', () => {
    expect(teardownFinalizer('KeystoneUser')).toBe('c5c3.io/keystoneuser-teardown');
    expect(teardownFinalizer('KeystoneProject')).toBe('c5c3.io/keystoneproject-teardown');
    expect(teardownFinalizer('KeystoneRoleAssignment')).toBe('c5c3.io/keystoneroleassignment-teardown');
    expect(teardownFinalizer('KeystoneApplicationCredential')).toBe('c5c3.io/keystoneapplicationcredential-teardown');
  });

  it('a teardown releases without Keystone when the ControlPlane is gone, waits for the admin credential, proceeds otherwise (also when frozen)', () => {
    expect(teardownPath(consentOf(loc, key, undefined))).toEqual({ path: 'release' });
    expect(teardownPath(consentOf(loc, key, controlPlane()))).toMatchObject({ path: 'wait' });
    const frozen = { ...ready, spec: { ...ready.spec, namespaceAssignments: [] } };
    expect(teardownPath(consentOf(loc, key, frozen))).toMatchObject({ path: 'proceed' });
  });

  it('locationOf carries the cluster only for a target cluster', () => {
    expect(locationOf(user())).toEqual({ namespace: NS, name: 'alice' });
    expect(locationOf(user(), 'edge-1')).toEqual({ namespace: NS, name: 'alice', cluster: 'edge-1' });
  });
});
