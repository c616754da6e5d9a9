import { KeystoneError, KeystoneSession, type KeystoneAuth } from '../../../src/keystone';
import { AUTH_URL, FakeKeystone, json, keystoneError, tokenReply } from './fake-keystone';

const PASSWORD = 'correct horse battery staple';
const passwordAuth: KeystoneAuth = {
  method: 'password',
  user: { name: 'svc', domainName: 'Default' },
  password: PASSWORD,
  project: { name: 'proj', domainId: 'default' },
};

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);

function sessionWith(fake: FakeKeystone, clock: { now: number }, auth: KeystoneAuth = passwordAuth): KeystoneSession {
  return new KeystoneSession({ authUrl: AUTH_URL, auth, fetch: fake.fetch, now: () => clock.now });
}

/** Issues tok-1, tok-2, … each valid for an hour from the clock. */
function issuing(fake: FakeKeystone, clock: { now: number }): FakeKeystone {
  let n = 0;
  return fake.on('POST', /^\/v3\/auth\/tokens$/, () => tokenReply(`tok-${++n}`, new Date(clock.now + 3600_000)));
}

describe('KeystoneSession', () => {
  test('password login: user and project by name within domains, scoped to the project', async () => {
    const clock = { now: T0 };
    const fake = issuing(new FakeKeystone(), clock);
    const token = await sessionWith(fake, clock).token();
    expect(token).toMatchObject({ token: 'tok-1', userId: 'u1', projectId: 'p1', roles: ['member', 'reader'] });
    expect(token.expiresAt.getTime()).toBe(T0 + 3600_000);
    expect(fake.requests[0].body).toEqual({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'svc', domain: { name: 'Default' }, password: PASSWORD } },
        },
        scope: { project: { name: 'proj', domain: { id: 'default' } } },
      },
    });
  });

  test('ids need no domain; a name without a domain means the default domain', async () => {
    const clock = { now: T0 };
    const fake = issuing(new FakeKeystone(), clock);
    await sessionWith(fake, clock, {
      method: 'password',
      user: { id: 'u1' },
      password: PASSWORD,
      project: { name: 'proj' },
    }).token();
    expect(fake.requests[0].body).toMatchObject({
      auth: { identity: { password: { user: { id: 'u1' } } }, scope: { project: { name: 'proj', domain: { id: 'default' } } } },
    });
  });

  test('application-credential login sends id and secret and needs no scope', async () => {
    const clock = { now: T0 };
    const fake = new FakeKeystone().on('POST', /auth\/tokens/, () =>
      tokenReply('tok-ac', new Date(T0 + 600_000), { application_credential: { id: 'ac1', name: 'n', restricted: true } }),
    );
    const token = await sessionWith(fake, clock, { method: 'application-credential', id: 'ac1', secret: 's' }).token();
    expect(token.applicationCredential).toEqual({ id: 'ac1', name: 'n', restricted: true });
    expect(fake.requests[0].body).toEqual({
      auth: { identity: { methods: ['application_credential'], application_credential: { id: 'ac1', secret: 's' } } },
    });
  });

  test('reuses the token until 60 s before it expires, then logs in again', async () => {
    const clock = { now: T0 };
    const fake = issuing(new FakeKeystone(), clock).on('GET', /^\/v3\/projects$/, () => json(200, { projects: [] }));
    const session = sessionWith(fake, clock);
    for (let i = 0; i < 3; i++) await session.request({ method: 'GET', path: 'projects' });
    clock.now = T0 + 3600_000 - 60_001;
    await session.request({ method: 'GET', path: 'projects' });
    expect(fake.calls('POST', /auth\/tokens/)).toHaveLength(1);
    clock.now = T0 + 3600_000 - 60_000;
    await session.request({ method: 'GET', path: 'projects' });
    expect(fake.calls('POST', /auth\/tokens/)).toHaveLength(2);
    expect(fake.calls('GET', /projects/).map((r) => r.headers['x-auth-token'])).toEqual([
      'tok-1', 'tok-1', 'tok-1', 'tok-1', 'tok-2',
    ]);
  });

  test('concurrent first requests share one login', async () => {
    const clock = { now: T0 };
    const fake = issuing(new FakeKeystone(), clock).on('GET', /projects/, () => json(200, { projects: [] }));
    const session = sessionWith(fake, clock);
    await Promise.all(Array.from({ length: 5 }, () => session.request({ method: 'GET', path: 'projects' })));
    expect(fake.calls('POST', /auth\/tokens/)).toHaveLength(1);
  });

  test('a 401 to a reused token logs in again once and retries the request once', async () => {
    const clock = { now: T0 };
    const fake = issuing(new FakeKeystone(), clock)
      .on('GET', /projects/, () => json(200, { projects: [] }), 1)
      .on('GET', /projects/, () => keystoneError(401, 'The request you have made requires authentication.'), 1)
      .on('GET', /projects/, () => json(200, { projects: [] }));
    const session = sessionWith(fake, clock);
    await session.request({ method: 'GET', path: 'projects' });
    await session.request({ method: 'GET', path: 'projects' });
    expect(fake.calls('GET', /projects/).map((r) => r.headers['x-auth-token'])).toEqual(['tok-1', 'tok-1', 'tok-2']);
  });

  test('a 401 to a fresh token is final', async () => {
    const clock = { now: T0 };
    const fake = issuing(new FakeKeystone(), clock).on('GET', /projects/, () => keystoneError(401, 'nope'));
    const error = await sessionWith(fake, clock).request({ method: 'GET', path: 'projects' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeystoneError);
    expect(error).toMatchObject({ kind: 'unauthorized', status: 401 });
    expect(fake.calls('GET', /projects/)).toHaveLength(1);
  });

  test('a second 401 after the re-login is thrown, not retried again', async () => {
    const clock = { now: T0 };
    const fake = issuing(new FakeKeystone(), clock)
      .on('GET', /projects/, () => json(200, { projects: [] }), 1)
      .on('GET', /projects/, () => keystoneError(401, 'nope'));
    const session = sessionWith(fake, clock);
    await session.request({ method: 'GET', path: 'projects' });
    await expect(session.request({ method: 'GET', path: 'projects' })).rejects.toMatchObject({ kind: 'unauthorized' });
    expect(fake.calls('GET', /projects/)).toHaveLength(3);
    expect(fake.calls('POST', /auth\/tokens/)).toHaveLength(2);
  });

  test('other failures are not retried', async () => {
    const clock = { now: T0 };
    const fake = issuing(new FakeKeystone(), clock).on('GET', /projects/, () => keystoneError(503, 'busy'));
    const session = sessionWith(fake, clock);
    await expect(session.request({ method: 'GET', path: 'projects' })).rejects.toMatchObject({ kind: 'server', retryable: true });
    await expect(session.request({ method: 'GET', path: 'projects' })).rejects.toMatchObject({ kind: 'server' });
    expect(fake.calls('GET', /projects/)).toHaveLength(2);
    expect(fake.calls('POST', /auth\/tokens/)).toHaveLength(1);
  });

  test('a failed login is not cached, and the password never shows in its error', async () => {
    const clock = { now: T0 };
    const fake = new FakeKeystone()
      .on('POST', /auth\/tokens/, () => keystoneError(401, 'The request you have made requires authentication.'), 1)
      .on('POST', /auth\/tokens/, () => tokenReply('tok-ok', new Date(T0 + 3600_000)));
    const session = sessionWith(fake, clock);
    const error = (await session.token().catch((e: unknown) => e)) as KeystoneError;
    expect(error).toMatchObject({ kind: 'unauthorized', status: 401, retryable: false });
    expect(error.message).toBe(
      'Keystone POST /v3/auth/tokens: 401 Unauthorized: The request you have made requires authentication.',
    );
    expect([error.message, error.stack, JSON.stringify(error)].join()).not.toContain(PASSWORD);
    expect((await session.token()).token).toBe('tok-ok');
  });

  test('a login reply without X-Subject-Token is a server fault', async () => {
    const clock = { now: T0 };
    const fake = new FakeKeystone().on('POST', /auth\/tokens/, () => json(201, { token: {} }));
    await expect(sessionWith(fake, clock).token()).rejects.toMatchObject({
      kind: 'server',
      message: 'Keystone POST /v3/auth/tokens: server: the reply has no X-Subject-Token header',
    });
  });

  test('validate sends the subject token and reads what it says', async () => {
    const clock = { now: T0 };
    const fake = issuing(new FakeKeystone(), clock).on('GET', /auth\/tokens/, () =>
      tokenReply('ignored', new Date(T0 + 60_000)),
    );
    const info = await sessionWith(fake, clock).validate('subject');
    expect(info).toMatchObject({ token: 'subject', projectId: 'p1' });
    expect(fake.calls('GET', /auth\/tokens/)[0].headers).toMatchObject({ 'x-auth-token': 'tok-1', 'x-subject-token': 'subject' });
  });
});
