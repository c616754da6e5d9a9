/**
 * The workloads of the operator's cluster as the handoff's {@link WorkloadPort}: Deployments, StatefulSets and DaemonSets
 * (`apps/v1`) cached by the manager's informers, found by an index on their opt-in annotation (`<namespace>/<Secret>`),
 * and rolled by a server-side apply of the one pod-template annotation the handoff owns.
 *
 * Only {@link watchWorkloads} decides how workloads are cached. The index and the mapper read nothing but
 * `metadata.annotations`, so the cache can become a metadata-only one (PartialObjectMetadata) without touching them:
 * then {@link ClusterWorkloads.consumers} reads the full object of each opted-in workload from the API server (the
 * template and the status are not in the metadata), and the cache of the others holds their metadata only.
 */
import { Kinds } from '../../kube/kinds';
import type { Cluster, ClusterReader } from '../../kube/cluster';
import { isNotFound } from '../../kube/errors';
import { defineKind, objectKey, type KubeObject, type ObjectKey, type ResourceKind } from '../../kube/object';
import { TEMPLATE_GENERATIONS, optInOf, orderOfSecret, workloadOf, type RawWorkload, type Workload, type WorkloadKind, type WorkloadPort, type WorkloadRef } from '../../handoff';
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
 * Caches the workload kinds with the consumer index: the one place that decides how workloads are watched. Call before
 * the manager starts, and register the watches ({@link workloadWatches}) with the handoff's controller.
 */
export function watchWorkloads(manager: Manager): void {
  for (const kind of Object.values(WorkloadKinds)) {
    manager.cache(kind);
    manager.index(kind, CONSUMERS_INDEX, consumerIndex);
  }
}

/** The watches of the handoff's controller: a change of an opted-in workload requeues the orders it consumes. */
export function workloadWatches() {
  return Object.values(WorkloadKinds).map((kind) => ({ kind, map: ordersConsumedBy }));
}

/** The workloads of the cluster the operator runs on, on its caches. */
export class ClusterWorkloads implements WorkloadPort {
  constructor(private readonly cluster: Cluster) {}

  async consumers(namespace: string, secret: string): Promise<readonly Workload[]> {
    const value = objectKey(namespace, secret);
    const out: Workload[] = [];
    for (const kind of Object.values(WorkloadKinds)) {
      for (const object of this.cluster.list(kind, { namespace, index: { name: CONSUMERS_INDEX, value } })) {
        const workload = workloadOf(object);
        if (workload) out.push(workload);
      }
    }
    return out;
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
