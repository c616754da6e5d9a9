/**
 * What the runner does with each action of a plan (./runner.ts): {@link execute} carries it out through the ports, and
 * {@link carry} derives the world the next step of the same pass decides on from what the action established.
 */
import type { Privileges } from '../api';
import { adopt } from './adoption';
import type { Action, HeldCredential, LifecycleOrder, Observations } from './model';
import { delivered } from './observe';
import { proofOf } from './ownership';
import type { Ports } from './ports';

export async function documentOf(ports: Pick<Ports, 'secrets' | 'render'>, action: { readonly generation: number; readonly credentialId: string }) {
  const secret = await ports.secrets.read(action.generation);
  if (secret === undefined) throw new Error(`generation ${action.generation} has no parked secret`);
  return ports.render(action.credentialId, secret);
}

/** What an action established: `refused` when Keystone refused a mint for good; the credential a mint created. */
export type Executed = { readonly outcome: 'done'; readonly created?: HeldCredential } | { readonly outcome: 'refused'; readonly failure: string };

/** What a mint asks of Keystone besides the name and the secret: the order's owner mark, its roles and access rules. */
export type Minting = { readonly owner?: string } & Privileges;

/** How long a mint waits for a secret its own pass parked to become readable (see {@link parkedSecret}). */
const PARKED_READ_WAIT_MS = [5, 10, 20, 40, 80, 160, 320, 640];

/**
 * The parked secret a mint sends to Keystone. A store may serve reads from a cache that lags behind its own writes (the
 * operator reads its `secret-v<N>` children from an informer): when this pass parked the generation, a miss is read
 * again after short pauses (1.3 s at most) rather than failing the mint, which would cost a failed pass, a retry after
 * backoff and a second observation of Keystone. Nothing is minted without a secret read back from the store, so
 * crash-safety is as before; a generation this pass did not park fails at once, as always.
 */
async function parkedSecret(ports: Ports, generation: number, parkedThisPass: boolean): Promise<string> {
  let secret = await ports.secrets.read(generation);
  for (const pause of parkedThisPass ? PARKED_READ_WAIT_MS : []) {
    if (secret !== undefined) break;
    await new Promise((resolve) => setTimeout(resolve, pause));
    secret = await ports.secrets.read(generation);
  }
  if (secret === undefined) throw new Error(`generation ${generation} has no parked secret`);
  return secret;
}

/** Executes one action. A mint Keystone refused terminally is recorded as the generation's failure. */
export async function execute(ports: Ports, action: Action, parked: ReadonlySet<number>, minting: Minting): Promise<Executed> {
  switch (action.type) {
    case 'park':
      await ports.secrets.park(action.generation);
      return { outcome: 'done' };
    case 'mint': {
      const secret = await parkedSecret(ports, action.generation, parked.has(action.generation));
      try {
        const { owner, roles, accessRules } = minting;
        const mark = { ...(owner !== undefined ? { owner } : {}), proof: proofOf(secret), ...(roles !== undefined ? { subset: true } : {}) };
        const created = await ports.keystone.create({
          name: action.name,
          secret,
          ...(action.expiresAt ? { expiresAt: action.expiresAt } : {}),
          mark,
          ...(roles !== undefined ? { roles } : {}),
          ...(accessRules !== undefined ? { accessRules } : {}),
        });
        return { outcome: 'done', created };
      } catch (error) {
        if (!ports.isTerminal(error)) throw error;
        const failure = error instanceof Error ? error.message : String(error);
        await ports.secrets.recordFailure(action.generation, failure);
        return { outcome: 'refused', failure };
      }
    }
    case 'backup':
      await ports.backup?.write(await documentOf(ports, action));
      return { outcome: 'done' };
    case 'deliver': {
      const secret = await ports.secrets.read(action.generation);
      if (secret === undefined) throw new Error(`generation ${action.generation} has no parked secret`);
      await ports.delivery.write(delivered(ports, action.credentialId, secret));
      return { outcome: 'done' };
    }
    case 'adopt':
      return { outcome: 'done', created: await adopt(ports, action) };
    case 'delete':
      await ports.keystone.delete(action.id);
      return { outcome: 'done' };
    case 'discard':
      await ports.secrets.discard(action.generation);
      return { outcome: 'done' };
    case 'remove-backup':
      await ports.backup?.remove();
      return { outcome: 'done' };
    case 'remove-former-backup':
      await ports.formerBackup?.remove();
      return { outcome: 'done' };
    case 'withdraw':
      await ports.delivery.remove();
      return { outcome: 'done' };
    case 'retain': {
      const secret = await ports.secrets.read(action.generation);
      if (secret === undefined) throw new Error(`generation ${action.generation} has no parked secret`);
      await ports.delivery.retain?.(delivered(ports, action.id, secret));
      return { outcome: 'done' };
    }
    case 'release':
      await ports.release();
      return { outcome: 'done' };
  }
}

/**
 * The world after an action succeeded, as the action established it: what the next step of the same pass decides on,
 * without observing everything again. Only facts the action itself made true are carried; a pass that starts (after a
 * crash, a failure or a wake-up) observes everything. `at`: when the action was confirmed (a switch's grace period
 * runs from then).
 */
export function carry(world: Observations, action: Action, executed: Executed, at: Date): Observations {
  const records = new Map(world.generations.map((r) => [r.generation, r]));
  const g = 'generation' in action ? action.generation : 0;
  const record = records.get(g) ?? { generation: g, parked: false };
  let { backup, delivery, formerBackup: former } = world;
  switch (action.type) {
    case 'park':
      records.set(g, { ...record, parked: true });
      break;
    case 'mint':
      if (executed.outcome === 'refused') records.set(g, { ...record, failure: executed.failure });
      else if (executed.created) records.set(g, { ...record, credential: executed.created });
      break;
    case 'adopt':
      if (executed.outcome === 'done' && executed.created) records.set(g, { generation: g, parked: true, adopted: action.credentialId, credential: executed.created });
      break;
    case 'backup':
      backup = { credentialId: action.credentialId };
      break;
    case 'deliver':
      delivery = { state: 'delivered', credentialId: action.credentialId, intact: true, ...(action.switching ? { switchedAt: at } : {}) };
      break;
    case 'delete':
      records.set(g, { generation: g, parked: record.parked, ...(record.failure !== undefined ? { failure: record.failure } : {}) });
      break;
    case 'discard':
      records.set(g, { generation: g, parked: false, ...(record.credential ? { credential: record.credential } : {}) });
      break;
    case 'remove-backup':
      backup = {};
      break;
    case 'remove-former-backup':
      former = {};
      break;
    case 'withdraw':
      delivery = { state: 'absent' };
      break;
    case 'retain':
    case 'release':
      break;
  }
  const generations = [...records.values()].filter((r) => r.parked || r.failure !== undefined || r.credential !== undefined).sort((a, b) => a.generation - b.generation);
  return { ...world, generations, delivery, ...(backup !== undefined ? { backup } : {}), ...(former !== undefined ? { formerBackup: former } : {}) };
}

/** The roles and access rules the order's spec asks for (issue 42). */
export function privilegesOf(order: LifecycleOrder): Privileges {
  const { roles, accessRules } = order.spec;
  return { ...(roles !== undefined ? { roles } : {}), ...(accessRules !== undefined ? { accessRules } : {}) };
}
