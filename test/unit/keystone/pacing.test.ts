/**
 * The pacing of one Keystone endpoint (src/keystone/pacing.ts): the rule alone, and the rule driving a mass rotation
 * against a model of Keystone (W workers serving requests in arrival order, each request its route's cost), with and
 * without another user logging in beside it: the operator takes what Keystone has free less the spare workers, never
 * stalls, probes rarely once it knows, and another user's request waits for at most one request of the operator's.
 */
import fc from 'fast-check';
import { MAX_PROBE_BACKOFF, PacingDefaults, initialPacing, limitOf, paced, routeOf, type Exchange, type PacingOptions, type PacingState } from '../../../src/keystone/pacing';

const CREATE = routeOf('POST', '/v3/users/0123456789abcdef0123456789abcdef/application_credentials');
const LIST = routeOf('GET', '/v3/users/0123456789abcdef0123456789abcdef/application_credentials?name=x');

/** An exchange of `route` that started at `at` with `inFlight` in flight and took `ms`. */
const ex = (route: string, at: number, ms: number, inFlight: number, outcome: Exchange['outcome'] = 'answered'): Exchange => ({ route, startedAt: at, endedAt: at + ms, inFlight, outcome });

/** Runs exchanges through the rule from `state`. */
const run = (state: PacingState, exchanges: readonly Exchange[], options: PacingOptions) => exchanges.reduce((s, e) => paced(s, e, options), state);

describe('routeOf', () => {
  test('leaves Keystone ids and the query out, keeps the method and the rest of the path', () => {
    expect(CREATE).toBe('POST /v3/users/{id}/application_credentials');
    expect(LIST).toBe('GET /v3/users/{id}/application_credentials');
    expect(routeOf('DELETE', '/v3/users/0123456789abcdef0123456789abcdef/application_credentials/fedcba9876543210fedcba9876543210')).toBe('DELETE /v3/users/{id}/application_credentials/{id}');
    expect(routeOf('POST', '/v3/auth/tokens')).toBe('POST /v3/auth/tokens');
    expect(routeOf('GET', '/v3/projects/0b8c5e3a-1f2d-4c3b-9a8e-7d6c5b4a3f2e')).toBe('GET /v3/projects/{id}');
  });
});

