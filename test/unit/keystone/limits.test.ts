/**
 * The client-side limit per Keystone endpoint: requests per second and in flight hold for every client of the endpoint
 * together, the wait is measured, and a 429 or 503 with Retry-After pauses the endpoint and sends the request again.
 */
import { KeystoneLimits, KeystoneSession, KeystoneTransport, retryAfterMs } from '../../../src/keystone';
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

  test('requests per second: a burst is spread out at 1/rate apart, and the wait is reported', async () => {
    const { fake, load } = slow(1);
    const waits: number[] = [];
    const limits = new KeystoneLimits({ requestsPerSecond: 50, inFlight: 0, onWait: (endpoint, seconds) => (expect(endpoint).toBe(AUTH_URL), waits.push(seconds)) });
    const client = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits });
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 11 }, () => client.send({ method: 'GET', path: 'x' })));
    // 11 starts at 20 ms apart take at least 200 ms, and any 6 consecutive starts span 100 ms (less a late timer's
    // catching up: the spacing is kept on the planned starts)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(195);
    for (let i = 0; i + 5 < load.starts.length; i++) expect(load.starts[i + 5] - load.starts[i]).toBeGreaterThanOrEqual(70);
    expect(waits).toHaveLength(11);
    expect(Math.max(...waits)).toBeGreaterThanOrEqual(0.19);
  });

  test('requests per second hold across an event-loop stall: the requests held back by it do not start together', async () => {
    const { fake, load } = slow(1);
    const limits = new KeystoneLimits({ requestsPerSecond: 50, inFlight: 0 });
    const client = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits });
    const sent = Promise.all(Array.from({ length: 8 }, () => client.send({ method: 'GET', path: 'x' })));
    await sleep(25);
    // the loop blocked for 150 ms: every planned start of the burst falls inside it
    const until = Date.now() + 150;
    while (Date.now() < until) { /* stall */ }
    await sent;
    // 20 ms apart when started; a few ms lost between the start and the fake's handler on a loaded machine
    const gaps = load.starts.slice(1).map((at, i) => at - load.starts[i]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(12);
  });

  test('every request sent is reported with how it ended: success, the kind of a refusal, no answer, and each send after a Retry-After', async () => {
    const fake = new FakeKeystone()
      .on('GET', /^\/v3\/ok$/, () => json(200, {}))
      .on('GET', /^\/v3\/refused$/, () => keystoneError(401, 'no'))
      .on('GET', /^\/v3\/gone$/, () => keystoneError(404, 'not here'))
      .on('GET', /^\/v3\/busy$/, () => json(503, { error: { code: 503, message: 'busy' } }, { 'retry-after': '0' }), 1)
      .on('GET', /^\/v3\/busy$/, () => json(200, {}));
    const results: [string, string][] = [];
    const limits = new KeystoneLimits({ requestsPerSecond: 0, inFlight: 0, onResult: (endpoint, result) => results.push([endpoint, result]) });
    const client = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits });
    await client.send({ method: 'GET', path: 'ok' });
    await expect(client.send({ method: 'GET', path: 'refused' })).rejects.toMatchObject({ kind: 'unauthorized' });
    await expect(client.send({ method: 'GET', path: 'gone' })).rejects.toMatchObject({ kind: 'not-found' });
    await client.send({ method: 'GET', path: 'busy' });
    const unreachable = new KeystoneTransport({ authUrl: AUTH_URL, fetch: () => Promise.reject(Object.assign(new Error('fetch failed'), { cause: { message: 'connect ECONNREFUSED', code: 'ECONNREFUSED' } })), limits });
    await expect(unreachable.send({ method: 'GET', path: 'ok' })).rejects.toMatchObject({ kind: 'transport' });
    expect(results).toEqual([AUTH_URL].flatMap((e) => [[e, 'success'], [e, 'unauthorized'], [e, 'not-found'], [e, 'server'], [e, 'success'], [e, 'transport']]));
  });

  test('another endpoint has a limit of its own', async () => {
    const limits = new KeystoneLimits({ requestsPerSecond: 1, inFlight: 1 });
    expect(limits.of(AUTH_URL)).toBe(limits.of(AUTH_URL));
    expect(limits.of('http://other:5000/v3')).not.toBe(limits.of(AUTH_URL));
  });

  test('adaptive pacing: against a Keystone of 4 workers, 8 clients settle at 3 in flight (one worker spare) once they measured the 4', async () => {
    // A Keystone of `workers` workers: a request waits for a free one, then takes 100 ms.
    const workers = 4;
    let busy = 0;
    const waiting: (() => void)[] = [];
    const clientInFlight = { now: 0, late: 0 };
    const fake = new FakeKeystone().on('POST', /^\/v3\/users\/[0-9a-f]{32}\/application_credentials$/, async () => {
      if (busy >= workers) await new Promise<void>((resolve) => waiting.push(resolve));
      else busy++;
      await sleep(100);
      const next = waiting.shift();
      if (next) next();
      else busy--;
      return json(201, {});
    });
    const limits = new KeystoneLimits({ requestsPerSecond: 0, inFlight: 8, pacing: 'adaptive', spareWorkers: 1 });
    const limit = limits.of(AUTH_URL);
    const clients = Array.from({ length: 8 }, () => new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits }));
    let sent = 0;
    await Promise.all(
      clients.map(async (client) => {
        while (sent < 90) {
          const late = ++sent > 60;
          await client.send({ method: 'POST', path: `users/${'ab'.repeat(16)}/application_credentials`, body: {} });
          if (late) clientInFlight.late = Math.max(clientInFlight.late, limit.inFlight + 1);
        }
      }),
    );
    // 4 measured (less on a machine busy enough to slow the fake's timers: never more), one of them left spare
    expect(limit.capacity).toBeLessThanOrEqual(4);
    expect(limit.limit).toBe(Math.max(1, (limit.capacity ?? 0) - 1));
    expect(clientInFlight.late).toBeLessThanOrEqual(3);
  });

  test('adaptive pacing: a 503 with Retry-After lowers the limit at once; the fixed pacing keeps the configured number', async () => {
    const fake = new FakeKeystone()
      .on('GET', /^\/v3\/x$/, () => json(200, {}), 4)
      .on('GET', /^\/v3\/x$/, () => json(503, { error: { code: 503, message: 'busy' } }, { 'retry-after': '0' }), 1)
      .on('GET', /^\/v3\/x$/, () => json(200, {}));
    const adaptive = new KeystoneLimits({ requestsPerSecond: 0, inFlight: 8, pacing: 'adaptive' });
    const client = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch, limits: adaptive });
    await Promise.all(Array.from({ length: 4 }, () => client.send({ method: 'GET', path: 'x' })));
    expect(adaptive.of(AUTH_URL).limit).toBe(2);
    await client.send({ method: 'GET', path: 'x' });
    expect(adaptive.of(AUTH_URL).limit).toBe(1);
    const fixed = new KeystoneLimits({ requestsPerSecond: 0, inFlight: 8 });
    expect([fixed.of(AUTH_URL).limit, fixed.of(AUTH_URL).capacity]).toEqual([8, undefined]);
  });

  test('refuses a negative limit', () => {
    expect(() => new KeystoneLimits({ requestsPerSecond: -1, inFlight: 1 })).toThrow('must be 0 (no limit) or positive');
    expect(() => new KeystoneLimits({ requestsPerSecond: 1, inFlight: 1.5 })).toThrow('in flight a whole number');
    expect(() => new KeystoneLimits({ requestsPerSecond: 1, inFlight: 1, pacing: 'adaptive', spareWorkers: -1 })).toThrow('Keystone spare workers (-1) must be a whole number, 0 or more');
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
