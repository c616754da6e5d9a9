/**
 * Waiting on a dependency instead of backing off per object. A pass that fails because a dependency did not answer
 * (Keystone at an endpoint unreachable, OpenBao refusing or down, an API server answering 5xx) says so in its error
 * (`waitsOn`, see {@link dependenciesOf}); its object then waits on that dependency:
 *
 * - **one probe per dependency**, not one retry per object: while a dependency has waiters, one of them (the one probed
 *   longest ago, in turn) is reconciled again after 1 s, then after a pause doubling to 15 s (plus up to 20 % jitter).
 *   The probe is a real pass of a real object, so it proves exactly what the waiters need (a policy that refuses the
 *   operator's path, not just a health endpoint that answers);
 * - **every waiter woken** the moment one waiter's pass succeeds: the dependency answers again, so all its waiters are
 *   queued at once (the workers and the Keystone limit pace them);
 * - each waiter's own retry is pushed to the backoff's longest delay (5 minutes), a safety net for a failure that was
 *   the object's own.
 *
 * So an outage of any length ends within one probe interval (≤ 15 s, plus the pass) of the dependency's return, and
 * costs the dependency about four passes a minute, however many objects wait on it (plus each waiter's retry every
 * 5 minutes), instead of a per-object exponential backoff whose next retry may be 5 minutes away when the dependency
 * is back. A pass an event starts meanwhile still runs (a change may have fixed the object).
 */
import { backoffDelay, type BackoffOptions } from './backoff';
import type { Logger } from './log';

/** An error that names the dependencies that did not answer the failed pass. */
export interface DependencyFailure {
  /** The dependencies, each named for people (e.g. `OpenBao`, `Keystone http://keystone:5000/v3`). */
  readonly waitsOn: readonly string[];
}

/** The dependencies a failed pass's error names (none: an ordinary failure, backed off per object). */
export function dependenciesOf(error: unknown): readonly string[] {
  const waitsOn = typeof error === 'object' && error !== null ? (error as Partial<DependencyFailure>).waitsOn : undefined;
  return Array.isArray(waitsOn) ? waitsOn.filter((d): d is string => typeof d === 'string') : [];
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
  /** The waiting keys, in the order they are probed (the one probed longest ago first), each with how to queue it. */
  readonly waiters: Map<string, (key: string) => void>;
  /** Probes made since it stopped answering. */
  probes: number;
  timer?: NodeJS.Timeout;
  readonly since: number;
}

/** The dependencies objects wait on, shared by every controller of a manager. */
export class DependencyWaits {
  private readonly dependencies = new Map<string, Dependency>();
  /** What each waiting key waits on. */
  private readonly keys = new Map<string, Set<string>>();
  private stopped = false;

  constructor(private readonly options: DependencyWaitsOptions = {}) {}

  /**
   * `key` failed because `dependencies` did not answer: it waits on each of them (and on nothing else it waited on
   * before). `enqueue` queues it (its controller's queue).
   */
  wait(key: string, dependencies: readonly string[], enqueue: (key: string) => void): void {
    if (this.stopped) return;
    const now = new Set(dependencies);
    // What it waited on before and not now: it leaves those lines (a dependency it still waits on keeps its probes).
    for (const name of this.keys.get(key) ?? []) if (!now.has(name)) this.leave(key, name);
    this.keys.set(key, now);
    for (const name of now) {
      let dependency = this.dependencies.get(name);
      if (!dependency) {
        this.dependencies.set(name, (dependency = { waiters: new Map(), probes: 0, since: Date.now() }));
        this.options.logger?.warn('dependency does not answer: the objects that need it wait, one of them probes it', { dependency: name });
      }
      dependency.waiters.set(key, enqueue);
      dependency.timer ??= this.arm(name, dependency);
    }
  }

  /**
   * `key`'s pass succeeded: it waits no more, and what it waited on answers again: every object waiting on those
   * dependencies is queued now.
   */
  answered(key: string): void {
    const waited = this.keys.get(key);
    if (!waited) return;
    this.keys.delete(key);
    for (const name of waited) {
      const dependency = this.dependencies.get(name);
      if (!dependency) continue;
      this.dependencies.delete(name);
      clearTimeout(dependency.timer);
      dependency.waiters.delete(key);
      this.options.logger?.info('dependency answers again: its waiting objects are reconciled now', {
        dependency: name,
        woken: dependency.waiters.size,
        probes: dependency.probes,
        downForMs: Date.now() - dependency.since,
      });
      for (const [waiter, enqueue] of dependency.waiters) {
        this.release(waiter);
        enqueue(waiter);
      }
    }
  }

  /** `key` waits on nothing any more (it failed for a reason of its own, or it is gone). */
  release(key: string): void {
    const waited = this.keys.get(key);
    if (!waited) return;
    this.keys.delete(key);
    for (const name of waited) this.leave(key, name);
  }

  /** Whether `key` waits on a dependency. */
  waiting(key: string): boolean {
    return this.keys.has(key);
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
    this.keys.clear();
  }

  /** `key` no longer waits on `name`; a dependency nobody waits on is forgotten with its probe. */
  private leave(key: string, name: string): void {
    const dependency = this.dependencies.get(name);
    if (!dependency) return;
    dependency.waiters.delete(key);
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
      const [key, enqueue] = first.value;
      dependency.waiters.delete(key);
      dependency.waiters.set(key, enqueue);
      dependency.probes++;
      dependency.timer = this.arm(name, dependency);
      enqueue(key);
    }, backoffDelay(dependency.probes, { ...PROBE_BACKOFF, ...this.options.probe }));
    timer.unref();
    return timer;
  }
}
