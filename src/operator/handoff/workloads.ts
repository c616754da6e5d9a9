/**
 * The workloads of the operator's cluster as the handoff's {@link WorkloadPort}: Deployments, StatefulSets and DaemonSets
 * (`apps/v1`), found by an index on their opt-in annotation (`<namespace>/<Secret>`), and rolled by a server-side apply
 * of the one pod-template annotation the handoff owns.
 *
 * A cluster holds many workloads and few opt in, so the caches hold every workload as metadata only
 * (`PartialObjectMetadata`: name, labels, annotations, owners, resourceVersion; never the pod template or the status),
 * which is all the index and the mapper read. The whole object of an opted-in workload (its template and rollout
 * status, what the rules of src/handoff decide on) is read by name from the API server the first time a pass needs it
 * and kept while the metadata cache shows the same resourceVersion: a roll or a rollout's progress changes it, and the
 * next pass reads the new version. Copies of workloads that no longer opt in, or are gone, are dropped within a minute.
 */
import { Kinds } from '../../kube/kinds';
import type { Cluster, ClusterReader } from '../../kube/cluster';
import { isNotFound } from '../../kube/errors';
import { ReadThrough } from '../../kube/read-through';
import { defineKind, metadataOf, objectKey, parseKey, type KubeObject, type ObjectKey, type PartialObjectMetadata, type ResourceKind } from '../../kube/object';
import { OPT_IN, TEMPLATE_GENERATIONS, optInOf, orderOfSecret, workloadOf, type RawWorkload, type Workload, type WorkloadKind, type WorkloadPort, type WorkloadRef } from '../../handoff';
import type { Manager } from '../runtime/manager';

/** A workload object as cached (apps/v1). */
export type WorkloadObject = KubeObject & RawWorkload;

const apps = (kind: WorkloadKind, plural: string) => defineKind<WorkloadObject>({ group: 'apps', version: 'v1', kind, plural, namespaced: true });

/** The workload kinds, by kind. */
export const WorkloadKinds: Readonly<Record<WorkloadKind, ResourceKind<WorkloadObject>>> = {
  Deployment: apps('Deployment', 'deployments'),
  StatefulSet: apps('StatefulSet', 'statefulsets'),
  DaemonSet: apps('DaemonSet', 'daemonsets'),
};

/** The metadata-only view of each workload kind: what the caches hold. */
export const WorkloadMetadataKinds: Readonly<Record<WorkloadKind, ResourceKind<PartialObjectMetadata>>> = {
  Deployment: metadataOf(WorkloadKinds.Deployment),
  StatefulSet: metadataOf(WorkloadKinds.StatefulSet),
  DaemonSet: metadataOf(WorkloadKinds.DaemonSet),
};

/** How often the copies of opted-in workloads are checked for ones no longer opted in or gone. */
const SWEEP_MS = 60_000;

/** The name of the index of opted-in workloads by `<namespace>/<Secret>`. */
export const CONSUMERS_INDEX = 'handoff.consumers';

/** The index values of a workload: `<namespace>/<Secret>` for each Secret its opt-in names (metadata only). */
export function consumerIndex(workload: KubeObject): string[] {
  return optInOf(workload.metadata.annotations).map((secret) => objectKey(workload.metadata.namespace, secret));
}

/**
 * The KeystoneApplicationCredentials a workload's change concerns: the orders in its namespace whose delivered Secret
 * its opt-in names (metadata only). The registry maps both the old and the new object, so dropping the opt-in reaches
 * the order too.
 */
export function ordersConsumedBy(workload: KubeObject, reads: ClusterReader): ObjectKey[] {
  const namespace = workload.metadata.namespace ?? '';
  return optInOf(workload.metadata.annotations)
    .map(orderOfSecret)
    .filter((name): name is string => name !== undefined && reads.get(Kinds.KeystoneApplicationCredential, namespace, name) !== undefined)
    .map((name) => objectKey(namespace, name));
}

/**
 * What the workload caches keep of a workload's metadata: its identity and version (name, namespace, uid,
 * resourceVersion: what the index, the mapper and the whole copies' freshness check read) and the opt-in annotation
 * alone. A workload's other labels and annotations are often most of its metadata, and nothing here reads them.
 */
