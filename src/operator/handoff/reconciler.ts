/**
 * The consumer handoff's driver: for one KeystoneApplicationCredential it observes what the delivered Secret carries
 * (the order's status, from the cache) and the workloads that opted in for it (the {@link WorkloadPort}), decides with
 * the pure rules of src/handoff, and acts: rolls the workloads, records an Event per rolled workload and a Warning per
 * overdue one, sets the metrics, and asks to be woken at the warning time. It writes nothing to the order.
 *
 * The warnings given are remembered in memory (one per workload and generation, see src/handoff `warningKey`); after a
 * restart an overdue workload is warned about once more. The rolls need no memory: the pod template records the generation.
 */
import { EventReason, eventOf, type KeystoneApplicationCredential, type ReasonedEvent } from '../../api';
import type { ClusterReader, EventSpec } from '../../kube/cluster';
import { Kinds } from '../../kube/kinds';
import { objectKey } from '../../kube/object';
import { decide, deliveredOf, TEMPLATE_GENERATIONS, type Overdue, type Roll, type WorkloadPort } from '../../handoff';
import { errorMessage, silentLogger, type Logger } from '../runtime/log';
import type { HandoffMetrics } from './metrics';

/** The Event reasons of the handoff (on the order), from the table of every Event reason (src/api/events.ts). */
export const HandoffReason = {
  /** Normal: a workload's pod template now carries the delivered generation. */
  Rolled: EventReason.WorkloadRolled,
  /** Warning: a workload has not finished its rollout a safety margin before the superseded credential is deleted. */
  Overdue: EventReason.RolloutOverdue,
} as const;

/** What the driver runs with. */
export interface HandoffDeps {
  /** Where the orders are read (the cache). */
  readonly reads: ClusterReader;
  /** The workloads of the orders' cluster. */
  readonly workloads: WorkloadPort;
  /** Records an Event about the order (best effort). */
  readonly event: (order: KeystoneApplicationCredential, event: EventSpec) => Promise<void>;
  readonly metrics?: HandoffMetrics;
  readonly logger?: Logger;
  /** @default () => new Date() */
  readonly clock?: () => Date;
}

/** The outcome of one pass. */
export interface HandoffOutcome {
  /** Look again after this many milliseconds (the warning time), if nothing happens first. */
  readonly requeueAfterMs?: number;
  /** Workloads rolled. */
  readonly rolled: number;
  /** Warnings recorded. */
  readonly warned: number;
}

export class HandoffReconciler {
  /** The warnings given, by `warningKey`, per order. */
  private readonly warned = new Map<string, Set<string>>();
  /**
   * Per order, the resourceVersion each of its workloads had when this process rolled it. While the cache still shows
   * that version it lags behind the roll (the order's next status write can come first), and the roll is not sent again
   * only to meet a 409.
   */
  private readonly rolledFrom = new Map<string, Map<string, string>>();
  private readonly clock: () => Date;
  private readonly logger: Logger;

  constructor(private readonly deps: HandoffDeps) {
    this.clock = deps.clock ?? (() => new Date());
    this.logger = deps.logger ?? silentLogger;
  }

