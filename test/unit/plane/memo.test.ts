/**
 * The plane's pass memo (src/plane/driver/memo.ts): an object met for the first time may be settled by the cache alone;
 * `forget` makes its next pass a full one, `forget` with `anew` meets it anew (what the process knew of it changed under it, as a
 * namespace's Secret access), so the cache may settle it again instead of a pass to Keystone.
 */
import { ConvergedPasses, memoized } from '../../../src/plane/driver/memo';
import type { PlaneDeps } from '../../../src/plane/ports';

describe('memoized with a first-sight settle', () => {
  const run = () => {
    const memo = new ConvergedPasses();
    let passes = 0;
    const deps = { memo } as unknown as PlaneDeps;
    const pass = async () => {
      passes++;
      return { steps: 1, actions: [] };
    };
    const settled = async () => ({ settled: true as const });
    return { memo, passes: () => passes, once: () => memoized(deps, 'uid-1', 'fp-1', pass, settled) };
  };

  it('a first sight the cache settles costs no pass; after forget the next is a full pass', async () => {
    const m = run();
    expect((await m.once()).skipped).toBe(true);
    m.memo.forget('uid-1');
    await m.once();
    expect(m.passes()).toBe(1);
  });

  it('forgotten anew, the object is met anew: the cache settles it again, no pass', async () => {
    const m = run();
    await m.once();
    m.memo.forget('uid-1', { anew: true });
    expect((await m.once()).skipped).toBe(true);
    expect(m.passes()).toBe(0);
  });
});

describe('memoized with a steady wake-up (issue 42: an admin credential that expires)', () => {
  it('a steady pass with a timer is remembered until the timer, then passes again; a waiting one never is', async () => {
    let now = 1_000_000;
    const memo = new ConvergedPasses({ now: () => now });
    const deps = { memo, clock: () => new Date(now) } as unknown as PlaneDeps;
    let passes = 0;
    const steady = async () => (passes++, { steps: 1, actions: [], requeueAfter: 60_000, steady: true });
    await memoized(deps, 'cp', 'fp', steady);
    await memoized(deps, 'cp', 'fp', steady);
    expect(passes).toBe(1);
    now += 60_000;
    await memoized(deps, 'cp', 'fp', steady);
    expect(passes).toBe(2);
    const waiting = async () => (passes++, { steps: 1, actions: [], requeueAfter: 60_000 });
    await memoized(deps, 'other', 'fp', waiting);
    await memoized(deps, 'other', 'fp', waiting);
    expect(passes).toBe(4);
  });
});
