/**
 * What the handoff's driver observes and acts through: the workloads of one cluster. The operator implements it on its
 * caches (src/operator/handoff/workloads.ts); an order on another cluster would be served by that cluster's port, so the
 * rules and the driver stay as they are when a cluster dimension is added.
 */
import type { Workload, WorkloadRef } from './workload';

/** The workloads of one cluster, as the handoff needs them. */
export interface WorkloadPort {
  /**
   * The workloads in `namespace` whose opt-in names `secret`, each with its pod template's generations and its rollout
   * state. Reads may come from a cache.
   */
  consumers(namespace: string, secret: string): Promise<readonly Workload[]>;
  /**
   * Writes `value` as the pod template's generations annotation (which rolls the workload), guarded by the workload's
   * resourceVersion as observed: a workload changed since fails with a 409 conflict and the pass is retried with a
   * fresh read. Resolves false when the workload is gone.
   */
  roll(workload: WorkloadRef, value: string): Promise<boolean>;
}
