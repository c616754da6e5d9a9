/**
 * The KeystoneUser's delivered Secret (identity-plane.md, KeystoneUser): `<name>-credentials` beside the order, owned by
 * it through a controller owner reference, with the keys `clouds.yaml` (a password cloud, no project, no CA bundle) and
 * `password`. Its auth URL is the ControlPlane's `authURL` for an order on the management cluster and its
 * `publicEndpoint` for one on another cluster (none: `KeystoneNotPublished`).
 */
import { API_VERSION, DeliveryReason, PlaneDefaults, type ControlPlane, type KeystoneUser } from '../api';
import { renderPasswordCloudsYaml } from '../keystone';
import { deliveredLabels, deliveredSecretName, PASSWORD_KEY } from './naming';
import type { OwnerReference, SecretManifest, SecretObject } from './ports';

/**
 * The auth URL written into documents for an order on `cluster`: `external.authURL` on the management cluster,
 * `services.keystone.publicEndpoint` on a target cluster (which cannot reach the in-cluster Keystone); undefined when the
 * ControlPlane publishes none.
 */
export function deliveredAuthUrl(controlPlane: ControlPlane, cluster?: string): string | undefined {
  const keystone = controlPlane.spec.services.keystone;
  return cluster ? keystone.publicEndpoint || undefined : keystone.external.authURL;
}

/** Why nothing can be delivered to an order on `cluster` (spec, Conditions: DeliveryReady=False/KeystoneNotPublished). */
export interface NotPublished {
  readonly reason: typeof DeliveryReason.KeystoneNotPublished;
  readonly message: string;
}

/** `KeystoneNotPublished` when the ControlPlane publishes no auth URL for an order on `cluster`; undefined when it does. */
export function notPublished(controlPlane: ControlPlane, cluster?: string): NotPublished | undefined {
  if (deliveredAuthUrl(controlPlane, cluster) !== undefined) return undefined;
  const cp = `${controlPlane.metadata.namespace ?? ''}/${controlPlane.metadata.name}`;
  return {
    reason: DeliveryReason.KeystoneNotPublished,
    message: `the order lives on cluster ${cluster}, which cannot reach the in-cluster Keystone, and ControlPlane ${cp} publishes no services.keystone.publicEndpoint`,
  };
}

/** The controller owner reference a delivered Secret carries. */
export function controllerReference(order: { readonly kind: string; readonly metadata: { readonly name: string; readonly uid?: string } }): OwnerReference {
  return { apiVersion: API_VERSION, kind: order.kind, name: order.metadata.name, uid: order.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** Whether a Secret is controlled by the order (its controller owner reference names the order's UID). */
export function ownedBy(secret: SecretObject, uid: string | undefined): boolean {
  return (secret.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === uid && uid !== undefined && uid !== '');
}

/** What the user's delivered documents need besides the password. */
export interface UserCloud {
  readonly authUrl: string;
  readonly username: string;
  readonly domainName: string;
  readonly regionName: string;
  readonly interface: string;
}

/** The cloud of a user, or undefined when no auth URL is published for its cluster. */
export function userCloudOf(controlPlane: ControlPlane, username: string, cluster?: string): UserCloud | undefined {
  const authUrl = deliveredAuthUrl(controlPlane, cluster);
  if (!authUrl) return undefined;
  return {
    authUrl,
    username,
    domainName: controlPlane.spec.adminCredential.domainName || PlaneDefaults.domainName,
    regionName: controlPlane.spec.region || PlaneDefaults.region,
    interface: controlPlane.spec.services.keystone.external.endpointType || PlaneDefaults.endpointType,
  };
}

/**
 * Where an order on `cluster` is delivered, in one answer: the cloud its documents point at ({@link userCloudOf}, for
 * `username`), or why nothing can be delivered there ({@link notPublished}).
 */
export function deliveryTarget(controlPlane: ControlPlane, username: string, cluster?: string): { readonly cloud?: UserCloud; readonly notPublished?: NotPublished } {
  const cloud = userCloudOf(controlPlane, username, cluster);
  const unpublished = notPublished(controlPlane, cluster);
  return { ...(cloud ? { cloud } : {}), ...(unpublished ? { notPublished: unpublished } : {}) };
}

/** The delivered keys for a password. */
export function userSecretData(cloud: UserCloud, password: string): Record<string, string> {
  return {
    'clouds.yaml': renderPasswordCloudsYaml({
      authUrl: cloud.authUrl,
      username: cloud.username,
      password,
      userDomainName: cloud.domainName,
      regionName: cloud.regionName,
      interface: cloud.interface,
    }),
    [PASSWORD_KEY]: password,
  };
}

/** The delivered Secret of a user for a password, as server-side applied. */
export function userSecretManifest(user: KeystoneUser, cloud: UserCloud, password: string): SecretManifest {
  const location = { namespace: user.metadata.namespace ?? '', name: user.metadata.name };
  return {
    namespace: location.namespace,
    name: deliveredSecretName(user.metadata.name),
    labels: deliveredLabels('KeystoneUser', location),
    ownerReferences: [controllerReference(user)],
    data: userSecretData(cloud, password),
  };
}
