/**
 * The KeystoneApplicationCredential's gates as the identity plane computes them in one step (src/plane/gates.ts): its
 * admission and gate (spec, Consent), one test per reason; what its pass reads, and where; its finalizer, teardown
 * path, its user's connection and where its document points.
 */
import type { KeystoneProject, KeystoneRoleAssignment, KeystoneUser } from '../../../src/api';
import { TEARDOWN_FINALIZER } from '../../../src/api';
import { credentialAdmission, credentialGates, credentialReads } from '../../../src/plane';
import { T0, adminReady, assignment, controlPlane, credential, project, user } from './fakes';

const cond = (type: string, status: 'True' | 'False', reason: string) => ({ type, status, reason, message: 'm', lastTransitionTime: T0.toISOString() });
const readyUser = (patch: Partial<KeystoneUser> = {}): KeystoneUser => ({
  ...user(),
  status: { userID: 'u-1', passwordGeneration: 1, conditions: [cond('UserReady', 'True', 'UserProvisioned')] },
  ...patch,
});
const readyProject = (patch: Partial<KeystoneProject> = {}): KeystoneProject => ({
  ...project(),
  status: { projectID: 'p-1', projectName: 'proj', conditions: [cond('ProjectReady', 'True', 'ProjectProvisioned')] },
  ...patch,
});
const granted = (patch: Partial<KeystoneRoleAssignment> = {}): KeystoneRoleAssignment => ({ ...assignment(), status: { roleID: 'r-1', userID: 'u-1', projectID: 'p-1' }, ...patch });
const cp = { ...controlPlane(), status: adminReady() };
const refs = { controlPlane: cp, user: readyUser(), project: readyProject(), assignments: [granted()] };

describe('admission', () => {
  it('ControlPlaneNotFound', () => {
    expect(credentialAdmission(credential(), { ...refs, controlPlane: undefined })).toEqual({ admission: { reason: 'ControlPlaneNotFound', message: expect.any(String) } });
  });
  it('NamespaceNotAssigned: frozen', () => {
    const unassigned = { ...cp, spec: { ...cp.spec, namespaceAssignments: [] } };
    expect(credentialAdmission(credential(), { ...refs, controlPlane: unassigned }).admission?.reason).toBe('NamespaceNotAssigned');
  });
  it('ClusterNameTooLong', () => {
    expect(credentialAdmission(credential(), { ...refs, cluster: 'x'.repeat(64) }).admission?.reason).toBe('ClusterNameTooLong');
  });
  it('WaitingForAdminCredential', () => {
    expect(credentialAdmission(credential(), { ...refs, controlPlane: { ...cp, status: adminReady('KeystoneUnreachable', 'False') } }).admission?.reason).toBe('WaitingForAdminCredential');
  });
  it('WaitingForCABundle is a gate, not a freeze: the schedule pauses and the delivered Secret is kept', () => {
    expect(credentialAdmission(credential(), { ...refs, controlPlane: { ...cp, status: adminReady('WaitingForCABundle', 'False') } })).toEqual({
      gate: { reason: 'WaitingForCABundle', message: expect.any(String) },
    });
  });
  it('admitted with every gate open: neither is set', () => {
    expect(credentialAdmission(credential(), refs)).toEqual({});
  });
});

