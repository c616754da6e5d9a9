/**
 * The consumer handoff's rules, pure: which workloads an order's switch rolls, the value to write, and when a workload
 * that has not finished its rollout is overdue.
 *
 * The reference leaves the consumer a duty (spec, Delivered Secret contract: "A consumer reads the Secret again within
 * the grace period to pick the successor up"). A workload that reads the credential only at start-up (environment
 * variables, a file read once) meets it only by restarting. A workload that opts in (annotations.ts) is rolled once the
 * delivered Secret carries generation N, by writing N into its pod template; and when its rollout to N has not finished
 * halfway through the superseded credential's grace period, the order says so, with half of the grace period left to
 * act before `status.previousCredentialDeleteAt`.
 *
 * - **Which workloads**: those in the order's own namespace whose opt-in names the order's delivered Secret. Nothing
 *   else is ever rolled.
 * - **When**: while `status.secretName` is set, the Secret carries `status.credentialGeneration` (spec, Status); that
 *   generation N is the one to roll to. A workload whose pod template records another generation for the Secret (or
 *   none: a workload that just opted in) is rolled to N. One that records N is not touched again, so a second pass
 *   writes nothing, and a pass after a crash between the switch and the roll rolls what the crash left.
 * - **Overdue**: during the grace period (`status.previousCredentialDeleteAt` set), from `deleteAt − gracePeriod / 2`
 *   on, every opted-in workload whose rollout to N has not finished (not rolled yet, paused, not observed, replicas not
 *   updated or not available) is overdue, and each is warned about once per generation.
 */
import { resolveSpec, secretName, type KeystoneApplicationCredential } from '../api';
import { reloaderCovering, withGeneration } from './annotations';
import type { Rollout, Workload } from './workload';

/** What the delivered Secret carries, as the order's status reports it. */
export interface Delivered {
  /** The delivered Secret's name (`status.secretName`). */
  readonly secretName: string;
  /** The generation it carries (`status.credentialGeneration`). */
  readonly generation: number;
  /** The superseded generation's grace period, while it runs. */
  readonly grace?: Grace;
}

/** A grace period that runs: when the superseded credential is deleted, and from when an unfinished rollout is overdue. */
export interface Grace {
  readonly previousGeneration: number;
  /** `status.previousCredentialDeleteAt`. */
  readonly deleteAt: Date;
  /** `deleteAt` minus the safety margin ({@link safetyMargin}). */
  readonly warnAt: Date;
}

/**
 * The safety margin before `previousCredentialDeleteAt` at which an unfinished rollout is overdue: half the grace
 * period (12 h of the default 24 h), so the warning comes when a healthy rollout has long finished and half of the grace
 * period is left to fix the workload.
 */
export function safetyMargin(gracePeriodMs: number): number {
  return Math.max(0, gracePeriodMs) / 2;
}

/**
 * What the order's delivered Secret carries, or undefined while it carries nothing current (no credential yet, the
 * Secret not yet switched to the current generation, a foreign Secret) or the order is being deleted.
 */
export function deliveredOf(order: KeystoneApplicationCredential): Delivered | undefined {
  const status = order.status;
  if (order.metadata.deletionTimestamp !== undefined || !status?.secretName || !status.credentialGeneration) return undefined;
  const deleteAt = status.previousCredentialDeleteAt !== undefined ? new Date(status.previousCredentialDeleteAt) : undefined;
  const previousGeneration = status.previousCredentialGeneration;
  let grace: Grace | undefined;
  if (deleteAt && !Number.isNaN(deleteAt.getTime()) && previousGeneration !== undefined) {
    grace = { previousGeneration, deleteAt, warnAt: new Date(deleteAt.getTime() - safetyMargin(gracePeriodMs(order))) };
  }
  return { secretName: status.secretName, generation: status.credentialGeneration, ...(grace ? { grace } : {}) };
}

/**
 * The order's grace period in force in milliseconds: a fleet default's when the operator recorded one (issue 48,
 * `status.policy`), else the spec's; 0 when neither holds a parseable duration (the warning then comes at deleteAt).
 */
function gracePeriodMs(order: KeystoneApplicationCredential): number {
  try {
    const inForce = order.status?.policy?.rotation.gracePeriod;
    return resolveSpec(inForce !== undefined ? { rotation: { gracePeriod: inForce } } : order.spec).gracePeriod.milliseconds;
  } catch {
    return 0;
  }
}

