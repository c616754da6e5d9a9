/**
 * The four neighbour kinds a KeystoneApplicationCredential stands on (design: identity-plane.md): ControlPlane,
 * KeystoneUser, KeystoneProject and KeystoneRoleAssignment, in the same group and version, namespaced. Spec and status
 * shapes, names, defaults and bounds; their CRD rules live in `identity-plane-rules.ts`.
 */
import type { ClusterIdentityRef } from './cluster-identity';
import type { Condition } from './conditions';
import type { ControlPlaneRef, LocalOrderRef, ObjectMeta } from './types';
import { API_VERSION } from './types';

/** Kind, list kind and plural of each neighbour kind. */
export const PlaneKinds = {
  ControlPlane: { kind: 'ControlPlane', listKind: 'ControlPlaneList', plural: 'controlplanes', singular: 'controlplane' },
  KeystoneUser: { kind: 'KeystoneUser', listKind: 'KeystoneUserList', plural: 'keystoneusers', singular: 'keystoneuser' },
  KeystoneProject: { kind: 'KeystoneProject', listKind: 'KeystoneProjectList', plural: 'keystoneprojects', singular: 'keystoneproject' },
  KeystoneRoleAssignment: {
    kind: 'KeystoneRoleAssignment',
    listKind: 'KeystoneRoleAssignmentList',
    plural: 'keystoneroleassignments',
    singular: 'keystoneroleassignment',
  },
} as const;
/** The name of a neighbour kind. */
export type PlaneKind = keyof typeof PlaneKinds;

/** Defaults of the neighbour kinds, as their CRDs' schemas apply them. */
export const PlaneDefaults = {
  region: 'RegionOne',
  mode: 'External',
  endpointType: 'public',
  caBundleKey: 'ca.crt',
  cloudName: 'admin',
  domainName: 'Default',
  passwordGeneration: 1,
} as const;

/**
 * Bounds of the neighbour kinds' schemas. Where identity-plane.md is silent, Keystone's own column sizes (255 for names)
 * and Kubernetes' (63 for a namespace or a label value, 253 for a Secret name or key) decide.
 */
export const PlaneLimits = {
  /** `controlPlaneRef.*`, `userRef.name`, `projectRef.name`, namespaces (DNS labels), cluster names: 1 to 63 characters. */
  refNameMaxLength: 63,
  /** `metadata.name` of an order: its label values carry it. */
  nameMaxBytes: 63,
  /** `projectName`: 1 to 64 characters (identity-plane.md). */
  projectNameMaxLength: 64,
  /** `userName`, `role`, `allowedRoles[]`, `region`, `cloudName`, `domainName`: 1 to 255 characters (Keystone's column). */
  keystoneNameMaxLength: 255,
  /** Secret names and keys. */
  secretNameMaxLength: 253,
  /** `authURL`, `publicEndpoint`. */
  urlMaxLength: 2048,
  /** Entries of `namespaceAssignments`; bounds the CEL cost of the duplicate check. */
  namespaceAssignmentsMaxItems: 256,
  /** Entries of one `allowedRoles`. */
  allowedRolesMaxItems: 64,
  passwordGenerationMinimum: 1,
} as const;

/** A key of a Secret in the ControlPlane's namespace. */
export interface SecretKeyRef {
  /** The Secret's name. */
  readonly name: string;
  /** @default "ca.crt" */
  readonly key?: string;
}

/** The Secret holding the admin `clouds.yaml`. */
export interface CloudCredentialsRef {
  /** The Secret whose key `clouds.yaml` holds the admin cloud. */
  readonly secretName: string;
  /** @default "admin" */
  readonly cloudName?: string;
}

/** An existing Keystone the ControlPlane talks to. */
export interface ExternalKeystoneSpec {
  /** http or https URL ending in `/v3`. */
  readonly authURL: string;
  /** @default "public" */
  readonly endpointType?: 'public' | 'internal';
  /** The CA the operator trusts when it talks to Keystone. @default none: the system trust store */
  readonly caBundleSecretRef?: SecretKeyRef;
}

/** `spec.services.keystone`. */
export interface KeystoneServiceSpec {
  /** Only `External` is supported. @default "External" */
  readonly mode?: string;
  /** The existing Keystone. */
  readonly external: ExternalKeystoneSpec;
  /** The auth URL written into documents for orders on other clusters. @default none */
  readonly publicEndpoint?: string;
}

