/**
 * The shape every identity-plane `decide` returns, as `src/lifecycle` does for the credential: the status to record
 * once the actions succeeded, the actions in order (small and idempotent), and when to look again if nothing else
 * happens. A `decide` never performs I/O and never reads the clock: `now` is an argument.
 */

/** What a `decide` returns. */
export interface PlanePlan<S, A> {
  /** The status to record once every action has succeeded. */
  readonly status: S;
  /** The actions of this step, in order; empty when the order has converged for now. */
  readonly actions: readonly A[];
  /** Milliseconds until the order should be looked at again; absent: only an event wakes it. */
  readonly requeueAfter?: number;
}

/** The finalizer actions every order kind shares. */
export type FinalizerAction =
  /** Install the kind's teardown finalizer (the namespace is assigned). */
  | { readonly type: 'add-finalizer'; readonly why: string }
  /** Teardown is done: drop the finalizer, the API server deletes the order. */
  | { readonly type: 'release'; readonly why: string };

/** How long a wait that no watched object ends is looked at again (a hold, a failure that is no Keystone outage). */
export const RECHECK_MS = 5 * 60_000;
/** How long a Keystone outage is looked at again. */
export const UNREACHABLE_RECHECK_MS = 30_000;
