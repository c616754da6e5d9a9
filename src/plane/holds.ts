/**
 * Holds on deletion, written once for every order kind (identity-plane.md, Shared behaviour; spec, Deletion
 * Semantics): while any KeystoneApplicationCredential references a user, a project, or the user and project of a role
 * assignment, deleting that order waits with `ReferencedByApplicationCredentials`; while a KeystoneRoleAssignment
 * references a user or project, deleting it waits with `ReferencedByRoleAssignments`. References are by name within
 * the namespace; an order that is itself being deleted still holds until it is gone.
 */
import type { KeystoneApplicationCredential, KeystoneProject, KeystoneRoleAssignment, KeystoneUser } from '../api';
import { HoldReason } from './reasons';

/** The orders of one namespace that may hold others. */
export interface Holders {
  readonly assignments: readonly KeystoneRoleAssignment[];
  readonly credentials: readonly KeystoneApplicationCredential[];
}

/** Why deleting an order waits. */
export interface Hold {
  readonly reason: HoldReason;
  readonly message: string;
}

const inNamespace = (namespace: string | undefined) => (o: { metadata: { namespace?: string } }) => (o.metadata.namespace ?? '') === (namespace ?? '');
const names = (list: readonly { metadata: { name: string } }[]): string => list.map((o) => o.metadata.name).sort().join(', ');

function credentialHold(what: string, holders: readonly KeystoneApplicationCredential[]): Hold | undefined {
  if (holders.length === 0) return undefined;
  return {
    reason: HoldReason.ReferencedByApplicationCredentials,
    message: `KeystoneApplicationCredential ${names(holders)} still reference${holders.length === 1 ? 's' : ''} ${what}; delete ${holders.length === 1 ? 'it' : 'them'} first`,
  };
}

function assignmentHold(what: string, holders: readonly KeystoneRoleAssignment[]): Hold | undefined {
  if (holders.length === 0) return undefined;
  return {
    reason: HoldReason.ReferencedByRoleAssignments,
    message: `KeystoneRoleAssignment ${names(holders)} still reference${holders.length === 1 ? 's' : ''} ${what}; delete ${holders.length === 1 ? 'it' : 'them'} first`,
  };
}

/** What holds a KeystoneUser: credentials first (they hold the assignments too), then role assignments. */
export function holdOnUser(user: KeystoneUser, world: Holders): Hold | undefined {
  const own = inNamespace(user.metadata.namespace);
  const name = user.metadata.name;
  return (
    credentialHold('this user', world.credentials.filter(own).filter((c) => c.spec.userRef.name === name)) ??
    assignmentHold('this user', world.assignments.filter(own).filter((a) => a.spec.userRef.name === name))
  );
}

/** What holds a KeystoneProject: credentials first, then role assignments. */
export function holdOnProject(project: KeystoneProject, world: Holders): Hold | undefined {
  const own = inNamespace(project.metadata.namespace);
  const name = project.metadata.name;
  return (
    credentialHold('this project', world.credentials.filter(own).filter((c) => c.spec.projectRef.name === name)) ??
    assignmentHold('this project', world.assignments.filter(own).filter((a) => a.spec.projectRef.name === name))
  );
}

/** What holds a KeystoneRoleAssignment: every credential of its user and project. */
export function holdOnAssignment(assignment: KeystoneRoleAssignment, world: Pick<Holders, 'credentials'>): Hold | undefined {
  const own = inNamespace(assignment.metadata.namespace);
  const { userRef, projectRef } = assignment.spec;
  return credentialHold(
    `the user ${userRef.name} on the project ${projectRef.name}`,
    world.credentials.filter(own).filter((c) => c.spec.userRef.name === userRef.name && c.spec.projectRef.name === projectRef.name),
  );
}