/** One namespace assignment: the consent for orders in that namespace on that cluster. */
export interface NamespaceAssignment {
  /** The assigned namespace: a DNS label. */
  readonly namespace: string;
  /** The cluster the namespace is assigned on. @default the management cluster */
  readonly targetClusterRef?: { readonly name: string };
  /** Role names a KeystoneRoleAssignment in the namespace may assign. @default none */
  readonly allowedRoles?: readonly string[];
}

/** ControlPlaneSpec. */
export interface ControlPlaneSpec {
  /** The Keystone region. @default "RegionOne" */
  readonly region?: string;
  /** The control plane's services: only the identity service. */
  readonly services: { readonly keystone: KeystoneServiceSpec };
  /**
   * The admin credential, used only for users, projects and role assignments: exactly one of `cloudCredentialsRef` and
   * `identityRef` (a CRD rule). Read the Secret it lives in with `adminCredentialSecretName`.
   */
  readonly adminCredential: {
    /** The Secret in the ControlPlane's namespace with the admin `clouds.yaml`. @default none: `identityRef` is set */
    readonly cloudCredentialsRef?: CloudCredentialsRef;
    /**
     * A KeystoneClusterIdentity that allows this namespace; the operator mirrors its Secret here as
     * `keystone-creds-<name>` (issue 11). @default none: `cloudCredentialsRef` is set
     */
    readonly identityRef?: ClusterIdentityRef;
    /** @default "Default" */
    readonly domainName?: string;
  };
  /** The consent for orders, one entry per namespace and cluster. @default none */
  readonly namespaceAssignments?: readonly NamespaceAssignment[];
}

/** ControlPlaneStatus. */
export interface ControlPlaneStatus {
  /** `AdminCredentialReady` and `Ready`. */
  readonly conditions?: readonly Condition[];
  /** The `metadata.generation` last reconciled. */
  readonly observedGeneration?: number;
  /** The Keystone API version the auth URL reports. */
  readonly keystoneVersion?: string;
  /**
   * Not identity-plane.md's (issue 42): when the admin credential, an application credential, expires in Keystone
   * (RFC 3339). Absent for a password cloud or a credential without an expiry. Only a login Keystone answered changes
   * it: kept while Keystone does not answer (a blip neither drops its gauge series nor resets its alert: issue 46), and
   * after it expired while the login is refused, so the refusal says why.
   */
  readonly adminCredentialExpiresAt?: string;
}

/**
 * How long before its expiry an admin application credential is reported (`AdminCredentialReady=True/
 * AdminCredentialExpiring` and the alert `KeystoneAppCredAdminCredentialExpiring`): its rotation is the platform
 * team's, by hand, so a week ahead.
 */
export const ADMIN_CREDENTIAL_EXPIRY_WARNING = '168h';

/** KeystoneProjectSpec. */
export interface KeystoneProjectSpec {
  /** The ControlPlane; both halves immutable, the namespace defaults to the order's own. */
  readonly controlPlaneRef: ControlPlaneRef;
  /** Immutable, 1 to 64 characters, no comma. @default metadata.name */
  readonly projectName?: string;
}

/** KeystoneProjectStatus. */
export interface KeystoneProjectStatus {
  /** `ProjectReady`. */
  readonly conditions?: readonly Condition[];
  /** The `metadata.generation` last reconciled. */
  readonly observedGeneration?: number;
  /** The Keystone project id. */
  readonly projectID?: string;
  /** The Keystone project name. */
  readonly projectName?: string;
  /** The domain the project lives in. */
  readonly domainName?: string;
}

/** KeystoneUserSpec. */
export interface KeystoneUserSpec {
  /** The ControlPlane; both halves immutable, the namespace defaults to the order's own. */
  readonly controlPlaneRef: ControlPlaneRef;
  /** Immutable, no comma. @default metadata.name */
  readonly userName?: string;
  /** Raising it rotates the password; it may only increase. @default 1 */
  readonly passwordGeneration?: number;
}

