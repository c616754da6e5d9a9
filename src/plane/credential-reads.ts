/**
 * What one pass of a KeystoneApplicationCredential reads, and where (the identity plane says where each thing lives):
 * the ControlPlane, the user's parked password and the CA bundle on the management cluster, the KeystoneUser,
 * KeystoneProject and KeystoneRoleAssignments beside the order, the order's children in the ControlPlane's namespace,
 * and the delivered Secret.
 */
import { childPrefix, type ControlPlane, type KeystoneApplicationCredential, type KeystoneUser, type OrderLocation } from '../api';
import { childLabels, controlPlaneKey, locationOf, passwordSecretName } from './naming';
import { assignmentSelector } from './references';

type Key = { readonly namespace: string; readonly name: string };

/** What a pass of the order reads, and where: the objects on the order's cluster and on the management cluster. */
export interface CredentialReads {
  readonly location: OrderLocation;
  /** The prefix of the order's children and credential names. */
  readonly prefix: string;
  /** The ControlPlane (management cluster). */
  readonly controlPlane: Key;
  /** The KeystoneUser and KeystoneProject (the order's cluster). */
  readonly user: Key;
  readonly project: Key;
  /** The KeystoneRoleAssignments of the user and project (the order's namespace, by these labels). */
  readonly assignments: { readonly namespace: string; readonly labels: Record<string, string> };
  /** The order's children in the ControlPlane's namespace (by these labels). */
  readonly children: { readonly namespace: string; readonly labels: Record<string, string> };
  /** The delivered Secret (the order's cluster). */
  readonly delivered: Key;
  /** The parked password of the user's current generation (management cluster), once the user is read. */
  password(user: KeystoneUser | undefined): Key | undefined;
  /** The CA bundle Secret the ControlPlane references (management cluster), once it is read. */
  caBundle(controlPlane: ControlPlane | undefined): Key | undefined;
}

/** Where each thing a pass of `order` on `cluster` (absent: the management cluster) reads lives. */
export function credentialReads(order: KeystoneApplicationCredential, cluster?: string): CredentialReads {
  const location = locationOf(order, cluster);
  const cp = controlPlaneKey(order);
  const namespace = order.metadata.namespace as string;
  return {
    location,
    prefix: childPrefix(location),
    controlPlane: cp,
    user: { namespace, name: order.spec.userRef.name },
    project: { namespace, name: order.spec.projectRef.name },
    assignments: { namespace, labels: assignmentSelector(order.spec.userRef.name, order.spec.projectRef.name) },
    children: { namespace: cp.namespace, labels: childLabels('KeystoneApplicationCredential', location) },
    delivered: { namespace, name: `${order.metadata.name}-credentials` },
    password: (user) => {
      const generation = user?.status?.passwordGeneration;
      return user && generation !== undefined ? { namespace: cp.namespace, name: passwordSecretName(locationOf(user, cluster), generation) } : undefined;
    },
    caBundle: (controlPlane) => {
      const ref = controlPlane?.spec.services.keystone.external.caBundleSecretRef;
      return ref ? { namespace: cp.namespace, name: ref.name } : undefined;
    },
  };
}