describe('the pacing rule', () => {
  const options: PacingOptions = { ceiling: 8, spare: 1 };
  /** A round of `n` requests of `route` that started at `at` with `n` in flight, each taking `ms`. */
  const round = (at: number, n: number, ms: number, route = CREATE) => Array.from({ length: n }, () => ex(route, at, ms, n));
  /**
   * The limit held at `n` for two rounds from `at`, each request taking `ms`: the first lets the change take effect,
   * the second is judged. Returns the state and when the second round ended.
   */
  const held = (s: PacingState, at: number, n: number, ms: number, o = options, route = CREATE) => run(s, [...round(at, n, ms, route), ...round(at + ms, n, ms, route)], o);

  test('starts at one request in flight and doubles while nothing queues (slow start), up to the ceiling less the spare', () => {
    let s = initialPacing(options);
    expect(limitOf(s, options)).toBe(1);
    s = held(s, 0, 1, 300);
    expect([s.capacity, limitOf(s, options)]).toEqual([1, 2]);
    s = held(s, 600, 2, 300);
    expect([s.capacity, limitOf(s, options)]).toEqual([2, 4]);
    s = held(s, 1200, 4, 300);
    expect([s.capacity, limitOf(s, options)]).toEqual([4, 8]);
    // the ceiling (8 in flight) measured free: no probe beyond it, one worker left spare
    s = held(s, 1800, 8, 300);
    expect([s.capacity, s.probing, s.slowStart, limitOf(s, options)]).toEqual([8, false, false, 7]);
  });

  test('the first round after a change only lets it take effect; the second is judged', () => {
    const s = run(initialPacing(options), round(0, 1, 300), options);
    expect([s.capacity, s.round.judged]).toEqual([0, true]);
  });

  test('a round that queued sets the capacity to what Keystone served at once, Little\'s law: in flight ÷ the latency over the cost; requests sent before do not count again', () => {
    let s = held(held(initialPacing(options), 0, 1, 300), 600, 2, 300);
    expect(limitOf(s, options)).toBe(4);
    // 3 workers free, 4 in flight: each took 4/3 of its cost
    s = held(s, 1200, 4, 400);
    expect([s.capacity, s.slowStart, s.probing, limitOf(s, options)]).toEqual([3, false, false, 2]);
    const fellAt = s.round.since;
    // requests sent before that fall, answered after it: judged already
    s = run(s, round(fellAt - 100, 4, 900), options);
    expect([s.capacity, s.round.count]).toEqual([3, 0]);
    // two in flight after the fall, each waiting a whole request: someone else took two workers
    s = held(s, fellAt, 2, 600);
    expect([s.capacity, limitOf(s, options)]).toEqual([1, 1]);
  });

  test('a probe whose first round (the one that only lets the change take effect) queued is over at once: the limit does not wait for a judged round that little work may never fill', () => {
    let s = held(held(initialPacing(options), 0, 1, 300), 600, 2, 300);
    expect(limitOf(s, options)).toBe(4);
    // two workers: the four sent at the new limit took twice their cost
    s = run(s, round(1200, 4, 600), options);
    expect([s.capacity, s.probing, s.slowStart, limitOf(s, options)]).toEqual([2, false, false, 1]);
  });

  test('a probe whose judged round did not fill its limit ends: the spare goes back until the work fills the limit again', () => {
    const every = PacingDefaults.probeEveryMs;
    // four workers measured (a round of 8 that queued), the limit 3; in full use past the wait: a probe at 5
    let s = held(held(held(initialPacing(options), 0, 1, 300), 600, 2, 300), 1200, 4, 300);
    s = held(s, 1800, 8, 600);
    expect([s.capacity, s.probing, limitOf(s, options)]).toEqual([4, false, 3]);
    s = held(s, 2400 + every, 3, 300);
    expect([s.probing, limitOf(s, options)]).toEqual([true, 5]);
    // the work thins out: two requests in flight at a time, for two rounds of the probe's five answers
    s = run(s, Array.from({ length: 10 }, (_, i) => ex(CREATE, 3000 + every + Math.floor(i / 2) * 300, 300, 2)), options);
    expect([s.capacity, s.probing, limitOf(s, options)]).toEqual([4, false, 3]);
  });

  test('a round in which the queue was still forming is judged by its requests at the level it tested', () => {
    let s = held(held(initialPacing(options), 0, 1, 300), 600, 2, 300);
    s = run(s, round(1200, 4, 300), options);
    // one worker: four sent at once with 1, 2, 3 and 4 in flight, each waiting for those before it
    s = run(s, [1, 2, 3, 4].map((n) => ex(CREATE, 1500, 300 * n, n)), options);
    expect([s.capacity, limitOf(s, options)]).toEqual([1, 1]);
  });

  test('in slow start, a round queued when its requests at the level it tested did, however many it sent below that level (issue 48\'s simulation, seed 460001 schedule 49)', () => {
    // four workers found free in slow start: the limit doubles to 8
    let s = held(held(held(initialPacing(options), 0, 1, 300), 600, 2, 300), 1200, 4, 300);
    expect([s.capacity, s.slowStart, limitOf(s, options)]).toEqual([4, true, 8]);
    // a burst: four served at once, the 5th to 7th in flight each waited half a request's cost; then the work thins
    // out to one at a time. The round's mean delay (1.5 over 8) is under the tolerance, its level's (0.5) is not.
    s = run(s, [...round(1800, 4, 300), ...[5, 6, 7].map((n) => ex(CREATE, 1800 + 50 * (n - 4), 450, n)), ex(CREATE, 2500, 300, 1)], options);
    expect([s.capacity, s.probing, s.slowStart, limitOf(s, options)]).toEqual([5, false, false, 4]);
    // the thin work after it changes nothing (slow start held 8 allowed through it, for hours in the simulation)
    s = run(s, Array.from({ length: 16 }, (_, i) => ex(CREATE, 3000 + 300 * i, 300, 1)), options);
    expect(limitOf(s, options)).toBe(4);
  });

  test('never below one request in flight, whatever queues', () => {
    let s = held(initialPacing(options), 0, 1, 300);
    s = held(s, 600, 2, 3000);
    expect([s.capacity, limitOf(s, options)]).toEqual([1, 1]);
    s = paced(s, ex(CREATE, 7000, 30_000, 1, 'overloaded'), options);
    expect(limitOf(s, options)).toBe(1);
  });

  test('a timeout, a 429 or a 503 is a fall at once to one less than were in flight; a refusal or a transport error says nothing', () => {
    const warm = held(held(held(initialPacing(options), 0, 1, 300), 600, 2, 300), 1200, 4, 300);
    expect(warm.capacity).toBe(4);
    expect(paced(warm, ex(CREATE, 2000, 5, 3, 'overloaded'), options).capacity).toBe(2);
    expect(paced(warm, ex(CREATE, 2000, 1, 3, 'other'), options)).toEqual(warm);
  });

  test('each route has its own baseline, and the jitter of a cheap one is not a queue', () => {
    let s = held(held(initialPacing(options), 0, 1, 300), 600, 1, 30, options, LIST);
    s = held(s, 700, 2, 30, options, LIST);
    expect(s.capacity).toBe(2);
    // lists of 30 ms that took 55: the client's jitter (within 25 ms of the baseline), not a queue
    s = held(s, 800, 4, 55, options, LIST);
    expect(s.capacity).toBe(4);
    // lists that waited behind creates (330 ms): queued
    s = held(s, 1000, 8, 330, options, LIST);
    expect(s.capacity).toBe(1);
    expect(s.baselines[LIST]?.least).toBe(30);
    expect(s.baselines[CREATE]?.least).toBe(300);
  });

  test('the baseline forgets: a Keystone that became slower (a higher bcrypt cost) is its new normal after two windows', () => {
    const window = PacingDefaults.baselineWindowMs;
    let s = run(initialPacing(options), [ex(CREATE, 0, 300, 1)], options);
    s = paced(s, ex(CREATE, window + 1, 900, 1), options);
    expect(s.baselines[CREATE]).toMatchObject({ least: 900, before: 300 });
    s = paced(s, ex(CREATE, 2 * window + 2000, 900, 1), options);
    expect(Math.min(s.baselines[CREATE]?.least ?? 0, s.baselines[CREATE]?.before ?? 0)).toBe(900);
  });

  test('after the first queueing a probe starts only with the limit in full use and the wait over; it climbs while it gains, and one that gains nothing doubles the wait, up to the most', () => {
    const every = PacingDefaults.probeEveryMs;
    // one worker: the slow start's rounds at 2 queued (each request waited for the other)
    let s = held(held(initialPacing(options), 0, 1, 300), 600, 2, 600);
    expect([s.capacity, s.probing, limitOf(s, options)]).toEqual([1, false, 1]);
    // in full use (1 of 1) before the wait is over: no probe
    expect(held(s, s.round.since, 1, 300).probing).toBe(false);
    s = held(s, s.probeAt, 1, 300);
    expect([s.probing, limitOf(s, options)]).toEqual([true, 2]);
    // the probe queued: the capacity stays 1, the next probe waits twice as long
    s = held(s, s.round.since, 2, 600);
    expect([s.capacity, s.probing, s.probeWaitMs]).toEqual([1, false, 2 * every]);
    for (let i = 0; i < 10; i++) s = held(held(s, s.probeAt, 1, 300), s.probeAt + 600, 2, 600);
    expect(s.probeWaitMs).toBe(MAX_PROBE_BACKOFF * every);
    // a probe that gains climbs on (2, then 3 free) until a round queues, and resets the wait
    s = held(s, s.probeAt, 1, 300);
    s = held(s, s.round.since, 2, 300);
    expect([s.capacity, s.probing, limitOf(s, options)]).toEqual([2, true, 3]);
    s = held(s, s.round.since, 3, 300);
    s = held(s, s.round.since, 4, 400);
    expect([s.capacity, s.probing, s.probeWaitMs, limitOf(s, options)]).toEqual([3, false, every, 2]);
  });

  test('no ceiling (0): the measured capacity alone', () => {
    const open: PacingOptions = { ceiling: 0, spare: 2 };
    let s = initialPacing(open);
    for (let n = 1; n <= 16; n *= 2) s = held(s, Math.max(0, s.round.since), n, 300, open);
    expect([s.capacity, s.probing, limitOf(s, open)]).toEqual([16, true, 32]);
    // 32 in flight, 20 free: each took 1.6 times its cost
    s = held(s, s.round.since, 32, 480, open);
    expect([s.capacity, limitOf(s, open)]).toEqual([20, 18]);
  });

  test('property: the limit is always a whole number between 1 and the ceiling', () => {
    const exchange = fc.record({
      route: fc.constantFrom(CREATE, LIST),
      gap: fc.nat(120_000),
      ms: fc.integer({ min: 1, max: 40_000 }),
      inFlight: fc.integer({ min: 1, max: 20 }),
      outcome: fc.constantFrom<Exchange['outcome']>('answered', 'answered', 'answered', 'overloaded', 'other'),
    });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 16 }), fc.integer({ min: 0, max: 3 }), fc.array(exchange, { maxLength: 80 }), (ceiling, spare, exchanges) => {
        const o: PacingOptions = { ceiling, spare };
        let s = initialPacing(o);
        let at = 0;
        for (const e of exchanges) {
          at += e.gap;
          s = paced(s, ex(e.route, at, e.ms, e.inFlight, e.outcome), o);
          const limit = limitOf(s, o);
          expect(limit).toBeGreaterThanOrEqual(1);
          if (ceiling > 0) expect(limit).toBeLessThanOrEqual(ceiling);
          expect(Number.isInteger(limit)).toBe(true);
        }
      }),
    );
  });
});