export function optInOnly(object: PartialObjectMetadata): PartialObjectMetadata {
  const { name, namespace, uid, resourceVersion, annotations } = object.metadata;
  const optIn = annotations?.[OPT_IN];
  const metadata = { name, namespace, uid, resourceVersion, ...(optIn !== undefined ? { annotations: { [OPT_IN]: optIn } } : {}) };
  return { apiVersion: object.apiVersion, kind: object.kind, metadata };
}

/**
 * Caches the workload kinds' metadata ({@link optInOnly}) with the consumer index: the one place that decides how
 * workloads are watched. Call before the manager starts, and register the watches ({@link workloadWatches}) with the
 * handoff's controller.
 */
export function watchWorkloads(manager: Manager): void {
  for (const kind of Object.values(WorkloadMetadataKinds)) {
    manager.cache(kind, { transform: optInOnly });
    manager.index(kind, CONSUMERS_INDEX, consumerIndex);
  }
}

/**
 * The watches of the handoff's controller: a change of an opted-in workload requeues the orders it consumes (any change
 * of a workload moves its resourceVersion, so the metadata watch hears its rollout's progress too).
 */
export function workloadWatches() {
  return Object.values(WorkloadMetadataKinds).map((kind) => ({ kind, map: ordersConsumedBy }));
}

/** The workloads of the cluster the operator runs on: found on the metadata caches, read whole by name. */
export class ClusterWorkloads implements WorkloadPort {
  private readonly copies: Readonly<Record<WorkloadKind, ReadThrough<WorkloadObject>>>;
  private swept = Date.now();

  constructor(private readonly cluster: Cluster) {
    this.copies = {
      Deployment: new ReadThrough(cluster, WorkloadKinds.Deployment),
      StatefulSet: new ReadThrough(cluster, WorkloadKinds.StatefulSet),
      DaemonSet: new ReadThrough(cluster, WorkloadKinds.DaemonSet),
    };
  }

  /** The number of whole workloads kept (the opted-in ones passes have read). */
  get copiesKept(): number {
    return Object.values(this.copies).reduce((sum, copies) => sum + copies.size, 0);
  }

  async consumers(namespace: string, secret: string): Promise<readonly Workload[]> {
    this.sweep();
    const value = objectKey(namespace, secret);
    const out: Workload[] = [];
    for (const kind of Object.keys(WorkloadKinds) as WorkloadKind[]) {
      const found = this.cluster.list(WorkloadMetadataKinds[kind], { namespace, index: { name: CONSUMERS_INDEX, value } });
      for (const object of await Promise.all(found.map((metadata) => this.copies[kind].get(metadata)))) {
        const workload = object && workloadOf(object);
        if (workload) out.push(workload);
      }
    }
    return out;
  }

  /** Now and then: drops the copies of workloads gone from the metadata cache or no longer opted in. */
  private sweep(): void {
    if (Date.now() - this.swept < SWEEP_MS) return;
    this.swept = Date.now();
    for (const kind of Object.keys(WorkloadKinds) as WorkloadKind[]) {
      this.copies[kind].retain((key) => {
        const { namespace, name } = parseKey(key);
        const metadata = this.cluster.get(WorkloadMetadataKinds[kind], namespace, name);
        return metadata !== undefined && consumerIndex(metadata).length > 0;
      });
    }
  }

  async roll(workload: WorkloadRef, value: string): Promise<boolean> {
    const kind = WorkloadKinds[workload.kind];
    try {
      // Server-side apply of the one annotation, forced (the key is the handoff's own), guarded by the resourceVersion
      // observed: another writer's change in between (a second order's roll of the same workload) fails with 409.
      await this.cluster.apply(
        kind,
        {
          apiVersion: 'apps/v1',
          kind: workload.kind,
          metadata: { name: workload.name, namespace: workload.namespace, ...(workload.resourceVersion ? { resourceVersion: workload.resourceVersion } : {}) },
          spec: { template: { metadata: { annotations: { [TEMPLATE_GENERATIONS]: value } } } },
        },
        { force: true },
      );
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }
}
