/**
 * What the KeystoneApplicationCredential reconciler reads from the identity plane each pass (spec, Consent): its
 * `Admission` (ControlPlaneNotFound, NamespaceNotAssigned, ClusterNameTooLong, SecretAccessNotGranted,
 * WaitingForAdminCredential — the order is frozen) and its `Gate` (WaitingForCABundle, then the user, the project and the role on the project — the schedule
 * pauses and the delivered Secret is kept). Built from the same rules the plane's own kinds use.
 */
import {
  CredentialReason,
  type ControlPlane,
  type KeystoneApplicationCredential,
  type KeystoneProject,
  type KeystoneRoleAssignment,
  type KeystoneUser,
} from '../api';
import type { Admission, Gate, Undeliverable } from '../lifecycle/model';
import { consentOf, controlPlaneKey, locationOf } from './consent';
import { notPublished } from './delivery';
import { checkProject, checkUser, rolesOnProject } from './references';
import { AdminCredentialReason } from './reasons';
import type { SecretAccess } from './secret-access';

/** The objects a KeystoneApplicationCredential references, as the cache holds them. */
export interface CredentialReferences {
  /** The ControlPlane `spec.controlPlaneRef` resolves to, if any. */
  readonly controlPlane?: ControlPlane;
  /** The KeystoneUser `spec.userRef` names, if any. */
  readonly user?: KeystoneUser;
  /** The KeystoneProject `spec.projectRef` names, if any. */
  readonly project?: KeystoneProject;
  /** The KeystoneRoleAssignments of the order's namespace. */
  readonly assignments: readonly KeystoneRoleAssignment[];
  /**
   * Whether the parked password of the user's `status.passwordGeneration` is readable (the reconciler's own
   * observation; see `passwordSecretName`). False → WaitingForUser. @default true
   */
  readonly userPasswordAvailable?: boolean;
  /** The cluster the order lives on. @default the management cluster */
  readonly cluster?: string;
  /**
   * The operator's access to Secrets in the order's namespace (./secret-access.ts): refused → SecretAccessNotGranted,
   * frozen. @default granted
   */
  readonly secretAccess?: SecretAccess;
}

/** The admission and gate of a KeystoneApplicationCredential; both undefined when it may act. */
export interface CredentialAdmission {
  readonly admission?: Admission;
  readonly gate?: Gate;
  /** An admitted order whose document cannot be delivered where it lives (KeystoneNotPublished). */
  readonly undeliverable?: Undeliverable;
}

/** Computes the order's admission, then (when admitted) its gate, in the spec's order. */
export function credentialAdmission(order: KeystoneApplicationCredential, refs: CredentialReferences): CredentialAdmission {
  const consent = consentOf(locationOf(order, refs.cluster), controlPlaneKey(order), refs.controlPlane, refs.secretAccess);
  if (consent.state === 'refused') return { admission: { reason: consent.reason, message: consent.message } };
  const unpublished = notPublished(consent.controlPlane, refs.cluster);
  const undeliverable = unpublished ? { undeliverable: unpublished } : {};
  if (consent.wait?.reason === AdminCredentialReason.WaitingForCABundle) {
    return { gate: { reason: CredentialReason.WaitingForCABundle, message: consent.wait.message }, ...undeliverable };
  }
  if (consent.wait) return { admission: { reason: consent.wait.reason, message: consent.wait.message } };
  const gate = gateOf(order, refs);
  return { ...(gate ? { gate } : {}), ...undeliverable };
}

function gateOf(order: KeystoneApplicationCredential, refs: CredentialReferences): Gate | undefined {
  const user = checkUser(order, order.spec.userRef.name, refs.user);
  if (user) return { reason: CredentialReason[user.reason], message: user.message };
  if (refs.userPasswordAvailable === false) {
    return {
      reason: CredentialReason.WaitingForUser,
      message: `the password of KeystoneUser ${order.spec.userRef.name} generation ${refs.user?.status?.passwordGeneration} is not available`,
    };
  }
  const project = checkProject(order, order.spec.projectRef.name, refs.project);
  if (project) return { reason: CredentialReason[project.reason], message: project.message };
  if (rolesOnProject(order, refs.user as KeystoneUser, refs.project as KeystoneProject, refs.assignments).length === 0) {
    return {
      reason: CredentialReason.NoRoleOnProject,
      message: `no KeystoneRoleAssignment in namespace ${order.metadata.namespace} has assigned user ${order.spec.userRef.name} a role on project ${order.spec.projectRef.name}`,
    };
  }
  return undefined;
}
