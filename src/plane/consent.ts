/**
 * Consent and the shared admission reasons, written once for every order kind (identity-plane.md, ControlPlane and
 * Shared behaviour; spec, Consent): the ControlPlane an order references, the `namespaceAssignments` entry for the
 * order's namespace on its cluster, and whether the ControlPlane's admin credential is ready.
 */
import { AdmissionReason, type ControlPlane, type NamespaceAssignment, type ObjectMeta, type OrderLocation } from '../api';
import { PlaneConditionType } from '../api';
import { conditionOf } from './conditions';
import { AdminCredentialReason } from './reasons';
import { deniedMessage } from './secret-access';
import type { SecretAccess } from './ports';

/** The longest cluster name a label value carries. */
export const CLUSTER_NAME_MAX_LENGTH = 63;

/** The `namespaceAssignments` entry for the namespace on the cluster (absent targetClusterRef = the management cluster). */
export function namespaceAssignment(controlPlane: ControlPlane, location: OrderLocation): NamespaceAssignment | undefined {
  return (controlPlane.spec.namespaceAssignments ?? []).find(
    (a) => a.namespace === location.namespace && (a.targetClusterRef?.name ?? '') === (location.cluster ?? ''),
  );
}

/** Why an order waits for its ControlPlane's admin credential. */
export interface AdminWait {
  readonly reason: typeof AdmissionReason.WaitingForAdminCredential | typeof AdminCredentialReason.WaitingForCABundle;
  readonly message: string;
}

/** The outcome of the consent check. */
export type Consent =
  /** Not admitted: nothing is created, changed, delivered, repaired or swept; what exists stays. No finalizer. */
  | {
      readonly state: 'refused';
      readonly reason:
        | typeof AdmissionReason.ControlPlaneNotFound
        | typeof AdmissionReason.NamespaceNotAssigned
        | typeof AdmissionReason.ClusterNameTooLong
        | typeof AdmissionReason.SecretAccessNotGranted;
      readonly message: string;
      /** The ControlPlane, when one was found (a teardown still reaches Keystone through it). */
      readonly controlPlane?: ControlPlane;
      /** Set when the ControlPlane was found and its admin credential is not ready. */
      readonly wait?: AdminWait;
    }
  /**
   * The namespace is assigned: the teardown finalizer is installed. With `wait` set the ControlPlane's admin credential
   * is not ready, so nothing reaches Keystone.
   */
  | { readonly state: 'assigned'; readonly controlPlane: ControlPlane; readonly assignment: NamespaceAssignment; readonly wait?: AdminWait };

/**
 * The consent of an order at `location` that references `key`, given the ControlPlane found there (or undefined):
 * 1. on a target cluster, a name longer than a label value carries → `ClusterNameTooLong`;
 * 2. no ControlPlane → `ControlPlaneNotFound` on the management cluster, `NamespaceNotAssigned` on a target cluster;
 * 3. no `namespaceAssignments` entry for the namespace on the cluster → `NamespaceNotAssigned` (frozen);
 * 4. `access` (the order's own namespace, for a kind that delivers a Secret there) refused by the API server →
 *    `SecretAccessNotGranted` (frozen the same way: the grant is the platform admin's second act, ./secret-access.ts);
 * 5. `AdminCredentialReady` not True → assigned, waiting: `WaitingForCABundle` when that is the ControlPlane's reason
 *    (identity-plane.md: orders report it), `WaitingForAdminCredential` otherwise.
 */
