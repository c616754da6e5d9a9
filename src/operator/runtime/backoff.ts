/**
 * Exponential backoff with jitter: per key for the work queue's failed reconciles, and as a plain sequence for an
 * informer's relists. The n-th consecutive failure waits `min(max, base * 2^n)`, stretched by up to `jitter` (so replicas
 * and keys that failed together do not retry together); success forgets the count.
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

/** Per-key failure counts and their delays. */
export class KeyedBackoff {
  private readonly failures = new Map<string, number>();

  constructor(private readonly options: BackoffOptions = {}) {}

  /** Counts a failure of `key` and returns how long to wait before retrying it. */
  next(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return backoffDelay(n, this.options);
  }

  /** Consecutive failures of `key` so far. */
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Forgets `key`'s failures (it succeeded). */
  forget(key: string): void {
    this.failures.delete(key);
  }
}
