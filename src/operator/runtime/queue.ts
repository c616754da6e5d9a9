/**
 * A keyed work queue, as client-go's: a key is queued at most once (adding it again before it is handed out does
 * nothing), at most one worker holds a key at a time (a key added while it is being reconciled is handed out once more
 * after `done`), failures come back after a per-key exponential backoff with jitter (one step per retry, however many
 * events failed in between), `addAfter` timers keep only the earliest wake-up per key, and shutdown stops handing out
 * keys and waits for the ones in flight, up to a deadline.
 */
import Denque from 'denque';
import { Heap } from 'heap-js';
import { KeyedBackoff, type BackoffOptions } from './backoff';

export interface WorkQueueOptions {
  /** Backoff of {@link WorkQueue.addRateLimited}. */
  readonly backoff?: BackoffOptions;
  /** Called with the number of keys waiting to be handed out whenever it changes. */
  readonly onDepth?: (depth: number) => void;
}

/** The longest delay `setTimeout` keeps (2^31−1 ms); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export class WorkQueue {
  /**
   * The keys waiting, oldest first: a double-ended queue, whose `shift` costs O(1) at any length. An array's moved every
   * key left once it was in V8's large-object space (above about 16,000 keys): a resync of 20,000 orders queued them at
   * once, and handing them out cost 215 ms in a bare script against 0.9 ms for 2,000 keys (6.7 ms with a deque).
   */
  private readonly queue = new Denque<string>();
  /** Keys that need a reconcile: queued, or re-added while in flight. */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  /** Each key's pending `addAfter` wake-up: when it is due (the earliest asked for). */
  private readonly waiting = new Map<string, number>();
  /**
   * The wake-ups by time, under one timer armed for the earliest. One timer per key cost 314 bytes of heap a key (a
   * Node Timeout object), 6 MiB at 20,000 orders that each wait for their next rotation (docs/benchmarks-operator.md);
   * an entry here is a small object. An entry whose key has since been asked to wake earlier stays until it is due and
   * is then passed over (it is not the key's wake-up any more), and the heap is rebuilt from {@link waiting} when such
   * entries outnumber the live ones.
   */
  private readonly wakeUps = new Heap<{ readonly key: string; readonly at: number }>((a, b) => a.at - b.at);
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private readonly getters: ((key: string | undefined) => void)[] = [];
  private readonly idle: (() => void)[] = [];
  private readonly backoff: KeyedBackoff;
  private stopping = false;

  constructor(private readonly options: WorkQueueOptions = {}) {
    this.backoff = new KeyedBackoff(options.backoff);
  }

  /** Keys waiting to be handed out. */
  get depth(): number {
    return this.queue.length;
  }

  /** Keys a worker holds. */
  get inFlight(): number {
    return this.processing.size;
  }

  /** Keys with a pending `addAfter` timer. */
  get scheduled(): number {
    return this.waiting.size;
  }

  /** Whether shutdown has begun. */
  get shuttingDown(): boolean {
    return this.stopping;
  }

  /** Queues `key` now (a no-op when it is already queued; after the current reconcile when in flight). */
  add(key: string): void {
    if (this.stopping || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Queues `key` after `delayMs`; of several pending delays for a key only the earliest is kept. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopping) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const pending = this.waiting.get(key);
    if (pending !== undefined && pending <= at) return;
    this.waiting.set(key, at);
    if (this.wakeUps.length > 2 * this.waiting.size + 64) this.wakeUps.init([...this.waiting].map(([k, a]) => ({ key: k, at: a })));
    else this.wakeUps.push({ key, at });
    this.arm();
  }

  /**
   * Queues the keys that are due and arms the timer for the next wake-up (when it is earlier than the one armed). Node
   * fires a delay above 2^31−1 ms (24.8 days) after 1 ms, and the default rotation interval (720h) is longer than
   * that: a longer wait is taken in steps, the timer armed again without queueing anything.
   */
  private arm(): void {
    const now = Date.now();
    for (let next = this.wakeUps.peek(); next !== undefined && next.at <= now; next = this.wakeUps.peek()) {
      this.wakeUps.pop();
      if (this.waiting.get(next.key) !== next.at) continue;
      this.waiting.delete(next.key);
      this.add(next.key);
    }
    const next = this.wakeUps.peek();
    if (next === undefined || next.at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = next.at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      if (!this.stopping) this.arm();
    }, Math.min(next.at - now, MAX_TIMER_MS));
    this.timer.unref();
  }

  /**
   * Queues `key` after its next backoff delay (it failed); returns the delay. A failure before the retry of the previous
   * one was due (a pass a watch event started) keeps that retry and does not lengthen the backoff (./backoff.ts).
   */
  addRateLimited(key: string): number {
    const delay = this.backoff.next(key);
    this.addAfter(key, delay);
    return delay;
  }

  /**
   * Queues `key` after the backoff's longest delay (it failed, waiting on a dependency whose probe wakes it as soon as
   * the dependency answers: ./dependencies.ts); returns the delay. A retry already due sooner stays. The wait is not a
   * failure of the key's own: its backoff neither counts it nor keeps its delay (./backoff.ts).
   */
  addAfterLongest(key: string): number {
    const delay = this.backoff.longest();
    this.addAfter(key, delay);
    return delay;
  }

  /** Forgets `key`'s failures (it succeeded), so its next failure waits the shortest delay again. */
  forget(key: string): void {
    this.backoff.forget(key);
  }

  /** Consecutive failures of `key`. */
  retries(key: string): number {
    return this.backoff.retries(key);
  }

  /** The next key, once there is one; undefined once the queue shuts down. Pair every key with {@link done}. */
  get(): Promise<string | undefined> {
    if (this.stopping) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) {
      this.take(key);
      this.options.onDepth?.(this.queue.length);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks `key`'s reconcile finished; a key re-added meanwhile is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.stopping) this.push(key);
    if (this.processing.size === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  /** Stops handing out keys and drops pending timers; keys in flight may finish and call {@link done}. */
  shutDown(): void {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.waiting.clear();
    this.wakeUps.clear();
    for (const resolve of this.getters.splice(0)) resolve(undefined);
  }

  /** Shuts down and waits until no key is in flight; false when `timeoutMs` passed first. */
  async drain(timeoutMs: number): Promise<boolean> {
    this.shutDown();
    if (this.processing.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.idle.push(() => resolve(true)));
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const drained = await Promise.race([idle, late]);
    clearTimeout(timer);
    return drained;
  }

  private push(key: string): void {
    const getter = this.getters.shift();
    if (getter) {
      this.take(key);
      getter(key);
      return;
    }
    this.queue.push(key);
    this.options.onDepth?.(this.queue.length);
  }

  private take(key: string): void {
    this.dirty.delete(key);
    this.processing.add(key);
  }
}

