/**
 * A KeystoneApplicationCredential's gates, in one step: from what its pass read of the identity plane
 * (credential-reads.ts), the order's verdict ({@link credentialGates}): its consent
 * (spec, Consent), its admission (frozen: ControlPlaneNotFound, NamespaceNotAssigned, ClusterNameTooLong,
 * SecretAccessNotGranted, WaitingForAdminCredential), its gate (the schedule pauses: WaitingForCABundle, the user, the
 * project, the role on the project), whether it can be delivered where it lives (KeystoneNotPublished), whether its
 * finalizer is due, how its teardown proceeds, the connection its pass reaches Keystone with as the ordered user, and
 * where its document points. Pure, built from the rules the plane's own kinds use (consent.ts, references.ts,
 * delivery.ts, naming.ts), each asked once, so a driver reads: read → gates → ports → lifecycle → announce.
 */
import { CredentialReason, PlaneDefaults, TEARDOWN_FINALIZER, type ControlPlane, type KeystoneApplicationCredential, type KeystoneProject, type KeystoneRoleAssignment, type KeystoneUser } from '../api';
import type { Admission, Gate, Undeliverable } from '../lifecycle/model';
import { rolesNotHeld } from '../lifecycle/privileges';
import { consentOf, consentVerdict, type Consent } from './consent';
import { deliveryTarget, notPublished, type NotPublished } from './delivery';
import { PASSWORD_KEY, controlPlaneKey, locationOf } from './naming';
import type { SecretAccess, SecretObject } from './ports';
import { userOnProject } from './references';
import { AdminCredentialReason } from './reasons';

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

/** What a pass read, for {@link credentialGates}. */
export interface CredentialWorld {
  readonly controlPlane?: ControlPlane;
  readonly user?: KeystoneUser;
  readonly project?: KeystoneProject;
  readonly assignments: readonly KeystoneRoleAssignment[];
  /** The parked password Secret of the user's current generation. */
  readonly passwordSecret?: SecretObject;
  /** The CA bundle Secret the ControlPlane references. */
  readonly caSecret?: SecretObject;
  /** The operator's access to Secrets in the order's namespace. */
  readonly secretAccess?: SecretAccess;
}

/** How a pass reaches Keystone as the ordered user, scoped to the ordered project. */
export interface UserConnection {
  readonly authUrl: string;
  /** PEM of the ControlPlane's CA bundle; absent: the system trust store. */
  readonly caBundle?: string;
  readonly userId: string;
  readonly password: string;
  /** The user's `status.passwordGeneration` the password is of: a new one never uses a token of the old. */
  readonly passwordGeneration?: number;
  readonly projectId: string;
}

/** The order's verdict: see the module comment. */
export interface CredentialGates extends CredentialAdmission {
  readonly consent: Consent;
  /** The teardown finalizer is to be stored now (the namespace is assigned, the order carries none). */
  readonly finalizerDue: boolean;
  /** A deleted order's teardown releases it at once: its ControlPlane is gone, nothing is left to reach Keystone with. */
  readonly releasable: boolean;
  /**
   * The ordered user's connection, when the pass may reach Keystone: an admitted, ungated order, or one being deleted,
   * once the user, its password and the project are there.
   */
  readonly connection?: UserConnection;
  /** Why the pass does not reach Keystone, when it does not. */
  readonly unreachable?: string;
  /**
   * What the delivered documents point at: the auth URL published for the order's cluster, the region and the endpoint
   * interface, as a KeystoneUser's `clouds.yaml` has them (delivery.ts, `userCloudOf`).
   */
  readonly document?: { readonly authUrl: string; readonly regionName: string; readonly interface: string };
}

/**
 * The order's verdict from what its pass read: consent once, then its admission, gate and delivery target, its
 * finalizer and teardown path, and its user's connection (see the module comment). `deleting`: a deleted order tears
 * down whatever its consent and gates say (spec, Deletion Semantics).
 */
export function credentialGates(order: KeystoneApplicationCredential, world: CredentialWorld, options: { readonly cluster?: string; readonly deleting: boolean }): CredentialGates {
  const { cluster, deleting } = options;
  const cpKey = controlPlaneKey(order);
  const { consent, finalizerDue, teardown } = consentVerdict(locationOf(order, cluster), cpKey, world.controlPlane, {
    meta: order.metadata,
    finalizer: TEARDOWN_FINALIZER,
    ...(world.secretAccess ? { access: world.secretAccess } : {}),
  });
  const { controlPlane, user, project } = world;
  const target = controlPlane ? deliveryTarget(controlPlane, '', cluster) : undefined;
  const password = world.passwordSecret?.data[PASSWORD_KEY];
  const refs = { ...world, userPasswordAvailable: password !== undefined && password !== '', ...(cluster ? { cluster } : {}) };
  const { admission, gate: referenceGate, undeliverable } = admissionOf(consent, order, refs, target?.notPublished);
  const caRef = controlPlane?.spec.services.keystone.external.caBundleSecretRef;
  const caBundle = caRef ? world.caSecret?.data[caRef.key || PlaneDefaults.caBundleKey] : undefined;
  const gate =
    referenceGate ??
    (caRef && !caBundle
      ? { reason: CredentialReason.WaitingForCABundle, message: `CA bundle Secret ${cpKey.namespace}/${caRef.name} (key ${caRef.key || PlaneDefaults.caBundleKey}) is not available` }
      : undefined);
  const passwordGeneration = user?.status?.passwordGeneration;
  const connection: UserConnection | undefined =
    controlPlane && user?.status?.userID && project?.status?.projectID && password
      ? {
          authUrl: controlPlane.spec.services.keystone.external.authURL,
          ...(caBundle ? { caBundle } : {}),
          userId: user.status.userID,
          password,
          ...(passwordGeneration !== undefined ? { passwordGeneration } : {}),
          projectId: project.status.projectID,
        }
      : undefined;
  // A frozen or gated order never reaches Keystone; a deleted one does, as long as the user's password and the
  // ControlPlane are there to authenticate with.
  const reachable = deleting || (!gate && !admission) ? connection : undefined;
  const cloud = target?.cloud;
  return {
    consent,
    ...(admission ? { admission } : {}),
    ...(gate ? { gate } : {}),
    ...(undeliverable ? { undeliverable } : {}),
    finalizerDue,
    releasable: deleting && teardown.path === 'release',
    ...(reachable ? { connection: reachable } : { unreachable: gate?.message ?? admission?.message ?? 'the user, the project or the password is not available yet' }),
    ...(cloud ? { document: { authUrl: cloud.authUrl, regionName: cloud.regionName, interface: cloud.interface } } : {}),
  };
}