/** A request in the model of Keystone. */
interface Request {
  readonly who: 'operator' | 'other';
  readonly cost: number;
  readonly arrivedAt: number;
  /** Operator requests in flight at its start, itself included. */
  readonly inFlight: number;
  doneAt?: number;
}

/** What a simulated mass rotation did. */
interface Outcome {
  /** Completed operator requests. */
  readonly operatorDone: number;
  /** Milliseconds with k operator requests in flight, by k. */
  readonly inFlightTime: number[];
  /** The other user's waits (ms before a worker took its request). */
  readonly otherWaits: number[];
  /** The pacing at the end (adaptive only). */
  readonly state?: PacingState;
}

/** How the operator's requests in flight are held in a simulation: by the pacing, or fixed at a number. */
type Held = PacingOptions | { readonly fixed: number };

/**
 * A mass rotation with endless demand (a request of the operator's starts whenever the limit allows) against a model
 * of Keystone: `workers` serve requests in arrival order, each taking its cost. With `otherEveryMs`, another user sends
 * a request of `otherCost` that often.
 */
function simulate(held: Held, workers: number, durationMs: number, cost = 300, otherEveryMs = 0, otherCost = 280): Outcome {
  const pacing = 'fixed' in held ? undefined : held;
  let state = pacing ? initialPacing(pacing) : undefined;
  const limit = () => (pacing && state ? limitOf(state, pacing) : (held as { fixed: number }).fixed);
  const serving: Request[] = [];
  const waiting: Request[] = [];
  let now = 0;
  let ours = 0;
  let operatorDone = 0;
  const inFlightTime: number[] = [];
  const otherWaits: number[] = [];
  let nextOther = otherEveryMs > 0 ? otherEveryMs / 2 : Number.POSITIVE_INFINITY;
  const serve = (r: Request) => {
    r.doneAt = now + r.cost;
    serving.push(r);
    if (r.who === 'other') otherWaits.push(now - r.arrivedAt);
  };
  const arrive = (r: Request) => (serving.length < workers ? serve(r) : waiting.push(r));
  const fill = () => {
    while (ours < limit()) arrive({ who: 'operator', cost, arrivedAt: now, inFlight: ++ours });
  };
  fill();
  while (now < durationMs) {
    const done = serving.reduce((a, b) => ((a.doneAt as number) <= (b.doneAt as number) ? a : b));
    const at = Math.min(done.doneAt as number, nextOther);
    inFlightTime[ours] = (inFlightTime[ours] ?? 0) + (at - now);
    now = at;
    if (nextOther < (done.doneAt as number)) {
      arrive({ who: 'other', cost: otherCost, arrivedAt: now, inFlight: 0 });
      nextOther += otherEveryMs;
      continue;
    }
    serving.splice(serving.indexOf(done), 1);
    const next = waiting.shift();
    if (next) serve(next);
    if (done.who === 'operator') {
      ours--;
      operatorDone++;
      if (pacing && state) state = paced(state, { route: CREATE, startedAt: done.arrivedAt, endedAt: now, inFlight: done.inFlight, outcome: 'answered' }, pacing);
      fill();
    }
  }
  return { operatorDone, inFlightTime, otherWaits, ...(state ? { state } : {}) };
}

