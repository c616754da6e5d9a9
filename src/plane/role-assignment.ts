/**
 * The KeystoneRoleAssignment's rules (identity-plane.md, KeystoneRoleAssignment; Shared behaviour), as a pure `decide`:
 * the role (which must be in the namespace's `allowedRoles`) granted to the ordered user on the ordered project, both
 * orders of the same namespace and ControlPlane, and `status.roleID` reported once Keystone holds the grant.
 *
 * Keystone records nothing on a grant, so ownership follows the orders: the grant is on a user and a project this
 * plane created (they carry the ownership marker), and among assignments of the same user, project and role in the
 * namespace the oldest owns it; the others report `DuplicateRoleAssignment` and never grant or revoke. A deleted owner
 * hands the grant to a younger duplicate instead of revoking it.
 */
import { PlaneConditionType, type KeystoneProject, type KeystoneRoleAssignment, type KeystoneRoleAssignmentStatus, type KeystoneUser } from '../api';
import { report, type Verdict } from './conditions';
import { needsFinalizer, teardownPath, type Consent } from './consent';
import type { Hold } from './holds';
import { teardownFinalizer } from './naming';
import { allFalse, observed, override } from './order-status';
import { RECHECK_MS, type FinalizerAction, type PlanePlan } from './plan';
import type { RoleGrant } from './ports';
import { AssignmentReason } from './reasons';
import { checkProject, checkUser, sameControlPlane } from './references';

/** An action of a KeystoneRoleAssignment. */
export type AssignmentAction =
  | FinalizerAction
  | { readonly type: 'grant'; readonly grant: RoleGrant; readonly why: string }
  | { readonly type: 'revoke'; readonly grant: RoleGrant; readonly why: string };

/** What one pass observed. */
export interface AssignmentObservations {
  readonly consent: Consent;
  readonly hold?: Hold;
  /** The KeystoneUser `userRef` names, if any. */
  readonly user?: KeystoneUser;
  /** The KeystoneProject `projectRef` names, if any. */
  readonly project?: KeystoneProject;
  /** The KeystoneRoleAssignments of the namespace (this one may be among them). */
  readonly peers: readonly KeystoneRoleAssignment[];
  /** Keystone, observed as the admin once the gates pass (or in teardown). */
  readonly keystone?: {
    /** The role of `spec.role`; undefined: no such role. */
    readonly role?: { readonly id: string; readonly name: string };
    /** Whether the user holds the role on the project. */
    readonly granted: boolean;
  };
  /** Observing or acting failed: RoleAssignmentFailed, retried. */
  readonly failure?: string;
}

const TYPES = [PlaneConditionType.AssignmentReady] as const;
type Plan = PlanePlan<KeystoneRoleAssignmentStatus, AssignmentAction>;

const sameTriple = (a: KeystoneRoleAssignment, b: KeystoneRoleAssignment): boolean =>
  (a.metadata.namespace ?? '') === (b.metadata.namespace ?? '') &&
  a.spec.userRef.name === b.spec.userRef.name &&
  a.spec.projectRef.name === b.spec.projectRef.name &&
  a.spec.role === b.spec.role &&
  sameControlPlane(a, b);

const older = (a: KeystoneRoleAssignment, b: KeystoneRoleAssignment): boolean => {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  return ta !== tb ? ta < tb : a.metadata.name < b.metadata.name;
};

/** The older assignment of the same user, project and role that owns the grant, if this one is a duplicate. */
export function duplicateOf(assignment: KeystoneRoleAssignment, peers: readonly KeystoneRoleAssignment[]): KeystoneRoleAssignment | undefined {
  return peers
    .filter((p) => p.metadata.name !== assignment.metadata.name && sameTriple(p, assignment) && older(p, assignment))
    .sort((a, b) => (older(a, b) ? -1 : 1))[0];
}

/** A younger assignment of the same user, project and role, not being deleted, that takes the grant over. */
function successorOf(assignment: KeystoneRoleAssignment, peers: readonly KeystoneRoleAssignment[]): KeystoneRoleAssignment | undefined {
  return peers.find((p) => p.metadata.name !== assignment.metadata.name && !p.metadata.deletionTimestamp && sameTriple(p, assignment));
}

/** The grant this order made, as its status records it. */
function recordedGrant(status: KeystoneRoleAssignmentStatus): RoleGrant | undefined {
  return status.roleID && status.userID && status.projectID ? { roleId: status.roleID, userId: status.userID, projectId: status.projectID } : undefined;
}

function withoutGrant(status: KeystoneRoleAssignmentStatus): KeystoneRoleAssignmentStatus {
  const next = { ...status };
  delete next.roleID;
  delete next.userID;
  delete next.projectID;
  return next;
}

function verdictStatus(status: KeystoneRoleAssignmentStatus, verdict: Verdict, now: Date): KeystoneRoleAssignmentStatus {
  return { ...status, conditions: report(status.conditions, [[TYPES[0], verdict]], now, status.observedGeneration) };
}

