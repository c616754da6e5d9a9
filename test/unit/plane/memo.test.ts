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
