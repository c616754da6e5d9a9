/**
 * Conditions of the identity-plane kinds: `setCondition` of src/api for the plane's condition types, and the aggregate
 * `Ready`, which is True/AllReady when every sub-condition is True and otherwise carries the first failing
 * sub-condition's reason (so a held deletion reads `Ready=False/ReferencedByApplicationCredentials`, as the design says).
 */
import { setCondition, type Condition, type ConditionType } from '../api';
import { PLANE_READY_REASON } from './reasons';

/** One condition to report. */
export interface Verdict {
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** Sets `type` (any condition type) keeping `lastTransitionTime` when the status did not change. */
export function setPlaneCondition(conditions: readonly Condition[] | undefined, type: string, verdict: Verdict, now: Date, observedGeneration?: number): Condition[] {
  // src/api types `ConditionUpdate.type` with the KeystoneApplicationCredential's three types; the rule is the same.
  return setCondition(conditions, { type: type as ConditionType, ...verdict }, now, observedGeneration);
}

/** Sets every sub-condition, then `Ready` from them. */
export function report(
  conditions: readonly Condition[] | undefined,
  verdicts: ReadonlyArray<readonly [type: string, verdict: Verdict]>,
  now: Date,
  observedGeneration?: number,
): Condition[] {
  let out = conditions ? [...conditions] : [];
  for (const [type, verdict] of verdicts) out = setPlaneCondition(out, type, verdict, now, observedGeneration);
  const failing = verdicts.find(([, v]) => v.status !== 'True');
  const ready: Verdict = failing
    ? { status: 'False', reason: failing[1].reason, message: `${failing[0]}: ${failing[1].message}` }
    : { status: 'True', reason: PLANE_READY_REASON, message: verdicts.map(([t]) => t).join(' and ') + (verdicts.length > 1 ? ' are True' : ' is True') };
  return setPlaneCondition(out, 'Ready', ready, now, observedGeneration);
}

/** The condition of a type, if reported. */
export function conditionOf(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Whether a condition of this type is True. */
export function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return conditionOf(conditions, type)?.status === 'True';
}