/** Decides the next step of a KeystoneRoleAssignment. */
export function decideAssignment(assignment: KeystoneRoleAssignment, world: AssignmentObservations, now: Date): Plan {
  const status = observed(assignment.status, assignment.metadata.generation);
  if (assignment.metadata.deletionTimestamp) return teardown(assignment, status, world, now);
  const { consent } = world;
  if (consent.state === 'refused') return { status: allFalse(status, TYPES, consent.reason, consent.message, now), actions: [] };
  const actions: AssignmentAction[] = [];
  if (needsFinalizer(consent, assignment.metadata, teardownFinalizer('KeystoneRoleAssignment'))) actions.push({ type: 'add-finalizer', why: 'the namespace is assigned' });
  if (consent.wait) return { status: allFalse(status, TYPES, consent.wait.reason, consent.wait.message, now), actions };
  const role = assignment.spec.role;
  const duplicate = duplicateOf(assignment, world.peers);

  const allowed = consent.assignment.allowedRoles ?? [];
  if (!allowed.includes(role)) {
    // The namespace may not hold the role: it is not granted, and a grant this order made is revoked.
    const grant = recordedGrant(status);
    if (grant && !duplicate) actions.push({ type: 'revoke', grant, why: `role ${role} is not in allowedRoles` });
    const message = `role ${role} is not in the allowedRoles of namespace ${assignment.metadata.namespace} (${allowed.length > 0 ? allowed.join(', ') : 'none'})`;
    return { status: verdictStatus(withoutGrant(status), { status: 'False', reason: AssignmentReason.RoleNotAllowed, message }, now), actions };
  }
  const userRefusal = checkUser(assignment, assignment.spec.userRef.name, world.user);
  const projectRefusal = userRefusal ? undefined : checkProject(assignment, assignment.spec.projectRef.name, world.project);
  const refusal = userRefusal ?? projectRefusal;
  if (refusal) return { status: verdictStatus(status, { status: 'False', reason: AssignmentReason[refusal.reason], message: refusal.message }, now), actions };
  if (duplicate) {
    const message = `KeystoneRoleAssignment ${duplicate.metadata.name} (older) orders role ${role} for user ${assignment.spec.userRef.name} on project ${assignment.spec.projectRef.name}`;
    return { status: verdictStatus(withoutGrant(status), { status: 'False', reason: AssignmentReason.DuplicateRoleAssignment, message }, now), actions };
  }
  if (world.failure !== undefined) return failed(status, world.failure, now, actions);
  const keystone = world.keystone;
  if (!keystone) return failed(status, 'Keystone was not observed', now, actions);
  if (!keystone.role) return failed(status, `role ${role} does not exist in Keystone`, now, actions);
  const grant: RoleGrant = { roleId: keystone.role.id, userId: world.user?.status?.userID ?? '', projectId: world.project?.status?.projectID ?? '' };
  if (!keystone.granted) actions.push({ type: 'grant', grant, why: `user ${assignment.spec.userRef.name} lacks role ${role} on project ${assignment.spec.projectRef.name}` });
  const next: KeystoneRoleAssignmentStatus = { ...status, roleID: grant.roleId, userID: grant.userId, projectID: grant.projectId };
  const message = `user ${assignment.spec.userRef.name} holds role ${role} on project ${assignment.spec.projectRef.name}`;
  return { status: verdictStatus(next, { status: 'True', reason: AssignmentReason.RoleAssigned, message }, now), actions };
}

function failed(status: KeystoneRoleAssignmentStatus, message: string, now: Date, actions: AssignmentAction[]): Plan {
  return { status: override(status, TYPES, TYPES[0], { status: 'False', reason: AssignmentReason.RoleAssignmentFailed, message }, now), actions, requeueAfter: RECHECK_MS };
}

/**
 * Deletion: wait while a credential of the user and project holds it; a duplicate releases at once; an owner with a
 * successor hands the grant over; otherwise the grant is revoked (a grant already gone is fine), then released.
 */
function teardown(assignment: KeystoneRoleAssignment, status: KeystoneRoleAssignmentStatus, world: AssignmentObservations, now: Date): Plan {
  if (!(assignment.metadata.finalizers ?? []).includes(teardownFinalizer('KeystoneRoleAssignment'))) return { status, actions: [] };
  if (world.hold) return { status: override(status, TYPES, TYPES[0], { status: 'False', reason: world.hold.reason, message: world.hold.message }, now), actions: [], requeueAfter: RECHECK_MS };
  if (duplicateOf(assignment, world.peers)) return { status, actions: [{ type: 'release', why: 'a duplicate never granted the role' }] };
  const successor = successorOf(assignment, world.peers);
  if (successor) return { status, actions: [{ type: 'release', why: `KeystoneRoleAssignment ${successor.metadata.name} takes the grant over` }] };
  const path = teardownPath(world.consent);
  if (path.path === 'release') return { status, actions: [{ type: 'release', why: 'the ControlPlane is gone: nothing is left to reach Keystone with' }] };
  if (path.path === 'wait') return { status: override(status, TYPES, TYPES[0], { status: 'False', reason: path.wait.reason, message: `deletion waits: ${path.wait.message}` }, now), actions: [] };
  if (world.failure !== undefined) return failed(status, world.failure, now, []);
  // The recorded grant; after a crash between the grant and the status write, the grant Keystone holds on the ordered
  // user and project (the role this order alone may hold on them: it is no duplicate and has no successor).
  const observedGrant =
    world.keystone?.granted && world.keystone.role && world.user?.status?.userID && world.project?.status?.projectID
      ? { roleId: world.keystone.role.id, userId: world.user.status.userID, projectId: world.project.status.projectID }
      : undefined;
  const grant = recordedGrant(status) ?? observedGrant;
  const actions: AssignmentAction[] = [];
  if (grant) actions.push({ type: 'revoke', grant, why: 'teardown' });
  actions.push({ type: 'release', why: grant ? 'the role is revoked' : 'this order recorded no grant' });
  return { status, actions };
}
