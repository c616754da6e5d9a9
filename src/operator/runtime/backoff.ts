/**
 * Exponential backoff with jitter: per key for the work queue's failed reconciles, and as a plain sequence for an
 * informer's relists and a dependency's probes. The n-th consecutive failure waits `min(max, base * 2^n)`, stretched by
 * up to `jitter` (so replicas and keys that failed together do not retry together); success forgets the count.
 */

export interface BackoffOptions {
  /** The first delay. @default 200 ms */
  readonly baseMs?: number;
  /** The longest delay (before jitter). @default 300 000 ms (5 min) */
  readonly maxMs?: number;
  /** Up to this fraction is added at random. @default 0.2 */
  readonly jitter?: number;
  /** [0, 1) @default Math.random */
  readonly random?: () => number;
}

/** The delay of failure number `failures` (0-based). */
export function backoffDelay(failures: number, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? 200;
  const max = options.maxMs ?? 300_000;
  const jitter = options.jitter ?? 0.2;
  const random = options.random ?? Math.random;
  const exponential = Math.min(max, base * 2 ** Math.min(failures, 52));
  return Math.round(exponential * (1 + jitter * random()));
}

/** The longest delay of `options`, with its jitter. */
export function longestDelay(options: BackoffOptions = {}): number {
  return backoffDelay(52, options);
}

/**
 * Per-key failure counts and their delays. A failure counts once per retry: one that comes before the retry of the
 * failure before it was due (a pass that a watch event started meanwhile: the order's own status write, its parked
 * Secret, a burst of them within milliseconds) keeps the retry already scheduled instead of doubling the delay again,
 * so a burst of events costs one step of the backoff, not one per event.
 */
export class KeyedBackoff {
  private readonly failures = new Map<string, { count: number; retryAt: number }>();

  constructor(private readonly options: BackoffOptions = {}) {}

  /** Counts a failure of `key` (unless its retry is still pending) and returns how long to wait before retrying it. */
  next(key: string, now = Date.now()): number {
    const last = this.failures.get(key);
    if (last && now < last.retryAt) return last.retryAt - now;
    const count = last?.count ?? 0;
    const delay = backoffDelay(count, this.options);
    this.failures.set(key, { count: count + 1, retryAt: now + delay });
    return delay;
  }

  /**
   * The longest delay, for a key that waits for something else to wake it sooner (a dependency that did not answer:
   * ./dependencies.ts). Not counted as a failure of the key's own, and it schedules no retry the next one keeps: once
   * the dependency answers, a failure of the key's own is retried after the delay its own failures have reached (the
   * base delay after none), not after what remains of the wait's cap (issue 46).
   */
  longest(): number {
    return longestDelay(this.options);
  }

  /** Consecutive failures of `key` so far (each burst counted once). */
  retries(key: string): number {
    return this.failures.get(key)?.count ?? 0;
  }

  /** Forgets `key`'s failures (it succeeded). */
  forget(key: string): void {
    this.failures.delete(key);
  }
}
