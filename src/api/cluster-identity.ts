/**
 * The KeystoneClusterIdentity kind (`c5c3.io/v1alpha1`, cluster-scoped; issue 11, after
 * ../shared/spec/terraformclusteridentity.md): one Secret holding a Keystone admin `clouds.yaml`, and the namespaces whose
 * ControlPlanes may use it through `spec.adminCredential.identityRef`. Spec and status shapes, names, defaults, bounds,
 * condition reasons, the mirror Secret's naming, and {@link identityAllows}. Its CRD rules live in
 * `cluster-identity-rules.ts`.
 */
import { createHash } from 'node:crypto';
import type { Condition } from './conditions';
import { labelSelectorMatches, type LabelSelector } from './label-selector';
import { API_VERSION, type ObjectMeta } from './types';

/** Kind, list kind, plural and singular of the KeystoneClusterIdentity. */
export const ClusterIdentityKind = {
  kind: 'KeystoneClusterIdentity',
  listKind: 'KeystoneClusterIdentityList',
  plural: 'keystoneclusteridentities',
  singular: 'keystoneclusteridentity',
} as const;

/** Defaults of the kind, as its CRD's schema applies them. */
export const ClusterIdentityDefaults = {
  /** The cloud of the Secret's `clouds.yaml` the operator logs in with (issue 11). */
  cloudName: 'admin',
} as const;

/** Bounds of the kind's schema (terraformclusteridentity.md, Spec and Status). */
export const ClusterIdentityLimits = {
  /** `metadata.name`: the mirror's name `keystone-creds-<name>` stays short, and the name fits a label value. */
  nameMaxBytes: 63,
  /** `spec.secretRef.name`: a DNS subdomain. */
  secretNameMaxLength: 253,
  /** `spec.secretRef.namespace`, `spec.allowedNamespaces.list[]`, `status.namespaces[]`: DNS labels. */
  namespaceMaxLength: 63,
  /** `spec.cloudName`: Keystone's name column, as for `cloudCredentialsRef.cloudName`. */
  cloudNameMaxLength: 255,
  /** `spec.allowedNamespaces.list`: 1 to 100 unique items. */
  listMinItems: 1,
  listMaxItems: 100,
  /** `status.namespaces`. */
  statusNamespacesMaxItems: 1000,
  /** `status.conditions`. */
  conditionsMaxItems: 32,
} as const;

/** The key of the source Secret (and of its mirrors) that holds the admin `clouds.yaml`. */
export const CLUSTER_IDENTITY_SECRET_KEY = 'clouds.yaml';

/** `spec.secretRef`: the credentials Secret. Both fields required; the namespace is never defaulted. */
export interface ClusterIdentitySecretRef {
  /** The Secret's name: a DNS subdomain of at most 253 characters. */
  readonly name: string;
  /** The Secret's namespace: a DNS label. Any namespace; it need not be an allowed one. */
  readonly namespace: string;
}

/**
 * `spec.allowedNamespaces`: a namespace is allowed when it is in `list` or its labels match `selector` (the union). At
 * least one of the two must be set: `{}` is refused at admission (write `selector: {}` for every namespace).
 */
export interface AllowedNamespaces {
  /** 1 to 100 unique DNS labels. @default none */
  readonly list?: readonly string[];
  /** Over the Namespace object's labels; `{}` matches every namespace, also ones that do not exist yet. @default none */
  readonly selector?: LabelSelector;
}

/** KeystoneClusterIdentitySpec. Every field is mutable. */
export interface KeystoneClusterIdentitySpec {
  /** The Secret whose key `clouds.yaml` holds a password cloud or an application credential with admin rights. */
  readonly secretRef: ClusterIdentitySecretRef;
  /** The cloud in that `clouds.yaml`. @default "admin" */
  readonly cloudName?: string;
  /** Which namespaces' ControlPlanes may use the identity. @default unset: no namespace */
  readonly allowedNamespaces?: AllowedNamespaces;
}

