/**
 * The ports the identity plane's drivers observe and act through. The Kubernetes side is small and generic, so the
 * runtime's informer cache (`Cluster`) implements it with a thin adapter; the Keystone side is the admin's view of
 * Keystone, implemented on src/keystone by `keystoneAdmins` (keystone-admin.ts).
 */
import type {
  ControlPlane,
  KeystoneClusterIdentity,
  KeystoneApplicationCredential,
  KeystoneProject,
  KeystoneRoleAssignment,
  KeystoneUser,
  OwnerReference,
} from '../api';
import type { AdminCloud } from '../keystone';

/** The objects the plane reads, by kind. */
export interface ObjectsByKind {
  ControlPlane: ControlPlane;
  KeystoneProject: KeystoneProject;
  KeystoneUser: KeystoneUser;
  KeystoneRoleAssignment: KeystoneRoleAssignment;
  KeystoneApplicationCredential: KeystoneApplicationCredential;
}
/** A kind the plane reads. */
export type ObjectKind = keyof ObjectsByKind;
/** An order or ControlPlane of a kind. */
export type ObjectOf<K extends ObjectKind> = ObjectsByKind[K];

/** A namespaced object's key. */
export interface ObjectKey {
  readonly namespace: string;
  readonly name: string;
}

export type { OwnerReference } from '../api';

/** A Namespace as read: its labels. */
export interface NamespaceObject {
  readonly metadata: { readonly name: string; readonly resourceVersion?: string; readonly labels?: Readonly<Record<string, string>> };
}

/** A Secret as read; `data` holds the decoded (UTF-8) values. */
export interface SecretObject {
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly ownerReferences?: readonly OwnerReference[];
  };
  readonly data: Readonly<Record<string, string>>;
}

