/**
 * The plan runner: observe, `decide`, execute the actions in order, record the status, and again until the order has
 * converged for now. Every face runs its passes through here, so the Pulumi provider and the reconciler cannot drift.
 *
 * Crash-safety: the runner remembers nothing between steps. If it dies between two actions, the next pass observes the
 * world again (the parked secrets, the credentials Keystone holds under the deterministic names, the backup, the Secret)
 * and `decide` continues from there.
 */
import { SECRET_KEYS, type KeystoneApplicationCredentialStatus } from '../api';
import { decide } from './decide';
import type { Action, DeliveryObservation, GenerationRecord, LifecycleOrder, Observations, Plan } from './model';
import type { Ports } from './ports';

/** How one action went, for timelines, logs and metrics. Carries no secret. */
export interface ActionEvent {
  readonly action: Action;
  readonly outcome: 'done' | 'failed' | 'refused';
  readonly ms: number;
  readonly error?: string;
}

export interface RunOptions {
  /** The clock; injectable for tests and time travel. @default () => new Date() */
  readonly clock?: () => Date;
  /** Called after each action. */
  readonly onAction?: (event: ActionEvent) => void;
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
}

/** Observes the world through the ports. */
export async function observe(ports: Ports): Promise<Observations> {
  const [credentials, parked, backupId, delivered, admission, gate] = await Promise.all([
    ports.keystone.list(),
    ports.secrets.list(),
    ports.backup?.read(),
    ports.delivery.read(),
    ports.admission?.(),
    ports.gate?.(),
  ]);
  const records = new Map<number, GenerationRecord>();
  for (const p of parked) records.set(p.generation, { generation: p.generation, parked: p.parked, ...(p.failure !== undefined ? { failure: p.failure } : {}) });
  for (const c of credentials) {
    const existing = records.get(c.generation) ?? { generation: c.generation, parked: false };
    records.set(c.generation, { ...existing, credential: { id: c.id, ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}) } });
  }
  let delivery: DeliveryObservation;
  if (!delivered) delivery = { state: 'absent' };
  else if (!delivered.owned) delivery = { state: 'foreign' };
  else {
    const credentialId = delivered.data.application_credential_id ?? '';
    const record = [...records.values()].find((r) => r.credential?.id === credentialId);
    const secret = record?.parked ? await ports.secrets.read(record.generation) : undefined;
    const expected = secret !== undefined ? ports.render(credentialId, secret) : undefined;
    const intact = expected !== undefined && SECRET_KEYS.every((k) => delivered.data[k] === expected[k]);
    delivery = { state: 'delivered', credentialId, intact };
  }
  return {
    generations: [...records.values()].sort((a, b) => a.generation - b.generation),
    delivery,
    ...(ports.backup ? { backup: backupId === undefined ? {} : { credentialId: backupId } } : {}),
    ...(admission ? { admission } : {}),
    ...(gate ? { gate } : {}),
  };
}

/** An action failed; the message names the action and generation and carries the cause's (secret-free) message. */
export class ActionError extends Error {
  constructor(
    readonly action: Action,
    override readonly cause: unknown,
  ) {
    super(`${action.type}${'generation' in action ? ` generation ${action.generation}` : ''} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'ActionError';
  }
}

async function documentOf(ports: Ports, world: Observations, generation: number) {
  const record = world.generations.find((r) => r.generation === generation);
  const secret = await ports.secrets.read(generation);
  if (!record?.credential || secret === undefined) throw new Error(`generation ${generation} has no credential or no parked secret`);
  return ports.render(record.credential.id, secret);
}

/** Executes one action; returns 'refused' when Keystone refused a mint terminally (recorded as the generation's failure). */
async function execute(ports: Ports, world: Observations, action: Action): Promise<'done' | 'refused'> {
  switch (action.type) {
    case 'park':
      await ports.secrets.park(action.generation);
      return 'done';
    case 'mint': {
      const secret = await ports.secrets.read(action.generation);
      if (secret === undefined) throw new Error(`generation ${action.generation} has no parked secret`);
      try {
        await ports.keystone.create({ name: action.name, secret, ...(action.expiresAt ? { expiresAt: action.expiresAt } : {}) });
      } catch (error) {
        if (!ports.isTerminal(error)) throw error;
        await ports.secrets.recordFailure(action.generation, error instanceof Error ? error.message : String(error));
        return 'refused';
      }
      return 'done';
    }
    case 'backup':
      await ports.backup?.write(await documentOf(ports, world, action.generation));
      return 'done';
    case 'deliver':
      await ports.delivery.write(await documentOf(ports, world, action.generation));
      return 'done';
    case 'delete':
      await ports.keystone.delete(action.id);
      return 'done';
    case 'discard':
      await ports.secrets.discard(action.generation);
      return 'done';
    case 'remove-backup':
      await ports.backup?.remove();
      return 'done';
    case 'withdraw':
      await ports.delivery.remove();
      return 'done';
    case 'release':
      await ports.release();
      return 'done';
  }
}

/**
 * Runs passes until the order converges for now (a plan without actions), teardown releases it, or `maxSteps` is reached.
 * The status is recorded after each step whose actions all succeeded. An action's failure stops the pass and is thrown
 * as an {@link ActionError}; the next pass starts from what it observes.
 */
export async function reconcile(order: LifecycleOrder, ports: Ports, options: RunOptions = {}): Promise<RunResult> {
  const clock = options.clock ?? (() => new Date());
  const maxSteps = options.maxSteps ?? 8;
  let current = order;
  let plan: Plan | undefined;
  for (let step = 1; step <= maxSteps; step++) {
    const world = await observe(ports);
    plan = decide(current, world, clock());
    let refused = false;
    let released = false;
    for (const action of plan.actions) {
      const t0 = performance.now();
      try {
        const outcome = await execute(ports, world, action);
        refused ||= outcome === 'refused';
        released ||= action.type === 'release';
        options.onAction?.({ action, outcome, ms: performance.now() - t0 });
        if (refused) break;
      } catch (error) {
        const failure = new ActionError(action, error);
        options.onAction?.({ action, outcome: 'failed', ms: performance.now() - t0, error: failure.message });
        throw failure;
      }
    }
    if (released) return { status: plan.status, released: true, steps: step };
    if (!refused && JSON.stringify(plan.status) !== JSON.stringify(current.status)) await ports.writeStatus(plan.status);
    if (!refused) current = { ...current, status: plan.status };
    if (plan.actions.length === 0) return { status: plan.status, ...(plan.wakeAt ? { wakeAt: plan.wakeAt } : {}), released: false, steps: step };
  }
  throw new Error(`the order did not converge in ${maxSteps} steps; last plan: ${plan?.actions.map((a) => a.type).join(', ')}`);
}
