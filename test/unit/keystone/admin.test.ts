import { KeystoneSession, Projects, Roles, Users } from '../../../src/keystone';
import { AUTH_URL, FakeKeystone, json, keystoneError, tokenReply } from './fake-keystone';

function adminWith(fake: FakeKeystone): KeystoneSession {
  fake.on('POST', /^\/v3\/auth\/tokens$/, () => tokenReply('tok', new Date(Date.now() + 3600_000)));
  return new KeystoneSession({
    authUrl: AUTH_URL,
    auth: { method: 'password', user: { name: 'admin' }, password: 'adminpw', project: { name: 'admin' } },
    fetch: fake.fetch,
  });
}

describe('Users, Projects, Roles', () => {
  test('users: create in the default domain, find by name, update the password, delete convergently', async () => {
    const fake = new FakeKeystone();
    const users = new Users(adminWith(fake));
    const user = { id: 'u9', name: 'svc', domain_id: 'default', enabled: true };
    fake
      .on('POST', /^\/v3\/users$/, () => json(201, { user }))
      .on('GET', /^\/v3\/users\?/, () => json(200, { users: [user] }))
      .on('PATCH', /^\/v3\/users\/u9$/, () => json(200, { user }))
      .on('DELETE', /^\/v3\/users\/u9$/, () => new Response(null, { status: 204 }), 1)
      .on('DELETE', /^\/v3\/users\/u9$/, () => keystoneError(404, 'Could not find user: u9.'));
    expect(await users.create({ name: 'svc', password: 'pw1' })).toEqual({
      id: 'u9', name: 'svc', domainId: 'default', enabled: true, defaultProjectId: undefined,
    });
    expect(fake.requests.at(-1)?.body).toEqual({ user: { name: 'svc', password: 'pw1', domain_id: 'default', enabled: true } });
    expect((await users.findByName('svc'))?.id).toBe('u9');
    expect(fake.requests.at(-1)?.path).toBe('/v3/users?name=svc&domain_id=default');
    await users.updatePassword('u9', 'pw2');
    expect(fake.requests.at(-1)?.body).toEqual({ user: { password: 'pw2' } });
    expect(await users.get('nobody')).toBeUndefined();
    expect(await users.delete('u9')).toBe('deleted');
    expect(await users.delete('u9')).toBe('already-gone');
  });

  test('a password Keystone echoes in an error is redacted', async () => {
    const fake = new FakeKeystone();
    const users = new Users(adminWith(fake));
    fake.on('PATCH', /users/, (request) => keystoneError(400, `Invalid input ${JSON.stringify(request.body)}`));
    const error = (await users.updatePassword('u9', 'pw-secret-2').catch((e: unknown) => e)) as Error;
    expect(error.message).not.toContain('pw-secret-2');
  });

  test('projects: create with tags, find by name, delete', async () => {
    const fake = new FakeKeystone();
    const projects = new Projects(adminWith(fake));
    const project = { id: 'p9', name: 'proj', domain_id: 'default', description: '', enabled: true, tags: ['kac-test'] };
    fake
      .on('POST', /^\/v3\/projects$/, () => json(201, { project }))
      .on('GET', /^\/v3\/projects\?/, () => json(200, { projects: [project] }))
      .on('DELETE', /^\/v3\/projects\/p9$/, () => new Response(null, { status: 204 }));
    expect(await projects.create({ name: 'proj', tags: ['kac-test'] })).toMatchObject({ id: 'p9', tags: ['kac-test'] });
    expect(fake.requests.at(-1)?.body).toEqual({
      project: { name: 'proj', domain_id: 'default', enabled: true, tags: ['kac-test'] },
    });
    expect((await projects.findByName('proj'))?.id).toBe('p9');
    expect(await projects.delete('p9')).toBe('deleted');
  });

  test('roles: find by name; grant, check and revoke on a project', async () => {
    const fake = new FakeKeystone();
    const roles = new Roles(adminWith(fake));
    const path = /^\/v3\/projects\/p9\/users\/u9\/roles\/r1$/;
    fake
      .on('GET', /^\/v3\/roles\?name=member$/, () => json(200, { roles: [{ id: 'r1', name: 'member' }] }))
      .on('PUT', path, () => new Response(null, { status: 204 }))
      .on('HEAD', path, () => new Response(null, { status: 204 }), 1)
      .on('HEAD', path, () => new Response(null, { status: 404 }))
      .on('DELETE', path, () => new Response(null, { status: 204 }), 1)
      .on('DELETE', path, () => keystoneError(404, 'gone'));
    const assignment = { userId: 'u9', projectId: 'p9', roleId: 'r1' };
    expect(await roles.findByName('member')).toEqual({ id: 'r1', name: 'member' });
    await roles.grantOnProject(assignment);
    expect(await roles.hasOnProject(assignment)).toBe(true);
    expect(await roles.hasOnProject(assignment)).toBe(false);
    expect(await roles.revokeOnProject(assignment)).toBe('revoked');
    expect(await roles.revokeOnProject(assignment)).toBe('already-gone');
  });
});
