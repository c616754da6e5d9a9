/**
 * The ControlPlane driver: reads the admin `clouds.yaml` Secret and the CA bundle Secret, logs in to Keystone as the
 * admin (a real token; again whenever the ControlPlane or one of its Secrets changed), decides and records the status.
 */
import { adminConnectionOf, adminSecretNames } from '../admin-credential';
import { decideControlPlane, type AdminLogin } from '../control-plane';
import { failureKind } from '../keystone-admin';
import { messageOf } from '../order-status';
import type { ObjectKey, PlaneDeps } from '../ports';
import { fingerprintOf, memoized } from './memo';
import { sameJson, type PassResult } from './run';

/** Reconciles one ControlPlane. */
export async function reconcileControlPlane(key: ObjectKey, deps: PlaneDeps): Promise<PassResult> {
  const controlPlane = await deps.cluster.get('ControlPlane', key);
  if (!controlPlane) return { steps: 0, actions: [] };
  const names = adminSecretNames(controlPlane);
  const [cloudCredentials, caBundle] = await Promise.all([
    deps.cluster.getSecret({ namespace: key.namespace, name: names.cloudCredentials }),
    names.caBundle !== undefined ? deps.cluster.getSecret({ namespace: key.namespace, name: names.caBundle }) : Promise.resolve(undefined),
  ]);
  return memoized(deps, controlPlane.metadata.uid, fingerprintOf([controlPlane, cloudCredentials, caBundle]), async () => {
    const credential = adminConnectionOf(controlPlane, { ...(cloudCredentials ? { cloudCredentials } : {}), ...(caBundle ? { caBundle } : {}) });
    let login: AdminLogin | undefined;
    if (credential.ok) {
      try {
        login = { ok: true, ...(await deps.keystone.connect(credential.connection).verify()) };
      } catch (error) {
        login = { ok: false, kind: failureKind(error) as Extract<AdminLogin, { ok: false }>['kind'], message: messageOf(error) };
      }
    }
    const plan = decideControlPlane(controlPlane, { credential, ...(login ? { login } : {}) }, (deps.clock ?? (() => new Date()))());
    const changed = !sameJson(plan.status, controlPlane.status);
    if (changed) await deps.cluster.writeStatus('ControlPlane', key, plan.status);
    return { ...(plan.requeueAfter !== undefined ? { requeueAfter: plan.requeueAfter } : {}), wroteStatus: changed, steps: 1, actions: [] };
  });
}
