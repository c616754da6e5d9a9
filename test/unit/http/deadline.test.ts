import { withDeadline } from '../../../src/http/deadline';

describe('withDeadline', () => {
  it('aborts an exchange that outlives it with a TimeoutError', async () => {
    const hangs = (signal: AbortSignal) => new Promise<never>((_done, fail) => signal.addEventListener('abort', () => fail(signal.reason)));
    await expect(withDeadline(20, hangs)).rejects.toMatchObject({ name: 'TimeoutError', message: 'no reply within 20 ms' });
  });

  it('is cleared when the exchange ends: the signal never fires afterwards', async () => {
    let seen: AbortSignal | undefined;
    expect(await withDeadline(30, async (signal) => ((seen = signal), 'reply'))).toBe('reply');
    await expect(withDeadline(30, async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await new Promise((done) => setTimeout(done, 80));
    expect(seen?.aborted).toBe(false);
  });
});