/** The share of the time with an in-flight count `k` accepts. */
const share = (time: readonly number[], k: (n: number) => boolean) => time.reduce((sum, t, n) => sum + (k(n) ? (t ?? 0) : 0), 0) / time.reduce((a, b) => a + (b ?? 0), 0);
/** The 99th percentile. */
const p99 = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1] ?? 0;

describe('the pacing against a model of Keystone', () => {
  const HOUR = 3_600_000;

  test('one worker (the test Keystone): one request in flight, a second only while a probe runs (under 1 % of the time), the worker busy all along', () => {
    const o: PacingOptions = { ceiling: 8, spare: 1 };
    const out = simulate(o, 1, HOUR);
    expect(share(out.inFlightTime, (n) => n >= 2)).toBeLessThan(0.01);
    expect(share(out.inFlightTime, (n) => n === 0)).toBe(0);
    expect(out.operatorDone).toBeGreaterThanOrEqual(Math.floor(HOUR / 300) - 1);
    expect(limitOf(out.state as PacingState, o)).toBe(1);
  });

  test('one worker, another user logging in every second: it waits for at most the one request in service (p99), where the fixed limit of before made it wait for eight', () => {
    const out = simulate({ ceiling: 8, spare: 1 }, 1, HOUR, 300, 1000, 280);
    expect(p99(out.otherWaits)).toBeLessThanOrEqual(300);
    // the operator takes the rest of Keystone's time: 1 − 280/1000 of it, at 300 ms a request
    expect(out.operatorDone).toBeGreaterThanOrEqual(Math.floor(((HOUR * 0.72) / 300) * 0.99));
    const fixed = simulate({ fixed: 8 }, 1, HOUR, 300, 1000, 280);
    expect(p99(fixed.otherWaits)).toBeGreaterThan(7 * 300);
  });

  test('W workers, nobody else: the operator settles at W − spare (a probe now and then), not at the ceiling beyond them', () => {
    for (const [workers, spare] of [
      [4, 1],
      [6, 2],
      [3, 0],
    ] as const) {
      const out = simulate({ ceiling: 16, spare }, workers, HOUR);
      expect(share(out.inFlightTime, (n) => n === workers - spare)).toBeGreaterThan(0.97);
      expect(share(out.inFlightTime, (n) => n > workers)).toBeLessThan(0.01);
    }
  });

  test('W workers and the ceiling below them: the ceiling less the spare', () => {
    const out = simulate({ ceiling: 8, spare: 1 }, 20, HOUR);
    expect(share(out.inFlightTime, (n) => n === 7)).toBeGreaterThan(0.99);
  });

  test('W workers that others keep partly busy: the operator takes what they leave, and their requests find a worker', () => {
    // 6 workers; a request of 280 ms every 100 ms keeps about 3 of them busy
    const out = simulate({ ceiling: 16, spare: 1 }, 6, HOUR, 300, 100, 280);
    expect(p99(out.otherWaits)).toBeLessThanOrEqual(300);
    expect(share(out.inFlightTime, (n) => n === 0)).toBe(0);
    expect(share(out.inFlightTime, (n) => n >= 5)).toBeLessThan(0.05);
  });

  test('property: against any Keystone, with or without others, the operator never stalls and holds more than W − spare only while probing', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 12 }), fc.constantFrom(0, 500, 2000), (workers, spare, ceiling, otherEvery) => {
        const out = simulate({ ceiling, spare }, workers, 20 * 60_000, 300, otherEvery, 280);
        expect(share(out.inFlightTime, (n) => n === 0)).toBe(0);
        expect(share(out.inFlightTime, (n) => n > Math.max(1, workers - spare) + 1)).toBeLessThan(0.02);
      }),
      { numRuns: 40 },
    );
  });
});