describe('on a target cluster', () => {
  const edge = { ...cp, spec: { ...cp.spec, namespaceAssignments: [{ namespace: 'tenant-a', targetClusterRef: { name: 'edge-1' } }], services: { keystone: { external: { authURL: 'https://keystone.internal/v3' }, publicEndpoint: 'https://keystone.example.com/v3' } } } };
  it('consent is the entry for the namespace with targetClusterRef.name = the cluster; the management entry does not count', () => {
    expect(credentialAdmission(credential(), { ...refs, controlPlane: edge, cluster: 'edge-1' })).toEqual({});
    expect(credentialAdmission(credential(), { ...refs, controlPlane: edge, cluster: 'edge-2' }).admission?.reason).toBe('NamespaceNotAssigned');
    expect(credentialAdmission(credential(), { ...refs, cluster: 'edge-1' }).admission?.reason).toBe('NamespaceNotAssigned');
  });
  it('an unresolved controlPlaneRef is NamespaceNotAssigned (frozen), not ControlPlaneNotFound', () => {
    expect(credentialAdmission(credential(), { ...refs, controlPlane: undefined, cluster: 'edge-1' }).admission).toEqual({ reason: 'NamespaceNotAssigned', message: expect.stringContaining('edge-1') });
  });
  it('ClusterNameTooLong above 63 characters, before anything else', () => {
    const long = 'e'.repeat(64);
    const assigned = { ...edge, spec: { ...edge.spec, namespaceAssignments: [{ namespace: 'tenant-a', targetClusterRef: { name: long } }] } };
    expect(credentialAdmission(credential(), { ...refs, controlPlane: assigned, cluster: long }).admission).toEqual({ reason: 'ClusterNameTooLong', message: expect.stringContaining('64') });
    expect(credentialAdmission(credential(), { ...refs, controlPlane: undefined, cluster: long }).admission?.reason).toBe('ClusterNameTooLong');
  });
  it('KeystoneNotPublished when the ControlPlane publishes no public endpoint: admitted, nothing deliverable', () => {
    const unpublished = { ...edge, spec: { ...edge.spec, services: { keystone: { external: { authURL: 'https://keystone.internal/v3' } } } } };
    expect(credentialAdmission(credential(), { ...refs, controlPlane: unpublished, cluster: 'edge-1' })).toEqual({
      undeliverable: { reason: 'KeystoneNotPublished', message: expect.stringContaining('publicEndpoint') },
    });
    expect(credentialAdmission(credential(), { ...refs, controlPlane: unpublished, cluster: 'edge-1', user: undefined })).toMatchObject({ gate: { reason: 'UserNotFound' }, undeliverable: { reason: 'KeystoneNotPublished' } });
    const empty = { ...edge, spec: { ...edge.spec, services: { keystone: { ...edge.spec.services.keystone, publicEndpoint: '' } } } };
    expect(credentialAdmission(credential(), { ...refs, controlPlane: empty, cluster: 'edge-1' }).undeliverable?.reason).toBe('KeystoneNotPublished');
  });
  it('the management cluster never reports KeystoneNotPublished: its documents carry external.authURL', () => {
    expect(credentialAdmission(credential(), { ...refs, controlPlane: { ...cp, spec: { ...cp.spec, services: { keystone: { external: { authURL: 'https://keystone.internal/v3' } } } } } })).toEqual({});
  });
});

