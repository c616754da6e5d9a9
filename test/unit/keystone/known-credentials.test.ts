/**
 * The credential port's observation (src/keystone/known-credentials.ts): passes of one session that ask within the
 * window share one list; later passes are served the list with the process's own creates and deletes applied, until
 * it is older than its max age or an unsure outcome forgets it; a fresh list never reuses anything.
 */
import { KeystoneSession, credentialPort, knownCredentials } from '../../../src/keystone';
import { AUTH_URL, FakeKeystone, json, keystoneError, tokenReply } from './fake-keystone';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function setup(listDelayMs = 30) {
  type Held = { id: string; name: string; description?: string; roles?: { name: string }[]; access_rules?: unknown[] };
  const held: Held[] = [];
  const sent: Record<string, unknown>[] = [];
  let clock = 1_000_000;
  let failCreates = 0;
  const reply = (c: Held) => ({ roles: [], ...c, user_id: 'u1', project_id: 'p1', expires_at: null });
  const fake = new FakeKeystone()
    .on('POST', /^\/v3\/auth\/tokens$/, () => tokenReply('tok', new Date(Date.now() + 3600_000)))
    .on('GET', /^\/v3\/users\/u1\/application_credentials$/, async () => {
      const snapshot = held.map(reply);
      await sleep(listDelayMs);
      return json(200, { application_credentials: snapshot });
    })
    .on('POST', /^\/v3\/users\/u1\/application_credentials$/, async (request) => {
      const body = (request.body as { application_credential: { name: string; description?: string; roles?: { name: string }[]; access_rules?: unknown[] } }).application_credential;
      const { name, description } = body;
      sent.push(body);
      if (failCreates > 0) {
        failCreates--;
        return keystoneError(503, 'try again');
      }
      if (held.some((c) => c.name === name)) return keystoneError(409, `Duplicate entry found with name ${name}`);
      const c = { id: `id-${name}`, name, ...(description !== undefined ? { description } : {}), ...(body.roles ? { roles: body.roles } : {}), ...(body.access_rules ? { access_rules: body.access_rules } : {}) };
      held.push(c);
      return json(201, { application_credential: reply(c) });
    })
    .on('DELETE', /^\/v3\/users\/u1\/application_credentials\/[^/]+$/, (request) => {
      const id = decodeURIComponent(request.path.split('/').pop() as string);
      const at = held.findIndex((c) => c.id === id);
      if (at < 0) return keystoneError(404, `Could not find Application Credential: ${id}.`);
      held.splice(at, 1);
      return new Response(null, { status: 204 });
    });
  const session = new KeystoneSession({ authUrl: AUTH_URL, fetch: fake.fetch, auth: { method: 'password', user: { id: 'u1' }, password: 'pw', project: { id: 'p1' } } });
  const lists = () => fake.calls('GET', /application_credentials$/).length;
  const port = (prefix: string, options: { listWindowMs?: number; fresh?: boolean; onAnswer?: () => void } = {}) => {
    knownCredentials(session, { now: () => clock, ...(options.listWindowMs !== undefined ? { listWindowMs: options.listWindowMs } : {}) }); // the first caller sets the options
    const full = credentialPort(session, prefix, options);
    // The observation's shape: generation and id (the marks have a test of their own below).
    return { ...full, list: async () => (await full.list()).map(({ generation, id }) => ({ generation, id })), full };
  };
  return {
    held,
    sent,
    session,
    lists,
    port,
    advance: (ms: number) => (clock += ms),
    failNextCreate: () => (failCreates = 1),
  };
}

