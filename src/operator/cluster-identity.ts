/**
 * The KeystoneClusterIdentity controller and the watches that tie identities and ControlPlanes (issue 11): an identity's
 * `Ready` (SecretFound/SecretNotFound) and `status.namespaces` (sorted namespaces where a ControlPlane uses the identity
 * and a correct mirror exists). The rules are src/plane/cluster-identity.ts; this reads the caches and writes status.
 */
import {
  ClusterIdentityConditionType,
  isCurrentMirror,
  MIRROR_NAME_PREFIX,
  mirrorSecretName,
  sourceHash,
  type ControlPlane,
  type KeystoneClusterIdentity,
} from '../api';
import type { Cluster, ClusterReader } from '../kube/cluster';
import { Kinds, MetadataKinds } from '../kube/kinds';
import { objectKey, type KubeObject, type ObjectKey } from '../kube/object';
import { decideIdentityStatus, isMirror } from '../plane/cluster-identity';
import { setPlaneCondition } from '../plane/conditions';
import { sameJson } from '../plane/driver/run';
import type { ClusterPort } from '../plane/ports';
import { deniedMessage, GRANTED, pendingPlace } from '../plane/secret-access';
import type { SecretAccess } from '../plane/ports';
import type { Controller, Result } from './runtime/controller';
import type { Manager } from './runtime/manager';
import { secretWatches } from './secret-cache';

/** The identity a ControlPlane uses, if it uses one (`identityRef` without `cloudCredentialsRef`). */
export function identityOf(controlPlane: ControlPlane): string | undefined {
  const admin = controlPlane.spec.adminCredential;
  return admin.cloudCredentialsRef ? undefined : admin.identityRef?.name;
}

/** Keys of the ControlPlanes using any of `identities`, optionally only in `namespace`. */
function controlPlanesUsing(reads: ClusterReader, identities: ReadonlySet<string>, namespace?: string): ObjectKey[] {
  return (reads.list(Kinds.ControlPlane, namespace ? { namespace } : {}) as ControlPlane[])
    .filter((cp) => {
      const name = identityOf(cp);
      return name !== undefined && identities.has(name);
    })
    .map((cp) => objectKey(cp.metadata.namespace, cp.metadata.name));
}

const identitiesOf = (reads: ClusterReader) => reads.list(Kinds.KeystoneClusterIdentity) as KeystoneClusterIdentity[];
const isSourceOf = (secret: KubeObject) => (identity: KeystoneClusterIdentity) =>
  identity.spec.secretRef.namespace === secret.metadata.namespace && identity.spec.secretRef.name === secret.metadata.name;

/** The identity a mirror Secret belongs to, by its name and label. */
function mirroredIdentity(secret: KubeObject): string | undefined {
  const name = secret.metadata.name;
  return name.startsWith(MIRROR_NAME_PREFIX) && isMirror({ metadata: { name, namespace: '', ...(secret.metadata.labels ? { labels: secret.metadata.labels } : {}) }, data: {} }) ? name.slice(MIRROR_NAME_PREFIX.length) : undefined;
}

/** The ControlPlane controller's extra watches: an identity, its source Secret, a Namespace → the ControlPlanes concerned. */
export function controlPlaneIdentityWatches() {
  return [
    { kind: Kinds.KeystoneClusterIdentity, map: (identity: KubeObject, reads: ClusterReader) => controlPlanesUsing(reads, new Set([identity.metadata.name])) },
    { kind: MetadataKinds.Namespace, map: (namespace: KubeObject, reads: ClusterReader) => controlPlanesUsing(reads, new Set(identitiesOf(reads).map((i) => i.metadata.name)), namespace.metadata.name) },
    ...secretWatches((secret: KubeObject, reads: ClusterReader) => controlPlanesUsing(reads, new Set(identitiesOf(reads).filter(isSourceOf(secret)).map((i) => i.metadata.name)))),
  ];
}

/**
 * Registers the KeystoneClusterIdentity controller. `access`: what the caches know of Secrets in a namespace of the
 * management cluster (the namespaced mode): a pass waits while the source's or a mirror's namespace fills, and a refused
 * source reads `SecretNotFound` with the refusal's message. @default every namespace granted
 */
export function registerClusterIdentityController(manager: Manager, port: ClusterPort, clock: () => Date, options: { readonly access?: (namespace: string) => SecretAccess } = {}): Controller {
  const cluster: Cluster = manager.cluster;
  const access = options.access ?? (() => GRANTED);
  return manager.controller({
    kind: Kinds.KeystoneClusterIdentity,
    reconcile: async (request): Promise<Result> => {
      const identity = cluster.get(Kinds.KeystoneClusterIdentity, undefined, request.name);
      if (!identity) return { reason: 'Gone' };
      const name = identity.metadata.name;
      const ref = identity.spec.secretRef;
      const used = new Set((cluster.list(Kinds.ControlPlane) as ControlPlane[]).filter((cp) => identityOf(cp) === name).map((cp) => cp.metadata.namespace ?? ''));
      const places = [ref.namespace, ...used].map((namespace) => ({ cluster: '', namespace }));
      if (pendingPlace(places, (p) => access(p.namespace))) return { reason: 'WaitingForSecrets' };
      const sourceAccess = access(ref.namespace);
      const sourceRefused = sourceAccess.state === 'denied' ? deniedMessage(places[0], sourceAccess, `the source Secret ${ref.name} of KeystoneClusterIdentity ${name}`, ref.name) : undefined;
      const source = sourceRefused === undefined ? await port.getSecret(ref) : undefined;
      const hash = source ? sourceHash(source.data) : undefined;
      const mirrored: string[] = [];
      for (const namespace of used) {
        const mirror = await port.getSecret({ namespace, name: mirrorSecretName(name) });
        if (mirror && hash !== undefined && isCurrentMirror(mirror.metadata, hash)) mirrored.push(namespace);
      }
      const verdict = decideIdentityStatus(identity, { sourceFound: source !== undefined, mirroredNamespaces: mirrored, ...(sourceRefused !== undefined ? { sourceRefused } : {}) });
      const generation = identity.metadata.generation;
      const conditions = setPlaneCondition(identity.status?.conditions, ClusterIdentityConditionType.Ready, { status: verdict.status, reason: verdict.reason, message: verdict.message }, clock(), generation);
      const status = { ...identity.status, conditions, namespaces: verdict.namespaces };
      if (sameJson(status, identity.status)) return { reason: 'Converged' };
      await cluster.patchStatus(Kinds.KeystoneClusterIdentity, identity, status);
      return { reason: 'Converged' };
    },
    watches: [
      ...secretWatches((secret: KubeObject, reads: ClusterReader) => [...identitiesOf(reads).filter(isSourceOf(secret)).map((i) => i.metadata.name), ...[mirroredIdentity(secret)].filter((n): n is string => n !== undefined)]),
      { kind: Kinds.ControlPlane, map: (cp: KubeObject) => [identityOf(cp as ControlPlane)].filter((n): n is string => n !== undefined) },
      { kind: MetadataKinds.Namespace, map: (_ns: KubeObject, reads: ClusterReader) => identitiesOf(reads).map((i) => i.metadata.name) },
    ],
  });
}