describe('gates', () => {
  it('UserNotFound', () => {
    expect(credentialAdmission(credential(), { ...refs, user: undefined }).gate?.reason).toBe('UserNotFound');
  });
  it('ControlPlaneMismatch: the user or the project belongs to another ControlPlane', () => {
    const other = { controlPlaneRef: { name: 'other', namespace: 'cp-system' } };
    expect(credentialAdmission(credential(), { ...refs, user: readyUser({ spec: other }) }).gate?.reason).toBe('ControlPlaneMismatch');
    expect(credentialAdmission(credential(), { ...refs, project: readyProject({ spec: other }) }).gate?.reason).toBe('ControlPlaneMismatch');
  });
  it('WaitingForUser: not provisioned yet, the message names its UserReady reason', () => {
    const pending = readyUser({ status: { conditions: [cond('UserReady', 'False', 'UserCollision')] } });
    expect(credentialAdmission(credential(), { ...refs, user: pending }).gate).toEqual({ reason: 'WaitingForUser', message: expect.stringContaining('False/UserCollision') });
  });
  it('WaitingForUser: the password of its current generation is not available', () => {
    expect(credentialAdmission(credential(), { ...refs, userPasswordAvailable: false }).gate?.reason).toBe('WaitingForUser');
  });
  it('a user whose deletion is held keeps serving the orders that hold it', () => {
    const held = readyUser({ status: { userID: 'u-1', passwordGeneration: 1, conditions: [cond('UserReady', 'False', 'ReferencedByApplicationCredentials')] } });
    expect(credentialAdmission(credential(), { ...refs, user: held })).toEqual({});
  });
  it('ProjectNotFound', () => {
    expect(credentialAdmission(credential(), { ...refs, project: undefined }).gate?.reason).toBe('ProjectNotFound');
  });
  it('WaitingForProject: not provisioned yet or no project name reported', () => {
    expect(credentialAdmission(credential(), { ...refs, project: readyProject({ status: { conditions: [cond('ProjectReady', 'False', 'ProjectFailed')] } }) }).gate?.reason).toBe('WaitingForProject');
    expect(credentialAdmission(credential(), { ...refs, project: readyProject({ status: { projectID: 'p-1', conditions: [cond('ProjectReady', 'True', 'ProjectProvisioned')] } }) }).gate?.reason).toBe(
      'WaitingForProject',
    );
  });
  it('NoRoleOnProject: no assignment of that user and project reports status.roleID', () => {
    expect(credentialAdmission(credential(), { ...refs, assignments: [] }).gate?.reason).toBe('NoRoleOnProject');
    expect(credentialAdmission(credential(), { ...refs, assignments: [granted({ status: {} })] }).gate?.reason).toBe('NoRoleOnProject');
    expect(credentialAdmission(credential(), { ...refs, assignments: [granted({ spec: { ...assignment().spec, userRef: { name: 'bob' } } })] }).gate?.reason).toBe('NoRoleOnProject');
  });
  it('NoRoleOnProject: an assignment whose recorded ids are not the current user\'s and project\'s does not count', () => {
    expect(credentialAdmission(credential(), { ...refs, assignments: [granted({ status: { roleID: 'r-1', userID: 'u-old', projectID: 'p-1' } })] }).gate?.reason).toBe('NoRoleOnProject');
  });
  it('the role gate reads status.roleID, not AssignmentReady: a frozen assignment keeps its role', () => {
    const frozen = granted({ status: { roleID: 'r-1', userID: 'u-1', projectID: 'p-1', conditions: [cond('AssignmentReady', 'False', 'NamespaceNotAssigned')] } });
    expect(credentialAdmission(credential(), { ...refs, assignments: [frozen] })).toEqual({});
  });
});

describe('role subsets (issue 42): spec.roles within allowedRoles and the roles assigned, checked without Keystone', () => {
  const withRoles = (roles: string[]) => credential('app', { roles });
  const reader = granted({ metadata: { name: 'alice-reader', namespace: 'tenant-a' }, spec: { ...assignment().spec, role: 'reader' } });
  it('no roles: every role the user holds, as the reference has it (no gate)', () => {
    expect(credentialAdmission(credential(), refs)).toEqual({});
  });
  it('a subset of the assigned roles, each allowed, passes', () => {
    expect(credentialAdmission(withRoles(['member']), refs)).toEqual({});
    expect(credentialAdmission(withRoles(['reader', 'member']), { ...refs, assignments: [...refs.assignments, reader] })).toEqual({});
  });
  it('RoleNotAllowed names each role not in the namespace\'s allowedRoles, and the allowed ones', () => {
    expect(credentialAdmission(withRoles(['member', 'admin', 'swiftoperator']), refs).gate).toEqual({
      reason: 'RoleNotAllowed',
      message: 'spec.roles names roles admin, swiftoperator, not in the allowedRoles of namespace tenant-a (member, reader)',
    });
  });
  it('RoleNotAssigned names each role no KeystoneRoleAssignment of the namespace gave the user on the project, and the assigned ones', () => {
    expect(credentialAdmission(withRoles(['member', 'reader']), refs).gate).toEqual({
      reason: 'RoleNotAssigned',
      message: 'spec.roles names role reader, which no KeystoneRoleAssignment in namespace tenant-a has assigned user alice on project proj (assigned: member)',
    });
  });
  it('an assignment not granted yet (no status.roleID) does not count', () => {
    const pending = { ...reader, status: {} };
    expect(credentialAdmission(withRoles(['reader']), { ...refs, assignments: [...refs.assignments, pending] }).gate?.reason).toBe('RoleNotAssigned');
  });
  it('the gates before it come first: a missing user is UserNotFound whatever the roles', () => {
    expect(credentialAdmission(withRoles(['admin']), { ...refs, user: undefined }).gate?.reason).toBe('UserNotFound');
  });
});

