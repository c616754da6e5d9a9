/**
 * The rules of a ControlPlane's `adminCredential.identityRef` (issue 11, terraformclusteridentity.md), pure: whether the
 * KeystoneClusterIdentity allows the ControlPlane's namespace, what to do with the mirror `keystone-creds-<identity>`
 * in that namespace (write it from the source Secret, rewrite it when the source changed, delete it when revoked, never
 * take over a Secret of that name the operator did not create), and the identity's own status. The driver reads and acts.
 */
import {
  API_VERSION,
  CLUSTER_IDENTITY_SECRET_KEY,
  ClusterIdentityDefaults,
  ClusterIdentityReason,
  CredentialsMirroredReason,
  IdentityAllowedReason,
  MIRRORED_LABEL,
  MIRRORED_LABEL_VALUE,
  PlaneKinds,
  SOURCE_HASH_ANNOTATION,
  identityAllows,
  isCurrentMirror,
  mirrorSecretName,
  sourceHash,
  type ControlPlane,
  type KeystoneClusterIdentity,
} from '../api';
import type { Verdict } from './conditions';
import type { ObjectKey, OwnerReference, SecretManifest, SecretObject } from './ports';

/** What the driver read for a ControlPlane with `identityRef`. */
export interface IdentityObservations {
  readonly identity?: KeystoneClusterIdentity;
  /** The ControlPlane's Namespace's labels; undefined: no such namespace. */
  readonly namespaceLabels?: Readonly<Record<string, string>>;
  /** The identity's source Secret. */
  readonly source?: SecretObject;
  /** The Secret of the mirror's name in the ControlPlane's namespace. */
  readonly mirror?: SecretObject;
}

/** What to do with the mirror. */
export type MirrorAction =
  | { readonly type: 'apply'; readonly manifest: SecretManifest }
  | { readonly type: 'delete'; readonly key: ObjectKey; readonly uid?: string };

/** The decision: both conditions, the mirror action, and (when usable) the mirror the admin credential is read from. */
export interface IdentityDecision {
  readonly allowed: Verdict;
  readonly mirrored: Verdict;
  readonly action?: MirrorAction;
  /** The mirror as it is after the action; absent: the admin credential waits (`message` says why). */
  readonly credentials?: SecretObject;
  /** The identity's cloud in the `clouds.yaml`. */
  readonly cloudName: string;
  /** Why there is no admin credential (set when `credentials` is absent). */
  readonly waiting?: string;
}

/** Whether a Secret carries the mirror label (the operator wrote it). */
export function isMirror(secret: SecretObject | undefined): boolean {
  return secret?.metadata.labels?.[MIRRORED_LABEL] === MIRRORED_LABEL_VALUE;
}

/** The owner reference of a ControlPlane on its namespace's mirror: not a controller, so several ControlPlanes share one. */
export function mirrorOwnerOf(controlPlane: ControlPlane): OwnerReference {
  return { apiVersion: API_VERSION, kind: PlaneKinds.ControlPlane.kind, name: controlPlane.metadata.name, uid: controlPlane.metadata.uid ?? '', controller: false };
}

