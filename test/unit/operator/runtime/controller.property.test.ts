/**
 * Property: a controller with several workers, its reconciles finishing in any order fast-check's scheduler picks
 * (some failing into the backoff, some asking to be requeued), and keys enqueued at any moment in between,
 * - never reconciles one key in two workers at once, and never runs more reconciles at once than it has workers;
 * - reconciles every enqueued key after its enqueue (a key enqueued while it is reconciled runs once more after);
 * - stops cleanly at any moment: after `stop` resolves no reconcile is in flight and none starts any more.
 */
import fc from 'fast-check';
import { setImmediate as realTurn } from 'node:timers/promises';
import { Kinds } from '../../../../src/kube/kinds';
import { Controller } from '../../../../src/operator/runtime/controller';
import { silentLogger } from '../../../../src/operator/runtime/log';
import { OperatorMetrics } from '../../../../src/operator/runtime/metrics';

const KEYS = ['n/a', 'n/b', 'n/c', 'n/d', 'n/e'];
type Outcome = 'ok' | 'fail' | 'requeue';

describe('Controller with several workers (property)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('one key at a time, every enqueue answered, at most `concurrency` at once, stop drains', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.constantFrom(...KEYS), { minLength: 1, maxLength: 25 }),
        fc.array(fc.constantFrom<Outcome>('ok', 'ok', 'fail', 'requeue'), { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        async (s, workers, enqueues, outcomes, stopEarly) => {
          jest.clearAllTimers();
          let tick = 0;
          let calls = 0;
          let stopped = false;
          const inFlight = new Set<string>();
          let peak = 0;
          const starts: { key: string; at: number }[] = [];
          const enqueued: { key: string; at: number }[] = [];
          const violations: string[] = [];
          const controller = new Controller(
            {
              kind: Kinds.ControlPlane,
              concurrency: workers,
              backoff: { baseMs: 5, maxMs: 20, random: () => 0 },
              reconcile: async ({ key }) => {
                if (stopped) violations.push(`${key} started after stop`);
                if (inFlight.has(key)) violations.push(`${key} in two workers`);
                inFlight.add(key);
                peak = Math.max(peak, inFlight.size);
                starts.push({ key, at: ++tick });
                const outcome = outcomes[calls++ % outcomes.length];
                await s.schedule(Promise.resolve(), `reconcile ${key}`);
                inFlight.delete(key);
                if (outcome === 'fail') throw new Error('Keystone said no');
                return outcome === 'requeue' ? { requeueAfter: 10 } : {};
              },
            },
            { metrics: new OperatorMetrics({ defaultMetrics: false }), logger: silentLogger, keys: () => [] },
          );
          controller.start();
          // Enqueues land between reconciles, in an order the scheduler picks.
          const arrivals = enqueues.map((key) =>
            s.schedule(Promise.resolve(key), `enqueue ${key}`).then(() => {
              if (stopped) return;
              enqueued.push({ key, at: ++tick });
              controller.enqueue(key);
            }),
          );
          let stopping: Promise<boolean> | undefined;
          if (stopEarly) {
            void s.schedule(Promise.resolve(), 'stop').then(() => {
              stopping = controller.stop(60_000);
              stopped = true;
            });
          }
          // Run until nothing is left to do: scheduled reconciles and enqueues, then the wake-ups and retries.
          for (let round = 0; round < 500; round++) {
            await s.waitAll();
            // A worker turns the event loop between passes (a real setImmediate, which Jest's fake timers leave alone).
            await realTurn();
            if (controller.queue.depth === 0 && controller.queue.inFlight === 0 && controller.queue.scheduled === 0) break;
            jest.advanceTimersByTime(10);
          }
          await Promise.all(arrivals);
          if (!stopping) {
            stopping = controller.stop(60_000);
            stopped = true;
          }
          await s.waitAll();
          await realTurn();
          expect(await stopping).toBe(true);
          expect(violations).toEqual([]);
          expect(inFlight.size).toBe(0);
          expect(peak).toBeLessThanOrEqual(workers);
          if (!stopEarly) {
            // Every enqueue was followed by a reconcile of its key.
            for (const e of enqueued) expect(starts.some((r) => r.key === e.key && r.at > e.at)).toBe(true);
          }
          // After stop no reconcile starts, whatever is enqueued.
          const before = starts.length;
          controller.enqueue('n/a');
          await jest.advanceTimersByTimeAsync(100);
          await s.waitAll();
          expect(starts.length).toBe(before);
        },
      ),
      { numRuns: 200 },
    );
  });
});
