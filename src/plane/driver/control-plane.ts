/**
 * The ControlPlane driver: reads the admin `clouds.yaml` Secret and the CA bundle Secret, logs in to Keystone as the
 * admin (a real token; again whenever the ControlPlane or one of its Secrets changed), decides and records the status.
 */
import { CredentialsMirroredReason, MIRRORED_LABEL, MIRRORED_LABEL_VALUE, type KeystoneClusterIdentity } from '../../api';
import { decideIdentityRef, releasedMirrors } from '../cluster-identity';
import type { Verdict } from '../conditions';
import { adminConnectionOf, adminSecretNames } from '../admin-credential';
import { decideControlPlane, type AdminLogin } from '../control-plane';
import { failureKind } from '../keystone-admin';
import { messageOf } from '../order-status';
import type { ObjectKey, PlaneDeps } from '../ports';
import { AdminCredentialReason } from '../reasons';
import { deniedMessage } from '../secret-access';
import { planeSettled } from '../settled';
import { fingerprintOf, memoized } from './memo';
import { sameJson, type PassResult } from './run';

/** How soon a failed mirror write is retried. */
const MIRROR_RETRY_MS = 10_000;

/** Reconciles one ControlPlane. */
export async function reconcileControlPlane(key: ObjectKey, deps: PlaneDeps): Promise<PassResult> {
  const controlPlane = await deps.cluster.get('ControlPlane', key);
  if (!controlPlane) return { steps: 0, actions: [] };
  const names = adminSecretNames(controlPlane);
  const identityName = controlPlane.spec.adminCredential.cloudCredentialsRef ? undefined : controlPlane.spec.adminCredential.identityRef?.name;
  const identity = identityName !== undefined ? await deps.cluster.getClusterIdentity(identityName) : undefined;
  const [cloudCredentials, caBundle, namespace, source, mirrors] = await Promise.all([
    deps.cluster.getSecret({ namespace: key.namespace, name: names.cloudCredentials }),
    names.caBundle !== undefined ? deps.cluster.getSecret({ namespace: key.namespace, name: names.caBundle }) : Promise.resolve(undefined),
    identityName !== undefined ? deps.cluster.getNamespace(key.namespace) : Promise.resolve(undefined),
    identity ? deps.cluster.getSecret(identity.spec.secretRef) : Promise.resolve(undefined),
    deps.cluster.listSecrets(key.namespace, { [MIRRORED_LABEL]: MIRRORED_LABEL_VALUE }),
  ]);
  // A ControlPlane whose admin credential expires (an application credential, issue 42) is never settled by the cache:
  // its first pass after a restart logs in once, which also sets the wake-up that reports the expiry in time.
  const settled = async () => (controlPlane.status?.adminCredentialExpiresAt === undefined ? planeSettled(controlPlane) : { settled: false as const, why: 'the admin credential expires' });
  // The namespaced Secret access: a namespace whose Secrets the API server refused the operator is reported, and nothing
  // is read, mirrored or logged in with until the grant appears (./secret-access.ts).
  const refused = secretsRefused(deps, key, identity);
  if (refused !== undefined) {
    const plan = decideControlPlane(controlPlane, { credential: { ok: false, reason: AdminCredentialReason.WaitingForCloudsYaml, message: refused }, secretsRefused: refused }, (deps.clock ?? (() => new Date()))());
    const changed = !sameJson(plan.status, controlPlane.status);
    if (changed) await deps.cluster.writeStatus('ControlPlane', key, plan.status, controlPlane);
    return { wroteStatus: changed, steps: 1, actions: [] };
  }
  return memoized(deps, controlPlane.metadata.uid, fingerprintOf([controlPlane, cloudCredentials, caBundle, identity, namespace, source, mirrors]), async () => {
    // Mirrors of an identity this ControlPlane no longer uses lose it as an owner (and go with their last owner).
    for (const action of releasedMirrors(controlPlane, mirrors)) {
      if (action.type === 'apply') await deps.cluster.applySecret(action.manifest);
      else await deps.cluster.deleteSecret(action.key, action.uid !== undefined ? { uid: action.uid } : undefined);
    }
    let credentials = cloudCredentials;
    let resolved: { allowed: Verdict; mirrored: Verdict } | undefined;
    let identityCredential: { cloudName: string; waiting?: string } | undefined;
    if (identityName !== undefined) {
      const decision = decideIdentityRef(controlPlane, { ...(identity ? { identity } : {}), ...(namespace ? { namespaceLabels: namespace.metadata.labels ?? {} } : {}), ...(source ? { source } : {}), ...(cloudCredentials ? { mirror: cloudCredentials } : {}) });
      resolved = { allowed: decision.allowed, mirrored: decision.mirrored };
      identityCredential = { cloudName: decision.cloudName, ...(decision.waiting !== undefined ? { waiting: decision.waiting } : {}) };
      credentials = decision.credentials;
      try {
        if (decision.action?.type === 'apply') await deps.cluster.applySecret(decision.action.manifest);
        if (decision.action?.type === 'delete') await deps.cluster.deleteSecret(decision.action.key, decision.action.uid !== undefined ? { uid: decision.action.uid } : undefined);
      } catch (error) {
        if (decision.action?.type !== 'apply') throw error;
        const message = `writing Secret ${decision.action.manifest.name}: ${messageOf(error)}`;
        resolved = { allowed: decision.allowed, mirrored: { status: 'False', reason: CredentialsMirroredReason.MirrorFailed, message } };
        identityCredential = { cloudName: decision.cloudName, waiting: message };
        credentials = undefined;
      }
    }
    const credential = adminConnectionOf(controlPlane, { ...(credentials ? { cloudCredentials: credentials } : {}), ...(caBundle ? { caBundle } : {}) }, identityCredential);
    let login: AdminLogin | undefined;
    if (credential.ok) {
      try {
        login = { ok: true, ...(await deps.keystone.connect(credential.connection).verify()) };
      } catch (error) {
        login = { ok: false, kind: failureKind(error) as Extract<AdminLogin, { ok: false }>['kind'], message: messageOf(error) };
      }
    }
    const plan = decideControlPlane(controlPlane, { credential, ...(login ? { login } : {}), ...(resolved ? { identity: resolved } : {}) }, (deps.clock ?? (() => new Date()))());
    const changed = !sameJson(plan.status, controlPlane.status);
    // Decided from `controlPlane`: a copy the cache has replaced meanwhile (a watch that replayed older versions) loses
    // with 409 rather than dropping what the newer copy recorded (the admin credential's expiry).
    if (changed) await deps.cluster.writeStatus('ControlPlane', key, plan.status, controlPlane);
    const mirrorFailed = resolved?.mirrored.reason === CredentialsMirroredReason.MirrorFailed;
    const requeueAfter = mirrorFailed ? Math.min(plan.requeueAfter ?? MIRROR_RETRY_MS, MIRROR_RETRY_MS) : plan.requeueAfter;
    return { ...(requeueAfter !== undefined ? { requeueAfter } : {}), ...(plan.steady && !mirrorFailed ? { steady: true } : {}), wroteStatus: changed, steps: 1, actions: [] };
  }, settled);
}

/** The message of a refused grant in the ControlPlane's namespace or for its identity's source Secret, if one is refused. */
function secretsRefused(deps: PlaneDeps, key: ObjectKey, identity: KeystoneClusterIdentity | undefined): string | undefined {
  const own = deps.cluster.secretAccess?.(key.namespace);
  if (own?.state === 'denied') return deniedMessage({ cluster: '', namespace: key.namespace }, own, `the admin credential and the children of ControlPlane ${key.name}`);
  if (!identity) return undefined;
  const ref = identity.spec.secretRef;
  const source = deps.cluster.secretAccess?.(ref.namespace);
  if (source?.state !== 'denied') return undefined;
  return deniedMessage({ cluster: '', namespace: ref.namespace }, source, `the source Secret ${ref.name} of KeystoneClusterIdentity ${identity.metadata.name}`, ref.name);
}
