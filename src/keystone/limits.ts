/**
 * A client-side limit per Keystone endpoint: requests per second and requests in flight, shared by every session of
 * the process that talks to that endpoint (the ordered users' and the admins'), so that a burst of new orders, a mass
 * rotation raised by hand or the first start on a big cluster never sends Keystone more than configured, however many
 * workers reconcile at once. With adaptive pacing (the operator's default) the requests in flight are further held to
 * what Keystone has free for this process, as its latency tells (./pacing.ts), so that Keystone's other users never
 * wait behind a mass rotation; the configured number is then the ceiling. A `Retry-After` that Keystone (or a proxy in
 * front of it) sends with a 429 or 503 pauses the whole endpoint, not just the one request.
 *
 * The queueing is bottleneck's (`maxConcurrent` for the requests in flight, updated as the pacing moves, `minTime` =
 * 1/rate for the spacing of the planned starts); this module adds the per-endpoint registry, the pacing, the pause,
 * the measurement of the time requests waited for their turn, and a check of the real starts: bottleneck plans its
 * starts on timers, and after the event loop stalls (a long collection, a burst of decoding) the timers that fell
 * behind fire together. So a request also starts no sooner than 1/rate after the one before it really started, and
 * the rate holds over any window, stalls included.
 */
import Bottleneck from 'bottleneck';
import { KEYSTONE_PACINGS, type KeystonePacing } from '../api/operator-env';
import type { KeystoneErrorKind } from './errors';
import { initialPacing, limitOf, paced, type ExchangeOutcome, type PacingOptions, type PacingState } from './pacing';

/** The limits of every endpoint. */
export interface KeystoneLimitOptions {
  /** Requests started per second per endpoint; 0: no limit. */
  readonly requestsPerSecond: number;
  /** Requests in flight per endpoint; 0: no limit. With adaptive pacing, the ceiling of the paced limit. */
  readonly inFlight: number;
  /** How the requests in flight are held. @default 'fixed' */
  readonly pacing?: KeystonePacing;
  /** Adaptive pacing: Keystone workers left free below the capacity measured. @default 1 */
  readonly spareWorkers?: number;
  /** Called with the seconds each request waited for its turn (also 0), for the wait metric. */
  readonly onWait?: (endpoint: string, seconds: number) => void;
  /**
   * Called once per request sent with how it ended: `success` (2xx) or the {@link KeystoneErrorKind} of its failure,
   * for the request metric (a request sent again after a `Retry-After` counts once per send).
   */
  readonly onResult?: (endpoint: string, result: 'success' | KeystoneErrorKind) => void;
}

/** The limit of one endpoint. */
export class EndpointLimit {
  private readonly limiter: Bottleneck;
  private pausedUntil = 0;
  /** `performance.now()` of the last real start; -Infinity before the first. */
  private lastStart = Number.NEGATIVE_INFINITY;
  private readonly spacingMs: number;
  private running = 0;
  private peak = 0;
  /** The pacing's settings and state (adaptive pacing only). */
  private readonly pacing?: PacingOptions;
  private paceState?: PacingState;

  constructor(
    /** The endpoint (auth URL), as metrics name it. */
    readonly endpoint: string,
    private readonly options: KeystoneLimitOptions,
  ) {
    if (!(options.requestsPerSecond >= 0) || !(options.inFlight >= 0) || !Number.isInteger(options.inFlight)) {
      throw new Error(`Keystone limits (${options.requestsPerSecond} per second, ${options.inFlight} in flight) must be 0 (no limit) or positive; in flight a whole number`);
    }
    const spare = options.spareWorkers ?? 1;
    if (!Number.isInteger(spare) || spare < 0) throw new Error(`Keystone spare workers (${spare}) must be a whole number, 0 or more`);
    if (options.pacing !== undefined && !KEYSTONE_PACINGS.includes(options.pacing)) throw new Error(`Keystone pacing (${String(options.pacing)}) must be one of ${KEYSTONE_PACINGS.join(', ')}`);
    this.spacingMs = options.requestsPerSecond > 0 ? 1000 / options.requestsPerSecond : 0;
    if (options.pacing === 'adaptive') {
      this.pacing = { ceiling: options.inFlight, spare };
      this.paceState = initialPacing(this.pacing);
    }
    this.limiter = new Bottleneck({
      maxConcurrent: this.pacing && this.paceState ? limitOf(this.paceState, this.pacing) : options.inFlight > 0 ? options.inFlight : null,
      minTime: this.spacingMs,
    });
  }

