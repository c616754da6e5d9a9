import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { KeystoneTransport } from '../../../src/keystone';
import { leasePool, openPools } from '../../../src/keystone/dispatchers';
import { AUTH_URL, FakeKeystone, json, keystoneError } from './fake-keystone';
import { failureOf } from '../../support/keystone-error';
import { selfSigned } from '../../support/tls';


describe('KeystoneTransport', () => {
  test('validates the auth URL', () => {
    expect(() => new KeystoneTransport({ authUrl: 'keystone' })).toThrow('authUrl (keystone) is not a URL');
    expect(() => new KeystoneTransport({ authUrl: 'ftp://k/v3' })).toThrow('must be an http or https URL');
    expect(() => new KeystoneTransport({ authUrl: 'http://k:5000/identity' })).toThrow('must end in /v3');
    expect(() => new KeystoneTransport({ authUrl: 'http://k/v3', timeoutMs: 0 })).toThrow('timeoutMs (0)');
    expect(new KeystoneTransport({ authUrl: 'http://k:5000/identity/v3/' }).authUrl).toBe('http://k:5000/identity/v3');
  });

  test('resolves paths below the auth URL and sends tokens and JSON', async () => {
    const fake = new FakeKeystone().on('POST', /^\/identity\/v3\/things$/, () => json(201, { thing: { id: 'x' } }));
    const transport = new KeystoneTransport({ authUrl: 'http://keystone.test/identity/v3', fetch: fake.fetch });
    const reply = await transport.send({ method: 'POST', path: 'things', token: 'tok', body: { a: 1 } });
    expect(reply).toMatchObject({ status: 201, body: { thing: { id: 'x' } } });
    expect(fake.requests[0]).toMatchObject({
      url: 'http://keystone.test/identity/v3/things',
      headers: { 'x-auth-token': 'tok', 'content-type': 'application/json', accept: 'application/json' },
      body: { a: 1 },
    });
  });

  test('an empty 204 reply has no body', async () => {
    const fake = new FakeKeystone().on('DELETE', /./, () => new Response(null, { status: 204 }));
    const transport = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch });
    expect((await transport.send({ method: 'DELETE', path: 'x' })).body).toBeUndefined();
  });

  test.each([
    [400, 'bad-request'],
    [401, 'unauthorized'],
    [403, 'forbidden'],
    [404, 'not-found'],
    [409, 'conflict'],
    [500, 'server'],
    [503, 'server'],
  ] as const)('a %i reply is %s and carries Keystone\'s message', async (status, kind) => {
    const fake = new FakeKeystone().on('GET', /./, () => keystoneError(status, 'what Keystone says'));
    const transport = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch });
    const error = await failureOf(transport.send({ method: 'GET', path: 'users/u1/application_credentials?name=x' }));
    expect(error).toMatchObject({ kind, status, method: 'GET', path: '/v3/users/u1/application_credentials' });
    expect(error.retryable).toBe(status >= 500);
    expect(error.message).toMatch(/^Keystone GET \/v3\/users\/u1\/application_credentials: \d{3} [A-Za-z ]+: what Keystone says$/);
  });

  test('sensitive values and tokens Keystone echoes are redacted; request bodies never appear', async () => {
    const fake = new FakeKeystone().on('POST', /./, (request) =>
      keystoneError(400, `Invalid input: ${JSON.stringify(request.body)} with token ${request.headers['x-auth-token']}`),
    );
    const transport = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch });
    const error = await failureOf(
      transport.send({
        method: 'POST',
        path: 'users',
        token: 'gAAAA-token',
        body: { user: { password: 'hunter2-password' } },
        sensitive: ['hunter2-password'],
      }),
    );
    const texts = [error.message, error.stack ?? '', String(error), JSON.stringify(error)].join('\n');
    expect(texts).not.toContain('hunter2-password');
    expect(texts).not.toContain('gAAAA-token');
    expect(error.message).toContain('***');
  });

  test('a non-JSON error reply is summarised', async () => {
    const fake = new FakeKeystone().on('GET', /./, () => new Response('<html><h1>Bad Gateway</h1></html>', { status: 502 }));
    const transport = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch });
    const error = await failureOf(transport.send({ method: 'GET', path: '' }));
    expect(error).toMatchObject({ kind: 'server', retryable: true });
    expect(error.message).toBe('Keystone GET /v3: 502 Bad Gateway: Bad Gateway');
  });

  test('a 2xx reply that is not JSON is a retryable server fault', async () => {
    const fake = new FakeKeystone().on('GET', /./, () => new Response('not json', { status: 200 }));
    const transport = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fake.fetch });
    expect(await failureOf(transport.send({ method: 'GET', path: 'x' }))).toMatchObject({ kind: 'server', retryable: true });
  });

  test('a connection failure is a retryable transport error naming the cause', async () => {
    const fetchFails = async (): Promise<Response> => {
      const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5000'), { code: 'ECONNREFUSED' });
      throw new TypeError('fetch failed', { cause });
    };
    const transport = new KeystoneTransport({ authUrl: AUTH_URL, fetch: fetchFails });
    const error = await failureOf(transport.send({ method: 'GET', path: 'x' }));
    expect(error).toMatchObject({ kind: 'transport', retryable: true, status: undefined });
    expect(error.message).toBe(
      'Keystone GET /v3/x: transport: fetch failed: connect ECONNREFUSED 127.0.0.1:5000 (http://keystone.test:5000)',
    );
  });

  test('no reply within timeoutMs is a retryable timeout', async () => {
    const hangs = (_url: string, init: RequestInit): Promise<Response> =>
      new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason)));
    const transport = new KeystoneTransport({ authUrl: AUTH_URL, fetch: hangs, timeoutMs: 20 });
    const error = await failureOf(transport.send({ method: 'GET', path: 'x' }));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(error.message).toBe('Keystone GET /v3/x: timeout: no reply within 20 ms');
  });

  describe('caBundle', () => {
    let cert: string;
    let server: ReturnType<typeof createServer>;
    let url: string;

    beforeAll(async () => {
      const tls = selfSigned('127.0.0.1', '127.0.0.1');
      cert = tls.cert;
      server = createServer({ key: tls.key, cert }, (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"version":{"id":"v3.14"}}');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v3`;
    });

    afterAll(async () => {
      server.closeAllConnections(); // pools keep connections alive
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    test('trusts a private CA when given its bundle', async () => {
      const transport = new KeystoneTransport({ authUrl: url, caBundle: cert });
      try {
        expect((await transport.send({ method: 'GET', path: '' })).body).toEqual({ version: { id: 'v3.14' } });
      } finally {
        await transport.close();
      }
    });

    test('clients of one bundle share one connection pool, which closes after the last client lets go of it', async () => {
      const sockets = new Set<unknown>();
      server.on('secureConnection', (socket) => sockets.add(socket));
      const bundle = `${cert}\n`; // the same trust, but a pool of its own (pools are keyed by content)
      const before = openPools();
      const a = new KeystoneTransport({ authUrl: url, caBundle: bundle });
      const b = new KeystoneTransport({ authUrl: url, caBundle: bundle });
      for (let i = 0; i < 8; i++) await (i % 2 ? b : a).send({ method: 'GET', path: '' });
      expect(openPools()).toBe(before + 1);
      expect(sockets.size).toBeLessThanOrEqual(2); // kept alive across clients (undici opens a second one early on)
      await a.close();
      await a.close(); // a second close releases nothing more
      expect((await b.send({ method: 'GET', path: '' })).status).toBe(200);
      const lease = leasePool(bundle, 10);
      await b.close();
      expect(openPools()).toBe(before + 1); // still leased
      lease.release();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(openPools()).toBe(before);
    });

    test('without the bundle the certificate is refused as a transport error', async () => {
      const transport = new KeystoneTransport({ authUrl: url });
      const error = await failureOf(transport.send({ method: 'GET', path: '' }));
      expect(error.kind).toBe('transport');
      expect(error.message).toMatch(/certificate/i);
    });
  });
});
