/**
 * Which change requeues which object, on the manager's caches: the identity plane's `dependents` and
 * `secretDependents` (src/plane/dependents.ts, written once) fed with what the caches hold, on the changed object's
 * cluster and, for a ControlPlane or a child, on the cluster its orders live on; and the objects a change of a
 * namespace's Secret access concerns.
 */
import { secretName, type ControlPlane, type KeystoneApplicationCredential, type KeystoneClusterIdentity, type KeystoneProject, type KeystoneRoleAssignment, type KeystoneUser } from '../api';
import type { ClusterReader } from '../kube/cluster';
import { Kinds, type Secret } from '../kube/kinds';
import { objectKey, type KubeObject, type ObjectKey, type ResourceKind } from '../kube/object';
import { dependents, secretDependents, type CachedObjects } from '../plane/dependents';
import type { ObjectKind } from '../plane/ports';
import { identityOf } from './cluster-identity';
import { MANAGEMENT, type ClusterObjectKey } from './runtime/clusters';
import type { Manager } from './runtime/manager';
import type { MapContext } from './runtime/mapper';
import { controlPlaneKey, type OrderObject } from '../plane/naming';

/** The kinds the controllers reconcile, by the plane's kind name. */
export const KINDS: Readonly<Record<ObjectKind, ResourceKind<KubeObject>>> = {
  ControlPlane: Kinds.ControlPlane,
  KeystoneProject: Kinds.KeystoneProject,
  KeystoneUser: Kinds.KeystoneUser,
  KeystoneRoleAssignment: Kinds.KeystoneRoleAssignment,
  KeystoneApplicationCredential: Kinds.KeystoneApplicationCredential,
};

/**
 * The objects a change of the Secret access of `namespace` on `cluster` concerns: on the management cluster the
 * ControlPlanes there and those whose identity's source is there, those identities and the ones these ControlPlanes
 * use, and the orders (on every cluster) of a ControlPlane there and the orders in the namespace; on a target cluster
 * the orders in the namespace there.
 */
export function secretAccessDependents(manager: Manager, cluster: string, namespace: string): { kind: ObjectKind | 'KeystoneClusterIdentity'; cluster: string; object: KubeObject }[] {
  const out: { kind: ObjectKind | 'KeystoneClusterIdentity'; cluster: string; object: KubeObject }[] = [];
  const orderKinds: ObjectKind[] = ['KeystoneProject', 'KeystoneUser', 'KeystoneRoleAssignment', 'KeystoneApplicationCredential'];
  if (cluster !== MANAGEMENT) {
    const reads = manager.clusterNamed(cluster);
    for (const kind of orderKinds) for (const object of reads?.list(KINDS[kind], { namespace }) ?? []) out.push({ kind, cluster, object });
    return out;
  }
  const reads = manager.cluster;
  const identities = reads.list(Kinds.KeystoneClusterIdentity) as KeystoneClusterIdentity[];
  const sourced = new Set(identities.filter((i) => i.spec.secretRef.namespace === namespace).map((i) => i.metadata.name));
  const controlPlanes = (reads.list(Kinds.ControlPlane) as ControlPlane[]).filter((cp) => cp.metadata.namespace === namespace || sourced.has(identityOf(cp) ?? ''));
  const used = new Set([...sourced, ...controlPlanes.map((cp) => identityOf(cp)).filter((n): n is string => n !== undefined)]);
  for (const identity of identities) if (used.has(identity.metadata.name)) out.push({ kind: 'KeystoneClusterIdentity', cluster: MANAGEMENT, object: identity });
  for (const cp of controlPlanes) out.push({ kind: 'ControlPlane', cluster: MANAGEMENT, object: cp });
  for (const where of [MANAGEMENT, ...manager.targetClusters()]) {
    const there = manager.clusterNamed(where);
    for (const kind of orderKinds) {
      for (const object of there?.list(KINDS[kind]) ?? []) {
        const own = where === MANAGEMENT && object.metadata.namespace === namespace;
        if (own || controlPlaneKey(object as unknown as OrderObject).namespace === namespace) out.push({ kind, cluster: where, object });
      }
    }
  }
  return out;
}

/**
 * The objects of `kind` a change of `watched` requeues: on the changed object's own cluster, and for a ControlPlane (on
 * the management cluster) its orders on every cluster.
 */
export function objectDependents(kind: ObjectKind, watched: ObjectKind, object: KubeObject, reads: ClusterReader, context?: MapContext): (ObjectKey | ClusterObjectKey)[] {
  const own = keysOf(kind, dependents(watched, object, cached(reads, object, watched, context?.cluster ?? MANAGEMENT)));
  if (watched !== 'ControlPlane' || kind === 'ControlPlane' || !context) return own;
  const elsewhere = context.fleet.targets().flatMap((target) => {
    const there = context.fleet.readsOf(target);
    if (!there) return [];
    return keysOf(kind, dependents(watched, object, cached(there, object, watched, target))).map((k) => ({ cluster: target, key: k as ObjectKey }));
  });
  return [...own, ...elsewhere];
}

