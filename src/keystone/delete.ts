/**
 * Deletes that converge: "it is gone" is the goal, so a 404 is an answer, not a failure. Reconcilers re-run deletes
 * after crashes and must not fail on resources an earlier pass already removed.
 */
import { isKeystoneError } from './errors';
import type { KeystoneSession } from './session';

/** Outcome of a delete: both mean the resource no longer exists. */
export type DeleteOutcome = 'deleted' | 'already-gone';

/** `DELETE path` (relative to the auth URL, or absolute); 404 is `already-gone`, any other failure is thrown. */
export async function deleteResource(session: KeystoneSession, path: string): Promise<DeleteOutcome> {
  try {
    await session.request({ method: 'DELETE', path: session.transport.pathOf(path) });
    return 'deleted';
  } catch (error) {
    if (isKeystoneError(error, 'not-found')) return 'already-gone';
    throw error;
  }
}
