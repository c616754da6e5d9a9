/**
 * How a pass fails (./runner.ts): each error carries the status the pass recorded, or would have recorded when the write
 * failed too, so what a face reports follows what the order's status says.
 */
import type { KeystoneApplicationCredentialStatus } from '../api';
import type { Action } from './model';

/**
 * A pass that failed: its error carries the status the pass recorded, or would have recorded when the write failed too,
 * so that what a face reports (the operator's metrics) follows what the order's status says whether the pass succeeded
 * or not (a backup refused, Keystone down: the conditions name it while every pass fails).
 */
export interface FailedPass {
  readonly status: KeystoneApplicationCredentialStatus;
}

/** The status a failed pass recorded (or would have), when its error is one of the runner's. */
export function statusOfFailure(error: unknown): KeystoneApplicationCredentialStatus | undefined {
  return error instanceof ObservationError || error instanceof ActionError || error instanceof NotConvergedError ? error.status : undefined;
}

/** A pass could not observe all it needs (Keystone or the backup unreachable); the recorded conditions say so. */
export class ObservationError extends Error implements FailedPass {
  constructor(
    message: string,
    readonly status: KeystoneApplicationCredentialStatus,
  ) {
    super(message);
    this.name = 'ObservationError';
  }
}

/** An action failed; the message names the action and generation and carries the cause's (secret-free) message. */
export class ActionError extends Error implements FailedPass {
  constructor(
    readonly action: Action,
    override readonly cause: unknown,
    readonly status: KeystoneApplicationCredentialStatus,
  ) {
    super(actionFailure(action, cause));
    this.name = 'ActionError';
  }
}

/** What an {@link ActionError} says: the action, its generation and the cause's (secret-free) message. */
export const actionFailure = (action: Action, cause: unknown): string =>
  `${action.type}${'generation' in action ? ` generation ${action.generation}` : ''} failed: ${cause instanceof Error ? cause.message : String(cause)}`;

/** The pass did not converge within its steps; the status is what the steps that succeeded established. */
export class NotConvergedError extends Error implements FailedPass {
  constructor(
    message: string,
    readonly status: KeystoneApplicationCredentialStatus,
  ) {
    super(message);
    this.name = 'NotConvergedError';
  }
}
