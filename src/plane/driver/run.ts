/**
 * The step loop every identity-plane driver runs: observe, decide, execute the plan's actions in order, and again
 * until a plan has no actions; then record the status once, and only when it changed. It remembers nothing between
 * passes: if it dies between two actions, the next pass observes the world again and `decide` continues from there.
 *
 * A failure (observing or acting) is decided too, so the order reports it, and is then thrown so the runtime backs off.
 */
import { sameJson } from '../../lifecycle/same';
import type { PlanePlan } from '../plan';
import type { ClusterPort, ObjectKey, ObjectKind, ObjectOf } from '../ports';

/** JSON equality with sorted keys: whether a status write would change anything (src/lifecycle/same.ts). */
export { sameJson };

/** How a pass went. */
export interface PassResult {
  /** Milliseconds until the order should be looked at again; absent: only an event wakes it. */
  readonly requeueAfter?: number;
  /** Converged, and only the clock changes it at `requeueAfter` (see `PlanePlan.steady`). */
  readonly steady?: boolean;
  /** Teardown finished and the finalizer was released. */
  readonly released?: boolean;
  /** The status was written. */
  readonly wroteStatus?: boolean;
  /** Steps (observe → decide → act) the pass took. */
  readonly steps: number;
  /** The actions executed, in order (`type` only: actions carry no secret). */
  readonly actions: readonly string[];
  /** Nothing changed since the object's last converged pass: nothing was observed (see memo.ts). */
  readonly skipped?: boolean;
}

/** A failed pass: the order reports it in its status; the runtime retries with backoff. */
export class PlaneError extends Error {
  constructor(
    readonly kind: ObjectKind,
    readonly key: ObjectKey,
    message: string,
    override readonly cause?: unknown,
  ) {
    super(`${kind} ${key.namespace}/${key.name}: ${message}`);
    this.name = 'PlaneError';
  }
}

/** What a driver hands the loop. */
export interface Steps<O extends { status?: S }, W, A extends { type: string }, S> {
  readonly kind: ObjectKind;
  readonly key: ObjectKey;
  readonly order: O;
  readonly clock: () => Date;
  observe(order: O): Promise<W>;
  decide(order: O, world: W, now: Date): PlanePlan<S, A>;
  /**
   * Executes one action; returns the order as it is afterwards: the object the API server returned when the action
   * wrote the order (a finalizer added, conditioned on `order`'s resourceVersion), else `order`.
   */
  execute(order: O, world: W, action: A): Promise<O>;
  /** The failure a world carries (observation failed), for the error thrown after reporting it. */
  failureOf(world: W): string | undefined;
  /** The world with an action's failure, to report it. */
  withFailure(world: W, action: A, error: unknown): W;
  /**
   * Records the status, decided from `basis`: the order as the API server holds it to the pass's knowledge (the copy
   * the pass began with, or its own finalizer write's result), so the write is conditional on that copy
   * (`ClusterPort.writeStatus`): an order that changed during the pass loses the write with 409 and is decided anew.
   */
  writeStatus(status: S, basis: O): Promise<void>;
  /** Steps before giving up. @default 8 */
  readonly maxSteps?: number;
}

/** Runs one pass (see the module comment). */
export async function runPass<O extends { status?: S }, W, A extends { type: string }, S>(steps: Steps<O, W, A, S>): Promise<PassResult> {
  const original = steps.order.status;
  // The order as stored (its status is never written before the pass ends), and as the next step decides from it.
  let stored = steps.order;
  let order = steps.order;
  const done: string[] = [];
  const record = async (status: S): Promise<boolean> => {
    if (sameJson(status, original)) return false;
    await steps.writeStatus(status, stored);
    return true;
  };
  const max = steps.maxSteps ?? 8;
  for (let step = 1; step <= max; step++) {
    const world = await steps.observe(order);
    const plan = steps.decide(order, world, steps.clock());
    const observedFailure = steps.failureOf(world);
    if (observedFailure !== undefined) {
      await record(plan.status);
      throw new PlaneError(steps.kind, steps.key, observedFailure);
    }
    if (plan.actions.length === 0) {
      const wroteStatus = await record(plan.status);
      return { ...(plan.requeueAfter !== undefined ? { requeueAfter: plan.requeueAfter } : {}), wroteStatus, steps: step, actions: done };
    }
    for (const action of plan.actions) {
      try {
        const after = await steps.execute(order, world, action);
        if (after !== order) {
          stored = { ...after, status: original };
          order = { ...after, status: order.status };
        }
      } catch (error) {
        const failed = steps.decide(order, steps.withFailure(world, action, error), steps.clock());
        await record(failed.status);
        throw new PlaneError(steps.kind, steps.key, `${action.type} failed: ${error instanceof Error ? error.message : String(error)}`, error);
      }
      done.push(action.type);
      if (action.type === 'release') return { released: true, steps: step, actions: done };
    }
    order = { ...order, status: plan.status };
  }
  throw new PlaneError(steps.kind, steps.key, `did not converge in ${max} steps (actions: ${done.join(', ')})`);
}

/**
 * The `add-finalizer` action of every plane driver: written on the pass's copy (conditional on its resourceVersion) and
 * returning the order as the API server returned it, for `Steps.execute`.
 */
export async function addFinalizer<K extends ObjectKind>(orders: Pick<ClusterPort, 'addFinalizer'>, kind: K, key: ObjectKey, order: ObjectOf<K>, finalizer: string): Promise<ObjectOf<K>> {
  const written = await orders.addFinalizer(kind, key, finalizer, order);
  return written ?? { ...order, metadata: { ...order.metadata, finalizers: [...(order.metadata.finalizers ?? []), finalizer] } };
}
