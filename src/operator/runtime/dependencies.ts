/**
 * Waiting on a dependency instead of backing off per object. A pass that fails because a dependency did not answer
 * (Keystone at an endpoint unreachable, OpenBao refusing or down, an API server answering 5xx) says so in its error
 * (`waitsOn`, see {@link dependenciesOf}); its object then waits on that dependency:
 *
 * - **one probe per dependency**, not one retry per object: while a dependency has waiters, one of them (the one probed
 *   longest ago, in turn) is reconciled again after 1 s, then after a pause doubling to 15 s (plus up to 20 % jitter).
 *   The probe is a real pass of a real object, so it proves exactly what the waiters need (a policy that refuses the
 *   operator's path, not just a health endpoint that answers);
 * - **every waiter woken** the moment a pass reached the dependency and was answered (`answered`, see
 *   {@link answeredOf}): the dependency answers again, so all its waiters are queued at once (the workers and the
 *   Keystone limit pace them). Only such a pass counts: one that never reached the dependency (a gated or frozen order,
 *   a pass skipped as unchanged, one its cluster's outage returned early) proves nothing about it, and neither does the
 *   pass of another controller on an object of the same namespace and name;
 * - each waiter's own retry is pushed to the backoff's longest delay (5 minutes), a safety net for a failure that was
 *   the object's own (not counted as one of its own failures: ./backoff.ts).
 *
 * A waiter is one object of one controller ({@link Waiter}: the controller's name and its work-queue key, which carries
 * the object's cluster), so controllers whose objects share a namespace and a name (the credential controller and the
 * consumer handoff's, an order and a KeystoneUser named alike) never answer or release each other's waits.
 *
 * So an outage of any length ends within one probe interval (≤ 15 s, plus the pass) of the dependency's return, and
 * costs the dependency about four passes a minute, however many objects wait on it (plus each waiter's retry every
 * 5 minutes), instead of a per-object exponential backoff whose next retry may be 5 minutes away when the dependency
 * is back. A pass an event starts meanwhile still runs (a change may have fixed the object).
 */
import { backoffDelay, type BackoffOptions } from './backoff';
import type { Logger } from './log';

/** An error that names the dependencies that did not answer the failed pass, and those that did. */
export interface DependencyFailure {
  /** The dependencies, each named for people (e.g. `OpenBao`, `Keystone http://keystone:5000/v3`). */
  readonly waitsOn: readonly string[];
  /** The dependencies the pass reached and that answered it (a refusal of the object's own is an answer). @default none */
  readonly answered?: readonly string[];
}

/** The dependencies a failed pass's error names (none: an ordinary failure, backed off per object). */
export function dependenciesOf(error: unknown): readonly string[] {
  return namesOf(error, 'waitsOn');
}

/** The dependencies a failed pass reached and that answered it, as its error names them (none: it says nothing). */
export function answeredOf(error: unknown): readonly string[] {
  return namesOf(error, 'answered');
}

function namesOf(error: unknown, field: keyof DependencyFailure): readonly string[] {
  const names = typeof error === 'object' && error !== null ? (error as Partial<DependencyFailure>)[field] : undefined;
  return Array.isArray(names) ? names.filter((d): d is string => typeof d === 'string') : [];
}

/** One object of one controller that waits: the controller's name and the object's work-queue key (with its cluster). */
export interface Waiter {
  readonly controller: string;
  readonly key: string;
}

/** The probe's pauses: 1 s doubling to 15 s, plus up to 20 % jitter. */
export const PROBE_BACKOFF: Required<Omit<BackoffOptions, 'random'>> = { baseMs: 1_000, maxMs: 15_000, jitter: 0.2 };

export interface DependencyWaitsOptions {
  /** The probe's pauses. @default {@link PROBE_BACKOFF} */
  readonly probe?: BackoffOptions;
  /** Logs a dependency that stops answering and one that answers again. @default none */
  readonly logger?: Logger;
}

/** What one dependency's waiters are. */
interface Dependency {
  /** The waiters by id, in the order they are probed (the one probed longest ago first), each with how to queue it. */
  readonly waiters: Map<string, () => void>;
  /** Probes made since it stopped answering. */
  probes: number;
  timer?: NodeJS.Timeout;
  readonly since: number;
}

/** A waiter's id: its controller and key cannot run into another's (a key never holds a NUL). */
const idOf = (waiter: Waiter): string => `${waiter.controller}\u0000${waiter.key}`;

