/**
 * Observations every order driver shares: the ControlPlane an order references and the consent it gives, the admin
 * port of that ControlPlane, and the holders in the order's namespace.
 */
import type { ControlPlane } from '../../api';
import { adminConnectionOf, adminSecretNames } from '../admin-credential';
import { consentOf, controlPlaneKey, locationOf, type Consent, type OrderObject } from '../consent';
import type { Holders } from '../holds';
import type { KeystoneAdmin, PlaneDeps } from '../ports';

/** The consent of an order, from the cache. */
export async function observeConsent(deps: PlaneDeps, order: OrderObject, cluster?: string): Promise<Consent> {
  const key = controlPlaneKey(order);
  const controlPlane = await deps.cluster.get('ControlPlane', key);
  return consentOf(locationOf(order, cluster), key, controlPlane);
}

/** The admin port of a ControlPlane, connected with the credential its Secrets hold now. */
export async function adminOf(deps: PlaneDeps, controlPlane: ControlPlane): Promise<KeystoneAdmin> {
  const namespace = controlPlane.metadata.namespace ?? '';
  const names = adminSecretNames(controlPlane);
  const [cloudCredentials, caBundle] = await Promise.all([
    deps.cluster.getSecret({ namespace, name: names.cloudCredentials }),
    names.caBundle !== undefined ? deps.cluster.getSecret({ namespace, name: names.caBundle }) : Promise.resolve(undefined),
  ]);
  const check = adminConnectionOf(controlPlane, { ...(cloudCredentials ? { cloudCredentials } : {}), ...(caBundle ? { caBundle } : {}) });
  if (!check.ok) throw new Error(`the admin credential of ControlPlane ${namespace}/${controlPlane.metadata.name} is not usable: ${check.message}`);
  return deps.keystone.connect(check.connection);
}

/** The orders of a namespace that may hold others. */
export async function observeHolders(deps: PlaneDeps, namespace: string): Promise<Holders> {
  const [assignments, credentials] = await Promise.all([
    deps.cluster.list('KeystoneRoleAssignment', namespace),
    deps.cluster.list('KeystoneApplicationCredential', namespace),
  ]);
  return { assignments, credentials };
}

/** The ControlPlane a teardown or an admitted order reaches Keystone through, if the consent allows it. */
export function reachable(consent: Consent): ControlPlane | undefined {
  if (consent.wait) return undefined;
  return consent.controlPlane;
}
