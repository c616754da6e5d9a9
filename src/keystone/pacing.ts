/**
 * Pacing: how many requests the operator may have in flight at one Keystone endpoint now, so that a mass rotation (a
 * fleet-wide generation raise, a mass expiry after an outage, the first start on a big cluster) takes Keystone's spare
 * capacity and never its queue. Keystone's other users, people logging in and services validating tokens, keep their
 * latency, and the fleet converges at what is left.
 *
 * The rule is a background sender's, as LEDBAT (RFC 6817, "low extra delay background transport") yields to every
 * other flow by keeping the queueing delay it causes below a target, applied to requests in flight the way TCP Vegas
 * sizes a window and Netflix's concurrency-limits and Envoy's adaptive concurrency filter size a limit from latency:
 *
 * - Keystone serves each request on a worker (a process or thread of its WSGI server: one in the project's test
 *   Keystone, a few per host behind uWSGI or mod_wsgi in a deployment); a request that finds every worker busy waits,
 *   and that wait shows in the latency the operator observes. A request's **delay** is how much longer than its
 *   route's baseline it took, as a share of the baseline (none within {@link JITTER_MS} of it); the baseline is the least
 *   latency seen lately for the same method and path (ids left out): Keystone's own cost of that request, bcrypt
 *   included.
 * - The pacing judges **rounds**: as many answered requests as the limit allows in flight, all sent since the round
 *   began; the first round after a change of the limit only lets the change take effect (a request sent under an
 *   older limit moves the baseline only, as TCP reduces once per round trip).
 *   A round whose mean delay is above `tolerance` queued (in slow start, so did one whose requests with the most in
 *   flight were delayed that much on average): Keystone had fewer workers free for us than we had in flight, and how
 *   many it did have is our mean requests in flight ÷ (1 + mean delay) (Little's law, Vegas's estimate). `capacity`,
 *   what the operator has measured of Keystone's free workers, falls to that (at least 1). A timeout, a 429 or a 503
 *   is a fall at once, to one less than were in flight.
 * - The limit is `capacity − spare` (at least 1, at most the ceiling, `--keystone-in-flight`): `spare` workers stay
 *   free for whoever comes next, so another user's request finds a worker instead of a queue. On a Keystone with one
 *   worker the limit is 1, and another user's request waits for at most the one request of ours in service; with
 *   many, the `tolerance` bounds what ours add to anyone's wait (a quarter of a request's cost, on average).
 * - Finding the capacity needs a **probe**: a round at more than the capacity that does not queue raises it to the
 *   most that were in flight, and the probe goes on one higher; a round that queues ends it and sets the capacity as
 *   above (the first round after the raise too, though it is otherwise not judged), and so does a round that did not
 *   fill the limit (the work thinned out: nothing more to learn, and the spare workers go back at once). The first probe starts at once and doubles while it succeeds (slow start: a big Keystone is found in a few
 *   rounds); after the first queueing a probe starts only when the limit is in full use and `probeEveryMs` has passed
 *   since the last, and that wait doubles after each probe that gained nothing (up to {@link MAX_PROBE_BACKOFF}
 *   times), so a Keystone whose capacity is known is probed rarely: under 1 % of the time with one worker.
 *
 * One pacing per endpoint (auth URL), shared by every session and every target cluster of the process
 * (src/keystone/limits.ts applies it): the capacity it measures is what that Keystone has free for this process.
 * Two operators on one Keystone each see the other as another user. Pure: the state goes in, the next comes out.
 */

/** The pacing's settings. */
export interface PacingOptions {
  /** The most requests in flight, whatever the capacity (`--keystone-in-flight`); 0: no ceiling. */
  readonly ceiling: number;
  /** Keystone workers left free below the measured capacity (`--keystone-spare-workers`). */
  readonly spare: number;
  /** The mean delay of a round (a share of the requests' own cost) above which it queued. @default 0.25 */
  readonly tolerance?: number;
  /** The least time between two probes once the capacity is known, in ms. @default 60000 */
  readonly probeEveryMs?: number;
  /** How long the least latency of a route is remembered as its baseline (at least this, at most twice), in ms. @default 600000 */
  readonly baselineWindowMs?: number;
}

/** The defaults of the optional settings. */
export const PacingDefaults = {
  tolerance: 0.25,
  probeEveryMs: 60_000,
  baselineWindowMs: 600_000,
} as const;

/**
 * Milliseconds above its baseline within which a request counts as not delayed at all: the client's event loop and the
 * network vary by this much, which for a cheap request (a list of ~30 ms) is more than the tolerance.
 */
export const JITTER_MS = 25;

/** The wait between probes grows to at most this many times `probeEveryMs` while probes fail. */
export const MAX_PROBE_BACKOFF = 8;

