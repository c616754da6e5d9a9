/**
 * The plan runner: observe, `decide`, execute the actions in order, record the status, and again until the order has
 * converged for now. Every face runs its passes through here, so the Pulumi provider and the reconciler cannot drift.
 *
 * Crash-safety: the runner remembers nothing between steps. If it dies between two actions, the next pass observes the
 * world again (the parked secrets, the credentials Keystone holds under the deterministic names, the backup, the Secret)
 * and `decide` continues from there.
 */
import type { KeystoneApplicationCredentialStatus } from '../api';
import { decide, decideFailure } from './decide';
import { ActionError, NotConvergedError, ObservationError, actionFailure } from './failures';
import { carry, documentOf, execute, privilegesOf } from './execute';
import { formerBackup, migration, accountedIds, recordMigration, type FormerBackup } from './migration';
import type { Action, ForeignCredential, HeldPrivileges, LifecycleOrder, Observations, Plan } from './model';
import { observe, readBackup } from './observe';
import type { Ports } from './ports';
import { sameJson } from './same';
import { TemplateError } from './secret-template';

/** How one action went, for timelines, logs and metrics. Carries no secret. */
export interface ActionEvent {
  readonly action: Action;
  readonly outcome: 'done' | 'failed' | 'refused';
  readonly ms: number;
  readonly error?: string;
  /** The Keystone id a mint created. */
  readonly credentialId?: string;
  /** What the credential a mint created carries (issue 42). */
  readonly privileges?: HeldPrivileges;
}

export interface RunOptions {
  /** The clock; injectable for tests and time travel. @default () => new Date() */
  readonly clock?: () => Date;
  /** Called after each action. */
  readonly onAction?: (event: ActionEvent) => void;
  /** Called with what the pass observed, once, before it decides (the order's own generations, the foreign ones). */
  readonly onObserved?: (world: Observations) => void;
  /** Steps before giving up on convergence in one pass. @default 8 */
  readonly maxSteps?: number;
}

/** The outcome of a pass. */
export interface RunResult {
  readonly status: KeystoneApplicationCredentialStatus;
  readonly wakeAt?: Date;
  /** Teardown finished and the order was released. */
  readonly released: boolean;
  readonly steps: number;
  /** The credentials under the order's names the order did not mint, as the pass observed them (ownership.ts). */
  readonly foreign: readonly ForeignCredential[];
  /**
   * The document at the path keystone-appcred 0.1.0 backed up to, as the pass left it (migration.ts), when the pass
   * looked there: `foreign` is another's, left alone, for the face to report.
   */
  readonly former?: FormerBackup;
}

/**
 * The backup of an order the cache settles (settled.ts) on a process's first sight of it, after an upgrade above all:
 * the own path and the path keystone-appcred 0.1.0 wrote are read, and the migration's actions run (migration.ts): the
 * own path gets the delivered document when it lacks it, the order's document leaves the former path. OpenBao only,
 * never Keystone, never the API server: `status` is the order's with the migration's record, for the face to write
 * when it differs. A path that cannot be read throws an {@link ObservationError} (the face waits for OpenBao: a settled
 * order has no reason to ask Keystone anything); an action that fails throws an {@link ActionError}.
 */
export async function settleBackup(
  order: Pick<LifecycleOrder, 'status' | 'backupPath'>,
  ports: Pick<Ports, 'backup' | 'formerBackup' | 'secrets' | 'render'>,
  options: Pick<RunOptions, 'onAction'> = {},
): Promise<{ readonly former: FormerBackup; readonly actions: number; readonly status: KeystoneApplicationCredentialStatus }> {
  const [backup, former] = await Promise.all([readBackup(ports.backup), readBackup(ports.formerBackup)]);
  const unread = [backup?.error && `backup: ${backup.error}`, former?.error && `the backup path keystone-appcred 0.1.0 wrote: ${former.error}`].filter(Boolean);
  if (unread.length > 0) throw new ObservationError(`the backup's migration could not look at both paths: ${unread.join('; ')}`, order.status);
  const live = order.status.credentialGeneration;
  const deliveredParked = live !== undefined && (await ports.secrets.list()).some((p) => p.generation === live && p.parked);
  const planned = migration({ status: order.status, deliveredParked, ...(backup ? { backup } : {}), ...(former ? { former } : {}) });
  for (const action of planned.actions) {
    const t0 = performance.now();
    try {
      if (action.type === 'backup') await ports.backup?.write(await documentOf(ports, action));
      else if (action.type === 'remove-former-backup') await ports.formerBackup?.remove();
      options.onAction?.({ action, outcome: 'done', ms: performance.now() - t0 });
    } catch (error) {
      const failure = new ActionError(action, error, order.status);
      options.onAction?.({ action, outcome: 'failed', ms: performance.now() - t0, error: failure.message });
      throw failure;
    }
  }
  const after = planned.actions.some((a) => a.type === 'remove-former-backup') ? { state: 'empty' as const } : planned.former;
  return { former: after, actions: planned.actions.length, status: recordMigration(order.status, order.backupPath, planned.done) };
}

