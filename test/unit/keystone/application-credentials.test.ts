import { ApplicationCredentials, KeystoneError, KeystoneSession } from '../../../src/keystone';
import { AUTH_URL, FakeKeystone, json, keystoneError, tokenReply } from './fake-keystone';

const COLLECTION = /^\/v3\/users\/u1\/application_credentials/;

function credentialReply(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'ac1',
    name: 'gen-1',
    description: 'd',
    user_id: 'u1',
    project_id: 'p1',
    system: null,
    expires_at: '2026-12-02T13:56:48.697000',
    unrestricted: null,
    roles: [{ id: 'r1', name: 'member', domain_id: null }, { id: 'r2', name: 'reader', domain_id: null }],
    links: { self: 'http://keystone.test:5000/v3/application_credentials/ac1' },
    ...overrides,
  };
}

function setup(): { fake: FakeKeystone; credentials: ApplicationCredentials } {
  const fake = new FakeKeystone().on('POST', /^\/v3\/auth\/tokens$/, () =>
    tokenReply('tok', new Date(Date.now() + 3600_000)),
  );
  const session = new KeystoneSession({
    authUrl: AUTH_URL,
    auth: { method: 'password', user: { id: 'u1' }, password: 'pw', project: { id: 'p1' } },
    fetch: fake.fetch,
  });
  return { fake, credentials: new ApplicationCredentials(session) };
}

describe('ApplicationCredentials', () => {
  test('create: restricted, client-supplied secret, expiry in UTC with Z; reads the naive reply time as UTC', async () => {
    const { fake, credentials } = setup();
    fake.on('POST', COLLECTION, () => json(201, { application_credential: { ...credentialReply(), secret: 'S3CRET' } }));
    const expiresAt = new Date(Date.UTC(2026, 11, 2, 13, 56, 48, 697));
    const created = await credentials.create({ name: 'gen-1', description: 'd', secret: 'S3CRET', expiresAt });
    expect(fake.calls('POST', COLLECTION)[0]).toMatchObject({
      path: '/v3/users/u1/application_credentials',
      headers: { 'x-auth-token': 'tok' },
      body: {
        application_credential: {
          name: 'gen-1',
          description: 'd',
          secret: 'S3CRET',
          unrestricted: false,
          expires_at: '2026-12-02T13:56:48.697Z',
        },
      },
    });
    expect(created).toEqual({
      id: 'ac1',
      name: 'gen-1',
      description: 'd',
      userId: 'u1',
      projectId: 'p1',
      expiresAt,
      roles: ['member', 'reader'],
      unrestricted: false,
      accessRules: [],
    });
    expect(JSON.stringify(created)).not.toContain('S3CRET');
  });

  test('create with a role subset and access rules (issue 42) sends them as Keystone names them and reads them back', async () => {
    const { fake, credentials } = setup();
    const rule = { service: 'things', method: 'GET', path: '/v1/things/*' };
    fake.on('POST', COLLECTION, () => json(201, { application_credential: credentialReply({ roles: [{ id: 'r', name: 'reader' }], access_rules: [{ id: 'ar1', ...rule }] }) }));
    const created = await credentials.create({ name: 'gen-1', secret: 's', roles: ['reader'], accessRules: [rule] });
    expect(fake.calls('POST', COLLECTION)[0].body).toEqual({
      application_credential: { name: 'gen-1', secret: 's', unrestricted: false, roles: [{ name: 'reader' }], access_rules: [rule] },
    });
    expect(created).toMatchObject({ roles: ['reader'], accessRules: [rule] });
  });

  test('create without an expiry sends none and reports none', async () => {
    const { fake, credentials } = setup();
    fake.on('POST', COLLECTION, () => json(201, { application_credential: credentialReply({ expires_at: null }) }));
    const created = await credentials.create({ name: 'gen-1', secret: 's' });
    expect(created.expiresAt).toBeUndefined();
    expect(fake.calls('POST', COLLECTION)[0].body).toEqual({
      application_credential: { name: 'gen-1', secret: 's', unrestricted: false },
    });
  });

  test('create: a name taken is a conflict whose error lacks the secret', async () => {
    const { fake, credentials } = setup();
    fake.on('POST', COLLECTION, () => keystoneError(409, 'Duplicate entry found with name gen-1 at application_credential.'));
    const error = (await credentials.create({ name: 'gen-1', secret: 'S3CRET' }).catch((e: unknown) => e)) as KeystoneError;
    expect(error).toMatchObject({ kind: 'conflict', status: 409, retryable: false });
    expect(error.message).toBe(
      'Keystone POST /v3/users/u1/application_credentials: 409 Conflict: Duplicate entry found with name gen-1 at application_credential.',
    );
    expect(error.message).not.toContain('S3CRET');
  });

  test('create rejects empty names and secrets before calling Keystone', async () => {
    const { fake, credentials } = setup();
    await expect(credentials.create({ name: '', secret: 's' })).rejects.toThrow('name must not be empty');
    await expect(credentials.create({ name: 'n', secret: '' })).rejects.toThrow('secret must not be empty');
    expect(fake.requests).toHaveLength(0);
  });

  test('get uses the user-scoped URL (links.self answers 404) and maps 404 to undefined', async () => {
    const { fake, credentials } = setup();
    fake.on('GET', /ac1$/, () => json(200, { application_credential: credentialReply() }));
    expect((await credentials.get('ac1'))?.id).toBe('ac1');
    expect(fake.calls('GET', /ac1$/)[0].path).toBe('/v3/users/u1/application_credentials/ac1');
    expect(await credentials.get('missing')).toBeUndefined();
  });

  test('findByName queries ?name= and matches exactly; list returns all', async () => {
    const { fake, credentials } = setup();
    fake.on('GET', COLLECTION, () =>
      json(200, { application_credentials: [credentialReply(), credentialReply({ id: 'ac2', name: 'gen-2' })] }),
    );
    expect((await credentials.findByName('gen-2'))?.id).toBe('ac2');
    expect(fake.requests.at(-1)?.path).toBe('/v3/users/u1/application_credentials?name=gen-2');
    expect(await credentials.findByName('gen-3')).toBeUndefined();
    expect((await credentials.list()).map((c) => c.id)).toEqual(['ac1', 'ac2']);
  });

  test('delete: 204 is deleted, 404 is already-gone, anything else is thrown', async () => {
    const { fake, credentials } = setup();
    fake
      .on('DELETE', /ac1$/, () => new Response(null, { status: 204 }), 1)
      .on('DELETE', /ac1$/, () => keystoneError(404, 'Could not find Application Credential: ac1.'), 1)
      .on('DELETE', /ac1$/, () => keystoneError(500, 'database is locked'));
    expect(await credentials.delete('ac1')).toBe('deleted');
    expect(await credentials.delete('ac1')).toBe('already-gone');
    await expect(credentials.delete('ac1')).rejects.toMatchObject({ kind: 'server', retryable: true });
  });

  test('a reply missing documented fields is a retryable server fault', async () => {
    const { fake, credentials } = setup();
    fake.on('GET', /ac1$/, () => json(200, { application_credential: { id: 'ac1' } }));
    await expect(credentials.get('ac1')).rejects.toMatchObject({
      kind: 'server',
      retryable: true,
      message: 'Keystone GET /v3/users/u1/application_credentials/ac1: server: application_credential.name is not a string',
    });
  });
});
