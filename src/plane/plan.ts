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
  /**
   * The object converged and only the clock changes it at `requeueAfter` (a ControlPlane whose admin credential
   * expires): a pass with the same inputs before then has nothing to do. @default false: a requeue retries a wait
   */
  readonly steady?: boolean;
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

/**
 * An order on a target cluster is reconciled again every 10 minutes at the latest (spec, Conditions: "An order on a
 * target cluster is reconciled again every 10 minutes at the latest"). Its cluster's watches normally wake it within
 * seconds; this bound is the floor under a watch of a remote API server that stalls without an error.
 */
export const TARGET_CLUSTER_RECHECK_MS = 10 * 60_000;

/**
 * When an order on `cluster` (empty or absent: the management cluster) is looked at again, given the wake-up its own
 * pass asks for (absent: none): unchanged on the management cluster, no later than {@link TARGET_CLUSTER_RECHECK_MS} on a
 * target cluster.
 */
export function requeueOn(cluster: string | undefined, requeueAfter: number | undefined): number | undefined {
  if (!cluster) return requeueAfter;
  return requeueAfter === undefined ? TARGET_CLUSTER_RECHECK_MS : Math.min(requeueAfter, TARGET_CLUSTER_RECHECK_MS);
}