/** The name of the order that delivers `secret` (`<name>-credentials`), or undefined when no order's Secret is named so. */
export function orderOfSecret(secret: string): string | undefined {
  const suffix = secretName('');
  if (!secret.endsWith(suffix) || secret.length === suffix.length) return undefined;
  const name = secret.slice(0, -suffix.length);
  return secretName(name) === secret ? name : undefined;
}

/** The workloads of `workloads` that consume `secret` in `namespace`: opted in for it, and not being deleted. */
export function consumersOf(workloads: readonly Workload[], namespace: string, secret: string): Workload[] {
  return workloads.filter((w) => w.namespace === namespace && !w.deleting && w.optIn.includes(secret));
}

/** A workload to roll: its pod template gets `value`, which records `generation` for the Secret. */
export interface Roll {
  readonly workload: Workload;
  readonly secretName: string;
  readonly generation: number;
  /** The generation the template recorded before (undefined: none, the workload is rolled for the first time). */
  readonly from?: number;
  /** The new value of the pod template's generations annotation. */
  readonly value: string;
  /** The Stakater Reloader annotation that would roll it as well on the Secret's change, if it carries one. */
  readonly reloader?: string;
}

/** An opted-in workload whose rollout to the delivered generation has not finished past the warning time. */
export interface Overdue {
  readonly workload: Workload;
  readonly generation: number;
  readonly previousGeneration: number;
  readonly deleteAt: Date;
  /** Why the rollout has not finished. */
  readonly why: string;
  /** Identifies the warning: one per workload (by uid) and generation. */
  readonly key: string;
}

/** What a pass of the handoff does for one order. */
export interface HandoffPlan {
  /** The pod templates to write. */
  readonly rolls: readonly Roll[];
  /** Opted-in workloads whose rollout to the delivered generation has not finished (rolled now included). */
  readonly pending: number;
  /** Of those, the ones past the warning time while the grace period runs. */
  readonly overdue: readonly Overdue[];
  /** The overdue ones not warned about yet: a Warning each. */
  readonly warnings: readonly Overdue[];
  /** When to look again if nothing changes before: the warning time, while a rollout is pending before it. */
  readonly wakeAt?: Date;
}

/** What {@link decide} reads. */
export interface HandoffInput {
  /** The order's namespace: only its workloads are considered. */
  readonly namespace: string;
  readonly delivered: Delivered | undefined;
  /** The workloads observed (the port's consumers of the Secret; any other is ignored). */
  readonly workloads: readonly Workload[];
  readonly now: Date;
  /** The keys of the warnings already given ({@link Overdue.key}). */
  readonly warned: ReadonlySet<string>;
}

const NOTHING: HandoffPlan = { rolls: [], pending: 0, overdue: [], warnings: [] };

/** The plan of one pass for one order. */
export function decide(input: HandoffInput): HandoffPlan {
  const { delivered, now } = input;
  if (!delivered) return NOTHING;
  const { secretName: secret, generation, grace } = delivered;
  const rolls: Roll[] = [];
  const overdue: Overdue[] = [];
  let pending = 0;
  for (const workload of consumersOf(input.workloads, input.namespace, secret)) {
    const recorded = workload.generations.get(secret);
    let rollout: Rollout = workload.rollout;
    if (recorded !== generation) {
      const reloader = reloaderCovering(workload.annotations, secret);
      rolls.push({
        workload,
        secretName: secret,
        generation,
        ...(recorded !== undefined ? { from: recorded } : {}),
        value: withGeneration(workload.templateValue, secret, generation),
        ...(reloader ? { reloader } : {}),
      });
      rollout = { finished: false, why: recorded === undefined ? 'it is rolled only now' : `it is rolled from generation ${recorded} only now` };
    }
    if (rollout.finished) continue;
    pending++;
    if (grace && now.getTime() >= grace.warnAt.getTime()) {
      overdue.push({
        workload,
        generation,
        previousGeneration: grace.previousGeneration,
        deleteAt: grace.deleteAt,
        why: rollout.why,
        key: warningKey(workload, secret, generation),
      });
    }
  }
  const warnings = overdue.filter((o) => !input.warned.has(o.key));
  const wakeAt = grace && pending > 0 && now.getTime() < grace.warnAt.getTime() ? grace.warnAt : undefined;
  return { rolls, pending, overdue, warnings, ...(wakeAt ? { wakeAt } : {}) };
}

/** The key of the warning about `workload`'s rollout of `secret` to `generation`. */
export function warningKey(workload: Pick<Workload, 'kind' | 'namespace' | 'name' | 'uid'>, secret: string, generation: number): string {
  return `${workload.kind}/${workload.namespace}/${workload.name}/${workload.uid ?? ''}/${secret}@${generation}`;
}
