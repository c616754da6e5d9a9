/**
 * Gives back the V8 heap that a burst of work grew, once the burst has passed.
 *
 * Why: V8 grows its old space while the operator converges a burst of new orders (a region onboarded, a mass
 * rotation, the first start on a big cluster) and keeps those pages committed afterwards; its own idle-time collections
 * do not shrink it. Measured at 5,000 converged orders (docs/benchmarks.md, "The operator"): 69 MiB of heap in use,
 * 170 MiB held, RSS 331 MiB, for a process whose steady state needs a fraction of it. A memory-reducing full collection
 * (what V8 runs itself before it gives up with an out-of-memory error) returns the free pages at once; it costs one
 * pause of some 100 to 250 ms, so it runs only when the process is quiet and only when the heap grew well past what
 * the last one left. No library does this (the V8 flags that cap the heap make every collection more frequent:
 * `--max-old-space-size=128` measured ten times the CPU per resync), hence this small loop.
 *
 * The rule ({@link shouldTrim}) is pure; {@link HeapTrimmer} is its driver: a timer that does not keep the process
 * alive, the event loop's utilization and V8's heap statistics as its inputs, and the collection as its act.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** What the rule looks at, sampled once per interval. */
export interface HeapSample {
  /** The heap V8 holds committed (`total_heap_size`). */
  readonly heldBytes: number;
  /** The event loop's utilization since the previous sample, 0 to 1: the share of the time the process was busy. */
  readonly utilization: number;
}

/** When a trim is worth its pause. */
export interface HeapTrimPolicy {
  /** The process counts as quiet below this utilization. */
  readonly quietUtilization: number;
  /** How far the held heap must have grown past what the last trim left (or past nothing, before the first). */
  readonly growthBytes: number;
}

/** The policy the operator runs with: quiet below 10% busy, 32 MiB grown. */
export const DEFAULT_HEAP_TRIM_POLICY: HeapTrimPolicy = { quietUtilization: 0.1, growthBytes: 32 * 2 ** 20 };

/**
 * Trim when the process is quiet (a burst has passed; a trim in the middle of one would only pause it, and the heap
 * would grow right back) and the held heap grew by more than `growthBytes` since the last trim left it. Measuring the
 * growth from the last trim's result, not from the heap in use, means a heap that cannot shrink further (fragmented
 * pages, or a cluster that really grew) is not collected again and again: only new growth triggers the next one.
 */
export function shouldTrim(sample: HeapSample, heldAfterLastTrim: number, policy: HeapTrimPolicy = DEFAULT_HEAP_TRIM_POLICY): boolean {
  return sample.utilization < policy.quietUtilization && sample.heldBytes > heldAfterLastTrim + policy.growthBytes;
}

/** A memory-reducing full collection, synchronous (the asynchronous one does not shrink the heap). */
export type Collector = () => void;

/**
 * V8's last-resort collection, reached without `--expose-gc` on the command line: the flag is set at run time and the
 * `gc` function taken from a fresh context, which has it once the flag is set (the way Jest's `--logHeapUsage` does).
 */
export function lastResortCollector(): Collector {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
  return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/** The driver's inputs and outputs, replaceable in tests. */
export interface HeapTrimmerOptions {
  /** How often to look: milliseconds (0: never). */
  readonly intervalMs: number;
  readonly policy?: HeapTrimPolicy;
  readonly collect?: Collector;
  readonly heldBytes?: () => number;
  readonly utilization?: (previous?: EventLoopUtilization) => EventLoopUtilization;
  /** Told after each trim: the held heap before and after, and the pause. */
  readonly onTrim?: (trim: { heldBefore: number; heldAfter: number; seconds: number }) => void;
}

export class HeapTrimmer {
  private timer?: NodeJS.Timeout;
  private previous?: EventLoopUtilization;
  private heldAfterLastTrim = 0;
  private readonly policy: HeapTrimPolicy;
  private readonly heldBytes: () => number;
  private readonly utilization: (previous?: EventLoopUtilization) => EventLoopUtilization;
  private collect?: Collector;

  constructor(private readonly options: HeapTrimmerOptions) {
    this.policy = options.policy ?? DEFAULT_HEAP_TRIM_POLICY;
    this.heldBytes = options.heldBytes ?? (() => getHeapStatistics().total_heap_size);
    this.utilization = options.utilization ?? ((previous) => performance.eventLoopUtilization(previous));
    this.collect = options.collect;
  }

  start(): void {
    if (this.timer || this.options.intervalMs <= 0) return;
    this.previous = this.utilization();
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    // The trimmer never keeps the process alive, and never delays its exit.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look: samples, decides, trims. Returns whether it trimmed. */
  tick(): boolean {
    const now = this.utilization();
    const busy = this.previous ? this.utilization(this.previous).utilization : now.utilization;
    this.previous = now;
    const heldBefore = this.heldBytes();
    if (!shouldTrim({ heldBytes: heldBefore, utilization: busy }, this.heldAfterLastTrim, this.policy)) return false;
    this.collect ??= lastResortCollector();
    const started = performance.now();
    this.collect();
    const seconds = (performance.now() - started) / 1000;
    this.heldAfterLastTrim = this.heldBytes();
    // The pause itself is not work the next look should count as busy.
    this.previous = this.utilization();
    this.options.onTrim?.({ heldBefore, heldAfter: this.heldAfterLastTrim, seconds });
    return true;
  }
}
