/**
 * Whether an order is settled by what a face can see without Keystone: its recorded status, its parked secrets and its
 * delivered Secret. A settled order needs no Keystone observation when a process meets it for the first time (after a
 * restart, or on the standby that took over): it gets one at its next wake-up or change, as it would have without the
 * restart. Without this rule every converged order cost a password login and a credential list after each restart or
 * failover, at the moment the platform is already disturbed.
 *
 * The rule trusts the status only where the cache proves it: the status is a hint (recorded.ts), so it counts only
 * when the Secret and the parked secrets agree with it, and when nothing a pass would do is due by the clock.
 * Everything else takes the full pass, as before:
 * - a status behind the Secret (a switch that crashed before its status write), a Secret that does not carry the
 *   recorded credential whole, or one that is absent or foreign;
 * - a generation parked above the delivered one (a crash between park and record, or a rotation under way) or any
 *   parked generation other than the delivered one and the superseded one in grace (a stray, a recorded failure);
 * - a spec the status has not observed, a raised `credentialGeneration` (unless a grace period runs: the raise waits
 *   for its end, as every trigger does, "No rotation starts while a grace period runs", and the order wakes then), any
 *   condition not True, except a standing refusal of the order's settings (issue 48: `DefaultsRefused`,
 *   `RotationWindowRefused`; ./conditions.ts `standingRefusal`) that a pass would record again word for word for the
 *   same spec, policy and clock: the credential is valid and delivered, so the order is checked as any settled order,
 *   and a change of the spec or of the fleet defaults (a new refusal, or none) un-settles it;
 * - a recorded `status.policy` that is not the policy in force (issue 48: the fleet defaults changed);
 * - a deadline reached: the schedule, the end of the grace period, the delivered credential's expiry;
 * - a recorded `nextRotation` that is not the time the schedule rotates next (issue 48: a window or jitter moved it);
 * - a revoke request not acted on yet (issue 49), or one being carried out;
 * - an order being deleted, not admitted or gated.
 * What only Keystone can show (a credential deleted there by hand) is noticed at the next wake-up or change (once the
 * process's last list of the user's credentials is older than its max age: src/keystone/known-credentials.ts).
 */
import { ConditionType, DeliveryReason } from '../api';
import { readyOf, standingRefusal, type ConditionVerdict } from './conditions';
import type { Admission, DeliveryObservation, Gate, LifecycleOrder } from './model';
import type { ParkedGeneration } from './ports';
import * as rotation from './rotation';
import { sameJson } from './same';

/** What a face can see of an order without Keystone. */
export interface CachedObservations {
  /** Every parked generation of the order (its secret, or a recorded failure). */
  readonly parked: readonly ParkedGeneration[];
  /**
   * The delivered Secret; `intact` when its three keys are the document of the credential it names and that
   * generation's parked secret.
   */
  readonly delivery: DeliveryObservation;
  readonly admission?: Admission;
  readonly gate?: Gate;
}

/** The verdict: settled until `wakeAt` (if anything is scheduled), or not, and why. */
export type Settled = { readonly settled: true; readonly wakeAt?: Date } | { readonly settled: false; readonly why: string };

const no = (why: string): Settled => ({ settled: false, why });

/** Whether `order` is settled by `cached` at `now`; see the module comment. */
export function settled(order: LifecycleOrder, cached: CachedObservations, now: Date): Settled {
  const status = order.status;
  if (order.deleting) return no('being deleted');
  if (cached.admission) return no('not admitted');
  if (cached.gate) return no('gated');
  if (order.generation !== undefined && status.observedGeneration !== order.generation) return no('the spec changed since the status was recorded');
  if (!sameJson(status.policy, order.policy?.status)) return no('status.policy is not the policy in force (fleet defaults changed)');
  const live = status.credentialGeneration;
  const id = status.credentialID;
  if (live === undefined || id === undefined) return no('no credential recorded');
  const conditions = expectedConditions(order, live, now);
  for (const [type, expected] of conditions) {
    const recorded = status.conditions?.find((c) => c.type === type);
    if (expected === undefined) {
      if (recorded?.status !== 'True') return no(`${type} is not True`);
    } else if (recorded?.status !== expected.status || recorded.reason !== expected.reason || recorded.message !== expected.message) {
      return no(`${type} is not the standing refusal a pass records (${expected.reason})`);
    }
  }
  // A raise in a grace period waits for its end (the spec's Rotation section): a pass now would start nothing.
  const raised = order.spec.credentialGeneration > live;
  if (raised && rotation.mayStart(status)) return no('spec.credentialGeneration is raised');
  if (order.secretName !== undefined && status.secretName !== order.secretName) return no('the status does not name the delivered Secret');
  const delivery = cached.delivery;
  if (delivery.state !== 'delivered' || delivery.credentialId !== id || !delivery.intact) return no('the Secret does not carry the recorded credential whole');
  const previous = rotation.graceRunning(status) ? status.previousCredentialGeneration : undefined;
  for (const p of cached.parked) {
    if (p.failure !== undefined) return no(`generation ${p.generation} has a recorded failure`);
    if (p.generation > live) return no(`generation ${p.generation} is parked above the delivered generation ${live}`);
    if (p.generation !== live && p.generation !== previous) return no(`generation ${p.generation} is parked and neither delivered nor in grace`);
  }
  if (!cached.parked.some((p) => p.generation === live && p.parked)) return no(`the delivered generation ${live} is not parked`);
  if (rotation.sweepDue(status, now)) return no('the grace period is over');
  const expiresAt = status.credentialExpiresAt === undefined ? undefined : new Date(status.credentialExpiresAt);
  const record = { generation: live, parked: true, credential: { id, ...(expiresAt ? { expiresAt } : {}) } };
  // Any other trigger than the raise that waits (the schedule, the expiry).
  const why = rotation.trigger(raised ? { ...order, spec: { ...order.spec, credentialGeneration: live } } : order, record, now);
  if (why !== undefined) return no(`a rotation is due (${rotation.describe(why, order)})`);
  if (rotation.revokePending(order)) return no('a revoke request is pending');
  // A window or jitter (issue 48) may place the next rotation elsewhere than the recorded time (a fleet default that
  // changed, a late pass that waits for the next window): the pass records the real time.
  const due = rotation.dueAt(order, now);
  if ((due === undefined) !== (status.nextRotation === undefined) || (due !== undefined && due.getTime() !== new Date(status.nextRotation as string).getTime())) {
    return no('status.nextRotation is not the time the schedule rotates next');
  }
  const wakeAt = rotation.wakeAt(status, now);
  return { settled: true, ...(wakeAt ? { wakeAt } : {}) };
}

/**
 * The conditions a full pass records for a delivered order with nothing due: each one True (undefined: its reason and
 * message are not checked, as the cache cannot see what Keystone holds beside the order's credentials), or, under a
 * standing refusal of the order's settings, `CredentialReady` as ./conditions.ts words the refusal and `Ready` False
 * naming it.
 */
function expectedConditions(order: LifecycleOrder, live: number, now: Date): ReadonlyMap<string, ConditionVerdict | undefined> {
  const refusal = standingRefusal(order, live, now);
  return new Map([
    [ConditionType.CredentialReady, refusal],
    [ConditionType.DeliveryReady, undefined],
    [ConditionType.Ready, refusal && readyOf(refusal, { status: 'True', reason: DeliveryReason.Delivered })],
  ]);
}