describe('credentialReads: where each thing a pass reads lives', () => {
  it('the ControlPlane and the children in its namespace, the references and the delivered Secret beside the order', () => {
    const reads = credentialReads(credential());
    expect(reads.controlPlane).toEqual({ namespace: cp.metadata.namespace, name: cp.metadata.name });
    expect(reads.user).toEqual({ namespace: 'tenant-a', name: credential().spec.userRef.name });
    expect(reads.delivered).toEqual({ namespace: 'tenant-a', name: `${credential().metadata.name}-credentials` });
    expect(reads.children.namespace).toBe(cp.metadata.namespace);
    expect(reads.prefix).toMatch(new RegExp(`^${credential().metadata.name}-[0-9a-f]{8}-applicationcredential$`));
    expect(reads.password(undefined)).toBeUndefined();
    expect(reads.password(readyUser())?.namespace).toBe(cp.metadata.namespace);
    expect(reads.caBundle(cp)).toBeUndefined();
  });
  it('on a target cluster the prefix hashes the cluster too', () => {
    expect(credentialReads(credential(), 'edge-1').prefix).not.toBe(credentialReads(credential()).prefix);
  });
});

describe('credentialGates: the verdict in one step', () => {
  const password = { metadata: { name: 'pw', namespace: cp.metadata.namespace as string }, data: { password: 'pw-1' } };
  const world = { ...refs, passwordSecret: password };
  it('an admitted, ungated order: its finalizer is due, its user connection is the ControlPlane\'s URL with the parked password', () => {
    const v = credentialGates(credential(), world, { deleting: false });
    expect(v.admission).toBeUndefined();
    expect(v.gate).toBeUndefined();
    expect(v.finalizerDue).toBe(true);
    expect(v.releasable).toBe(false);
    expect(v.connection).toEqual({ authUrl: cp.spec.services.keystone.external.authURL, userId: 'u-1', password: 'pw-1', passwordGeneration: 1, projectId: 'p-1' });
    expect(v.document?.authUrl).toBe(cp.spec.services.keystone.external.authURL);
  });
  it('a gated order does not reach Keystone, and says why; the finalizer is not due twice', () => {
    const v = credentialGates({ ...credential(), metadata: { ...credential().metadata, finalizers: [TEARDOWN_FINALIZER] } }, { ...world, assignments: [] }, { deleting: false });
    expect(v.gate?.reason).toBe('NoRoleOnProject');
    expect(v.connection).toBeUndefined();
    expect(v.unreachable).toBe(v.gate?.message);
    expect(v.finalizerDue).toBe(false);
  });
  it('a missing password is WaitingForUser', () => {
    expect(credentialGates(credential(), refs, { deleting: false }).gate?.reason).toBe('WaitingForUser');
  });
  it('a CA bundle the ControlPlane references and the cache does not hold is WaitingForCABundle; held, it goes into the connection', () => {
    const withCa = { ...cp, spec: { ...cp.spec, services: { keystone: { external: { ...cp.spec.services.keystone.external, caBundleSecretRef: { name: 'ca', key: 'ca.crt' } } } } } };
    expect(credentialGates(credential(), { ...world, controlPlane: withCa }, { deleting: false }).gate?.reason).toBe('WaitingForCABundle');
    const caSecret = { metadata: { name: 'ca', namespace: cp.metadata.namespace as string }, data: { 'ca.crt': 'PEM' } };
    expect(credentialGates(credential(), { ...world, controlPlane: withCa, caSecret }, { deleting: false }).connection?.caBundle).toBe('PEM');
  });
  it('a deleted order reaches Keystone whatever its gates say; with its ControlPlane gone it is released at once', () => {
    const deleting = { deleting: true };
    expect(credentialGates(credential(), { ...world, assignments: [] }, deleting).connection?.userId).toBe('u-1');
    const gone = credentialGates(credential(), { ...world, controlPlane: undefined }, deleting);
    expect(gone.releasable).toBe(true);
    expect(gone.connection).toBeUndefined();
  });
});
