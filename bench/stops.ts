/**
 * What a bench started is stopped on its way out, Ctrl-C or a timeout included: the servers run in process groups of
 * their own, so they would outlive a bench killed by a signal.
 */
import { rmSync } from 'node:fs';

/**
 * On SIGINT or SIGTERM: runs every one of `stops` (as the list is then), the last pushed first, a failure not stopping
 * the rest; then exits 130.
 */
export function stopOnSignals(stops: readonly (() => Promise<void>)[]): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void (async () => {
        for (const stop of [...stops].reverse()) await stop().catch(() => undefined);
        process.exit(130);
      })();
    });
  }
}

/**
 * The end of a bench: stops what it started (the last started first, a failure not stopping the rest), then removes its
 * work dir, or keeps it with KAC_BENCH_KEEP=1 (the logs, for a look after the run).
 */
export async function finish(stops: readonly (() => Promise<void>)[], work: string): Promise<void> {
  for (const stop of [...stops].reverse()) await stop().catch(() => undefined);
  if (process.env.KAC_BENCH_KEEP) process.stderr.write(`[bench] kept ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}

/** Runs a bench's `main`: a failure prints its stack and exits 1. */
export function runBench(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
