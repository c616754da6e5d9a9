/**
 * What a watched change requeues, from the references the rules read.
 */
import { TARGET_CLUSTER_RECHECK_MS, childLabels, dependents, passwordSecretName, requeueOn, secretDependents } from '../../../src/plane';
import { CP_NS, NS, adminReady, assignment, controlPlane, credential, project, user } from './fakes';

const cache = {
  controlPlanes: [{ ...controlPlane(), status: adminReady() }],
  users: [user(), user('bob')],
  projects: [project()],
  assignments: [assignment(), assignment('bob-member', { userRef: { name: 'bob' } })],
  credentials: [credential()],
};
const names = (refs: { kind: string; name: string }[]) => refs.map((r) => `${r.kind}/${r.name}`).sort();

describe('dependents', () => {
  it('a ControlPlane change requeues every order referencing it', () => {
    expect(names(dependents('ControlPlane', cache.controlPlanes[0], cache))).toEqual(
      ['ControlPlane/cp', 'KeystoneApplicationCredential/app', 'KeystoneProject/proj', 'KeystoneRoleAssignment/alice-member', 'KeystoneRoleAssignment/bob-member', 'KeystoneUser/alice', 'KeystoneUser/bob'].sort(),
    );
  });

  it('a user or project change requeues the assignments and credentials naming it', () => {
    expect(names(dependents('KeystoneUser', user(), cache))).toEqual(['KeystoneApplicationCredential/app', 'KeystoneRoleAssignment/alice-member', 'KeystoneUser/alice']);
    expect(names(dependents('KeystoneProject', project(), cache))).toEqual(['KeystoneApplicationCredential/app', 'KeystoneProject/proj', 'KeystoneRoleAssignment/alice-member', 'KeystoneRoleAssignment/bob-member']);
  });

  it('an assignment or credential change requeues the user and project it holds and its peers', () => {
    expect(names(dependents('KeystoneApplicationCredential', credential(), cache))).toEqual([
      'KeystoneApplicationCredential/app',
      'KeystoneProject/proj',
      'KeystoneRoleAssignment/alice-member',
      'KeystoneUser/alice',
    ]);
    expect(names(dependents('KeystoneRoleAssignment', assignment(), cache))).toContain('KeystoneApplicationCredential/app');
  });

  it('a Secret requeues its controlling order, the order it is a child of, and the ControlPlane it is the admin credential of', () => {
    const owned = { metadata: { name: 'alice-credentials', namespace: NS, ownerReferences: [{ apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', name: 'alice', uid: 'u', controller: true }] }, data: {} };
    expect(secretDependents(owned, cache)).toEqual([{ kind: 'KeystoneUser', namespace: NS, name: 'alice' }]);
    const loc = { namespace: NS, name: 'alice' };
    const child = { metadata: { name: passwordSecretName(loc, 1), namespace: CP_NS, labels: childLabels('KeystoneUser', loc) }, data: {} };
    expect(secretDependents(child, cache)).toEqual([{ kind: 'KeystoneUser', namespace: NS, name: 'alice' }]);
    expect(secretDependents({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: {} }, cache)).toEqual([{ kind: 'ControlPlane', namespace: CP_NS, name: 'cp' }]);
    expect(secretDependents({ metadata: { name: 'unrelated', namespace: CP_NS }, data: {} }, cache)).toEqual([]);
  });

  it('a foreign Secret of an order\'s delivered name (no owner, no labels) requeues that order: refused while it stands, delivered once it is gone', () => {
    const foreign = { metadata: { name: 'app-credentials', namespace: NS }, data: {} };
    expect(secretDependents(foreign, cache)).toEqual([{ kind: 'KeystoneApplicationCredential', namespace: NS, name: 'app' }]);
    expect(secretDependents({ ...foreign, metadata: { ...foreign.metadata, namespace: CP_NS } }, cache)).toEqual([]);
  });

  it('a child on the management cluster with a cluster label concerns the order of that name and namespace on that cluster', () => {
    const loc = { cluster: 'edge-1', namespace: NS, name: 'alice' };
    const child = { metadata: { name: passwordSecretName(loc, 1), namespace: CP_NS, labels: childLabels('KeystoneUser', loc) }, data: {} };
    expect(secretDependents(child, cache)).toEqual([{ kind: 'KeystoneUser', namespace: NS, name: 'alice', cluster: 'edge-1' }]);
    const credentialChild = { metadata: { name: 'app-0-applicationcredential-secret-v1', namespace: CP_NS, labels: childLabels('KeystoneApplicationCredential', { ...loc, name: 'app' }) }, data: {} };
    expect(secretDependents(credentialChild, cache)).toEqual([{ kind: 'KeystoneApplicationCredential', namespace: NS, name: 'app', cluster: 'edge-1' }]);
  });

  it('a delivered Secret on a target cluster (no cluster label) concerns the order on its own cluster', () => {
    const delivered = { metadata: { name: 'app-credentials', namespace: NS, labels: { 'c5c3.io/keystoneapplicationcredential-name': 'app', 'c5c3.io/keystoneapplicationcredential-namespace': NS } }, data: {} };
    expect(secretDependents(delivered, { credentials: cache.credentials })).toEqual([{ kind: 'KeystoneApplicationCredential', namespace: NS, name: 'app' }]);
  });
});

describe('wake-ups on a target cluster', () => {
  it('every 10 minutes at the latest on a target cluster, as the pass asks on the management cluster', () => {
    expect(TARGET_CLUSTER_RECHECK_MS).toBe(600_000);
    expect(requeueOn(undefined, undefined)).toBeUndefined();
    expect(requeueOn('', 3_600_000)).toBe(3_600_000);
    expect(requeueOn('edge-1', undefined)).toBe(600_000);
    expect(requeueOn('edge-1', 3_600_000)).toBe(600_000);
    expect(requeueOn('edge-1', 5_000)).toBe(5_000);
  });
});
