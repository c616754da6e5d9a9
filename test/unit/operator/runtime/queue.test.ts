import { backoffDelay, KeyedBackoff, longestDelay } from '../../../../src/operator/runtime/backoff';
import fc from 'fast-check';
import { WorkQueue } from '../../../../src/operator/runtime/queue';

describe('backoff', () => {
  it('doubles from the base to the cap and adds up to `jitter` at random', () => {
    const opts = { baseMs: 100, maxMs: 1000, jitter: 0.5 };
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelay(n, { ...opts, random: () => 0 }))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffDelay(2, { ...opts, random: () => 0.999 })).toBe(600);
    expect(backoffDelay(5000, { ...opts, random: () => 0 })).toBe(1000);
  });

  it('counts per key, once per retry, and forgets on success', () => {
    const b = new KeyedBackoff({ baseMs: 10, random: () => 0 });
    expect([b.next('a', 0), b.next('a', 10), b.next('b', 10), b.next('a', 30)]).toEqual([10, 20, 10, 40]);
    expect(b.retries('a')).toBe(3);
    b.forget('a');
    expect([b.retries('a'), b.next('a', 100)]).toEqual([0, 10]);
  });

  it('counts a burst of failures before the retry was due once: each keeps the retry already scheduled', () => {
    const b = new KeyedBackoff({ baseMs: 1000, random: () => 0 });
    // three watch events of one order within 16 ms, each pass failing: one step of the backoff, not three
    expect([b.next('a', 0), b.next('a', 5), b.next('a', 16)]).toEqual([1000, 995, 984]);
    expect(b.retries('a')).toBe(1);
    // the retry itself fails: the next step
    expect(b.next('a', 1000)).toBe(2000);
    expect(b.retries('a')).toBe(2);
  });

  it('longest: the cap, with its jitter, neither counted nor kept: a failure of the key\'s own after a wait gets its own delay (issue 46)', () => {
    const b = new KeyedBackoff({ baseMs: 10, maxMs: 500, jitter: 0.5, random: () => 0.5 });
    expect(longestDelay({ maxMs: 500, jitter: 0.5, random: () => 0.5 })).toBe(625);
    expect(b.longest()).toBe(625);
    expect(b.retries('a')).toBe(0);
    // the dependency answered and the key failed for a reason of its own: the base delay, not the rest of the cap
    expect(b.next('a', 100)).toBe(13);
    // own failures before the wait keep their step
    b.next('a', 200);
    b.longest();
    expect([b.retries('a'), b.next('a', 300)]).toEqual([2, 50]);
  });
});

describe('WorkQueue: the order keys are handed out in', () => {
  it('is the order they were added in, across runs of adds and hand-outs of thousands of keys (a resync queues every order at once)', async () => {
    // Runs long enough to cross the deque's growth and wrap-around; each key handed out is done at once.
    const step = fc.oneof(fc.record({ add: fc.integer({ min: 1, max: 3000 }) }), fc.record({ take: fc.integer({ min: 1, max: 3000 }) }));
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 10 }), async (steps) => {
        const q = new WorkQueue();
        const model: string[] = [];
        let next = 0;
        for (const s of steps) {
          if ('add' in s) {
            for (let i = 0; i < s.add; i++, next++) {
              q.add(`ns/o${next}`);
              model.push(`ns/o${next}`);
            }
          } else {
            for (let i = 0; i < s.take && model.length > 0; i++) {
              const key = await q.get();
              if (key !== model.shift()) return false;
              q.done(key as string);
            }
          }
          if (q.depth !== model.length) return false;
        }
        return true;
      }),
      { numRuns: 50 },
    );
  });
});

