/**
 * What one pass of a KeystoneApplicationCredential reads, and where (the identity plane says where each thing lives):
 * the ControlPlane, the user's parked password and the CA bundle on the management cluster, the KeystoneUser,
 * KeystoneProject and KeystoneRoleAssignments beside the order, the order's children in the ControlPlane's namespace,
 * and the delivered Secret. {@link readCredential} reads them all from the caches in one step, the first of a pass
 * (read → gates → ports → lifecycle → announce), and hands the gates (gates.ts) what they decide on.
 */
import { childPrefix, type ControlPlane, type KeystoneApplicationCredential, type KeystoneUser, type OrderLocation } from '../api';
import type { CredentialWorld } from './gates';
import { childLabels, controlPlaneKey, locationOf, passwordSecretName } from './naming';
import type { ClusterPort, SecretObject } from './ports';
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

/** What a pass read: the objects the gates decide on, and the order's children and delivered Secret. */
export interface CredentialRead extends CredentialWorld {
  /** Where each thing lives ({@link credentialReads}). */
  readonly reads: CredentialReads;
  /** The order's children in the ControlPlane's namespace (its parked secrets). */
  readonly children: readonly SecretObject[];
  /** The delivered Secret beside the order, if any. */
  readonly delivered?: SecretObject;
}

/**
 * Reads, from the caches, everything one pass of `order` on `cluster` (absent: the management cluster) stands on:
 * `management` is the management cluster's port (the ControlPlane, the user's parked password, the CA bundle, the
 * children), `orders` the order's cluster's (the user, the project, the role assignments, the delivered Secret, the
 * operator's access to Secrets in the order's namespace).
 */
export async function readCredential(order: KeystoneApplicationCredential, cluster: string | undefined, ports: { readonly management: ClusterPort; readonly orders: ClusterPort }): Promise<CredentialRead> {
  const { management, orders } = ports;
  const reads = credentialReads(order, cluster);
  const controlPlane = await management.get('ControlPlane', reads.controlPlane);
  const user = await orders.get('KeystoneUser', reads.user);
  const project = await orders.get('KeystoneProject', reads.project);
  const assignments = await orders.list('KeystoneRoleAssignment', reads.assignments.namespace, reads.assignments.labels);
  const passwordKey = controlPlane ? reads.password(user) : undefined;
  const passwordSecret = passwordKey ? await management.getSecret(passwordKey) : undefined;
  const caKey = reads.caBundle(controlPlane);
  const caSecret = caKey ? await management.getSecret(caKey) : undefined;
  const children = await management.listSecrets(reads.children.namespace, reads.children.labels);
  const delivered = await orders.getSecret(reads.delivered);
  const secretAccess = orders.secretAccess?.(reads.delivered.namespace);
  // Set one by one, not spread from a literal per field: every pass of a resync reads, and each spread was an object.
  const read: { -readonly [K in keyof CredentialRead]: CredentialRead[K] } = { reads, assignments, children };
  if (controlPlane) read.controlPlane = controlPlane;
  if (user) read.user = user;
  if (project) read.project = project;
  if (passwordSecret) read.passwordSecret = passwordSecret;
  if (caSecret) read.caSecret = caSecret;
  if (secretAccess) read.secretAccess = secretAccess;
  if (delivered) read.delivered = delivered;
  return read;
}
