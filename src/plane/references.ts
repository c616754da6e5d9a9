/**
 * The references between orders of one namespace, written once: whether a KeystoneUser or KeystoneProject an order
 * names is there, belongs to the same ControlPlane, and is provisioned; and whether a KeystoneRoleAssignment has given
 * a user a role on a project (spec, Consent: the gates; identity-plane.md, KeystoneRoleAssignment).
 */
import { PlaneConditionType, type Condition, type KeystoneProject, type KeystoneRoleAssignment, type KeystoneUser } from '../api';
import { conditionOf } from './conditions';
import { controlPlaneKey, type OrderObject } from './naming';
import { HoldReason } from './reasons';

const HOLDS: readonly string[] = Object.values(HoldReason);

/** Whether two orders reference the same ControlPlane (each ref resolved against its own order's namespace). */
export function sameControlPlane(a: OrderObject, b: OrderObject): boolean {
  const x = controlPlaneKey(a);
  const y = controlPlaneKey(b);
  return x.namespace === y.namespace && x.name === y.name;
}

/** A refusal of a reference: the reason names the kind of refusal, the message the object. */
export interface Refusal<R extends string = string> {
  readonly reason: R;
  readonly message: string;
}

/**
 * Whether a user is provisioned: it reports a user id and the password generation Keystone holds, and UserReady is
 * True or only says that its deletion is held (a held user keeps working for the orders that hold it).
 */
export function userProvisioned(user: KeystoneUser): boolean {
  const ready = conditionOf(user.status?.conditions, PlaneConditionType.UserReady);
  return !!user.status?.userID && !!user.status.passwordGeneration && (ready?.status === 'True' || HOLDS.includes(ready?.reason ?? ''));
}

/** Whether a project is provisioned: it reports a project id and name, and ProjectReady is True or only held. */
export function projectProvisioned(project: KeystoneProject): boolean {
  const ready = conditionOf(project.status?.conditions, PlaneConditionType.ProjectReady);
  return !!project.status?.projectID && !!project.status.projectName && (ready?.status === 'True' || HOLDS.includes(ready?.reason ?? ''));
}

function notYet(kind: string, name: string, conditions: readonly Condition[] | undefined, type: string): string {
  const c = conditionOf(conditions, type);
  return `${kind} ${name} is not provisioned yet (${type}: ${c ? `${c.status}/${c.reason}` : 'not reported'})`;
}

/** The user an order names: UserNotFound, ControlPlaneMismatch or WaitingForUser, or undefined when usable. */
export function checkUser(order: OrderObject, name: string, user: KeystoneUser | undefined): Refusal<'UserNotFound' | 'ControlPlaneMismatch' | 'WaitingForUser'> | undefined {
  if (!user) return { reason: 'UserNotFound', message: `no KeystoneUser ${name} in namespace ${order.metadata.namespace}` };
  if (!sameControlPlane(order, user)) {
    return { reason: 'ControlPlaneMismatch', message: `KeystoneUser ${name} belongs to ControlPlane ${refText(user)}, this order to ${refText(order)}` };
  }
  if (!userProvisioned(user)) return { reason: 'WaitingForUser', message: notYet('KeystoneUser', name, user.status?.conditions, PlaneConditionType.UserReady) };
  return undefined;
}

/** The project an order names: ProjectNotFound, ControlPlaneMismatch or WaitingForProject, or undefined when usable. */
export function checkProject(
  order: OrderObject,
  name: string,
  project: KeystoneProject | undefined,
): Refusal<'ProjectNotFound' | 'ControlPlaneMismatch' | 'WaitingForProject'> | undefined {
  if (!project) return { reason: 'ProjectNotFound', message: `no KeystoneProject ${name} in namespace ${order.metadata.namespace}` };
  if (!sameControlPlane(order, project)) {
    return { reason: 'ControlPlaneMismatch', message: `KeystoneProject ${name} belongs to ControlPlane ${refText(project)}, this order to ${refText(order)}` };
  }
  if (!projectProvisioned(project)) {
    return { reason: 'WaitingForProject', message: notYet('KeystoneProject', name, project.status?.conditions, PlaneConditionType.ProjectReady) };
  }
  return undefined;
}

/** What the references of an order that uses a user on a project say, each checked once ({@link userOnProject}). */
export interface UserOnProject {
  /** Why the user cannot be used ({@link checkUser}); undefined when it can. */
  readonly user?: Refusal<'UserNotFound' | 'ControlPlaneMismatch' | 'WaitingForUser'>;
  /** Why the project cannot be used ({@link checkProject}); undefined when it can. */
  readonly project?: Refusal<'ProjectNotFound' | 'ControlPlaneMismatch' | 'WaitingForProject'>;
  /** The role assignments that gave the user a role on the project ({@link rolesOnProject}); none while either is refused. */
  readonly assigned: readonly KeystoneRoleAssignment[];
}

/**
 * The user and the project an order names (`names`), checked against what the cache holds, and, when both can be used,
 * the role assignments of the namespace that gave the user a role on the project: one call for a driver's gates, which
 * decide in what order the refusals count.
 */
export function userOnProject(
  order: OrderObject,
  names: { readonly user: string; readonly project: string },
  found: { readonly user?: KeystoneUser; readonly project?: KeystoneProject; readonly assignments: readonly KeystoneRoleAssignment[] },
): UserOnProject {
  const user = checkUser(order, names.user, found.user);
  const project = checkProject(order, names.project, found.project);
  const assigned = !user && !project ? rolesOnProject(order, found.user as KeystoneUser, found.project as KeystoneProject, found.assignments) : [];
  return { ...(user ? { user } : {}), ...(project ? { project } : {}), assigned };
}

/**
 * The field selector (`ClusterPort.list`) of the KeystoneRoleAssignments that can concern a user and a project by name:
 * every assignment `rolesOnProject` and an assignment's duplicates are chosen from, so a pass lists those and not the
 * whole namespace (a steady resync would otherwise cost O(assignments) per order).
 */
export function assignmentSelector(userName: string, projectName: string): Record<string, string> {
  return { 'spec.userRef.name': userName, 'spec.projectRef.name': projectName };
}

/**
 * The role assignments of the namespace that have given `user` a role on `project`: same names, same ControlPlane,
 * `status.roleID` reported (not AssignmentReady: a frozen assignment keeps its role), and the user and project ids they
 * recorded are the ones the user and project report now.
 */
export function rolesOnProject(
  order: OrderObject,
  user: KeystoneUser,
  project: KeystoneProject,
  assignments: readonly KeystoneRoleAssignment[],
): KeystoneRoleAssignment[] {
  return assignments.filter(
    (a) =>
      (a.metadata.namespace ?? '') === (order.metadata.namespace ?? '') &&
      a.spec.userRef.name === user.metadata.name &&
      a.spec.projectRef.name === project.metadata.name &&
      sameControlPlane(order, a) &&
      !!a.status?.roleID &&
      a.status.userID === user.status?.userID &&
      a.status.projectID === project.status?.projectID,
  );
}

function refText(order: OrderObject): string {
  return `${order.spec.controlPlaneRef.namespace || order.metadata.namespace}/${order.spec.controlPlaneRef.name}`;
}
