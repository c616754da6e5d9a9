/**
 * `decide(order, observations, now)`: the whole credential lifecycle as one pure function.
 *
 * It never performs I/O and never reads the clock. Given what one pass observed it returns the next status, the ordered
 * idempotent actions that make that status true, and the time to look again. A driver runs the actions, records the
 * status, observes again and calls `decide` again until no action is left; if it dies between two actions, the next pass
 * picks up where it stopped, because every fact `decide` needs is observed, not remembered.
 *
 * The rules live beside it: an admitted order's step (step.ts: rotation, grace, repair, backed by rotation.ts and
 * recorded.ts), its conditions (conditions.ts), teardown (teardown.ts), which credentials are the order's
 * (ownership.ts, applied when the pass observes).
 */
import { ConditionType, ReadyReason, setCondition, type AdmissionReason, type KeystoneApplicationCredentialStatus } from '../api';
import { migration, recordMigration } from './migration';
import type { Failure, LifecycleOrder, Observations, Plan } from './model';
import { Step } from './step';
import { teardown } from './teardown';

type Status = KeystoneApplicationCredentialStatus;

/** Decides the next step of `order`; see the module comment. */
export function decide(order: LifecycleOrder, observations: Observations, now: Date): Plan {
  const observed = observedStatus(order);
  if (order.deleting) return teardown(observed, observations, order.spec.deletionPolicy);
  if (observations.admission) return movedBackup(frozen(observed, observations.admission.reason, observations.admission.message, now), observations, order.backupPath);
  return new Step(order, observations, now, observed).plan();
}

/**
 * The status to record when an action of the pass failed: what was observed before the pass acted (the status rebuilt
 * from it), with conditions that say what is wrong: `CredentialError` for a Keystone or parked-secret step,
 * `BackupNotSynced` for the backup, `DeliveryError` for the Secret. `secretName` stays only while the observed Secret
 * carries the delivered credential. The next pass observes again and continues from there.
 */
export function decideFailure(order: LifecycleOrder, observations: Observations, failure: Failure, now: Date): KeystoneApplicationCredentialStatus {
  const observed = observedStatus(order);
  if (order.deleting || observations.admission) return observed;
  return new Step(order, observations, now, observed, failure).failed();
}

function observedStatus(order: LifecycleOrder): Status {
  return { ...order.status, observedGeneration: order.generation ?? order.status.observedGeneration };
}

/**
 * A frozen order's backup still moves to its own path after an upgrade (migration.ts): the same document in OpenBao,
 * no Keystone call, nothing the consumer sees (the status records the move); everything else of the order stays as it is.
 */
function movedBackup(plan: Plan, world: Observations, path: string | undefined): Plan {
  const live = plan.status.credentialGeneration;
  const deliveredParked = world.generations.some((r) => r.generation === live && r.parked);
  const { actions, done } = migration({
    status: plan.status,
    deliveredParked,
    ...(world.backup ? { backup: world.backup } : {}),
    ...(world.formerBackup ? { former: world.formerBackup } : {}),
    deliverable: world.undeliverable === undefined,
  });
  return { ...plan, status: recordMigration(plan.status, path, done), actions: [...plan.actions, ...actions] };
}

/**
 * Consent missing (or the order otherwise not admitted): frozen. Nothing is created, rotated, delivered, repaired or
 * swept, and the schedule pauses; what the order has stays (spec, Consent).
 */
function frozen(status: Status, reason: AdmissionReason, message: string, now: Date): Plan {
  let conditions = status.conditions;
  for (const type of [ConditionType.CredentialReady, ConditionType.DeliveryReady]) {
    conditions = setCondition(conditions, { type, status: 'False', reason, message }, now, status.observedGeneration);
  }
  conditions = setCondition(conditions, { type: ConditionType.Ready, status: 'False', reason: ReadyReason.NotAllReady, message }, now, status.observedGeneration);
  return { status: { ...status, conditions }, actions: [] };
}
