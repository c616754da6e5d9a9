/**
 * Property: whatever the interleaving of adds, requeue-afters, worker pick-ups, successes, failures (backoff) and the
 * clock, with any number of workers, the work queue
 * - never hands one key to two workers at once;
 * - reconciles every key after every add: each `add` is followed by a hand-out of that key, each `addAfter(d)` by one
 *   no earlier than `d` from then (unless an earlier wake-up of the key was already pending: the earliest wins);
 * - hands out nothing nobody asked for (every hand-out answers an add, a wake-up or a retry still open);
 * - on shutdown hands out nothing more, wakes every idle worker with `undefined`, and drains: the drain resolves once,
 *   and only once, every worker holding a key has called `done`.
 * fast-check shrinks a failing run to the shortest sequence of steps that shows it.
 */
import fc from 'fast-check';
import { WorkQueue } from '../../../../src/operator/runtime/queue';

const KEYS = ['a', 'b', 'c'] as const;
type Key = (typeof KEYS)[number];

type Step =
  | { readonly op: 'add'; readonly key: Key }
  | { readonly op: 'addAfter'; readonly key: Key; readonly ms: number }
  | { readonly op: 'advance'; readonly ms: number }
  | { readonly op: 'take'; readonly worker: number }
  /** Every idle worker asks for a key, as the controller's workers do. */
  | { readonly op: 'takeAll' }
  | { readonly op: 'finish'; readonly worker: number; readonly outcome: 'success' | 'failure' | 'requeue'; readonly ms: number }
  | { readonly op: 'shutdown' };

const key = fc.constantFrom(...KEYS);
const worker = fc.nat({ max: 7 });
// Few distinct delays, so that wake-ups of one key meet and overtake each other often.
const delay = fc.constantFrom(0, 10, 40, 100, 250);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('add' as const), key }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('addAfter' as const), key, ms: delay }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.constantFrom(5, 30, 60, 120) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('take' as const), worker }) },
  { weight: 2, arbitrary: fc.constant({ op: 'takeAll' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('finish' as const), worker, outcome: fc.constantFrom('success' as const, 'failure' as const, 'requeue' as const), ms: delay }),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'shutdown' as const }) },
);

/** Something the queue owes: a hand-out of `key` after step `after`, at `notBefore` or later. */
interface Owed {
  readonly key: Key;
  readonly after: number;
  readonly notBefore: number;
}

interface Worker {
  holds?: Key;
  asking: boolean;
  /** Resolved with undefined: the queue shut down under it. */
  dismissed: boolean;
}


