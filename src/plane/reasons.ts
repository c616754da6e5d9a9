/**
 * Condition reasons of the four identity-plane kinds, exactly as identity-plane.md names them. The shared admission
 * reasons (`ControlPlaneNotFound`, `NamespaceNotAssigned`, `ClusterNameTooLong`, `WaitingForAdminCredential`) are
 * `AdmissionReason` of src/api; `DeliveryReady` of a KeystoneUser reuses the KeystoneApplicationCredential's
 * `DeliveryReason`. Not in src/api yet: they belong there (see the report of the identity-plane work).
 */
import { ADMIN_CREDENTIAL_EXPIRING } from '../api/conditions';

/** `AdminCredentialReady` of a ControlPlane. */
export const AdminCredentialReason = {
  AdminCredentialReady: 'AdminCredentialReady',
  /**
   * Not identity-plane.md's (issue 42), a True reason: the admin is an application credential that expires within
   * `ADMIN_CREDENTIAL_EXPIRY_WARNING`; create its successor and put it into the Secret (recorded as a Warning Event).
   */
  AdminCredentialExpiring: ADMIN_CREDENTIAL_EXPIRING,
  /** The Secret `adminCredential.cloudCredentialsRef.secretName`, or its key `clouds.yaml`, is missing or empty. */
  WaitingForCloudsYaml: 'WaitingForCloudsYaml',
  /** The document is not YAML, lacks the cloud, or the cloud is no password cloud with a user, password and project. */
  CloudsYamlError: 'CloudsYamlError',
  /** `caBundleSecretRef` names a Secret or key that is missing or empty (identity-plane.md: orders report it too). */
  WaitingForCABundle: 'WaitingForCABundle',
  /** Keystone refused the admin's password login. */
  AuthenticationFailed: 'AuthenticationFailed',
  /** No answer from Keystone (connection, TLS, timeout, 5xx). */
  KeystoneUnreachable: 'KeystoneUnreachable',
  /**
   * Not identity-plane.md's (issue 34): the operator has no Role in the ControlPlane's namespace (or, with `identityRef`,
   * none for the identity's source Secret), so it cannot read the admin credential; the message names the namespace,
   * the Role and how to add it.
   */
  SecretAccessNotGranted: 'SecretAccessNotGranted',
} as const;
export type AdminCredentialReason = (typeof AdminCredentialReason)[keyof typeof AdminCredentialReason];

/** Why deleting an order waits (identity-plane.md, Shared behaviour). */
export const HoldReason = {
  /** A KeystoneRoleAssignment references the user or project. */
  ReferencedByRoleAssignments: 'ReferencedByRoleAssignments',
  /** A KeystoneApplicationCredential references the user, the project, or the user and project of the assignment. */
  ReferencedByApplicationCredentials: 'ReferencedByApplicationCredentials',
} as const;
export type HoldReason = (typeof HoldReason)[keyof typeof HoldReason];

/** `ProjectReady` of a KeystoneProject. */
export const ProjectReason = {
  ProjectProvisioned: 'ProjectProvisioned',
  /** A project of that name exists in the domain that this order did not create: never adopted, never deleted. */
  ProjectCollision: 'ProjectCollision',
  ProjectFailed: 'ProjectFailed',
  ...HoldReason,
} as const;
export type ProjectReason = (typeof ProjectReason)[keyof typeof ProjectReason];

/** `UserReady` of a KeystoneUser. */
export const UserReason = {
  UserProvisioned: 'UserProvisioned',
  /** A user of that name exists in the domain that this order did not create: never adopted, never deleted. */
  UserCollision: 'UserCollision',
  UserFailed: 'UserFailed',
  ...HoldReason,
} as const;
export type UserReason = (typeof UserReason)[keyof typeof UserReason];

/** `AssignmentReady` of a KeystoneRoleAssignment. */
export const AssignmentReason = {
  RoleAssigned: 'RoleAssigned',
  /** The role is not in the namespace assignment's `allowedRoles`. */
  RoleNotAllowed: 'RoleNotAllowed',
  UserNotFound: 'UserNotFound',
  ProjectNotFound: 'ProjectNotFound',
  ControlPlaneMismatch: 'ControlPlaneMismatch',
  WaitingForUser: 'WaitingForUser',
  WaitingForProject: 'WaitingForProject',
  /** An older KeystoneRoleAssignment in the namespace orders the same role for the same user and project. */
  DuplicateRoleAssignment: 'DuplicateRoleAssignment',
  RoleAssignmentFailed: 'RoleAssignmentFailed',
  ReferencedByApplicationCredentials: HoldReason.ReferencedByApplicationCredentials,
} as const;
export type AssignmentReason = (typeof AssignmentReason)[keyof typeof AssignmentReason];

/** The aggregate `Ready` when every sub-condition is True; otherwise `Ready` carries the first failing reason. */
export const PLANE_READY_REASON = 'AllReady';
