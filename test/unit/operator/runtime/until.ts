/** Polls `check` every few ms until it holds (or fails the test after `timeoutMs`). */
export async function until(check: () => boolean, timeoutMs = 3000, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