/** Decides the identity side of a ControlPlane whose `adminCredential.identityRef` is set. */
export function decideIdentityRef(controlPlane: ControlPlane, observed: IdentityObservations): IdentityDecision {
  const identityName = controlPlane.spec.adminCredential.identityRef?.name ?? '';
  const namespace = controlPlane.metadata.namespace ?? '';
  const mirrorName = mirrorSecretName(identityName);
  const { identity, mirror, source } = observed;
  const cloudName = identity?.spec.cloudName || ClusterIdentityDefaults.cloudName;
  const revoke: MirrorAction | undefined = isMirror(mirror) ? { type: 'delete', key: { namespace, name: mirrorName }, ...(mirror?.metadata.uid ? { uid: mirror.metadata.uid } : {}) } : undefined;
  const notAllowed = (reason: string, message: string): IdentityDecision => ({
    allowed: { status: 'False', reason, message },
    mirrored: { status: 'False', reason: CredentialsMirroredReason.IdentityNotAllowed, message: `IdentityAllowed is not True: no mirror ${mirrorName}` },
    ...(revoke ? { action: revoke } : {}),
    cloudName,
    waiting: message,
  });
  if (!identity) return notAllowed(IdentityAllowedReason.IdentityNotFound, `KeystoneClusterIdentity ${identityName} not found`);
  if (!identityAllows(identity, namespace, observed.namespaceLabels)) {
    return notAllowed(IdentityAllowedReason.NamespaceNotAllowed, `KeystoneClusterIdentity ${identityName} does not allow namespace ${namespace}`);
  }
  const allowed: Verdict = { status: 'True', reason: IdentityAllowedReason.IdentityAllowed, message: `KeystoneClusterIdentity ${identityName} allows namespace ${namespace}` };
  const mirroredFalse = (reason: string, message: string): IdentityDecision => ({ allowed, mirrored: { status: 'False', reason, message }, cloudName, waiting: message });
  const ref = identity.spec.secretRef;
  if (!source) return mirroredFalse(CredentialsMirroredReason.SourceSecretNotFound, `source Secret ${ref.namespace}/${ref.name} not found`);
  if (mirror && !isMirror(mirror)) {
    return mirroredFalse(CredentialsMirroredReason.MirrorConflict, `Secret ${namespace}/${mirrorName} exists without label ${MIRRORED_LABEL}=${MIRRORED_LABEL_VALUE}: not taken over`);
  }
  const hash = sourceHash(source.data);
  const owner = mirrorOwnerOf(controlPlane);
  const owners = mirror?.metadata.ownerReferences ?? [];
  const owned = owners.some((o) => o.uid === owner.uid);
  const data: Record<string, string> = source.data[CLUSTER_IDENTITY_SECRET_KEY] !== undefined ? { [CLUSTER_IDENTITY_SECRET_KEY]: source.data[CLUSTER_IDENTITY_SECRET_KEY] } : {};
  const mirrored: Verdict = { status: 'True', reason: CredentialsMirroredReason.CredentialsMirrored, message: `Secret ${mirrorName} mirrors ${ref.namespace}/${ref.name}` };
  if (mirror && owned && isCurrentMirror(mirror.metadata, hash)) return { allowed, mirrored, cloudName, credentials: mirror };
  const manifest: SecretManifest = {
    namespace,
    name: mirrorName,
    labels: { [MIRRORED_LABEL]: MIRRORED_LABEL_VALUE },
    annotations: { [SOURCE_HASH_ANNOTATION]: hash },
    ownerReferences: [...owners.filter((o) => o.uid !== owner.uid), owner],
    data,
  };
  const credentials: SecretObject = {
    metadata: { name: mirrorName, namespace, labels: manifest.labels, annotations: manifest.annotations ?? {}, ownerReferences: manifest.ownerReferences ?? [] },
    data,
  };
  return { allowed, mirrored, action: { type: 'apply', manifest }, cloudName, credentials };
}

/** The identity's status from what the operator observed. */
export function decideIdentityStatus(
  identity: KeystoneClusterIdentity,
  observed: {
    readonly sourceFound: boolean;
    readonly mirroredNamespaces: readonly string[];
    /** The operator is not granted the source Secret (the namespaced Secret access): the refusal's message. @default granted */
    readonly sourceRefused?: string;
  },
): Verdict & { readonly namespaces: string[] } {
  const ref = identity.spec.secretRef;
  const namespaces = [...new Set(observed.mirroredNamespaces)].sort();
  if (observed.sourceRefused !== undefined) return { status: 'False', reason: ClusterIdentityReason.SecretNotFound, message: `Secret ${ref.namespace}/${ref.name} cannot be read: ${observed.sourceRefused}`, namespaces };
  return observed.sourceFound
    ? { status: 'True', reason: ClusterIdentityReason.SecretFound, message: `Secret ${ref.namespace}/${ref.name} found`, namespaces }
    : { status: 'False', reason: ClusterIdentityReason.SecretNotFound, message: `Secret ${ref.namespace}/${ref.name} not found`, namespaces };
}

/**
 * The mirrors in the ControlPlane's namespace it still owns but no longer uses (it switched to `cloudCredentialsRef`
 * or to another identity): with no other owner left the mirror is deleted ("deletes it when the last user is gone"),
 * otherwise only this ControlPlane's owner reference is dropped.
 */
export function releasedMirrors(controlPlane: ControlPlane, mirrors: readonly SecretObject[]): MirrorAction[] {
  const uid = controlPlane.metadata.uid;
  if (!uid) return [];
  const used = controlPlane.spec.adminCredential.cloudCredentialsRef ? undefined : controlPlane.spec.adminCredential.identityRef?.name;
  const keep = used !== undefined ? mirrorSecretName(used) : undefined;
  return mirrors
    .filter((m) => isMirror(m) && m.metadata.name !== keep && (m.metadata.ownerReferences ?? []).some((r) => r.uid === uid))
    .map((m): MirrorAction => {
      const others = (m.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
      const key = { namespace: m.metadata.namespace, name: m.metadata.name };
      if (others.length === 0) return { type: 'delete', key, ...(m.metadata.uid ? { uid: m.metadata.uid } : {}) };
      return {
        type: 'apply',
        manifest: { ...key, labels: m.metadata.labels ?? {}, ...(m.metadata.annotations ? { annotations: m.metadata.annotations } : {}), ownerReferences: others, data: m.data },
      };
    });
}
