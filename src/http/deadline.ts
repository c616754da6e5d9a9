/**
 * Deadlines for HTTP exchanges, shared by the Keystone and Kubernetes clients.
 *
 * `AbortSignal.timeout` cannot be cancelled: its timer fires after every request, finished or not, and undici's fetch
 * answers it by aborting the long-finished exchange (listeners, a DOMException, a stream cancel). The operator makes
 * thousands of requests while it converges orders; in the bench those late aborts were most of its CPU for the 30 s
 * after a burst. A deadline from here is cleared the moment its exchange ends.
 */

/**
 * Runs `exchange` with a signal that aborts after `ms` with a `TimeoutError` (as `AbortSignal.timeout` does), and
 * clears the timer once `exchange` settles. Read the whole reply inside `exchange`, so the deadline covers it.
 */
export async function withDeadline<T>(ms: number, exchange: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`no reply within ${ms} ms`, 'TimeoutError')), ms);
  timer.unref(); // like AbortSignal.timeout: a pending deadline does not keep the process alive
  try {
    return await exchange(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}
