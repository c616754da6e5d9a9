/**
 * The consumer handoff's controller: a second controller on KeystoneApplicationCredentials (the order's informer is
 * shared with the credential reconciler's), woken by every change of an order (its switch is a status write), by every
 * change of a workload that opted in for its delivered Secret (the roll's progress is a status write of the workload),
 * at the warning time of a grace period, and at start-up, when every order gets a pass: a roll a crash left undone is
 * done then.
 */
import { Kinds } from '../../kube/kinds';
import type { Manager } from '../runtime/manager';
import { HandoffMetrics } from './metrics';
import { HandoffReconciler } from './reconciler';
import { ClusterWorkloads, watchWorkloads, workloadWatches } from './workloads';

/** The controller's name in logs and metrics. */
export const HANDOFF_CONTROLLER = 'ConsumerHandoff';

/** Registers the handoff's controller on `manager` (before it starts). */
export function registerHandoff(manager: Manager, options: { readonly clock?: () => Date } = {}): HandoffReconciler {
  watchWorkloads(manager);
  const handoff = new HandoffReconciler({
    reads: manager.cluster,
    workloads: new ClusterWorkloads(manager.cluster),
    event: (order, event) => manager.cluster.event(order, event),
    metrics: new HandoffMetrics(manager.metrics.registry),
    logger: manager.logger,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  manager.controller({
    name: HANDOFF_CONTROLLER,
    kind: Kinds.KeystoneApplicationCredential,
    reconcile: async ({ namespace, name }) => {
      const outcome = await handoff.reconcile({ namespace: namespace ?? '', name });
      return {
        ...(outcome.requeueAfterMs !== undefined ? { requeueAfter: outcome.requeueAfterMs } : {}),
        reason: outcome.rolled > 0 ? 'Rolled' : outcome.warned > 0 ? 'Overdue' : 'Unchanged',
      };
    },
    watches: workloadWatches(),
  });
  return handoff;
}
