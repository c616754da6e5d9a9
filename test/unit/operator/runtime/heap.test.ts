import fc from 'fast-check';
import { getHeapStatistics } from 'node:v8';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { DEFAULT_HEAP_TRIM_POLICY, HeapTrimmer, lastResortCollector, shouldTrim } from '../../../../src/operator/runtime/heap';

const MiB = 2 ** 20;

describe('shouldTrim', () => {
  it('trims exactly when the process is quiet and the held heap grew past what the last trim left by more than the growth', () => {
    fc.assert(
      fc.property(fc.nat(1024), fc.nat(1024), fc.double({ min: 0, max: 1, noNaN: true }), (heldMiB, lastMiB, utilization) => {
        const trims = shouldTrim({ heldBytes: heldMiB * MiB, utilization }, lastMiB * MiB);
        expect(trims).toBe(utilization < DEFAULT_HEAP_TRIM_POLICY.quietUtilization && (heldMiB - lastMiB) * MiB > DEFAULT_HEAP_TRIM_POLICY.growthBytes);
      }),
    );
  });

  it('does not trim a busy process however much it holds, nor a quiet one that has not grown', () => {
    expect(shouldTrim({ heldBytes: 900 * MiB, utilization: 0.5 }, 0)).toBe(false);
    expect(shouldTrim({ heldBytes: 100 * MiB, utilization: 0 }, 80 * MiB)).toBe(false);
    expect(shouldTrim({ heldBytes: 113 * MiB, utilization: 0.01 }, 80 * MiB)).toBe(true);
  });
});

/** A clock of event-loop time that the test moves: `busy` ms busy and `idle` ms idle per step. */
function loop(): { step: (busy: number, idle: number) => void; utilization: (previous?: EventLoopUtilization) => EventLoopUtilization } {
  let active = 0;
  let idle = 0;
  return {
    step: (b, i) => {
      active += b;
      idle += i;
    },
    utilization: (previous) => {
      const a = active - (previous?.active ?? 0);
      const i = idle - (previous?.idle ?? 0);
      return { active: a, idle: i, utilization: a + i === 0 ? 0 : a / (a + i) };
    },
  };
}

describe('HeapTrimmer', () => {
  it('collects once after a burst has passed, not during it, and not again until the heap grows anew', () => {
    const clock = loop();
    let held = 40 * MiB;
    const collections: number[] = [];
    const trims: { heldBefore: number; heldAfter: number }[] = [];
    const trimmer = new HeapTrimmer({
      intervalMs: 10_000,
      heldBytes: () => held,
      utilization: clock.utilization,
      collect: () => {
        collections.push(held);
        held = 30 * MiB;
      },
      onTrim: (t) => trims.push(t),
    });
    trimmer.start();
    trimmer.stop();
    // A burst: busy, the heap grows to 200 MiB; no collection while it lasts.
    clock.step(8_000, 2_000);
    held = 200 * MiB;
    expect(trimmer.tick()).toBe(false);
    // Quiet: one collection; the heap it left is the new mark.
    clock.step(100, 9_900);
    expect(trimmer.tick()).toBe(true);
    expect(trims).toEqual([{ heldBefore: 200 * MiB, heldAfter: 30 * MiB, seconds: expect.any(Number) }]);
    // Still quiet, a little growth (a resync): nothing.
    clock.step(200, 9_800);
    held = 50 * MiB;
    expect(trimmer.tick()).toBe(false);
    // Grown by more than 32 MiB past the mark: the next one.
    clock.step(0, 10_000);
    held = 63 * MiB;
    expect(trimmer.tick()).toBe(true);
    expect(collections).toEqual([200 * MiB, 63 * MiB]);
  });

  it('never starts with an interval of 0, and its timer does not keep the process alive', () => {
    const never = new HeapTrimmer({ intervalMs: 0, collect: () => undefined });
    never.start();
    expect((never as unknown as { timer?: unknown }).timer).toBeUndefined();
    const trimmer = new HeapTrimmer({ intervalMs: 60_000, collect: () => undefined });
    trimmer.start();
    const timer = (trimmer as unknown as { timer: NodeJS.Timeout }).timer;
    expect(timer.hasRef()).toBe(false);
    trimmer.stop();
  });
});

describe('lastResortCollector', () => {
  it('gives back the held heap of garbage at once (real V8, no --expose-gc on the command line)', () => {
    const collect = lastResortCollector();
    collect();
    const base = getHeapStatistics().total_heap_size;
    // About 150 MiB of small objects, dropped: V8 grows its old space for them and keeps it after a normal collection.
    let garbage: { id: number; text: string }[][] = [];
    for (let i = 0; i < 300; i++) garbage.push(Array.from({ length: 5_000 }, (_, k) => ({ id: k, text: `order-${i}-${k}-${'x'.repeat(40)}` })));
    const grown = getHeapStatistics().total_heap_size;
    expect(grown - base).toBeGreaterThan(100 * MiB);
    garbage = [];
    expect(garbage).toHaveLength(0);
    collect();
    const after = getHeapStatistics().total_heap_size;
    expect(after).toBeLessThan(base + 32 * MiB);
  });
});
