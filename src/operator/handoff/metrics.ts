/**
 * The consumer handoff's metrics, in the operator's registry, per order (labels: the order's namespace and name, never
 * a workload's secret or an id): the workloads it rolled, and how many of its opted-in workloads have not finished
 * their rollout to the delivered generation, pending and overdue (past the warning time of the grace period).
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export class HandoffMetrics {
  private readonly rolls: Counter<'namespace' | 'name'>;
  private readonly pending: Gauge<'namespace' | 'name'>;
  private readonly overdue: Gauge<'namespace' | 'name'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const labelNames = ['namespace', 'name'] as const;
    this.rolls = new Counter({ name: 'keystone_appcred_handoff_rolls_total', help: 'Opted-in workloads rolled to a delivered generation, by order', labelNames, registers });
    this.pending = new Gauge({ name: 'keystone_appcred_handoff_rollouts_pending', help: 'Opted-in workloads whose rollout to the delivered generation has not finished, by order', labelNames, registers });
    this.overdue = new Gauge({
      name: 'keystone_appcred_handoff_rollouts_overdue',
      help: 'Opted-in workloads whose rollout has not finished a safety margin (half the grace period) before previousCredentialDeleteAt, by order',
      labelNames,
      registers,
    });
  }

  rolled(namespace: string, name: string): void {
    this.rolls.inc({ namespace, name });
  }

  /** The order's pending and overdue counts after a pass. */
  observed(namespace: string, name: string, pending: number, overdue: number): void {
    this.pending.set({ namespace, name }, pending);
    this.overdue.set({ namespace, name }, overdue);
  }

  /** Drops an order's gauges (delivering nothing), or with `deleted` every series of it, its roll count included. */
  forget(namespace: string, name: string, deleted = false): void {
    this.pending.remove({ namespace, name });
    this.overdue.remove({ namespace, name });
    if (deleted) this.rolls.remove({ namespace, name });
  }
}