/** A route's least latency lately: the least of this window and of the window before. */
export interface Baseline {
  /** The least latency of the current window, ms. */
  readonly least: number;
  /** The least latency of the window before, ms (Infinity: none). */
  readonly before: number;
  /** When the current window began (ms, the exchanges' clock). */
  readonly since: number;
}

/** A round's requests so far. */
export interface Round {
  /** When it began: requests sent before do not count. */
  readonly since: number;
  /** Whether it is judged: the first round after the limit changed only lets the change take effect. */
  readonly judged: boolean;
  readonly count: number;
  /** The sum of their delays. */
  readonly delay: number;
  /** The most in flight at one's start. */
  readonly most: number;
  /** The sum of the delays of those that started with the most in flight (the level the round tested). */
  readonly delayAtMost: number;
  /** How many started with the most in flight. */
  readonly countAtMost: number;
}

/** What the pacing knows of one endpoint. */
export interface PacingState {
  /** Keystone's free workers as measured: the most requests in flight answered without queueing. */
  readonly capacity: number;
  /** Whether a probe runs: the limit is above the capacity. */
  readonly probing: boolean;
  /** The capacity when the running probe started (a probe that ends no higher failed). */
  readonly probeFrom: number;
  /** Whether Keystone has never queued a request of ours yet (the probe then doubles after each success). */
  readonly slowStart: boolean;
  /** The round being judged: the answered requests sent since the limit last changed. */
  readonly round: Round;
  /** When the next probe may start. */
  readonly probeAt: number;
  /** The wait before the next probe, ms (`probeEveryMs`, doubled by each failed probe). */
  readonly probeWaitMs: number;
  /** Each route's baseline, by `METHOD path` (ids left out). */
  readonly baselines: Readonly<Record<string, Baseline>>;
}

/** How an exchange ended, for the pacing. */
export type ExchangeOutcome =
  /** A 2xx reply: its latency counts, for the baseline and for queueing. */
  | 'answered'
  /** A timeout, a 429 or a 503: Keystone was overloaded, as a queued request says. */
  | 'overloaded'
  /** Anything else (a refusal, a transport error): says nothing about Keystone's queue. */
  | 'other';

/** One exchange with the endpoint, as the pacing sees it. */
export interface Exchange {
  /** `METHOD path`, ids left out ({@link routeOf}). */
  readonly route: string;
  /** When it started (after its wait for the limit), ms. */
  readonly startedAt: number;
  /** When it ended, ms (the same clock). */
  readonly endedAt: number;
  /** Requests of ours in flight at its start, itself included. */
  readonly inFlight: number;
  readonly outcome: ExchangeOutcome;
}

/** The pacing before the first exchange: nothing measured, one request at a time, a probe at once (slow start). */
export function initialPacing(options: PacingOptions): PacingState {
  return { capacity: 0, probing: true, probeFrom: 0, slowStart: true, round: roundFrom(Number.NEGATIVE_INFINITY), probeAt: 0, probeWaitMs: options.probeEveryMs ?? PacingDefaults.probeEveryMs, baselines: {} };
}

/** The requests in flight the pacing allows now. */
export function limitOf(state: PacingState, options: PacingOptions): number {
  const wanted = !state.probing ? state.capacity - options.spare : state.slowStart ? Math.max(state.capacity + 1, 2 * state.capacity) : state.capacity + 1;
  return Math.max(1, Math.min(ceilingOf(options), wanted));
}

/** The route of a request for its baseline: the method and the path without query, Keystone's ids as `{id}`. */
export function routeOf(method: string, path: string): string {
  const bare = path.split('?')[0] ?? path;
  return `${method} ${bare.replace(/\/(?:[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?=\/|$)/g, '/{id}')}`;
}

