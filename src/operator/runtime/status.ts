/**
 * Writes a status only when it changed: conditions are compared without `lastTransitionTime` (and in any order), and a
 * condition whose status did not change keeps its `lastTransitionTime`; the write goes through the status subresource
 * guarded by the object's resourceVersion (a stale object fails with 409 and the queue retries). Successful writes
 * record Events for the conditions that transitioned.
 */
import { setCondition, type Condition, type ConditionUpdate } from '../../api/conditions';
import type { Cluster, WithStatus } from '../../kube/cluster';
import { jsonEqual } from '../../kube/json';
import type { KubeObject, ResourceKind } from '../../kube/object';
import type { EventRecorder } from './events';

/** A condition to report: any type of any kind (the api's ConditionUpdate is KeystoneApplicationCredential's). */
export interface ConditionInput {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

type WithConditions = { readonly conditions?: readonly Condition[] };

const withoutTime = (conditions: readonly Condition[] | undefined) =>
  [...(conditions ?? [])].map(({ lastTransitionTime: _t, ...rest }) => rest).sort((a, b) => a.type.localeCompare(b.type));

/** Same conditions, ignoring `lastTransitionTime` and order. */
export function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[] | undefined): boolean {
  return jsonEqual(withoutTime(a), withoutTime(b));
}

/** Same status: every field equal, conditions compared with {@link sameConditions}. */
export function sameStatus(a: unknown, b: unknown): boolean {
  const { conditions: ca, ...ra } = (a ?? {}) as WithConditions;
  const { conditions: cb, ...rb } = (b ?? {}) as WithConditions;
  return sameConditions(ca, cb) && jsonEqual(ra, rb);
}

/**
 * `current` with `updates` applied (setCondition's rule: `lastTransitionTime` moves only with the status), each carrying
 * the object's generation as `observedGeneration`.
 */
export function applyConditions(object: KubeObject, current: readonly Condition[] | undefined, updates: readonly ConditionInput[], now: Date): Condition[] {
  let conditions = [...(current ?? [])];
  for (const update of updates) conditions = setCondition(conditions, update as ConditionUpdate, now, object.metadata.generation);
  return conditions;
}

/** `next` with each condition's `lastTransitionTime` taken from `old` when its status did not change. */
function keepTransitionTimes(old: readonly Condition[] | undefined, next: readonly Condition[] | undefined): Condition[] | undefined {
  return next?.map((c) => {
    const before = old?.find((o) => o.type === c.type);
    return before && before.status === c.status ? { ...c, lastTransitionTime: before.lastTransitionTime } : c;
  });
}

export interface StatusWrite<T> {
  /** Whether the API was called. */
  readonly written: boolean;
  /** The object after the write (or as given). */
  readonly object: T;
}

export class StatusWriter {
  constructor(
    private readonly cluster: Cluster,
    private readonly recorder?: EventRecorder,
  ) {}

  /** Writes `status` when it differs from `object.status`; records Events for transitioned conditions. */
  async write<T extends WithStatus>(kind: ResourceKind<T>, object: T, status: NonNullable<T['status']>): Promise<StatusWrite<T>> {
    const oldConditions = (object.status as WithConditions | undefined)?.conditions;
    const nextConditions = (status as WithConditions).conditions;
    const next = nextConditions ? ({ ...status, conditions: keepTransitionTimes(oldConditions, nextConditions) } as NonNullable<T['status']>) : status;
    if (sameStatus(object.status, next)) return { written: false, object };
    const updated = await this.cluster.patchStatus(kind, object, next);
    await this.recorder?.conditionsChanged(updated, oldConditions, nextConditions);
    return { written: true, object: updated };
  }
}
