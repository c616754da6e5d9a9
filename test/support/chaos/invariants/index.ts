/**
 * The chaos run's invariants: the simulation's (issue 46's list; test/sim/invariants/), as pure functions of what the
 * run observed at the real components (../timeline.ts). Each returns the violations it finds; the names are the
 * simulation's, so a finding reads the same in both.
 */
import type { Timeline, Violation } from '../timeline';
import { atMostTwo, backupHoldsDelivered, foreignUntouched, heldCredentialKept, sweptInTime, tenantEditRepaired } from './credentials';
import { outageCallsBounded, restartCostsNothing, waitersRecover } from './calls';
import { reasonSeries } from './observability';

export { noSecretAnywhere } from './observability';
export { judgeRejection, REPAIR_MS, SWEEP_SLACK_MS } from './credentials';

/** An invariant over a timeline. */
export interface TimelineInvariant {
  readonly name: string;
  /** The rule, as the issue words it. */
  readonly description: string;
  check(timeline: Timeline): Violation[];
}

export const INVARIANTS: readonly TimelineInvariant[] = [
  { name: 'held-credential-kept', description: 'no credential that a delivered Secret, a backup or a consumer holds is deleted before its grace ends (the consumer probe never fails)', check: heldCredentialKept },
  { name: 'foreign-untouched', description: "credentials the operator did not make are never deleted", check: foreignUntouched },
  { name: 'at-most-two-credentials', description: '≤ 2 credentials per order', check: atMostTwo },
  { name: 'backup-holds-delivered', description: 'the backup holds the delivered credential once a pass succeeds (and before the Secret carries it)', check: backupHoldsDelivered },
  { name: 'swept-in-time', description: "no credential outlives its generation's sweep (+ 60 s)", check: sweptInTime },
  { name: 'tenant-edit-repaired', description: "a tenant's edit of a delivered Secret is undone within 60 s", check: tenantEditRepaired },
  { name: 'restart-costs-nothing', description: 'converged orders cost 0 Keystone and 0 OpenBao calls at a restart', check: restartCostsNothing },
  { name: 'waiters-recover-in-60s', description: 'an order waiting on a dependency completes ≤ 60 s after it answers', check: waitersRecover },
  { name: 'outage-calls-bounded', description: '≤ 1 call per waiting order per minute during an outage (plus the probe)', check: outageCallsBounded },
  { name: 'status-reasons-have-series', description: 'every status reason has its metric series', check: reasonSeries },
];

/** Every violation of every invariant, in time order. */
export function checkTimeline(timeline: Timeline): Violation[] {
  return INVARIANTS.flatMap((i) => i.check(timeline)).sort((a, b) => a.at - b.at);
}