/** The former path's verdict as a pass leaves it, when the pass looked there. */
function formerOf(world: Observations, status: KeystoneApplicationCredentialStatus): { former?: FormerBackup } {
  if (world.formerBackup === undefined) return {};
  const own = world.keystoneError === undefined ? world.generations.flatMap((r) => (r.credential ? [r.credential.id] : [])) : [];
  return { former: formerBackup(world.formerBackup, accountedIds(status, own)) };
}

/**
 * Runs passes until the order converges for now (a plan without actions), teardown releases it, or `maxSteps` is reached.
 * The status is recorded once, when the pass ends, and only when it differs from the recorded one: a new order's pass
 * (park, mint, deliver) writes its status once, with every condition as it ends, instead of once per step on the way.
 * Nothing depends on a status written between two steps: the status is a hint, and a pass that dies between them
 * observes the world again (recorded.ts rebuilds a status the Secret or the backup is ahead of). When an action fails,
 * the status that says what is wrong is recorded (best effort) and the failure is thrown as an {@link ActionError};
 * when the pass converged without Keystone or the backup, it is thrown as an {@link ObservationError}. The next pass
 * starts from what it observes.
 */
export async function reconcile(order: LifecycleOrder, ports: Ports, options: RunOptions = {}): Promise<RunResult> {
  const clock = options.clock ?? (() => new Date());
  const maxSteps = options.maxSteps ?? 8;
  let current = order;
  let plan: Plan | undefined;
  const record = async (status: KeystoneApplicationCredentialStatus) => {
    if (sameJson(status, order.status)) return;
    await ports.writeStatus(status);
  };
  // Observed once per pass; each later step decides on what the earlier steps' actions established.
  let world = await observe(ports, current);
  options.onObserved?.(world);
  const parked = new Set<number>();
  for (let step = 1; step <= maxSteps; step++) {
    plan = decide(current, world, clock());
    const observed = world;
    let refused = false;
    let released = false;
    for (const action of plan.actions) {
      const t0 = performance.now();
      try {
        const executed = await execute(ports, action, parked, { ...(order.owner !== undefined ? { owner: order.owner } : {}), ...privilegesOf(order) });
        if (action.type === 'park') parked.add(action.generation);
        world = carry(world, action, executed, clock());
        refused ||= executed.outcome === 'refused';
        released ||= action.type === 'release';
        const created = executed.outcome === 'done' ? executed.created : undefined;
        options.onAction?.({
          action,
          outcome: executed.outcome,
          ms: performance.now() - t0,
          ...(created ? { credentialId: created.id } : {}),
          ...(created?.privileges ? { privileges: created.privileges } : {}),
        });
        if (refused) break;
      } catch (error) {
        const message = actionFailure(action, error);
        options.onAction?.({ action, outcome: 'failed', ms: performance.now() - t0, error: message });
        const status = decideFailure(current, observed, { action, message, ...(error instanceof TemplateError ? { template: true } : {}) }, clock());
        await record(status).catch(() => undefined);
        throw new ActionError(action, error, status);
      }
    }
    if (released) return { status: plan.status, released: true, steps: step, foreign: observed.foreign ?? [], ...formerOf(world, plan.status) };
    // The step's status holds once its actions succeeded; the next step decides on it (a refused mint is decided again).
    if (!refused) current = { ...current, status: plan.status };
    if (plan.actions.length === 0) {
      await record(plan.status);
      world = observed;
      const unobserved = [
        world.keystoneError && `Keystone: ${world.keystoneError}`,
        world.backup?.error && `backup: ${world.backup.error}`,
        world.formerBackup?.error && `the backup path keystone-appcred 0.1.0 wrote: ${world.formerBackup.error}`,
      ].filter(Boolean);
      if (unobserved.length > 0 && !world.admission && !world.gate) throw new ObservationError(`the order could not be observed whole: ${unobserved.join('; ')}`, plan.status);
      return { status: plan.status, ...(plan.wakeAt ? { wakeAt: plan.wakeAt } : {}), released: false, steps: step, foreign: world.foreign ?? [], ...formerOf(world, plan.status) };
    }
  }
  await record(current.status).catch(() => undefined); // what the steps that succeeded established
  throw new NotConvergedError(`the order did not converge in ${maxSteps} steps; last plan: ${plan?.actions.map((a) => a.type).join(', ')}`, current.status);
}