describe('credentialPort observation', () => {
  test('the passes of one session asking within the window share one list; each sees its own generations', async () => {
    const s = setup();
    s.held.push({ id: 'a1', name: 'a-credential-v1' }, { id: 'b2', name: 'b-credential-v2' });
    await s.session.token();
    const a = s.port('a', { listWindowMs: 20 });
    const b = s.port('b', { listWindowMs: 20 });
    const [la, lb] = await Promise.all([a.list(), (async () => (await sleep(5), b.list()))()]);
    expect(la).toEqual([{ generation: 1, id: 'a1' }]);
    expect(lb).toEqual([{ generation: 2, id: 'b2' }]);
    expect(s.lists()).toBe(1);
  });

  test('later passes are served the list with the process’s own creates and deletes applied, with no request', async () => {
    const s = setup();
    s.held.push({ id: 'a1', name: 'a-credential-v1' });
    const a = s.port('a');
    expect(await a.list()).toEqual([{ generation: 1, id: 'a1' }]);
    const created = await a.create({ name: 'a-credential-v2', secret: 'x', mark: {} });
    await a.delete('a1');
    expect(await a.list()).toEqual([{ generation: 2, id: created.id }]);
    expect(s.lists()).toBe(1);
  });

  test('a create that completes while the list is on its way is in the reply, whatever Keystone answered first', async () => {
    const s = setup(40);
    const a = s.port('a');
    const b = s.port('b');
    const listing = a.list();
    await sleep(10); // the list is on the wire, its snapshot taken before the create
    const created = await b.create({ name: 'b-credential-v1', secret: 'x', mark: {} });
    expect(await listing).toEqual([]);
    expect(await b.list()).toEqual([{ generation: 1, id: created.id }]);
    expect(s.lists()).toBe(1);
  });

  test('a fresh list is sent after it is asked for, and sees what happened in Keystone since', async () => {
    const s = setup();
    const a = s.port('a');
    const first = a.list();
    await sleep(10); // the first list is on the wire now
    s.held.push({ id: 'a1', name: 'a-credential-v1' }); // created behind the process's back
    const fresh = await s.port('a', { fresh: true }).list();
    expect(await first).toEqual([]);
    expect(fresh).toEqual([{ generation: 1, id: 'a1' }]);
    expect(s.lists()).toBe(2);
  });

  test('a view older than its max age is listed again: a credential deleted by hand is noticed', async () => {
    const s = setup();
    s.held.push({ id: 'a1', name: 'a-credential-v1' });
    const a = s.port('a');
    expect(await a.list()).toHaveLength(1);
    s.held.splice(0, 1); // deleted by hand
    s.advance(59_000);
    expect(await a.list()).toHaveLength(1); // still served from the view
    s.advance(1_000);
    expect(await a.list()).toEqual([]);
    expect(s.lists()).toBe(2);
  });

  test('a create whose outcome is unsure forgets the view: the next pass lists and finds what Keystone holds', async () => {
    const s = setup();
    const a = s.port('a');
    expect(await a.list()).toEqual([]);
    s.failNextCreate();
    await expect(a.create({ name: 'a-credential-v1', secret: 'x', mark: {} })).rejects.toMatchObject({ kind: 'server' });
    s.held.push({ id: 'a1', name: 'a-credential-v1' }); // e.g. Keystone created it and the answer was lost
    expect(await a.list()).toEqual([{ generation: 1, id: 'a1' }]);
    expect(s.lists()).toBe(2);
  });

  test('a 409 (somebody else created the name) forgets the view: the next list shows the credential', async () => {
    const s = setup();
    const a = s.port('a');
    expect(await a.list()).toEqual([]);
    s.held.push({ id: 'other', name: 'a-credential-v1' }); // a former leader finishing its pass
    await expect(a.create({ name: 'a-credential-v1', secret: 'x', mark: {} })).rejects.toMatchObject({ kind: 'conflict' });
    expect(await a.list()).toEqual([{ generation: 1, id: 'other' }]);
    expect(s.lists()).toBe(2);
  });

  test('a deletion Keystone already had done is applied to the view like any other', async () => {
    const s = setup();
    s.held.push({ id: 'a1', name: 'a-credential-v1' });
    const a = s.port('a');
    expect(await a.list()).toHaveLength(1);
    s.held.splice(0, 1);
    await a.delete('a1'); // 404: already gone
    expect(await a.list()).toEqual([]);
    expect(s.lists()).toBe(1);
  });

  test('after the view is forgotten, a pass never joins a list asked for before', async () => {
    const s = setup(40);
    const a = s.port('a');
    const b = s.port('b');
    const before = a.list();
    await sleep(10);
    s.failNextCreate();
    await expect(b.create({ name: 'b-credential-v1', secret: 'x', mark: {} })).rejects.toBeDefined();
    const after = b.list();
    await Promise.all([before, after]);
    expect(s.lists()).toBe(2);
  });

  test('a create writes the order\'s marks into the description after what it is for; the list reads them back with the name and the user', async () => {
    const s = setup(0);
    s.held.push({ id: 'old', name: 'a-credential-v1', description: 'managed by keystone-appcred' });
    const a = s.port('a').full;
    await a.create({ name: 'a-credential-v2', secret: 'x', mark: { owner: 'uid-1', proof: 'pr00f' } });
    expect(s.held.find((c) => c.name === 'a-credential-v2')?.description).toBe('managed by keystone-appcred; owner=uid-1; proof=pr00f');
    const fresh = await s.port('a', { fresh: true }).full.list();
    const none = { roles: [], subset: false, accessRules: [] };
    expect(fresh).toEqual([
      { generation: 1, id: 'old', name: 'a-credential-v1', userId: 'u1', mark: {}, privileges: none },
      { generation: 2, id: 'id-a-credential-v2', name: 'a-credential-v2', userId: 'u1', mark: { owner: 'uid-1', proof: 'pr00f' }, privileges: none },
    ]);
  });

  test('a create with a role subset marks it (roles=subset) and sends the roles and access rules; the list reads what it carries (issue 42)', async () => {
    const s = setup(0);
    const a = s.port('a').full;
    const rule = { service: 'things', method: 'GET', path: '/v1/things/*' };
    const created = await a.create({ name: 'a-credential-v1', secret: 'x', mark: { owner: 'uid-1', subset: true }, roles: ['reader'], accessRules: [rule] });
    expect(s.held[0]?.description).toBe('managed by keystone-appcred; owner=uid-1; roles=subset');
    expect(s.sent[0]).toMatchObject({ roles: [{ name: 'reader' }], access_rules: [rule] });
    expect(created.privileges).toEqual({ roles: ['reader'], subset: true, accessRules: [rule] });
    expect((await s.port('a', { fresh: true }).full.list())[0]?.privileges).toEqual({ roles: ['reader'], subset: true, accessRules: [rule] });
  });
  test('tells each answer Keystone gave (issue 46): a list it sent, a create, a refusal; not a list the view served, nor a 503', async () => {
    const s = setup();
    s.held.push({ id: 'a1', name: 'a-credential-v1' });
    let answers = 0;
    const a = s.port('a', { onAnswer: () => answers++ });
    await a.list();
    expect(answers).toBe(1);
    await a.list(); // the view
    expect(answers).toBe(1);
    await a.full.create({ name: 'a-credential-v2', secret: 's2', mark: {} });
    expect(answers).toBe(2);
    s.failNextCreate();
    await expect(a.full.create({ name: 'a-credential-v3', secret: 's3', mark: {} })).rejects.toThrow(/503/);
    expect(answers).toBe(2);
    await expect(a.full.create({ name: 'a-credential-v2', secret: 's2', mark: {} })).rejects.toThrow(/409/);
    expect(answers).toBe(3);
  });
});
