/**
 * What a bench started is stopped on its way out, Ctrl-C or a timeout included: the servers run in process groups of
 * their own, so they would outlive a bench killed by a signal.
 */

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
