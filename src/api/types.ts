/**
 * The KeystoneApplicationCredential kind (`c5c3.io/v1alpha1`): spec and status as the spec's tables give them.
 *
 * int64 fields are JavaScript numbers: generations stay far below 2^53.
 */
import type { AdoptSpec } from './adoption';
import type { Condition } from './conditions';
import type { DeletionPolicy } from './deletion-policy';
import type { AccessRule } from './privileges';
import type { SecretTemplate } from './secret-template';

/** API group of every kind of this project. */
export const GROUP = 'c5c3.io';
/** API version of every kind of this project. */
export const VERSION = 'v1alpha1';
/** `apiVersion` as written in manifests. */
export const API_VERSION = `${GROUP}/${VERSION}`;
/** The kind. */
export const KIND = 'KeystoneApplicationCredential';
/** The list kind. */
export const LIST_KIND = 'KeystoneApplicationCredentialList';
/** The resource's plural name, as in `keystoneapplicationcredentials.c5c3.io`. */
export const PLURAL = 'keystoneapplicationcredentials';

/** The finalizer that holds the order until its teardown is done (spec, Deletion Semantics). */
export const TEARDOWN_FINALIZER = 'c5c3.io/keystoneapplicationcredential-teardown';

/** `metav1.OwnerReference`. */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

/** The subset of `metav1.ObjectMeta` the lifecycle reads. */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly resourceVersion?: string;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly finalizers?: readonly string[];
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/**
 * A reference to the ControlPlane whose identity plane the order is created in, the same on every order kind. Both halves
 * are immutable, the namespace also when it was left out and is written out later (identity-plane.md, References).
 */
export interface ControlPlaneRef {
  readonly name: string;
  /**
   * A DNS label. Read it with `controlPlaneNamespace(order)`.
   * @default the order's own namespace (`metadata.namespace`), as in the original kinds
   */
  readonly namespace?: string;
}

/** A reference to another order in the order's own namespace. */
export interface LocalOrderRef {
  readonly name: string;
}

/** The rotation schedule (spec, Spec and Rotation). */
export interface RotationSpec {
  /**
   * The time between two scheduled rotations, Go format. `0s` turns the schedule off; any other value is at least `1m`,
   * and at most `87600h`.
   * @default "720h"
   */
  readonly interval?: string;
  /**
   * How long the superseded credential stays in Keystone after the delivered Secret switched. Not negative, and shorter
   * than a non-zero interval.
   * @default "24h"
   */
  readonly gracePeriod?: string;
}

/** KeystoneApplicationCredentialSpec. */
export interface KeystoneApplicationCredentialSpec {
  readonly controlPlaneRef: ControlPlaneRef;
  /** The KeystoneUser in the order's namespace the credential belongs to. Immutable. */
  readonly userRef: LocalOrderRef;
  /** The KeystoneProject in the order's namespace the credential is scoped to. Immutable. */
  readonly projectRef: LocalOrderRef;
  /**
   * The lowest credential generation the order must hold (minimum 1). Raising it above `status.credentialGeneration`
   * rotates at once. It may only increase.
   * @default 1
   */
  readonly credentialGeneration?: number;
  /** @default {} */
  readonly rotation?: RotationSpec;
  /**
   * Not the reference's (issue 42): the names of the roles the credential carries, a subset of the roles
   * KeystoneRoleAssignments of the namespace gave the user on the project, each in the namespace's `allowedRoles`.
   * A change rotates: the successor carries the new roles, the superseded credential its old ones for the grace period.
   * @default every role the user holds on the project (the reference's behaviour)
   */
  readonly roles?: readonly string[];
  /**
   * Not the reference's (issue 42): the only requests a token from the credential may make, where the service's
   * keystonemiddleware enforces access rules. A change rotates, as for `roles`.
   * @default none: every request the roles allow
   */
  readonly accessRules?: readonly AccessRule[];
  /**
   * Not the reference's (issue 49): labels, annotations, output formats (`cloud.conf`, the `OS_*` keys) and keys of your
   * own that the delivered Secret carries beside the reference's three keys (secret-template.ts).
   * @default none: the reference's three keys and the operator's two labels
   */
  readonly secretTemplate?: SecretTemplate;
  /**
   * Not the reference's (issue 49): `Retain` keeps the delivered credential in Keystone, the delivered Secret (its owner
   * reference removed) and its backup when the order is deleted (deletion-policy.ts).
   * @default "Delete": the reference's Deletion Semantics
   */
  readonly deletionPolicy?: DeletionPolicy;
  /**
   * Not the reference's (issue 49): adopt an existing application credential of the ordered user, proven by its secret,
   * instead of minting the first one (adoption.ts). Read only while the order holds no credential.
   * @default none: the first credential is minted
   */
  readonly adopt?: AdoptSpec;
}

/** KeystoneApplicationCredentialStatus (spec, Status). Times are RFC 3339 strings, as `metav1.Time` serializes. */
export interface KeystoneApplicationCredentialStatus {
  readonly conditions?: readonly Condition[];
  readonly observedGeneration?: number;
  /** The Keystone id of the credential the delivered Secret carries. */
  readonly credentialID?: string;
  /** The generation of that credential. */
  readonly credentialGeneration?: number;
  /** When that credential expires in Keystone. Absent for one created with the schedule off. */
  readonly credentialExpiresAt?: string;
  /** When that credential became the delivered one. */
  readonly lastRotation?: string;
  /** When the schedule rotates next. Absent with the schedule off. */
  readonly nextRotation?: string;
  /** The Keystone id of the superseded credential, during its grace period only. */
  readonly previousCredentialID?: string;
  /** Its generation, during its grace period only. */
  readonly previousCredentialGeneration?: number;
  /** When it is deleted, during its grace period only. */
  readonly previousCredentialDeleteAt?: string;
  /** The delivered Secret, once it carries the current credential. */
  readonly secretName?: string;
  /** The delivered Secret's data keys, once it carries the current credential. */
  readonly secretKeys?: readonly string[];
  /**
   * Not the reference's (issue 46): the OpenBao path (its mount first) the order's backup lives at alone, recorded once the
   * backup has been looked at there and at the path keystone-appcred 0.1.0 wrote, and holds nothing of the order's at
   * the latter (src/lifecycle/migration.ts). A process that meets the order takes its backup's migration as done while
   * this names the order's own path: a restart reads OpenBao for no converged order. Absent without a backup.
   */
  readonly backupPath?: string;
  /**
   * Not the reference's (issue 49): the value of the `c5c3.io/revoke-previous` annotation (on Pulumi, the `revokePrevious`
   * input) the order last acted on; a different value is a new request.
   */
  readonly lastRevokeRequest?: string;
  /**
   * Not the reference's (issue 49): while a revoke request is carried out, the generation it rotates to; every
   * credential below it is deleted as soon as one at or above it is delivered and backed up, skipping its grace period.
   */
  readonly revokeGeneration?: number;
  /**
   * Not the reference's (issue 49): the Keystone id of the credential the order adopted (`spec.adopt`) instead of minting,
   * while the order holds it (delivered or superseded in its grace period).
   */
  readonly adoptedCredentialID?: string;
}

/** A KeystoneApplicationCredential object. */
export interface KeystoneApplicationCredential {
  readonly apiVersion: typeof API_VERSION;
  readonly kind: typeof KIND;
  readonly metadata: ObjectMeta;
  readonly spec: KeystoneApplicationCredentialSpec;
  readonly status?: KeystoneApplicationCredentialStatus;
}
