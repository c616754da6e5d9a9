/**
 * Keystone as the operator's other users share it (issue 48's pacing, src/keystone/pacing.ts): its workers over the
 * run (test/support/fake-keystone/workers.ts; an event scales them or slows them down), and a bystander, another
 * Keystone user who logs in at a steady rate while an event has it on, whose waits for a worker the workers record.
 * Present when the schedule's setup gives Keystone a capacity (`setup.keystone`); the named cases written before it run
 * against a Keystone that answers at once.
 */
import type { KeystoneWorkers, ServedRequest } from '../support/fake-keystone/workers';
import type { SimWorld } from './sim-world';

/** Who the bystander's requests are from, as the workers record them. */
export const BYSTANDER = 'bystander';
const BYSTANDER_PASSWORD = 'sim-bystander-password-93a0e1';

/** Keystone's capacity from an instant on: its workers and how much slower than usual it serves. */
export interface Capacity {
  readonly at: number;
  readonly workers: number;
  readonly slowdown: number;
}

export class KeystoneLoad {
  /** Keystone's capacity over the run, the one in force last. */
  readonly capacity: Capacity[];
  /** The spans in which the bystander logged in (`to` absent: still on). */
  readonly bystanderOn: { readonly from: number; to?: number }[] = [];
  private bystander?: { readonly timer: NodeJS.Timeout; readonly stop?: NodeJS.Timeout };

  constructor(
    private readonly world: SimWorld,
    readonly workers: KeystoneWorkers,
  ) {
    this.capacity = [{ at: world.time.now(), workers: workers.workers, slowdown: workers.slowdown }];
  }

  /** Keystone's capacity at `at`. */
  capacityAt(at: number): Capacity {
    let found = this.capacity[0];
    for (const c of this.capacity) if (c.at <= at) found = c;
    return found;
  }

  /** When Keystone's capacity last changed at or before `at` (the run's start when it never did). */
  changedBefore(at: number): number {
    return this.capacityAt(at).at;
  }

  /** Keystone scaled to `workers`, serving `slowdown` times slower than usual. */
  scale(workers: number, slowdown: number): void {
    this.workers.slowdown = slowdown;
    this.workers.workers = workers;
    this.capacity.push({ at: this.world.time.now(), workers, slowdown });
  }

  /**
   * The bystander logs in every `everyMs` for `forMs` (a login with its password: bcrypt), while Keystone answers; or
   * stops (`everyMs` undefined).
   */
  bystand(everyMs: number | undefined, forMs = 0): void {
    clearInterval(this.bystander?.timer);
    clearTimeout(this.bystander?.stop);
    this.bystander = undefined;
    const open = this.bystanderOn.find((s) => s.to === undefined);
    if (open) open.to = this.world.time.now();
    if (everyMs === undefined) return;
    const keystone = this.world.keystone;
    let userId = keystone.userNamed(BYSTANDER);
    if (!userId) {
      userId = keystone.addUser(BYSTANDER, BYSTANDER_PASSWORD);
      keystone.grant(userId, keystone.addProject(BYSTANDER), 'member');
    }
    const login = { auth: { identity: { methods: ['password'], password: { user: { id: userId, password: BYSTANDER_PASSWORD } } }, scope: { project: { name: BYSTANDER, domain: { id: 'default' } } } } };
    const timer = setInterval(() => {
      if (this.world.network.faults.keystone.mode !== 'up') return;
      void this.workers.serve(BYSTANDER, 'POST', '/v3/auth/tokens', () => keystone.handle('POST', '/v3/auth/tokens', new Headers(), login));
    }, everyMs);
    timer.unref();
    const stop = setTimeout(() => this.bystand(undefined), forMs);
    stop.unref();
    this.bystander = { timer, stop };
    this.bystanderOn.push({ from: this.world.time.now() });
  }

  /** The bystander's requests so far. */
  bystanderRequests(): ServedRequest[] {
    return this.workers.requests.filter((r) => r.client === BYSTANDER);
  }
}

const loads = new WeakMap<SimWorld, KeystoneLoad>();

/** The world's Keystone load, when its Keystone has a capacity (`setup.keystone`). */
export function keystoneLoadOf(world: SimWorld): KeystoneLoad | undefined {
  const workers = world.network.keystoneWorkers;
  if (!workers) return undefined;
  let load = loads.get(world);
  if (!load) {
    load = new KeystoneLoad(world, workers);
    loads.set(world, load);
  }
  return load;
}
