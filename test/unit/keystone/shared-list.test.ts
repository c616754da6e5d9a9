/**
 * The credential port's lists: passes of one session that ask within the window share one request, and a pass never
 * joins a list already sent (its reply must reflect Keystone after the pass began).
 */
import { KeystoneSession, credentialPort } from '../../../src/keystone';
import { AUTH_URL, FakeKeystone, json, tokenReply } from './fake-keystone';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function setup() {
  const held: { id: string; name: string }[] = [];
  const fake = new FakeKeystone()
    .on('POST', /^\/v3\/auth\/tokens$/, () => tokenReply('tok', new Date(Date.now() + 3600_000)))
    .on('GET', /^\/v3\/users\/u1\/application_credentials$/, async () => {
      const snapshot = held.map((c) => ({ ...c, user_id: 'u1', project_id: 'p1', expires_at: null, roles: [] }));
      await sleep(30);
      return json(200, { application_credentials: snapshot });
    });
  const session = new KeystoneSession({ authUrl: AUTH_URL, fetch: fake.fetch, auth: { method: 'password', user: { id: 'u1' }, password: 'pw', project: { id: 'p1' } } });
  const lists = () => fake.calls('GET', /application_credentials$/).length;
  return { held, session, lists };
}

describe('credentialPort lists', () => {
  test('the passes of one session asking within the window share one list; each sees its own generations', async () => {
    const s = setup();
    s.held.push({ id: 'a1', name: 'a-credential-v1' }, { id: 'b2', name: 'b-credential-v2' });
    await s.session.token();
    const a = credentialPort(s.session, 'a', { listWindowMs: 20 });
    const b = credentialPort(s.session, 'b', { listWindowMs: 20 });
    const [la, lb] = await Promise.all([a.list(), (async () => (await sleep(5), b.list()))()]);
    expect(la).toEqual([{ generation: 1, id: 'a1' }]);
    expect(lb).toEqual([{ generation: 2, id: 'b2' }]);
    expect(s.lists()).toBe(1);
  });

  test('a list asked for after one was sent is a request of its own (it sees what happened since)', async () => {
    const s = setup();
    await s.session.token();
    const a = credentialPort(s.session, 'a');
    const first = a.list();
    await sleep(10); // the first list is on the wire now
    s.held.push({ id: 'a1', name: 'a-credential-v1' });
    const second = await a.list();
    expect(await first).toEqual([]);
    expect(second).toEqual([{ generation: 1, id: 'a1' }]);
    expect(s.lists()).toBe(2);
  });
});