export function consentOf(
  location: OrderLocation,
  key: { readonly namespace: string; readonly name: string },
  controlPlane: ControlPlane | undefined,
  access?: SecretAccess,
): Consent {
  const cluster = location.cluster ?? '';
  if (cluster.length > CLUSTER_NAME_MAX_LENGTH) {
    return {
      state: 'refused',
      reason: AdmissionReason.ClusterNameTooLong,
      message: `the cluster name ${cluster} is ${cluster.length} characters long; a label value carries at most ${CLUSTER_NAME_MAX_LENGTH}`,
    };
  }
  if (!controlPlane) {
    return cluster === ''
      ? { state: 'refused', reason: AdmissionReason.ControlPlaneNotFound, message: `ControlPlane ${key.namespace}/${key.name} not found` }
      : { state: 'refused', reason: AdmissionReason.NamespaceNotAssigned, message: `ControlPlane ${key.namespace}/${key.name} does not resolve for cluster ${cluster}` };
  }
  const assignment = namespaceAssignment(controlPlane, location);
  const wait = adminWait(controlPlane, key);
  if (!assignment) {
    const where = cluster === '' ? `namespace ${location.namespace}` : `namespace ${location.namespace} on cluster ${cluster}`;
    return {
      state: 'refused',
      reason: AdmissionReason.NamespaceNotAssigned,
      message: `ControlPlane ${key.namespace}/${key.name} has no namespaceAssignments entry for ${where}; the order is frozen`,
      controlPlane,
      ...(wait ? { wait } : {}),
    };
  }
  if (access?.state === 'denied') {
    return {
      state: 'refused',
      reason: AdmissionReason.SecretAccessNotGranted,
      message: deniedMessage({ cluster, namespace: location.namespace }, access, `the Secret ${location.name} delivers`),
      controlPlane,
      ...(wait ? { wait } : {}),
    };
  }
  return { state: 'assigned', controlPlane, assignment, ...(wait ? { wait } : {}) };
}

function adminWait(controlPlane: ControlPlane, key: { namespace: string; name: string }): AdminWait | undefined {
  const admin = conditionOf(controlPlane.status?.conditions, PlaneConditionType.AdminCredentialReady);
  if (admin?.status === 'True') return undefined;
  const what = admin ? `AdminCredentialReady is ${admin.status}/${admin.reason}: ${admin.message}` : 'AdminCredentialReady is not reported yet';
  if (admin?.reason === AdminCredentialReason.WaitingForCABundle) {
    return { reason: AdminCredentialReason.WaitingForCABundle, message: `ControlPlane ${key.namespace}/${key.name}: ${what}` };
  }
  return { reason: AdmissionReason.WaitingForAdminCredential, message: `ControlPlane ${key.namespace}/${key.name}: ${what}` };
}

/** Whether the teardown finalizer is to be installed now: the namespace is assigned and the order carries none. */
export function needsFinalizer(consent: Consent, meta: ObjectMeta, finalizer: string): boolean {
  return consent.state === 'assigned' && !meta.deletionTimestamp && !(meta.finalizers ?? []).includes(finalizer);
}

/**
 * How a teardown may proceed under a consent. Deleting an order tears down what it created whatever the consent
 * (deletion is the owner's own act, as for a KeystoneApplicationCredential), but it needs the admin credential:
 * - `release`: the ControlPlane is gone, so nothing is left to reach Keystone with: release without Keystone;
 * - `wait`: the admin credential is not ready: the finalizer holds;
 * - `proceed`: Keystone is reachable as the admin.
 */
export type TeardownPath = { readonly path: 'release' } | { readonly path: 'wait'; readonly wait: AdminWait } | { readonly path: 'proceed'; readonly controlPlane: ControlPlane };

/** How a teardown may proceed under this consent ({@link TeardownPath}). */
export function teardownPath(consent: Consent): TeardownPath {
  const controlPlane = consent.controlPlane;
  if (!controlPlane) return { path: 'release' };
  if (consent.wait) return { path: 'wait', wait: consent.wait };
  return { path: 'proceed', controlPlane };
}

/** What an order's consent decides, in one verdict: the consent, whether its finalizer is due, how a teardown proceeds. */
export interface ConsentVerdict {
  readonly consent: Consent;
  /** The teardown finalizer is to be installed now ({@link needsFinalizer}). */
  readonly finalizerDue: boolean;
  readonly teardown: TeardownPath;
}

/**
 * The consent of an order at `location` ({@link consentOf}) with what follows from it for the order's `finalizer`
 * ({@link needsFinalizer}) and its teardown ({@link teardownPath}): a driver's gates ask the consent once.
 */
export function consentVerdict(
  location: OrderLocation,
  key: { readonly namespace: string; readonly name: string },
  controlPlane: ControlPlane | undefined,
  order: { readonly meta: ObjectMeta; readonly finalizer: string; readonly access?: SecretAccess },
): ConsentVerdict {
  const consent = consentOf(location, key, controlPlane, order.access);
  return { consent, finalizerDue: needsFinalizer(consent, order.meta, order.finalizer), teardown: teardownPath(consent) };
}
