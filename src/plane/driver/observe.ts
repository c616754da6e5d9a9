/**
 * Observations every order driver shares: the ControlPlane an order references and the consent it gives, the admin
 * port of that ControlPlane, and the holders in the order's namespace.
 */
import { ClusterIdentityDefaults, type ControlPlane } from '../../api';
import { adminConnectionOf, adminSecretNames } from '../admin-credential';
import { consentOf, type Consent } from '../consent';
import { controlPlaneKey, locationOf, type OrderObject } from '../naming';
import type { Holders } from '../holds';
import type { ClusterPort, KeystoneAdmin, OrderSite, PlaneDeps } from '../ports';
import type { SecretAccess } from '../ports';

/**
 * The consent of an order, from the cache; `access`: the operator's access to Secrets in the order's own namespace, for
 * a kind that delivers one there (src/plane/secret-access.ts).
 */
export async function observeConsent(deps: PlaneDeps, order: OrderObject, cluster?: string, access?: SecretAccess): Promise<Consent> {
  const key = controlPlaneKey(order);
  const controlPlane = await deps.cluster.get('ControlPlane', key);
  return consentOf(locationOf(order, cluster), key, controlPlane, access);
}

/**
 * The admin port of a ControlPlane, connected with the credential its Secrets hold now: its own `clouds.yaml` Secret,
 * or, with `identityRef`, the mirror the ControlPlane's driver keeps, read with the identity's `cloudName` (orders reach
 * this only while the ControlPlane reports its admin credential ready, so the identity allows it).
 */
export async function adminOf(deps: PlaneDeps, controlPlane: ControlPlane): Promise<KeystoneAdmin> {
  const namespace = controlPlane.metadata.namespace ?? '';
  const names = adminSecretNames(controlPlane);
  const identityName = controlPlane.spec.adminCredential.cloudCredentialsRef ? undefined : controlPlane.spec.adminCredential.identityRef?.name;
  const [cloudCredentials, caBundle, identity] = await Promise.all([
    deps.cluster.getSecret({ namespace, name: names.cloudCredentials }),
    names.caBundle !== undefined ? deps.cluster.getSecret({ namespace, name: names.caBundle }) : Promise.resolve(undefined),
    identityName !== undefined ? deps.cluster.getClusterIdentity(identityName) : Promise.resolve(undefined),
  ]);
  const resolved =
    identityName === undefined
      ? undefined
      : identity
        ? { cloudName: identity.spec.cloudName || ClusterIdentityDefaults.cloudName }
        : { cloudName: ClusterIdentityDefaults.cloudName, waiting: `KeystoneClusterIdentity ${identityName} not found` };
  const check = adminConnectionOf(controlPlane, { ...(cloudCredentials ? { cloudCredentials } : {}), ...(caBundle ? { caBundle } : {}) }, resolved);
  if (!check.ok) throw new Error(`the admin credential of ControlPlane ${namespace}/${controlPlane.metadata.name} is not usable: ${check.message}`);
  return deps.keystone.connect(check.connection);
}

/** The orders of a namespace (on the order's cluster) that may hold others. */
export async function observeHolders(orders: ClusterPort, namespace: string): Promise<Holders> {
  const [assignments, credentials] = await Promise.all([orders.list('KeystoneRoleAssignment', namespace), orders.list('KeystoneApplicationCredential', namespace)]);
  return { assignments, credentials };
}

/** The port of the order's cluster and the cluster's name as the rules read it (undefined: the management cluster). */
export function siteOf(deps: PlaneDeps, site: OrderSite): { readonly orders: ClusterPort; readonly cluster?: string } {
  return { orders: site.orders ?? deps.cluster, ...(site.cluster ? { cluster: site.cluster } : {}) };
}

/** The ControlPlane a teardown or an admitted order reaches Keystone through, if the consent allows it. */
export function reachable(consent: Consent): ControlPlane | undefined {
  if (consent.wait) return undefined;
  return consent.controlPlane;
}