  /** One pass for the order `namespace/name`. Throws when a roll failed (the queue retries with backoff). */
  async reconcile(key: { readonly namespace: string; readonly name: string }): Promise<HandoffOutcome> {
    const id = objectKey(key.namespace, key.name);
    const order = this.deps.reads.get(Kinds.KeystoneApplicationCredential, key.namespace, key.name);
    const delivered = order ? deliveredOf(order) : undefined;
    if (!order || !delivered) {
      this.warned.delete(id);
      this.rolledFrom.delete(id);
      this.deps.metrics?.forget(key.namespace, key.name, !order);
      return { rolled: 0, warned: 0 };
    }
    const now = this.clock();
    const warned = this.warned.get(id) ?? new Set<string>();
    const workloads = await this.deps.workloads.consumers(key.namespace, delivered.secretName);
    const plan = decide({ namespace: key.namespace, delivered, workloads, now, warned });

    // Kept only for the workloads still observed at the version they were rolled from.
    const before = this.rolledFrom.get(id);
    const rolledFrom = new Map<string, string>();
    for (const w of workloads) {
      const from = before?.get(workloadId(w));
      if (from !== undefined && from === w.resourceVersion) rolledFrom.set(workloadId(w), from);
    }
    this.rolledFrom.set(id, rolledFrom);
    let rolled = 0;
    let failure: unknown;
    for (const roll of plan.rolls) {
      const wid = workloadId(roll.workload);
      if (roll.workload.resourceVersion !== undefined && rolledFrom.get(wid) === roll.workload.resourceVersion) continue;
      try {
        if (await this.deps.workloads.roll(roll.workload, roll.value)) {
          if (roll.workload.resourceVersion !== undefined) rolledFrom.set(wid, roll.workload.resourceVersion);
          rolled++;
          this.deps.metrics?.rolled(key.namespace, key.name);
          this.logger.info('handoff', { kind: 'KeystoneApplicationCredential', key: id, workload: `${roll.workload.kind}/${roll.workload.name}`, generation: roll.generation, outcome: 'rolled' });
          await this.emit(order, rolledEvent(roll));
        }
      } catch (error) {
        this.logger.warn('handoff', { kind: 'KeystoneApplicationCredential', key: id, workload: `${roll.workload.kind}/${roll.workload.name}`, generation: roll.generation, outcome: 'failed', error: errorMessage(error) });
        failure ??= error;
      }
    }
    for (const overdue of plan.warnings) {
      warned.add(overdue.key);
      this.logger.warn('handoff', { kind: 'KeystoneApplicationCredential', key: id, workload: `${overdue.workload.kind}/${overdue.workload.name}`, generation: overdue.generation, outcome: 'overdue', why: overdue.why });
      await this.emit(order, overdueEvent(overdue));
    }
    // Only the warnings of the generation now delivered are kept: a later switch starts afresh.
    this.warned.set(id, new Set([...warned].filter((k) => k.endsWith(`@${delivered.generation}`))));
    this.deps.metrics?.observed(key.namespace, key.name, plan.pending, plan.overdue.length);
    if (failure !== undefined) throw failure;
    const wakeAt = plan.wakeAt?.getTime();
    return { rolled, warned: plan.warnings.length, ...(wakeAt !== undefined ? { requeueAfterMs: Math.max(0, wakeAt - now.getTime()) } : {}) };
  }

  private async emit(order: KeystoneApplicationCredential, event: ReasonedEvent): Promise<void> {
    await this.deps.event(order, event).catch((error: unknown) => this.logger.warn('recording an event failed', { reason: event.reason, error: errorMessage(error) }));
  }
}

/** A workload's identity in this process's memory. */
function workloadId(w: { readonly kind: string; readonly namespace: string; readonly name: string }): string {
  return `${w.kind}/${w.namespace}/${w.name}`;
}

/** The Event of a rolled workload. */
function rolledEvent(roll: Roll): ReasonedEvent {
  const from = roll.from !== undefined ? ` from generation ${roll.from}` : '';
  const reloader = roll.reloader ? `; its annotation ${roll.reloader} makes Stakater Reloader roll it as well on the Secret's change: drop one of the two` : '';
  return eventOf(HandoffReason.Rolled, `rolled ${roll.workload.kind} ${roll.workload.name}${from} to generation ${roll.generation} of Secret ${roll.secretName} (pod-template annotation ${TEMPLATE_GENERATIONS})${reloader}`);
}

/** The Warning of an overdue workload. */
function overdueEvent(overdue: Overdue): ReasonedEvent {
  return eventOf(HandoffReason.Overdue, `${overdue.workload.kind} ${overdue.workload.name} has not finished its rollout to generation ${overdue.generation}: ${overdue.why}; generation ${overdue.previousGeneration} is deleted in Keystone at ${overdue.deleteAt.toISOString()}`);
}