/** KeystoneClusterIdentityStatus, written by the operator only. */
export interface KeystoneClusterIdentityStatus {
  /** `Ready` only: {@link ClusterIdentityReason}. At most 32. */
  readonly conditions?: readonly Condition[];
  /**
   * Sorted namespaces that hold a correct mirror and a ControlPlane using the identity. A namespace is added only after
   * its mirror exists and removed only after the mirror is deleted; a non-empty list refuses the identity's deletion.
   */
  readonly namespaces?: readonly string[];
}

/** A KeystoneClusterIdentity object; cluster-scoped, so `metadata.namespace` is never set. */
export interface KeystoneClusterIdentity {
  /** `c5c3.io/v1alpha1`. */
  readonly apiVersion: typeof API_VERSION;
  /** `KeystoneClusterIdentity`. */
  readonly kind: typeof ClusterIdentityKind.kind;
  /** The object's metadata. */
  readonly metadata: Omit<ObjectMeta, 'namespace'>;
  /** What the platform admin shares, and with whom. */
  readonly spec: KeystoneClusterIdentitySpec;
  /** What the operator observed. */
  readonly status?: KeystoneClusterIdentityStatus;
}

/** `ControlPlane.spec.adminCredential.identityRef`: a KeystoneClusterIdentity, by name. */
export interface ClusterIdentityRef {
  /** The identity's name (1 to 63 characters). */
  readonly name: string;
}

/** The identity's condition type: only `Ready` (terraformclusteridentity.md, Conditions). */
export const ClusterIdentityConditionType = { Ready: 'Ready' } as const;

/** Reasons of the identity's `Ready`. */
export const ClusterIdentityReason = {
  /** True: the Secret named by `spec.secretRef` exists. */
  SecretFound: 'SecretFound',
  /** False: it does not; the message names it as `namespace/name`. ControlPlanes using the identity wait. */
  SecretNotFound: 'SecretNotFound',
} as const;
export type ClusterIdentityReason = (typeof ClusterIdentityReason)[keyof typeof ClusterIdentityReason];

/** The conditions a ControlPlane with `adminCredential.identityRef` reports besides `AdminCredentialReady` (issue 11). */
export const IdentityConditionType = {
  /** Whether the identity exists and allows the ControlPlane's namespace. */
  IdentityAllowed: 'IdentityAllowed',
  /** Whether the mirror `keystone-creds-<identity>` in the ControlPlane's namespace carries the source Secret. */
  CredentialsMirrored: 'CredentialsMirrored',
} as const;
export type IdentityConditionType = (typeof IdentityConditionType)[keyof typeof IdentityConditionType];

/** Reasons of a ControlPlane's `IdentityAllowed`. */
export const IdentityAllowedReason = {
  /** True: the identity allows the namespace, by `list` or by `selector`. */
  IdentityAllowed: 'IdentityAllowed',
  /** False: no KeystoneClusterIdentity of that name. */
  IdentityNotFound: 'IdentityNotFound',
  /** False: the identity does not allow the namespace (not listed, not matched, unset `allowedNamespaces`, or no such namespace). */
  NamespaceNotAllowed: 'NamespaceNotAllowed',
  /** Unknown: the namespace's labels could not be read; the check is retried. */
  IdentityCheckFailed: 'IdentityCheckFailed',
} as const;
export type IdentityAllowedReason = (typeof IdentityAllowedReason)[keyof typeof IdentityAllowedReason];

/** Reasons of a ControlPlane's `CredentialsMirrored`. */
export const CredentialsMirroredReason = {
  /** True: the mirror exists, labelled and annotated with the source's current hash. */
  CredentialsMirrored: 'CredentialsMirrored',
  /** False: `IdentityAllowed` is not True, so there is no mirror (and one that existed was deleted). */
  IdentityNotAllowed: 'IdentityNotAllowed',
  /** False: the identity's source Secret does not exist. */
  SourceSecretNotFound: 'SourceSecretNotFound',
  /** False: a Secret of the mirror's name exists that the operator did not create; it is never taken over. */
  MirrorConflict: 'MirrorConflict',
  /** False: writing the mirror failed; retried. */
  MirrorFailed: 'MirrorFailed',
} as const;
export type CredentialsMirroredReason = (typeof CredentialsMirroredReason)[keyof typeof CredentialsMirroredReason];