/** The objects of `kind` a changed Secret requeues: on its own cluster, and for a child its order on the cluster its label names. */
export function secretDependentKeys(kind: ObjectKind, secret: Secret, reads: ClusterReader, context?: MapContext): (ObjectKey | ClusterObjectKey)[] {
  return keysOf(kind, secretDependents(secretRefOf(secret), secretNeighbours(reads, secret, context?.cluster ?? MANAGEMENT)));
}

/** The keys of the objects of `kind` among `refs`: plain on the changed object's cluster, qualified on another. */
function keysOf(kind: ObjectKind, refs: readonly { kind: ObjectKind; namespace: string; name: string; cluster?: string }[]): (ObjectKey | ClusterObjectKey)[] {
  return refs.filter((r) => r.kind === kind).map((r) => (r.cluster ? { cluster: r.cluster, key: objectKey(r.namespace, r.name) } : objectKey(r.namespace, r.name)));
}

/**
 * The cached objects `dependents` reads on `cluster`: a ControlPlane's orders anywhere (and, on the management cluster,
 * the ControlPlanes; a target cluster has none); for an order, only the role assignments and credentials of its
 * namespace that name its user (and project), selected by the store's field indexes. Listing the whole namespace for
 * every event of every order made a relist of 5,000 orders cost minutes of CPU.
 */
function cached(reads: ClusterReader, object: KubeObject, changed: ObjectKind, cluster: string): CachedObjects {
  if (changed === 'ControlPlane' || object.metadata.namespace === undefined) {
    return {
      ...(cluster === MANAGEMENT ? { controlPlanes: reads.list(Kinds.ControlPlane) as ControlPlane[] } : {}),
      users: reads.list(Kinds.KeystoneUser) as KeystoneUser[],
      projects: reads.list(Kinds.KeystoneProject) as KeystoneProject[],
      assignments: reads.list(Kinds.KeystoneRoleAssignment) as KeystoneRoleAssignment[],
      credentials: reads.list(Kinds.KeystoneApplicationCredential) as KeystoneApplicationCredential[],
    };
  }
  const namespace = object.metadata.namespace;
  const naming = (fields: Record<string, string>): CachedObjects => ({
    assignments: reads.list(Kinds.KeystoneRoleAssignment, { namespace, fields }) as KeystoneRoleAssignment[],
    credentials: reads.list(Kinds.KeystoneApplicationCredential, { namespace, fields }) as KeystoneApplicationCredential[],
  });
  if (changed === 'KeystoneUser') return naming({ 'spec.userRef.name': object.metadata.name });
  if (changed === 'KeystoneProject') return naming({ 'spec.projectRef.name': object.metadata.name });
  const { userRef, projectRef } = (object as KeystoneRoleAssignment | KeystoneApplicationCredential).spec;
  return naming({ 'spec.userRef.name': userRef.name, 'spec.projectRef.name': projectRef.name });
}

const DELIVERED_SUFFIX = secretName('');

/**
 * The cached objects `secretDependents` reads: the credential order whose delivered name the Secret has (found by
 * name: a namespace may hold thousands of orders and Secrets), and on the management cluster the ControlPlanes of the
 * Secret's namespace (a target cluster has none).
 */
function secretNeighbours(reads: ClusterReader, secret: KubeObject, cluster: string): CachedObjects {
  const namespace = secret.metadata.namespace ?? '';
  const name = secret.metadata.name;
  const order = name.endsWith(DELIVERED_SUFFIX) ? reads.get(Kinds.KeystoneApplicationCredential, namespace, name.slice(0, -DELIVERED_SUFFIX.length)) : undefined;
  return {
    ...(cluster === MANAGEMENT ? { controlPlanes: reads.list(Kinds.ControlPlane, { namespace }) as ControlPlane[] } : {}),
    credentials: order ? [order as KeystoneApplicationCredential] : [],
  };
}

/** What `secretDependents` reads of a Secret: its name, labels and owners (never its data). */
function secretRefOf(secret: Secret) {
  return {
    metadata: {
      name: secret.metadata.name,
      namespace: secret.metadata.namespace ?? '',
      ...(secret.metadata.labels ? { labels: secret.metadata.labels } : {}),
      ...(secret.metadata.ownerReferences ? { ownerReferences: secret.metadata.ownerReferences } : {}),
    },
    data: {},
  };
}