/** KeystoneUserStatus. */
export interface KeystoneUserStatus {
  /** `UserReady`, `DeliveryReady` and `Ready`. */
  readonly conditions?: readonly Condition[];
  /** The `metadata.generation` last reconciled. */
  readonly observedGeneration?: number;
  /** The Keystone user id. */
  readonly userID?: string;
  /** The password generation Keystone holds. */
  readonly passwordGeneration?: number;
  /** When that password was set (RFC 3339). */
  readonly lastPasswordRotation?: string;
  /** The delivered Secret. */
  readonly secretName?: string;
  /** The delivered Secret's keys: `clouds.yaml` and `password`. */
  readonly secretKeys?: readonly string[];
}

/** KeystoneRoleAssignmentSpec. */
export interface KeystoneRoleAssignmentSpec {
  /** The ControlPlane; both halves immutable, the namespace defaults to the order's own. */
  readonly controlPlaneRef: ControlPlaneRef;
  /** The KeystoneUser in the same namespace. Immutable. */
  readonly userRef: LocalOrderRef;
  /** The KeystoneProject in the same namespace. Immutable. */
  readonly projectRef: LocalOrderRef;
  /** Immutable, 1 to 255 characters, no comma; must be in the namespace's `allowedRoles`. */
  readonly role: string;
}

/** KeystoneRoleAssignmentStatus. */
export interface KeystoneRoleAssignmentStatus {
  /** `AssignmentReady`. */
  readonly conditions?: readonly Condition[];
  /** The `metadata.generation` last reconciled. */
  readonly observedGeneration?: number;
  /** The Keystone role id. */
  readonly roleID?: string;
  /** The Keystone user id. */
  readonly userID?: string;
  /** The Keystone project id. */
  readonly projectID?: string;
}

/** A neighbour-kind object. */
export interface PlaneObject<K extends PlaneKind, S, T> {
  /** `c5c3.io/v1alpha1`. */
  readonly apiVersion: typeof API_VERSION;
  /** The kind. */
  readonly kind: K;
  /** The object's metadata. */
  readonly metadata: ObjectMeta;
  /** The order. */
  readonly spec: S;
  /** What the operator observed. */
  readonly status?: T;
}

/** A ControlPlane object. */
export type ControlPlane = PlaneObject<'ControlPlane', ControlPlaneSpec, ControlPlaneStatus>;
/** A KeystoneProject object. */
export type KeystoneProject = PlaneObject<'KeystoneProject', KeystoneProjectSpec, KeystoneProjectStatus>;
/** A KeystoneUser object. */
export type KeystoneUser = PlaneObject<'KeystoneUser', KeystoneUserSpec, KeystoneUserStatus>;
/** A KeystoneRoleAssignment object. */
export type KeystoneRoleAssignment = PlaneObject<'KeystoneRoleAssignment', KeystoneRoleAssignmentSpec, KeystoneRoleAssignmentStatus>;

/** What {@link controlPlaneNamespace} reads of an order of any of the four order kinds. */
export interface ControlPlaneReferrer {
  /** The order's name and namespace. */
  readonly metadata: Pick<ObjectMeta, 'name' | 'namespace'>;
  /** The order's `controlPlaneRef`. */
  readonly spec: { readonly controlPlaneRef: ControlPlaneRef };
}

/**
 * The namespace of the ControlPlane an order references: `spec.controlPlaneRef.namespace`, or, when it is left out, the
 * order's own namespace, as in the original kinds (identity-plane.md, References). The CRD cannot default a field to
 * `metadata.namespace`, so every reader resolves it here.
 * @throws Error naming the order when the namespace is left out and the order carries no `metadata.namespace` (an object
 * read from the API server always does)
 */
export function controlPlaneNamespace(order: ControlPlaneReferrer): string {
  const namespace = order.spec.controlPlaneRef.namespace ?? order.metadata.namespace;
  if (namespace === undefined) {
    throw new Error(`order ${order.metadata.name}: spec.controlPlaneRef.namespace is left out and the order has no metadata.namespace to default it to`);
  }
  return namespace;
}

/** Condition types of the neighbour kinds (identity-plane.md). */
export const PlaneConditionType = {
  AdminCredentialReady: 'AdminCredentialReady',
  ProjectReady: 'ProjectReady',
  UserReady: 'UserReady',
  DeliveryReady: 'DeliveryReady',
  AssignmentReady: 'AssignmentReady',
  Ready: 'Ready',
} as const;
