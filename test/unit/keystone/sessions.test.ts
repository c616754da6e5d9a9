/**
 * KeystoneSessions: one login per connection and token lifetime, shared by every caller; a new password generation or
 * a changed password never uses the old token; a 401 drops the token and logs in once more.
 */
import { KeystoneSessions, type SessionConnection } from '../../../src/keystone';
import { AUTH_URL, FakeKeystone, json, keystoneError, tokenReply } from './fake-keystone';

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);

function setup() {
  const clock = { now: T0 };
  let n = 0;
  const fake = new FakeKeystone().on('POST', /^\/v3\/auth\/tokens$/, () => tokenReply(`tok-${++n}`, new Date(clock.now + 3600_000)));
  fake.on('GET', /^\/v3\/x$/, () => json(200, {}));
  const sessions = new KeystoneSessions({ fetch: fake.fetch, now: () => clock.now });
  const user = (password: string, generation?: number): SessionConnection => ({
    authUrl: AUTH_URL,
    auth: { method: 'password', user: { id: 'u1' }, password, project: { id: 'p1' } },
    ...(generation !== undefined ? { generation } : {}),
  });
  const tokensUsed = () => fake.calls('GET', /^\/v3\/x$/).map((r) => r.headers['x-auth-token']);
  return { clock, fake, sessions, user, logins: () => fake.calls('POST', /auth\/tokens/).length, tokensUsed };
}

describe('KeystoneSessions', () => {
  test('every pass of one connection shares one session and one login, also when they start at once', async () => {
    const s = setup();
    await Promise.all(Array.from({ length: 20 }, () => s.sessions.session(s.user('pw', 1)).request({ method: 'GET', path: 'x' })));
    for (let i = 0; i < 5; i++) await s.sessions.session(s.user('pw', 1)).request({ method: 'GET', path: 'x' });
    expect(s.logins()).toBe(1);
    expect(new Set(s.tokensUsed())).toEqual(new Set(['tok-1']));
  });

  test('a token is reused until shortly before it expires, then one login renews it', async () => {
    const s = setup();
    await s.sessions.session(s.user('pw', 1)).request({ method: 'GET', path: 'x' });
    s.clock.now += 3600_000 - 30_000; // within the refresh margin
    await s.sessions.session(s.user('pw', 1)).request({ method: 'GET', path: 'x' });
    expect(s.logins()).toBe(2);
    expect(s.tokensUsed()).toEqual(['tok-1', 'tok-2']);
  });

  test('a new password generation (or another password) never uses the old token, and replaces the old session', async () => {
    const s = setup();
    const old = s.sessions.session(s.user('pw-1', 1));
    await old.request({ method: 'GET', path: 'x' });
    await s.sessions.session(s.user('pw-2', 2)).request({ method: 'GET', path: 'x' });
    expect(s.tokensUsed()).toEqual(['tok-1', 'tok-2']);
    expect(s.sessions.size).toBe(1);
    expect(s.fake.calls('POST', /auth\/tokens/).map((r) => JSON.stringify(r.body).includes('pw-2'))).toEqual([false, true]);
    await s.sessions.session(s.user('pw-2b', 2)).request({ method: 'GET', path: 'x' }); // the same generation, another password
    expect(s.logins()).toBe(3);
  });

  test('a 401 to a reused token drops it and logs in once more', async () => {
    const s = setup();
    await s.sessions.session(s.user('pw', 1)).request({ method: 'GET', path: 'x' });
    s.fake.requests.length = 0;
    const revoked = new FakeKeystone();
    let n = 1;
    revoked
      .on('GET', /^\/v3\/y$/, () => keystoneError(401, 'The request you have made requires authentication.'), 1)
      .on('GET', /^\/v3\/y$/, () => json(200, {}))
      .on('POST', /^\/v3\/auth\/tokens$/, () => tokenReply(`tok-${++n}`, new Date(s.clock.now + 3600_000)));
    const sessions = new KeystoneSessions({ fetch: revoked.fetch, now: () => s.clock.now });
    await sessions.session(s.user('pw', 1)).token();
    await sessions.session(s.user('pw', 1)).request({ method: 'GET', path: 'y' });
    expect(revoked.calls('POST', /auth\/tokens/)).toHaveLength(2);
    expect(revoked.calls('GET', /y/).map((r) => r.headers['x-auth-token'])).toEqual(['tok-2', 'tok-3']);
  });

  test('another user, project or endpoint is another session; beyond maxSessions the least recently used goes', () => {
    const sessions = new KeystoneSessions({ maxSessions: 2, fetch: new FakeKeystone().fetch });
    const of = (user: string, project = 'p') => sessions.session({ authUrl: AUTH_URL, auth: { method: 'password', user: { id: user }, password: 'pw', project: { id: project } } });
    const a = of('a');
    expect(of('a')).toBe(a);
    expect(of('a', 'q')).not.toBe(a);
    expect(of('b')).not.toBe(a);
    expect(sessions.size).toBe(2);
    expect(of('a')).not.toBe(a); // evicted
  });
});
