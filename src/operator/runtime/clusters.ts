/**
 * A target cluster as one more dimension of a key (as multicluster-runtime's `mcreconcile.Request{ClusterName,
 * Request}`): the work queues hold `<cluster>:<namespace>/<name>` for an object of a registered target cluster and the
 * plain `<namespace>/<name>` for one of the management cluster, whose name is the empty string. A cluster's name is the
 * name of its kubeconfig Secret and an object key is made of DNS names, so neither contains a colon.
 */
import type { ClusterReader } from '../../kube/cluster';
import type { ObjectKey } from '../../kube/object';

/** The management cluster's name. */
export const MANAGEMENT = '';

/** A key on a named cluster. */
export interface ClusterObjectKey {
  /** The cluster; {@link MANAGEMENT} for the management cluster. */
  readonly cluster: string;
  readonly key: ObjectKey;
}

/** The work-queue key of `key` on `cluster`. */
export function clusterKey(cluster: string, key: ObjectKey): string {
  return cluster === MANAGEMENT ? key : `${cluster}:${key}`;
}

/** The cluster and object key of a work-queue key. */
export function parseClusterKey(queued: string): ClusterObjectKey {
  const colon = queued.indexOf(':');
  return colon < 0 ? { cluster: MANAGEMENT, key: queued } : { cluster: queued.slice(0, colon), key: queued.slice(colon + 1) };
}

/** Which clusters a controller's primary kind, a watch or a cache covers. */
export type ClusterScope = 'management' | 'all';

/** What a mapper may read besides the changed object's own cluster: every cluster the operator serves now. */
export interface FleetReader {
  /** The caches of a cluster ({@link MANAGEMENT} or a target cluster whose caches have synced); undefined otherwise. */
  readsOf(cluster: string): ClusterReader | undefined;
  /** The target clusters whose caches have synced, sorted. */
  targets(): readonly string[];
}

/** A fleet of the management cluster alone. */
export function managementOnly(reads: ClusterReader): FleetReader {
  return { readsOf: (cluster) => (cluster === MANAGEMENT ? reads : undefined), targets: () => [] };
}