/** The prefix of a mirror's name. */
export const MIRROR_NAME_PREFIX = 'keystone-creds-';
/** The label every mirror carries, with the value {@link MIRRORED_LABEL_VALUE}. */
export const MIRRORED_LABEL = 'c5c3.io/mirrored';
/** The value of {@link MIRRORED_LABEL}. */
export const MIRRORED_LABEL_VALUE = 'true';
/** The annotation carrying {@link sourceHash} of the source Secret's data the mirror was written from. */
export const SOURCE_HASH_ANNOTATION = 'c5c3.io/source-hash';

/** `keystone-creds-<identity>`: the mirror of an identity's Secret in a ControlPlane's namespace. */
export function mirrorSecretName(identityName: string): string {
  return `${MIRROR_NAME_PREFIX}${identityName}`;
}

/**
 * The value of {@link SOURCE_HASH_ANNOTATION}: the hex sha256 of the Secret's data as decoded strings, keys sorted, so it
 * changes exactly when a key or value changes. Both sides of a comparison must pass the decoded form.
 */
export function sourceHash(data: Readonly<Record<string, string>>): string {
  const entries = Object.keys(data)
    .sort()
    .map((key) => [key, data[key]]);
  return createHash('sha256').update(JSON.stringify(entries)).digest('hex');
}

/**
 * True when a Secret's metadata marks it as a mirror written from a source with `hash` (label {@link MIRRORED_LABEL} =
 * `"true"`, annotation {@link SOURCE_HASH_ANNOTATION} = hash): the "correctly labeled and annotated" of
 * terraformclusteridentity.md, Status. The operator also checks that it created the Secret (its owner references).
 */
export function isCurrentMirror(metadata: Pick<ObjectMeta, 'labels' | 'annotations'>, hash: string): boolean {
  return metadata.labels?.[MIRRORED_LABEL] === MIRRORED_LABEL_VALUE && metadata.annotations?.[SOURCE_HASH_ANNOTATION] === hash;
}

/** What {@link identityAllows} reads of an identity. */
export interface IdentityAllowance {
  /** The identity's spec; only `allowedNamespaces` is read. */
  readonly spec: Pick<KeystoneClusterIdentitySpec, 'allowedNamespaces'>;
}

/**
 * Whether the identity allows `namespace` (terraformclusteridentity.md, Allowed namespaces): the union of `list` and
 * `selector`. Unset `allowedNamespaces` allows none; `selector: {}` allows every namespace; an invalid selector matches
 * none (the listed namespaces stay allowed). `namespaceLabels` are the Namespace object's labels; `undefined` means the
 * namespace does not exist, which denies. Pure: the caller reads the Namespace and reports a failed read as
 * `IdentityAllowed=Unknown/IdentityCheckFailed` instead of calling this.
 */
export function identityAllows(identity: IdentityAllowance, namespace: string, namespaceLabels: Readonly<Record<string, string>> | undefined): boolean {
  const allowed = identity.spec.allowedNamespaces;
  if (allowed === undefined || namespaceLabels === undefined) return false;
  if (allowed.list?.includes(namespace)) return true;
  return allowed.selector !== undefined && labelSelectorMatches(allowed.selector, namespaceLabels);
}

/**
 * The Secret, in the ControlPlane's own namespace, whose `clouds.yaml` holds its admin credential:
 * `cloudCredentialsRef.secretName`, or the mirror `keystone-creds-<identity>` of `identityRef`.
 * @throws Error when neither is set (the CRD refuses such a ControlPlane: exactly one of the two)
 */
export function adminCredentialSecretName(adminCredential: {
  readonly cloudCredentialsRef?: { readonly secretName: string };
  readonly identityRef?: ClusterIdentityRef;
}): string {
  if (adminCredential.cloudCredentialsRef) return adminCredential.cloudCredentialsRef.secretName;
  if (adminCredential.identityRef) return mirrorSecretName(adminCredential.identityRef.name);
  throw new Error('adminCredential sets neither cloudCredentialsRef nor identityRef');
}