/** The state after `exchange` ended. */
export function paced(state: PacingState, exchange: Exchange, options: PacingOptions): PacingState {
  const now = exchange.endedAt;
  const tolerance = options.tolerance ?? PacingDefaults.tolerance;
  const latency = exchange.endedAt - exchange.startedAt;
  let next = state;
  let delay = 0;
  if (exchange.outcome === 'answered') {
    const baseline = rolled(state.baselines[exchange.route], latency, now, options.baselineWindowMs ?? PacingDefaults.baselineWindowMs);
    next = { ...state, baselines: { ...state.baselines, [exchange.route]: baseline } };
    const least = Math.min(baseline.least, baseline.before);
    delay = latency <= least + JITTER_MS ? 0 : latency / least - 1;
  }
  // Sent under an older limit: what it says was judged with that limit's round.
  if (exchange.startedAt < state.round.since || exchange.outcome === 'other') return next;
  if (exchange.outcome === 'overloaded') return fell(next, exchange.inFlight - 1, now, options);
  const before = state.round;
  const atMost = exchange.inFlight > before.most ? { most: exchange.inFlight, delayAtMost: delay, countAtMost: 1 } : exchange.inFlight === before.most ? { most: before.most, delayAtMost: before.delayAtMost + delay, countAtMost: before.countAtMost + 1 } : {};
  const round: Round = { ...before, count: before.count + 1, delay: before.delay + delay, ...atMost };
  const limit = limitOf(state, options);
  if (round.count < limit) return { ...next, round };
  // The round is complete: judge it. A mean delay above the tolerance is a queue. Keystone served `served` of ours at
  // once (Little's law: the requests in flight over the latency's share of the cost), judged by the requests that
  // started at the level the round tested (the others, sent while the queue was still forming, waited less).
  const ceiling = ceilingOf(options);
  const delayAtMost = round.delayAtMost / round.countAtMost;
  // Slow start also queued when the requests at the level it tested did, however many it sent below that level:
  // doubling, it tests levels far above what it proved, and it waits for the work rather than ending when a round
  // does not fill it (below), so the requests of a burst's lower levels and of the work thinning out after it must
  // not average its queue away (issue 48's simulation, seed 460001 schedule 49: 5 to 7 in flight on 4 workers each
  // waited half a request's cost, the round's mean of 8 stayed under the tolerance, and 8 in flight stayed allowed
  // for hours). A probe adds one level, where one request waiting behind another is not yet a queue: its round's
  // mean judges it, and a round it does not fill ends it.
  const queued = round.delay / round.count > tolerance || (state.slowStart && delayAtMost > tolerance);
  const served = Math.min(ceiling, Math.round(round.most / (1 + delayAtMost)));
  // The first round after a raise of the limit queued already: the probe is over now, not a judged round later (with
  // little work that round may never fill, and the limit would stay above what Keystone has free: issue 48's
  // simulation, seed 460002 schedule 12).
  const probeQueued = state.probing && queued;
  if (!round.judged && !probeQueued) return { ...next, round: roundFrom(now, true) };
  if (queued) return fell(next, served, now, options);
  const full = round.most >= limit;
  if (state.probing && full) {
    // Everything the probe sent was served at once: one higher (doubling in slow start), unless the ceiling is reached.
    if (served >= round.most && served < ceiling) return { ...next, capacity: served, round: roundFrom(now) };
    return settled(next, Math.max(state.capacity, served), now, options);
  }
  // A probe whose judged round did not fill its limit learns nothing more: it ends, and the spare workers go back to
  // Keystone's other users until the work fills the limit again (left open, a probe held them as long as the work
  // stayed light: issue 48's simulation, seed 460002 schedule 10). Slow start waits for the work instead.
  if (state.probing && !state.slowStart) return settled(next, state.capacity, now, options);
  // The limit in full use and the wait over: Keystone may have more free than measured (unless the ceiling is reached).
  if (!state.probing && full && now >= state.probeAt && state.capacity < ceiling) return { ...next, probing: true, probeFrom: state.capacity, round: roundFrom(now) };
  return { ...next, round: roundFrom(now, true) };
}

/** The state after a round queued (or a request was refused as overloaded): the capacity falls to `served` (at least 1). */
function fell(state: PacingState, served: number, now: number, options: PacingOptions): PacingState {
  return settled(state, Math.max(1, state.probing ? served : Math.min(state.capacity, served)), now, options);
}

/**
 * The state with the capacity measured, any probe over: the next probe waits `probeEveryMs`, or twice as long as the
 * last wait when this probe gained nothing (up to {@link MAX_PROBE_BACKOFF} times).
 */
function settled(state: PacingState, capacity: number, now: number, options: PacingOptions): PacingState {
  const every = options.probeEveryMs ?? PacingDefaults.probeEveryMs;
  const gainedNothing = state.probing && !state.slowStart && capacity <= state.probeFrom;
  const probeWaitMs = !state.probing ? state.probeWaitMs : gainedNothing ? Math.min(state.probeWaitMs * 2, every * MAX_PROBE_BACKOFF) : every;
  return { ...state, capacity, probing: false, slowStart: false, round: roundFrom(now), probeAt: now + probeWaitMs, probeWaitMs };
}

/** An empty round from `since`: the first after a change of the limit (not judged), or the next. */
function roundFrom(since: number, judged = false): Round {
  return { since, judged, count: 0, delay: 0, most: 0, delayAtMost: 0, countAtMost: 0 };
}

/** The ceiling as a number (0: none). */
function ceilingOf(options: PacingOptions): number {
  return options.ceiling > 0 ? options.ceiling : Number.POSITIVE_INFINITY;
}

/** A route's baseline with one more latency: a new window every `window` ms, the old one kept as `before`. */
function rolled(baseline: Baseline | undefined, latency: number, now: number, window: number): Baseline {
  if (!baseline) return { least: latency, before: Number.POSITIVE_INFINITY, since: now };
  if (now - baseline.since >= window) return { least: latency, before: now - baseline.since >= 2 * window ? Number.POSITIVE_INFINITY : baseline.least, since: now };
  return { ...baseline, least: Math.min(baseline.least, latency) };
}
