/**
 * Events for the moments a user acts on, not for every step on the way: a condition turning False (or Unknown), new or
 * with another reason, is a Warning; the Ready condition coming back True after it was not is one Normal Event. A
 * condition turning True on the way (a new object's first status, a sub-condition recovering) records nothing, and a
 * steady object (its conditions unchanged pass after pass) writes nothing. Each Event is an API write, and a new order
 * used to post one per condition it passed through. Events are best effort: a failed one is logged, not retried.
 */
import { WARNING_REASONS, type Condition } from '../../api/conditions';
import type { Cluster } from '../../kube/cluster';
import { keyOf, type KubeObject } from '../../kube/object';
import { errorMessage, silentLogger, type Logger } from './log';

/** A condition that is new or whose status or reason changed. */
export interface Transition {
  readonly from?: Condition;
  readonly to: Condition;
}

/** Whether a condition warns: it is not True, or True with a reason that calls for a look (`WARNING_REASONS`). */
function warns(condition: Condition): boolean {
  return condition.status !== 'True' || WARNING_REASONS.has(condition.reason);
}

/**
 * Whether a transition is worth an Event: a condition that warns now (new, or its status or reason changed), or Ready
 * turning True again after it was not.
 */
export function noteworthy({ from, to }: Transition): boolean {
  if (warns(to)) return true;
  return to.type === 'Ready' && from !== undefined && from.status !== 'True';
}

/** The conditions of `next` that are new in, or changed status or reason from, `old`. */
export function conditionTransitions(old: readonly Condition[] | undefined, next: readonly Condition[] | undefined): Transition[] {
  const out: Transition[] = [];
  for (const to of next ?? []) {
    const from = old?.find((c) => c.type === to.type);
    if (!from || from.status !== to.status || from.reason !== to.reason) out.push({ ...(from ? { from } : {}), to });
  }
  return out;
}

export interface EventRecorderOptions {
  /** The Event's action. @default "Reconcile" */
  readonly action?: string;
  /** Which transitions are Warnings. @default a condition that is not True, or True with a reason of `WARNING_REASONS` */
  readonly warning?: (condition: Condition) => boolean;
  /** Only these condition types produce Events. @default every type */
  readonly types?: readonly string[];
  readonly logger?: Logger;
}

export class EventRecorder {
  private readonly logger: Logger;

  constructor(
    private readonly cluster: Cluster,
    private readonly options: EventRecorderOptions = {},
  ) {
    this.logger = options.logger ?? silentLogger;
  }

  /**
   * Records one Event per {@link noteworthy} transition from `old` to `next`, all at once (posting them one after the
   * other held the pass for as many round trips); returns how many were recorded. A failed Event is logged and does
   * not fail the caller.
   */
  async conditionsChanged(object: KubeObject, old: readonly Condition[] | undefined, next: readonly Condition[] | undefined): Promise<number> {
    const posted = conditionTransitions(old, next)
      .filter(noteworthy)
      .filter(({ to }) => !this.options.types || this.options.types.includes(to.type))
      .map(async ({ to }) => {
        const warning = this.options.warning ? this.options.warning(to) : warns(to);
        try {
          await this.cluster.event(object, {
            type: warning ? 'Warning' : 'Normal',
            reason: to.reason,
            action: this.options.action ?? 'Reconcile',
            note: `${to.type} is ${to.status}: ${to.message}`,
          });
          return 1;
        } catch (error) {
          this.logger.warn('recording an event failed', { kind: object.kind, key: keyOf(object), reason: to.reason, error: errorMessage(error) });
          return 0;
        }
      });
    return (await Promise.all(posted)).reduce<number>((sum, one) => sum + one, 0);
  }
}