async function run(workers: number, steps: readonly Step[]): Promise<void> {
  // Deterministic backoff (no jitter), short enough that retries come back within a run.
  const q = new WorkQueue({ backoff: { baseMs: 10, maxMs: 80, random: () => 0 } });
  const crew: Worker[] = Array.from({ length: workers }, () => ({ asking: false, dismissed: false }));
  let owed: Owed[] = [];
  /** The earliest pending wake-up per key, as the queue must keep it. */
  const wakeUp = new Map<Key, number>();
  let seq = 0;
  let stopped = false;
  /** What a hand-out (in a promise callback) found wrong; thrown after the step. */
  const broken: unknown[] = [];
  let drained: boolean | undefined;
  let drainPromise: Promise<boolean> | undefined;

  const flush = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
    if (broken.length > 0) throw broken[0];
  };
  const owe = (k: Key, notBefore: number) => owed.push({ key: k, after: seq, notBefore });
  const later = (k: Key, ms: number) => {
    if (stopped) return;
    if (ms <= 0) return owe(k, jest.now());
    const at = jest.now() + ms;
    // A wake-up whose time has come has fired: the queue holds no timer for the key any more.
    if ((wakeUp.get(k) ?? Infinity) <= jest.now()) wakeUp.delete(k);
    const pending = wakeUp.get(k);
    if (pending !== undefined && pending <= at) return; // the earlier wake-up stands and answers this one too
    // A later pending wake-up is replaced: what it owed, the earlier one pays.
    if (pending !== undefined) owed = owed.filter((o) => !(o.key === k && o.notBefore === pending));
    wakeUp.set(k, at);
    owe(k, at);
  };

  const handOut = (w: Worker, k: Key) => {
    expect(stopped).toBe(false);
    for (const other of crew) expect(other.holds).not.toBe(k); // never two workers on one key
    const now = jest.now();
    const answered = owed.filter((o) => o.key === k && o.after <= seq && o.notBefore <= now);
    expect(answered.length).toBeGreaterThan(0); // nothing handed out that nobody asked for
    owed = owed.filter((o) => !answered.includes(o));
    if (wakeUp.has(k) && (wakeUp.get(k) as number) <= now) wakeUp.delete(k);
    w.holds = k;
  };

  const take = (w: Worker) => {
    if (w.holds !== undefined || w.asking || w.dismissed) return;
    w.asking = true;
    void q.get().then((k) => {
      w.asking = false;
      if (k === undefined) w.dismissed = true;
      else {
        try {
          handOut(w, k as Key);
        } catch (error) {
          broken.push(error);
        }
      }
    });
  };

  const finish = (w: Worker, outcome: 'success' | 'failure' | 'requeue', ms: number) => {
    const k = w.holds;
    if (k === undefined) return;
    // As the controller does: forget or back off, requeue, then done.
    if (outcome === 'failure') later(k, q.addRateLimited(k));
    else {
      q.forget(k);
      if (outcome === 'requeue') {
        q.addAfter(k, ms);
        later(k, ms);
      }
    }
    w.holds = undefined;
    q.done(k);
  };

  /**
   * A worker waiting in get() means nothing is queued: every add, wake-up or retry that is due was handed out (or
   * waits for its key's worker to finish), none was lost or held back.
   */
  const nothingHeldBack = () => {
    if (stopped || !crew.some((w) => w.asking)) return;
    expect(owed.filter((o) => o.notBefore <= jest.now() && o.after < seq && !crew.some((w) => w.holds === o.key))).toEqual([]);
  };

  const shutdown = () => {
    if (stopped) return;
    stopped = true;
    owed = [];
    wakeUp.clear();
    drainPromise = q.drain(60_000);
    void drainPromise.then((d) => (drained = d));
  };

  for (const s of steps) {
    seq++;
    switch (s.op) {
      case 'add':
        q.add(s.key);
        if (!stopped) owe(s.key, jest.now());
        break;
      case 'addAfter':
        q.addAfter(s.key, s.ms);
        later(s.key, s.ms);
        break;
      case 'advance':
        jest.advanceTimersByTime(s.ms);
        break;
      case 'take':
        take(crew[s.worker % workers]);
        break;
      case 'takeAll':
        for (const w of crew) take(w);
        break;
      case 'finish':
        finish(crew[s.worker % workers], s.outcome, s.ms);
        break;
      case 'shutdown':
        shutdown();
        break;
    }
    await flush();
    nothingHeldBack();
    if (stopped) {
      // Draining: resolved exactly when no worker holds a key any more.
      expect(drained === true).toBe(crew.every((w) => w.holds === undefined));
      for (const w of crew) expect(w.asking).toBe(false); // idle workers were woken with undefined
    }
  }

  // Settle: the workers keep taking and succeeding, and the clock runs, until the queue owes nothing more.
  for (let round = 0; round < 1_000 && !stopped; round++) {
    seq++;
    for (const w of crew) take(w);
    await flush();
    nothingHeldBack();
    seq++;
    for (const w of crew) finish(w, 'success', 0);
    await flush();
    if (q.depth === 0 && q.inFlight === 0 && q.scheduled === 0 && owed.length === 0) break;
    if (q.depth === 0) jest.advanceTimersByTime(50);
  }
  if (!stopped) {
    expect(owed).toEqual([]); // every add, wake-up and retry was answered by a hand-out
    expect([q.depth, q.inFlight, q.scheduled]).toEqual([0, 0, 0]);
    // Shut down with every worker busy, if there are keys enough.
    seq++;
    for (const k of KEYS) {
      q.add(k);
      owe(k, jest.now());
    }
    for (const w of crew) take(w);
    await flush();
    shutdown();
    await flush();
  }
  // Whoever still holds a key finishes it, one after the other: the drain resolves with the last one, not before.
  for (const w of crew) {
    expect(drained === true).toBe(crew.every((c) => c.holds === undefined));
    finish(w, 'success', 0);
    await flush();
  }
  expect(drained).toBe(true);
  expect(await drainPromise).toBe(true);
  expect(await q.get()).toBeUndefined();
  for (const w of crew) {
    take(w);
    await flush();
    expect(w.holds).toBeUndefined();
  }
}

describe('WorkQueue under several workers (property)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('one key is never with two workers; every add is answered; shutdown drains every worker', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.array(step, { maxLength: 80 }), async (workers, steps) => {
        jest.clearAllTimers();
        await run(workers, steps);
      }),
      { numRuns: 500 },
    );
  });
});
