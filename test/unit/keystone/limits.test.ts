/**
 * The client-side limit per Keystone endpoint: requests per second and in flight hold for every client of the endpoint
 * together, the wait is measured, and a 429 or 503 with Retry-After pauses the endpoint and sends the request again.
 */
import { ARRIVAL_MARGIN_MS, KeystoneLimits, KeystoneSession, KeystoneTransport, retryAfterMs } from '../../../src/keystone';
import { AUTH_URL, FakeKeystone, json, keystoneError } from './fake-keystone';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fake whose GET /v3/x takes `ms` and counts how many run at once. */
function slow(ms: number) {
  const load = { now: 0, peak: 0, starts: [] as number[] };
  const fake = new FakeKeystone().on('GET', /^\/v3\/x$/, async () => {
    load.starts.push(Date.now());
    load.now++;
    load.peak = Math.max(load.peak, load.now);
    await sleep(ms);
    load.now--;
    return json(200, {});
  });
  return { fake, load };
}

describe('KeystoneLimits', () => {
  test('requests in flight never exceed the limit, across every client of the endpoint', async () => {
    const { fake, load } = slow(20);
    const limits = new KeystoneLimits({ requestsPerSecond: 0, inFlight: 3 });
    const clients = Array.from({ length: 5 }, () => new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits }));
    await Promise.all(Array.from({ length: 30 }, (_, i) => clients[i % 5].send({ method: 'GET', path: 'x' })));
    expect(load.peak).toBe(3);
    expect(limits.of(AUTH_URL).peakInFlight).toBe(3);
    expect(limits.of(AUTH_URL).inFlight).toBe(0);
  });

  /** For every start, the start `n` later is at least `ms` after it (`tolerance`: a timer firing a little early). */
  const windowHeld = (starts: readonly number[], n: number, ms: number, tolerance = 15) => {
    for (let i = 0; i + n < starts.length; i++) expect(starts[i + n] - starts[i]).toBeGreaterThanOrEqual(ms - tolerance);
  };

  test('requests per second: at most ⌊rate⌋ starts in any second, a burst takes the window at once, the rest wait, and the wait is reported', async () => {
    const { fake, load } = slow(1);
    const waits: number[] = [];
    const limits = new KeystoneLimits({ requestsPerSecond: 5, inFlight: 0, onWait: (endpoint, seconds) => (expect(endpoint).toBe(AUTH_URL), waits.push(seconds)) });
    const client = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits });
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 12 }, () => client.send({ method: 'GET', path: 'x' })));
    // 5 at once, 5 a second later, 2 a second after that: no start is spaced out for nothing, no second holds 6
    expect(load.starts).toHaveLength(12);
    expect(load.starts[4] - t0).toBeLessThan(500);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_985);
    windowHeld(load.starts, 5, 1_000 + ARRIVAL_MARGIN_MS);
    expect(waits).toHaveLength(12);
    expect(Math.min(...waits)).toBeLessThan(0.5);
    expect(Math.max(...waits)).toBeGreaterThanOrEqual(1.98);
  });

  test('a fractional rate: 2.5 per second is at most 2 starts in any 0.8 s', async () => {
    const { fake, load } = slow(1);
    const limits = new KeystoneLimits({ requestsPerSecond: 2.5, inFlight: 0 });
    const client = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits });
    await Promise.all(Array.from({ length: 5 }, () => client.send({ method: 'GET', path: 'x' })));
    windowHeld(load.starts, 2, 800 + ARRIVAL_MARGIN_MS);
  });

  test('requests per second hold across an event-loop stall: the window counts real starts, not planned ones', async () => {
    const { fake, load } = slow(1);
    const limits = new KeystoneLimits({ requestsPerSecond: 4, inFlight: 0 });
    const client = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits });
    const sent = Promise.all(Array.from({ length: 10 }, () => client.send({ method: 'GET', path: 'x' })));
    await sleep(25);
    // the loop blocked for 1.1 s: the second window's planned starts fall inside it
    const until = Date.now() + 1_100;
    while (Date.now() < until) { /* stall */ }
    await sent;
    windowHeld(load.starts, 4, 1_000 + ARRIVAL_MARGIN_MS);
  });

  test('another endpoint has a limit of its own', async () => {
    const limits = new KeystoneLimits({ requestsPerSecond: 1, inFlight: 1 });
    expect(limits.of(AUTH_URL)).toBe(limits.of(AUTH_URL));
    expect(limits.of('http://other:5000/v3')).not.toBe(limits.of(AUTH_URL));
  });

  test('refuses a negative limit', () => {
    expect(() => new KeystoneLimits({ requestsPerSecond: -1, inFlight: 1 })).toThrow('must be 0 (no limit) or positive');
    expect(() => new KeystoneLimits({ requestsPerSecond: 1, inFlight: 1.5 })).toThrow('in flight a whole number');
  });
});