/** The dependencies objects wait on, shared by every controller of a manager (each waiter is one controller's object). */
export class DependencyWaits {
  private readonly dependencies = new Map<string, Dependency>();
  /** What each waiter waits on, by its id. */
  private readonly waiters = new Map<string, Set<string>>();
  private stopped = false;

  constructor(private readonly options: DependencyWaitsOptions = {}) {}

  /**
   * `waiter`'s pass failed because `dependencies` did not answer: it waits on each of them (and on nothing else it
   * waited on before). `enqueue` queues it (in its controller's queue).
   */
  wait(waiter: Waiter, dependencies: readonly string[], enqueue: () => void): void {
    if (this.stopped) return;
    const id = idOf(waiter);
    const now = new Set(dependencies);
    // What it waited on before and not now: it leaves those lines (a dependency it still waits on keeps its probes).
    for (const name of this.waiters.get(id) ?? []) if (!now.has(name)) this.leave(id, name);
    this.waiters.set(id, now);
    for (const name of now) {
      let dependency = this.dependencies.get(name);
      if (!dependency) {
        this.dependencies.set(name, (dependency = { waiters: new Map(), probes: 0, since: Date.now() }));
        this.options.logger?.warn('dependency does not answer: the objects that need it wait, one of them probes it', { dependency: name });
      }
      dependency.waiters.set(id, enqueue);
      dependency.timer ??= this.arm(name, dependency);
    }
  }

  /**
   * A pass reached `dependencies` and each answered it: they answer again, so every object waiting on one of them is
   * queued now (and waits no more), and their probes stop.
   */
  answered(dependencies: readonly string[]): void {
    for (const name of new Set(dependencies)) {
      const dependency = this.dependencies.get(name);
      if (!dependency) continue;
      this.dependencies.delete(name);
      clearTimeout(dependency.timer);
      this.options.logger?.info('dependency answers again: its waiting objects are reconciled now', {
        dependency: name,
        woken: dependency.waiters.size,
        probes: dependency.probes,
        downForMs: Date.now() - dependency.since,
      });
      for (const [id, enqueue] of dependency.waiters) {
        this.releaseId(id);
        enqueue();
      }
    }
  }

  /** `waiter` waits on nothing any more (its pass succeeded, or failed for a reason of its own, or it is gone). */
  release(waiter: Waiter): void {
    this.releaseId(idOf(waiter));
  }

  /** Whether `waiter` waits on a dependency. */
  waiting(waiter: Waiter): boolean {
    return this.waiters.has(idOf(waiter));
  }

  /** The dependencies that have waiters, with how many. */
  get down(): ReadonlyMap<string, number> {
    return new Map([...this.dependencies].map(([name, d]) => [name, d.waiters.size]));
  }

  /** Stops every probe (shutdown). */
  stop(): void {
    this.stopped = true;
    for (const dependency of this.dependencies.values()) clearTimeout(dependency.timer);
    this.dependencies.clear();
    this.waiters.clear();
  }

  private releaseId(id: string): void {
    const waited = this.waiters.get(id);
    if (!waited) return;
    this.waiters.delete(id);
    for (const name of waited) this.leave(id, name);
  }

  /** The waiter `id` no longer waits on `name`; a dependency nobody waits on is forgotten with its probe. */
  private leave(id: string, name: string): void {
    const dependency = this.dependencies.get(name);
    if (!dependency) return;
    dependency.waiters.delete(id);
    if (dependency.waiters.size > 0) return;
    clearTimeout(dependency.timer);
    this.dependencies.delete(name);
  }

  /** The next probe of `name`: the waiter probed longest ago is queued, and goes to the back of the line. */
  private arm(name: string, dependency: Dependency): NodeJS.Timeout {
    const timer = setTimeout(() => {
      if (this.dependencies.get(name) !== dependency) return;
      const first = dependency.waiters.entries().next();
      if (first.done) return;
      const [id, enqueue] = first.value;
      dependency.waiters.delete(id);
      dependency.waiters.set(id, enqueue);
      dependency.probes++;
      dependency.timer = this.arm(name, dependency);
      enqueue();
    }, backoffDelay(dependency.probes, { ...PROBE_BACKOFF, ...this.options.probe }));
    timer.unref();
    return timer;
  }
}
