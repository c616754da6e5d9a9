/**
 * The simulation's virtual time, over the whole process (the seam the issue names: `@sinonjs/fake-timers`, which
 * Jest's fake timers are built on): `Date`, `setTimeout`/`setInterval` and `performance.now` run on a clock that only
 * {@link VirtualTime.advance} moves, `Math.random` is a generator seeded from the schedule's seed, and
 * `AbortSignal.timeout` (whose timer fake-timers cannot reach) aborts on the virtual clock. Nothing else: promises,
 * `setImmediate` and `process.nextTick` stay real, so between two timers every continuation they started runs to its
 * end, as it would between two ticks of a real event loop, and the same seed replays the same run.
 */
import { install, type Clock } from '@sinonjs/fake-timers';
import { seeded } from '../support/random';

/** Where every simulated run starts. */
export const EPOCH = Date.parse('2027-01-04T08:00:00Z');

export class VirtualTime {
  private readonly clock: Clock;
  private readonly random: typeof Math.random;
  private readonly timeout: typeof AbortSignal.timeout;
  private readonly immediate: typeof setImmediate;

  /** Takes over the process's time and randomness until {@link uninstall}. */
  constructor(seed: number) {
    this.immediate = setImmediate;
    this.random = Math.random;
    this.timeout = AbortSignal.timeout;
    this.clock = install({ now: EPOCH, toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'], loopLimit: 1_000_000 });
    Math.random = seeded(seed);
    AbortSignal.timeout = (ms: number) => {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
      timer.unref();
      return controller.signal;
    };
  }

  /** Milliseconds since the epoch, virtual. */
  now(): number {
    return this.clock.now;
  }

  /** Lets every continuation that is ready run (real turns of the event loop; virtual time stands still). */
  async settle(turns = 3): Promise<void> {
    for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => this.immediate(resolve));
  }

  /**
   * Moves virtual time forward by `ms`: every timer due on the way fires at its time, and what it started runs before
   * the next one fires.
   */
  async advance(ms: number): Promise<void> {
    await this.settle();
    await this.clock.tickAsync(ms);
    await this.settle();
  }

  /** Gives the process its real time and randomness back. */
  uninstall(): void {
    this.clock.uninstall();
    Math.random = this.random;
    AbortSignal.timeout = this.timeout;
  }
}