describe('Retry-After', () => {
  test('reads delay-seconds and an HTTP-date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    const now = Date.UTC(2026, 11, 3, 12, 0, 0);
    expect(retryAfterMs('Thu, 03 Dec 2026 12:00:02 GMT', now)).toBe(2000);
    expect(retryAfterMs('Thu, 03 Dec 2026 11:00:00 GMT', now)).toBe(0);
  });

  test('a 429 with Retry-After pauses the whole endpoint, then the request is sent again and succeeds', async () => {
    const fake = new FakeKeystone()
      .on('POST', /^\/v3\/users\/u1\/application_credentials$/, () => json(429, { error: { code: 429, message: 'slow down' } }, { 'retry-after': '1' }), 1)
      .on('POST', /^\/v3\/users\/u1\/application_credentials$/, () => json(201, { ok: true }))
      .on('GET', /^\/v3\/x$/, () => json(200, {}));
    const limits = new KeystoneLimits({ requestsPerSecond: 0, inFlight: 4 });
    const a = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits });
    const b = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits });
    const t0 = Date.now();
    const created = a.send({ method: 'POST', path: 'users/u1/application_credentials', body: {} });
    await sleep(50);
    const other = await b.send({ method: 'GET', path: 'x' }); // another client of the endpoint waits for the pause too
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(other.status).toBe(200);
    expect((await created).status).toBe(201);
    expect(fake.calls('POST', /application_credentials/)).toHaveLength(2);
  });

  test('a 503 with Retry-After is honoured without a limit too; after three answers it fails as before', async () => {
    const fake = new FakeKeystone().on('GET', /^\/v3\/x$/, () => json(503, { error: { code: 503, message: 'maintenance' } }, { 'retry-after': '0' }));
    const client = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch });
    await expect(client.send({ method: 'GET', path: 'x' })).rejects.toMatchObject({ kind: 'server', status: 503 });
    expect(fake.calls('GET', /x/)).toHaveLength(3);
  });

  test('a Retry-After over a minute is not waited for: the request fails at once (the caller backs off)', async () => {
    const fake = new FakeKeystone().on('GET', /^\/v3\/x$/, () => json(429, { error: { code: 429, message: 'later' } }, { 'retry-after': '3600' }));
    const limits = new KeystoneLimits({ requestsPerSecond: 0, inFlight: 1 });
    await expect(new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits }).send({ method: 'GET', path: 'x' })).rejects.toMatchObject({ status: 429 });
    expect(fake.calls('GET', /x/)).toHaveLength(1);
    expect(limits.of(AUTH_URL).paused).toBe(0);
  });

  test('a 429 without Retry-After fails at once', async () => {
    const fake = new FakeKeystone().on('GET', /^\/v3\/x$/, () => keystoneError(429, 'too many'));
    await expect(new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch }).send({ method: 'GET', path: 'x' })).rejects.toMatchObject({ status: 429 });
    expect(fake.calls('GET', /x/)).toHaveLength(1);
  });

  test('a session logs in through the limit too', async () => {
    const { fake, load } = slow(10);
    fake.on('POST', /^\/v3\/auth\/tokens$/, async () => {
      load.now++;
      load.peak = Math.max(load.peak, load.now);
      await sleep(10);
      load.now--;
      return json(201, { token: { expires_at: new Date(Date.now() + 3600_000).toISOString(), user: { id: 'u' }, project: { id: 'p' }, roles: [] } }, { 'x-subject-token': 't' });
    });
    const limits = new KeystoneLimits({ requestsPerSecond: 0, inFlight: 1 });
    const sessions = Array.from({ length: 4 }, (_, i) => new KeystoneSession({ authUrl: AUTH_URL, fetch: fake.fetch, limits, auth: { method: 'password', user: { id: `u${i}` }, password: 'pw', project: { id: 'p' } } }));
    await Promise.all(sessions.map((s) => s.request({ method: 'GET', path: 'x' })));
    expect(load.peak).toBe(1);
    expect(fake.calls('POST', /auth\/tokens/)).toHaveLength(4);
  });
});
