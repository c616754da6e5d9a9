/**
 * Status rules every order kind of the plane shares: the conditions of a frozen or waiting order (every sub-condition
 * carries the shared reason, as the spec's rows "both"), a held deletion, and a failure reported on one sub-condition
 * while the others keep what they said.
 */
import type { Condition } from '../api';
import { conditionOf, report, type Verdict } from './conditions';

/** An order's status as the shared rules touch it. */
export interface OrderStatus {
  readonly conditions?: readonly Condition[];
  readonly observedGeneration?: number;
}

/** `status` with `observedGeneration` = the order's `metadata.generation`. */
export function observed<S extends OrderStatus>(status: S | undefined, generation: number | undefined): S {
  return { ...(status ?? ({} as S)), ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

/** Every sub-condition (and so Ready) False with one reason: a refused consent, an admin wait. */
export function allFalse<S extends OrderStatus>(status: S, types: readonly string[], reason: string, message: string, now: Date): S {
  const verdict: Verdict = { status: 'False', reason, message };
  return { ...status, conditions: report(status.conditions, types.map((t) => [t, verdict] as const), now, status.observedGeneration) };
}

/**
 * `type` set to `verdict`; the other sub-conditions keep what they said (absent ones read False/`pending` with the
 * verdict's reason), and Ready is derived again.
 */
export function override<S extends OrderStatus>(status: S, types: readonly string[], type: string, verdict: Verdict, now: Date): S {
  const verdicts = types.map((t): readonly [string, Verdict] => {
    if (t === type) return [t, verdict];
    const c = conditionOf(status.conditions, t);
    return [t, c ? { status: c.status === 'True' ? 'True' : 'False', reason: c.reason, message: c.message } : verdict];
  });
  return { ...status, conditions: report(status.conditions, verdicts, now, status.observedGeneration) };
}

/** The message of an error, for a condition. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