describe('WorkQueue', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('dedupes keys that wait and hands them out in order', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.depth).toBe(2);
    expect([await q.get(), await q.get()]).toEqual(['a', 'b']);
  });

  it('never hands out a key in flight; one re-added meanwhile comes back once after done', async () => {
    const q = new WorkQueue();
    q.add('a');
    const key = await q.get();
    q.add('a');
    q.add('a');
    expect(q.depth).toBe(0);
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done(key as string);
    await Promise.resolve();
    expect(second).toBe('a');
    q.done('a');
    expect([q.depth, q.inFlight]).toEqual([0, 0]);
  });

  it('keeps only the earliest requeue-after timer per key', async () => {
    const q = new WorkQueue();
    q.addAfter('a', 10_000);
    q.addAfter('a', 1_000);
    q.addAfter('a', 5_000);
    expect(q.scheduled).toBe(1);
    await jest.advanceTimersByTimeAsync(999);
    expect(q.depth).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(q.depth).toBe(1);
    await q.get();
    q.done('a');
    await jest.advanceTimersByTimeAsync(20_000);
    expect(q.depth).toBe(0); // the later timers were dropped
  });

  it('waits a delay longer than a timer holds (720h, the default interval) in steps, without an early reconcile', async () => {
    const q = new WorkQueue();
    const hours = (n: number) => n * 3_600_000;
    q.addAfter('a', hours(720));
    await jest.advanceTimersByTimeAsync(hours(24));
    expect(q.depth).toBe(0);
    await jest.advanceTimersByTimeAsync(hours(695));
    expect(q.depth).toBe(0);
    expect(q.scheduled).toBe(1);
    await jest.advanceTimersByTimeAsync(hours(1));
    expect(q.depth).toBe(1);
    expect(q.scheduled).toBe(0);
  });

  it('one timer for every waiting key, each queued once at its earliest wake-up, however often it was moved earlier', async () => {
    const q = new WorkQueue();
    const keys = Array.from({ length: 2000 }, (_, i) => `k${i}`);
    // every key moved earlier ten times (a resync that computes its wake-up again a millisecond sooner each pass)
    for (let step = 0; step < 10; step++) for (const [i, key] of keys.entries()) q.addAfter(key, 60_000 + i * 10 - step);
    expect([q.scheduled, jest.getTimerCount()]).toEqual([2000, 1]);
    await jest.advanceTimersByTimeAsync(60_000 - 9 - 1);
    expect(q.depth).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(q.depth).toBe(1);
    await jest.advanceTimersByTimeAsync(20_000);
    expect([q.depth, q.scheduled]).toEqual([2000, 0]);
    const handed = new Set<string>();
    for (let i = 0; i < 2000; i++) handed.add((await q.get()) as string);
    expect(handed.size).toBe(2000);
    // the wake-ups passed over leave no timer and queue nothing again
    await jest.advanceTimersByTimeAsync(120_000);
    expect([q.depth, q.scheduled, jest.getTimerCount()]).toEqual([0, 0, 0]);
  });

  it('brings failed keys back after a growing backoff and resets it on forget', async () => {
    const q = new WorkQueue({ backoff: { baseMs: 100, random: () => 0 } });
    expect([q.addRateLimited('a'), q.retries('a')]).toEqual([100, 1]);
    await jest.advanceTimersByTimeAsync(100);
    expect(await q.get()).toBe('a');
    q.done('a');
    expect(q.addRateLimited('a')).toBe(200);
    q.forget('a');
    expect(q.retries('a')).toBe(0);
  });

  it('a burst of failures of one key before its retry: one backoff step, the retry kept', async () => {
    const q = new WorkQueue({ backoff: { baseMs: 100, random: () => 0 } });
    expect(q.addRateLimited('a')).toBe(100);
    await jest.advanceTimersByTimeAsync(10);
    expect(q.addRateLimited('a')).toBe(90);
    expect(q.retries('a')).toBe(1);
    await jest.advanceTimersByTimeAsync(90);
    expect(q.depth).toBe(1);
    expect(q.scheduled).toBe(0);
  });

  it('addAfterLongest: a key that waits on a dependency comes back after the longest delay', async () => {
    const q = new WorkQueue({ backoff: { baseMs: 100, maxMs: 1000, random: () => 0 } });
    expect(q.addAfterLongest('a')).toBe(1000);
    await jest.advanceTimersByTimeAsync(999);
    expect(q.depth).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(q.depth).toBe(1);
  });

  it('reports its depth', () => {
    const depths: number[] = [];
    const q = new WorkQueue({ onDepth: (d) => depths.push(d) });
    q.add('a');
    q.add('b');
    void q.get();
    expect(depths).toEqual([1, 2, 1]);
  });

  it('on drain stops handing out keys, drops timers, and waits for the keys in flight up to the deadline', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.addAfter('c', 1000);
    const a = await q.get();
    const drained = q.drain(5_000);
    expect(await q.get()).toBeUndefined();
    q.add('d');
    expect(q.scheduled).toBe(0);
    q.done(a as string);
    expect(await drained).toBe(true);

    const q2 = new WorkQueue();
    q2.add('x');
    await q2.get();
    const late = q2.drain(1_000);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(await late).toBe(false);
  });

  it('wakes waiting workers with undefined on shutdown', async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
  });
});