/** Computes the order's admission, then (when admitted) its gate, in the spec's order. */
export function credentialAdmission(order: KeystoneApplicationCredential, refs: CredentialReferences): CredentialAdmission {
  const consent = consentOf(locationOf(order, refs.cluster), controlPlaneKey(order), refs.controlPlane, refs.secretAccess);
  return admissionOf(consent, order, refs, refs.controlPlane ? notPublished(refs.controlPlane, refs.cluster) : undefined);
}

/** The admission, then the gate, given the consent and whether the order's cluster is published (`unpublished`). */
function admissionOf(consent: Consent, order: KeystoneApplicationCredential, refs: CredentialReferences, unpublished: NotPublished | undefined): CredentialAdmission {
  if (consent.state === 'refused') return { admission: { reason: consent.reason, message: consent.message } };
  const undeliverable = unpublished ? { undeliverable: unpublished } : {};
  if (consent.wait?.reason === AdminCredentialReason.WaitingForCABundle) {
    return { gate: { reason: CredentialReason.WaitingForCABundle, message: consent.wait.message }, ...undeliverable };
  }
  if (consent.wait) return { admission: { reason: consent.wait.reason, message: consent.wait.message } };
  const gate = gateOf(order, refs, consent.assignment.allowedRoles ?? []);
  return { ...(gate ? { gate } : {}), ...undeliverable };
}

/** The user, its password, the project and the role on the project, in the spec's order; then the role subset. */
function gateOf(order: KeystoneApplicationCredential, refs: CredentialReferences, allowedRoles: readonly string[]): Gate | undefined {
  const found = userOnProject(order, { user: order.spec.userRef.name, project: order.spec.projectRef.name }, refs);
  if (found.user) return { reason: CredentialReason[found.user.reason], message: found.user.message };
  if (refs.userPasswordAvailable === false) {
    return {
      reason: CredentialReason.WaitingForUser,
      message: `the password of KeystoneUser ${order.spec.userRef.name} generation ${refs.user?.status?.passwordGeneration} is not available`,
    };
  }
  if (found.project) return { reason: CredentialReason[found.project.reason], message: found.project.message };
  if (found.assigned.length === 0) {
    return {
      reason: CredentialReason.NoRoleOnProject,
      message: `no KeystoneRoleAssignment in namespace ${order.metadata.namespace} has assigned user ${order.spec.userRef.name} a role on project ${order.spec.projectRef.name}`,
    };
  }
  return roleSubsetGate(order, allowedRoles, found.assigned.map((a) => a.spec.role));
}

/**
 * The role subset's gate (issue 42): every role `spec.roles` names must be in the namespace's `allowedRoles` (the
 * platform team's consent, as for a KeystoneRoleAssignment), and assigned to the user on the project by a
 * KeystoneRoleAssignment of the namespace (the plane's record of what the user holds: a role Keystone implies, such as
 * `reader` by `member`, counts once an assignment names it). Checked without Keystone, so an order that asks for more
 * than its user may hand on never reaches Keystone.
 */
function roleSubsetGate(order: KeystoneApplicationCredential, allowedRoles: readonly string[], assigned: readonly string[]): Gate | undefined {
  const namespace = order.metadata.namespace;
  const list = (roles: readonly string[]): string => (roles.length > 0 ? [...new Set(roles)].sort().join(', ') : 'none');
  const notAllowed = rolesNotHeld(order.spec.roles, allowedRoles);
  if (notAllowed.length > 0) {
    return {
      reason: CredentialReason.RoleNotAllowed,
      message: `spec.roles names ${notAllowed.length === 1 ? 'role' : 'roles'} ${notAllowed.join(', ')}, not in the allowedRoles of namespace ${namespace} (${list(allowedRoles)})`,
    };
  }
  const notAssigned = rolesNotHeld(order.spec.roles, assigned);
  if (notAssigned.length > 0) {
    return {
      reason: CredentialReason.RoleNotAssigned,
      message: `spec.roles names ${notAssigned.length === 1 ? 'role' : 'roles'} ${notAssigned.join(', ')}, which no KeystoneRoleAssignment in namespace ${namespace} has assigned user ${order.spec.userRef.name} on project ${order.spec.projectRef.name} (assigned: ${list(assigned)})`,
    };
  }
  return undefined;
}