/** A Secret as written: exactly the fields the operator owns; `data` holds plain values (the adapter encodes). */
export interface SecretManifest {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Annotations the operator owns (a mirror's source hash). @default none */
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
  readonly data: Readonly<Record<string, string>>;
}

/**
 * What the operator's cache knows of Secrets in one namespace of one cluster (issue 34; what each state means for a pass:
 * secret-access.ts).
 */
export type SecretAccess =
  /** Cached (or the cluster-wide mode: every namespace is granted). */
  | { readonly state: 'granted' }
  /** Its cache is being filled: a pass that needs it waits for it. */
  | { readonly state: 'pending' }
  /** Not among the namespaces the ControlPlanes name: nothing is cached there (consent refuses before this matters). */
  | { readonly state: 'unwatched' }
  /** The API server refused the list (403): no Role grants the operator Secrets there. */
  | {
      readonly state: 'denied';
      /** The API server's words. */
      readonly detail: string;
      /** How to grant it: the Role's name and the operator's identity (for the commands the message gives). */
      readonly grant: SecretGrantHint;
    };

/** What the message of a refusal names. */
export interface SecretGrantHint {
  /** The base name of the operator's RBAC objects (the construct's `name`): the Roles are `<operator>-secrets` and `<operator>-source-<secret>`. */
  readonly operator: string;
  /** The operator's identity, to bind: a ServiceAccount, or a user's name. @default unknown: not named */
  readonly subject?: { readonly kind: 'ServiceAccount'; readonly namespace: string; readonly name: string } | { readonly kind: 'User'; readonly name: string };
}

/** Kubernetes, as the drivers need it. Reads may come from a cache; writes go to the API server. */
export interface ClusterPort {
  /** The object of a kind, or undefined. */
  get<K extends ObjectKind>(kind: K, key: ObjectKey): Promise<ObjectOf<K> | undefined>;
  /**
   * Every object of a kind in a namespace; with `fields`, only those whose field at each dotted path is that string
   * (e.g. `{ 'spec.userRef.name': 'svc' }`), so a pass reads what concerns it and not the whole namespace.
   */
  list<K extends ObjectKind>(kind: K, namespace: string, fields?: Readonly<Record<string, string>>): Promise<readonly ObjectOf<K>[]>;
  /** The KeystoneClusterIdentity (cluster-scoped) of that name, or undefined. */
  getClusterIdentity(name: string): Promise<KeystoneClusterIdentity | undefined>;
  /** The Namespace of that name (its labels), or undefined when there is no such namespace. */
  getNamespace(name: string): Promise<NamespaceObject | undefined>;
  /**
   * What the operator's cache knows of Secrets in a namespace of this cluster (src/plane/secret-access.ts): granted,
   * being filled, refused by the API server (no Role there), or not watched. @default every namespace granted
   */
  secretAccess?(namespace: string): SecretAccess;
  /** The Secret, or undefined. */
  getSecret(key: ObjectKey): Promise<SecretObject | undefined>;
  /** The Secret as the API server holds it now, not as a cache last saw it: for a decision a lagging cache must not make. */
  readSecret(key: ObjectKey): Promise<SecretObject | undefined>;
  /** The Secrets of a namespace carrying every one of `labels`. */
  listSecrets(namespace: string, labels: Readonly<Record<string, string>>): Promise<readonly SecretObject[]>;
  /**
   * Creates a Secret only if none of that name exists (a parked value is generated once: never overwritten, also when
   * the cache lags); returns the Secret the API server holds, the existing one when the create found one.
   */
  createSecret(secret: SecretManifest): Promise<SecretObject>;
  /**
   * Server-side apply with the operator's field manager: it owns exactly the given labels, owners and keys. With
   * `force` (the default) it takes over fields another manager set; without, such a field fails the apply (409).
   */
  applySecret(secret: SecretManifest, options?: { readonly force?: boolean }): Promise<void>;
  /** Deletes a Secret (with a UID precondition when given); one already gone is fine. */
  deleteSecret(key: ObjectKey, precondition?: { readonly uid: string }): Promise<void>;
  /**
   * Writes the status subresource. `basis` is the copy of the object the pass decided the status from: the write is
   * conditional on its resourceVersion, so a status decided from a copy the object has moved on from (the cache behind,
   * or changed during the pass) loses with a conflict (409) instead of overwriting what the newer copy holds, and the
   * next pass decides from the newer one (Kubernetes' optimistic concurrency). @default the newest copy the port knows
   */
  writeStatus<K extends ObjectKind>(kind: K, key: ObjectKey, status: NonNullable<ObjectOf<K>['status']>, basis?: ObjectOf<K>): Promise<void>;
  /**
   * Adds a finalizer (idempotent) and returns the object as it is afterwards (undefined: gone). With `basis`, the copy
   * the pass decides from, the write is conditional on its resourceVersion as `writeStatus`'s is, and what it returns
   * is the pass's copy from then on: a status the same pass decides is written on it, not lost to the pass's own
   * finalizer. @default basis: the newest copy the port knows
   */
  addFinalizer<K extends ObjectKind>(kind: K, key: ObjectKey, finalizer: string, basis?: ObjectOf<K>): Promise<ObjectOf<K> | undefined>;
  /** Removes a finalizer (idempotent; an object already gone is fine). */
  removeFinalizer(kind: ObjectKind, key: ObjectKey, finalizer: string): Promise<void>;
}

/** What an admin login established. */
export interface AdminVerified {
  readonly version: string;
  /** The application credential the admin authenticated with (issue 42); absent for a password. */
  readonly applicationCredential?: { readonly id: string; readonly name: string; readonly expiresAt?: Date };
}

/** How to reach a ControlPlane's Keystone as its admin. */
export interface AdminConnection {
  /** `services.keystone.external.authURL`. */
  readonly authUrl: string;
  /** The admin cloud of the `clouds.yaml` Secret: a password or an application credential (issue 42). */
  readonly cloud: AdminCloud;
  /** PEM of `caBundleSecretRef`; absent: the system trust store. */
  readonly caBundle?: string;
}

/** A Keystone user or project as the plane reads it. */
export interface KeystoneRecord {
  readonly id: string;
  readonly name: string;
  readonly description?: string;
  /** Projects only. */
  readonly tags?: readonly string[];
}

/** A user's role on a project, by ids. */
export interface RoleGrant {
  readonly userId: string;
  readonly projectId: string;
  readonly roleId: string;
}

/** Keystone as the ControlPlane's admin sees it. Every call may throw a `KeystoneError`. */
export interface KeystoneAdmin {
  /**
   * Authenticates as the admin (a real token) and returns the identity API version the auth URL reports, and, when the
   * admin is an application credential, that credential as Keystone shows it (its expiry: the platform team rotates it).
   */
  verify(): Promise<AdminVerified>;
  /** The id of the domain of that name, or undefined. */
  domainId(name: string): Promise<string | undefined>;
  findProject(name: string, domainId: string): Promise<KeystoneRecord | undefined>;
  createProject(input: { readonly name: string; readonly domainId: string; readonly description: string; readonly tags: readonly string[] }): Promise<KeystoneRecord>;
  /** One already gone is fine. */
  deleteProject(id: string): Promise<void>;
  findUser(name: string, domainId: string): Promise<KeystoneRecord | undefined>;
  createUser(input: { readonly name: string; readonly domainId: string; readonly password: string; readonly description: string }): Promise<KeystoneRecord>;
  setPassword(userId: string, password: string): Promise<void>;
  /** One already gone is fine. */
  deleteUser(id: string): Promise<void>;
  /** The global role of that name, or undefined. */
  findRole(name: string): Promise<{ readonly id: string; readonly name: string } | undefined>;
  hasRole(grant: RoleGrant): Promise<boolean>;
  /** Idempotent. */
  grantRole(grant: RoleGrant): Promise<void>;
  /** One already revoked is fine. */
  revokeRole(grant: RoleGrant): Promise<void>;
}

/** Connects to a ControlPlane's Keystone; implementations reuse one session per connection. */
export interface KeystoneAdmins {
  connect(connection: AdminConnection): KeystoneAdmin;
}

/**
 * Where an order lives (spec: "on the cluster that namespace is assigned on: the management cluster or a registered
 * target cluster"): the cluster's name and the port of that cluster. The order, the orders it references, its status
 * and finalizer, and its delivered Secret are read and written through `orders`; the ControlPlane, its Secrets and the
 * children are on the management cluster, `PlaneDeps.cluster`. A target cluster is one more dimension of where a pass
 * reads and writes, not a rule of its own.
 */
export interface OrderSite {
  /** The cluster's name; empty or absent for the management cluster. */
  readonly cluster?: string;
  /** The port of the order's cluster. @default `PlaneDeps.cluster` (the management cluster) */
  readonly orders?: ClusterPort;
}

/** What a driver remembers of an object's last converged pass (see driver/memo.ts: `ConvergedPasses`). */
export interface PassMemo {
  /** Whether the object is met for the first time since the process started (marks it met). @default never */
  firstSight?(uid: string): boolean;
  unchanged(uid: string, fingerprint: string): boolean;
  /** Remembers a converged pass; `until` (epoch ms): only until then, when the clock wakes the object. */
  record(uid: string, fingerprint: string, until?: number): void;
  /**
   * Forgets the object's last converged pass, so its next pass is a full one. `anew`: it is met anew, its next pass a
   * first sight again, which the cache alone may settle (what the process knew of it changed under it, e.g. a
   * namespace's Secret access: src/operator/controllers.ts).
   */
  forget(uid: string, options?: { readonly anew?: boolean }): void;
}

/** Everything the drivers run with. */
export interface PlaneDeps {
  readonly cluster: ClusterPort;
  readonly keystone: KeystoneAdmins;
  /** The clock. @default () => new Date() */
  readonly clock?: () => Date;
  /** A new password, crypto-random. @default 32 random bytes, base64url */
  readonly newPassword?: () => string;
  /** Skips passes whose inputs are those of the object's last converged pass. @default none: every pass observes */
  readonly memo?: PassMemo;
}
