/**
 * Condition types and reasons of KeystoneApplicationCredential, exactly as the spec's Conditions table names them, and the
 * `metav1.Condition` shape they are reported in.
 */

/** `metav1.Condition`: one observation of one aspect of the order. */
export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  /** RFC 3339; changes only when `status` changes. */
  readonly lastTransitionTime: string;
  readonly observedGeneration?: number;
}

/** The three condition types (spec, Conditions). */
export const ConditionType = {
  /** The delivered credential exists in Keystone. */
  CredentialReady: 'CredentialReady',
  /** The Secret beside the order carries the current credential. */
  DeliveryReady: 'DeliveryReady',
  /** Both sub-conditions are True. */
  Ready: 'Ready',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

/** Reasons of `CredentialReady` (spec, Conditions). */
export const CredentialReason = {
  CredentialMinted: 'CredentialMinted',
  UserNotFound: 'UserNotFound',
  ProjectNotFound: 'ProjectNotFound',
  ControlPlaneMismatch: 'ControlPlaneMismatch',
  WaitingForUser: 'WaitingForUser',
  WaitingForProject: 'WaitingForProject',
  NoRoleOnProject: 'NoRoleOnProject',
  WaitingForCABundle: 'WaitingForCABundle',
  WaitingForCredential: 'WaitingForCredential',
  CredentialFailed: 'CredentialFailed',
  TransportErrorRetryFailed: 'TransportErrorRetryFailed',
  CredentialError: 'CredentialError',
  /**
   * Not in the spec's table (issue 32): credentials under the order's names that the order did not mint are in
   * Keystone (another installation orders the same names for the same user). True while the order's own credential is
   * delivered beside them, False while they keep it from minting; the message names each and what to do.
   */
  ForeignCredential: 'ForeignCredential',
  /**
   * Not in the spec's table (issue 42): `spec.roles` names a role the ControlPlane's `namespaceAssignments` entry for the
   * order's namespace does not allow (`allowedRoles`); the message names each such role and the allowed ones.
   */
  RoleNotAllowed: 'RoleNotAllowed',
  /**
   * Not in the spec's table (issue 42): `spec.roles` names a role the user does not hold on the project (no
   * KeystoneRoleAssignment of the namespace assigned it; for the Pulumi resource, not in the user's token); the message
   * names each such role and the ones the user holds.
   */
  RoleNotAssigned: 'RoleNotAssigned',
  /**
   * Not in the spec's table (issue 49): the credential `spec.adopt` names cannot be adopted (its Secret or key is
   * missing, Keystone does not authenticate it with the given secret, it is not the ordered user's on the ordered
   * project, it is unrestricted or another order's); the message says which. Nothing is minted in its place.
   */
  AdoptionRefused: 'AdoptionRefused',
} as const;
export type CredentialReason = (typeof CredentialReason)[keyof typeof CredentialReason];

/**
 * A ControlPlane's `AdminCredentialReady=True` reason while its admin application credential expires within
 * `ADMIN_CREDENTIAL_EXPIRY_WARNING` (issue 42; the plane's other reasons are in src/plane/reasons.ts).
 */
export const ADMIN_CREDENTIAL_EXPIRING = 'AdminCredentialExpiring';

/**
 * Reasons that call for a look although their condition is True (the order works): recorded as a Warning Event when a
 * condition turns to them.
 */
export const WARNING_REASONS: ReadonlySet<string> = new Set([CredentialReason.ForeignCredential, ADMIN_CREDENTIAL_EXPIRING]);

/** Reasons of `DeliveryReady` (spec, Conditions). */
export const DeliveryReason = {
  Delivered: 'Delivered',
  WaitingForCredential: 'WaitingForCredential',
  KeystoneNotPublished: 'KeystoneNotPublished',
  BackupNotSynced: 'BackupNotSynced',
  DeliveryRefused: 'DeliveryRefused',
  DeliveryError: 'DeliveryError',
  /**
   * Not in the spec's table (issue 49): the order's `spec.secretTemplate` cannot be rendered where it lives (it names a
   * field that is not known there); the message names the key and the field. The Secret keeps what it carried.
   */
  SecretTemplateInvalid: 'SecretTemplateInvalid',
} as const;
export type DeliveryReason = (typeof DeliveryReason)[keyof typeof DeliveryReason];

/** Reasons both sub-conditions carry when the order is not admitted (spec, Conditions, rows "both"). */
export const AdmissionReason = {
  ControlPlaneNotFound: 'ControlPlaneNotFound',
  /** The order is frozen: nothing is created, rotated, delivered, repaired or swept (spec, Consent). */
  NamespaceNotAssigned: 'NamespaceNotAssigned',
  ClusterNameTooLong: 'ClusterNameTooLong',
  WaitingForAdminCredential: 'WaitingForAdminCredential',
  /**
   * Not the spec's (issue 34, the namespaced Secret access): the namespace is assigned, but the operator has no Role
   * there that grants it the Secrets it delivers (the message names the namespace, the Role and how to add it). The
   * order is frozen, as without consent, until the grant appears.
   */
  SecretAccessNotGranted: 'SecretAccessNotGranted',
} as const;
export type AdmissionReason = (typeof AdmissionReason)[keyof typeof AdmissionReason];

/** Reasons of the aggregate `Ready`. */
export const ReadyReason = {
  AllReady: 'AllReady',
  NotAllReady: 'NotAllReady',
} as const;
export type ReadyReason = (typeof ReadyReason)[keyof typeof ReadyReason];

/** A condition to set; `lastTransitionTime` is filled in by {@link setCondition}. */
export interface ConditionUpdate {
  readonly type: ConditionType;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/**
 * Returns `conditions` with `update` applied, keeping `lastTransitionTime` when the status did not change (the
 * `meta.SetStatusCondition` rule), so a status rewrite with the same facts is a no-op.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  now: Date,
  observedGeneration?: number,
): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === update.type);
  const existing = index >= 0 ? list[index] : undefined;
  const next: Condition = {
    ...update,
    lastTransitionTime: existing && existing.status === update.status ? existing.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  };
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

/** The condition of the given type, if reported. */
export function findCondition(conditions: readonly Condition[] | undefined, type: ConditionType): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}