  /** The requests in flight allowed now: the paced limit, or the configured one (0: none). */
  get limit(): number {
    return this.pacing && this.paceState ? limitOf(this.paceState, this.pacing) : this.options.inFlight;
  }

  /** Keystone's free workers as the pacing measured them (adaptive pacing; undefined otherwise). */
  get capacity(): number | undefined {
    return this.paceState?.capacity;
  }

  /** Requests in flight now. */
  get inFlight(): number {
    return this.running;
  }

  /** The most requests that were in flight at once. */
  get peakInFlight(): number {
    return this.peak;
  }

  /**
   * Runs `exchange` once its turn comes: after any pause, within the rate and the requests in flight. The wait is
   * reported to `onWait`; the exchange itself holds a slot until it settles. With adaptive pacing, `pace` names the
   * request's route (./pacing.ts, `routeOf`) and tells how it ended, and its latency moves the limit.
   */
  async schedule<T>(exchange: () => Promise<T>, pace?: { readonly route: string; readonly outcome: (settled: { value: T } | { error: unknown }) => ExchangeOutcome }): Promise<T> {
    const queued = performance.now();
    return this.limiter.schedule(async () => {
      // Holding the slot: nothing else starts during a pause either. Checked again after every sleep, since several
      // requests whose timers fired together wake together and only the first of them may start.
      for (;;) {
        const wait = Math.max(this.pausedUntil - Date.now(), this.lastStart + this.spacingMs - performance.now());
        if (wait <= 0) break;
        await sleep(wait);
      }
      const startedAt = (this.lastStart = performance.now());
      this.options.onWait?.(this.endpoint, (startedAt - queued) / 1000);
      const inFlight = ++this.running;
      this.peak = Math.max(this.peak, this.running);
      let settled: { value: T } | { error: unknown } | undefined;
      try {
        const value = await exchange();
        settled = { value };
        return value;
      } catch (error) {
        settled = { error };
        throw error;
      } finally {
        this.running--;
        if (pace && settled) this.paced({ route: pace.route, startedAt, endedAt: performance.now(), inFlight, outcome: pace.outcome(settled) });
      }
    });
  }

  /** Moves the paced limit by one exchange's ending (adaptive pacing only). */
  private paced(exchange: Parameters<typeof paced>[1]): void {
    if (!this.pacing || !this.paceState) return;
    const before = limitOf(this.paceState, this.pacing);
    this.paceState = paced(this.paceState, exchange, this.pacing);
    const after = limitOf(this.paceState, this.pacing);
    if (after !== before) this.limiter.updateSettings({ maxConcurrent: after });
  }

  /** A request to the endpoint ended with `result` (see {@link KeystoneLimitOptions.onResult}). */
  ended(result: 'success' | KeystoneErrorKind): void {
    this.options.onResult?.(this.endpoint, result);
  }

  /** Starts nothing for `ms` (a `Retry-After`); a longer pause already running stays. */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
  }

  /** Milliseconds left of a pause, 0 when none runs. */
  get paused(): number {
    return Math.max(0, this.pausedUntil - Date.now());
  }
}

/** The limits of every Keystone endpoint the process talks to, created on first use. */
export class KeystoneLimits {
  private readonly endpoints = new Map<string, EndpointLimit>();

  constructor(readonly options: KeystoneLimitOptions) {
    // validate once, up front, so a bad setting fails at start rather than at the first request
    void new EndpointLimit('', options);
  }

  /** The limit of `endpoint` (an auth URL). */
  of(endpoint: string): EndpointLimit {
    let limit = this.endpoints.get(endpoint);
    if (!limit) {
      limit = new EndpointLimit(endpoint, this.options);
      this.endpoints.set(endpoint, limit);
    }
    return limit;
  }

  /** The endpoints seen so far. */
  all(): EndpointLimit[] {
    return [...this.endpoints.values()];
  }
}

/** The longest `Retry-After` honoured: a longer one fails the request at once (retried by the caller's backoff). */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Milliseconds to wait for a `Retry-After` header (RFC 9110 §10.2.3: delay-seconds or an HTTP-date), or undefined
 * when there is none or it cannot be read.
 */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
