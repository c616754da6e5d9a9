/**
 * The plane's Keystone side on src/keystone, against a scripted HTTP Keystone: the admin port's calls, one session per
 * connection, the password cloud read from and written to clouds.yaml.
 */
import { parse } from 'yaml';
import { CloudsYamlError, adminAuthOf, parseAdminCloud, parsePasswordCloud, renderPasswordCloudsYaml } from '../../../src/keystone';
import { keystoneAdmins } from '../../../src/plane';
import { AUTH_URL, FakeKeystone, json, keystoneError, tokenReply } from '../keystone/fake-keystone';

const cloud = { user: { name: 'admin', domainName: 'Default' }, password: 'pw', project: { name: 'admin', domainName: 'Default' } };

describe('the admin port', () => {
  test('verify logs in afresh (a real token) and reads the identity version; a wrong password is unauthorized', async () => {
    const fake = new FakeKeystone();
    fake.on('POST', /^\/v3\/auth\/tokens$/, () => tokenReply('tok', new Date(Date.now() + 3600_000)), 2).on('GET', /^\/v3$/, () => json(200, { version: { id: 'v3.14', status: 'stable' } }));
    const admin = keystoneAdmins({ fetch: fake.fetch }).connect({ authUrl: AUTH_URL, cloud });
    expect(await admin.verify()).toEqual({ version: 'v3.14' });
    expect(await admin.verify()).toEqual({ version: 'v3.14' });
    expect(fake.calls('POST', /auth\/tokens/)).toHaveLength(2);
    fake.on('POST', /^\/v3\/auth\/tokens$/, () => keystoneError(401, 'The request you have made requires authentication.'));
    await expect(admin.verify()).rejects.toMatchObject({ kind: 'unauthorized' });
  });

  test('one session per connection: the same Secret reuses it, a changed one does not', () => {
    const admins = keystoneAdmins({ fetch: new FakeKeystone().fetch });
    const a = admins.connect({ authUrl: AUTH_URL, cloud });
    expect(admins.connect({ authUrl: AUTH_URL, cloud: { ...cloud } })).toBe(a);
    expect(admins.connect({ authUrl: AUTH_URL, cloud: { ...cloud, password: 'new' } })).not.toBe(a);
  });

  test('users carry their description; domains by name; projects carry tags', async () => {
    const fake = new FakeKeystone();
    fake
      .on('POST', /^\/v3\/auth\/tokens$/, () => tokenReply('tok', new Date(Date.now() + 3600_000)))
      .on('GET', /^\/v3\/domains\?name=Tenants$/, () => json(200, { domains: [{ id: 'd1', name: 'Tenants', enabled: true }] }))
      .on('GET', /^\/v3\/users\?name=alice&domain_id=d1$/, () => json(200, { users: [{ id: 'u1', name: 'alice', domain_id: 'd1', description: 'x (c5c3.io-owner-1)' }] }))
      .on('POST', /^\/v3\/projects$/, (r) => json(201, { project: { id: 'p1', domain_id: 'd1', ...(r.body as { project: object }).project } }));
    const admin = keystoneAdmins({ fetch: fake.fetch }).connect({ authUrl: AUTH_URL, cloud });
    expect(await admin.domainId('Tenants')).toBe('d1');
    expect(await admin.findUser('alice', 'd1')).toEqual({ id: 'u1', name: 'alice', description: 'x (c5c3.io-owner-1)' });
    expect(await admin.createProject({ name: 'p', domainId: 'd1', description: 'd', tags: ['c5c3.io-owner-1'] })).toMatchObject({ id: 'p1', tags: ['c5c3.io-owner-1'] });
    expect(fake.requests.at(-1)?.body).toEqual({ project: { name: 'p', domain_id: 'd1', enabled: true, description: 'd', tags: ['c5c3.io-owner-1'] } });
  });
});

describe('password clouds', () => {
  test('parsePasswordCloud reads user, password, project and their domains', () => {
    const doc = 'clouds:\n  admin:\n    auth_type: password\n    auth:\n      auth_url: http://k/v3\n      username: admin\n      password: 123\n      project_id: p1\n      user_domain_id: default\n    region_name: R\n';
    expect(parsePasswordCloud(doc, 'admin')).toEqual({ authUrl: 'http://k/v3', user: { name: 'admin', domainId: 'default' }, password: '123', project: { id: 'p1' }, regionName: 'R' });
  });

  test('parsePasswordCloud refuses what it cannot use, naming the field', () => {
    expect(() => parsePasswordCloud(':\n- [', 'admin')).toThrow(CloudsYamlError);
    expect(() => parsePasswordCloud('clouds:\n  admin:\n    auth: {username: a, password: b}\n', 'admin')).toThrow('lacks auth.project_name (or auth.project_id)');
  });

  test('parseAdminCloud (issue 42): a password cloud, or an application credential by id, or by name and user; the session auth of each', () => {
    const password = 'clouds:\n  admin:\n    auth:\n      username: admin\n      password: pw\n      project_name: admin\n';
    expect(adminAuthOf(parseAdminCloud(password, 'admin'))).toEqual({ method: 'password', user: { name: 'admin', domainName: 'Default' }, password: 'pw', project: { name: 'admin', domainName: 'Default' } });
    const byId = 'clouds:\n  admin:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: http://k/v3\n      application_credential_id: ac1\n      application_credential_secret: s3\n    region_name: R\n';
    expect(parseAdminCloud(byId, 'admin')).toEqual({ credential: { id: 'ac1' }, secret: 's3', authUrl: 'http://k/v3', regionName: 'R' });
    expect(adminAuthOf(parseAdminCloud(byId, 'admin'))).toEqual({ method: 'application-credential', id: 'ac1', secret: 's3' });
    const byName = 'clouds:\n  admin:\n    auth_type: v3applicationcredential\n    auth:\n      application_credential_name: plane\n      application_credential_secret: s3\n      user_id: u1\n';
    expect(adminAuthOf(parseAdminCloud(byName, 'admin'))).toEqual({ method: 'application-credential', name: 'plane', user: { id: 'u1' }, secret: 's3' });
    expect(() => parseAdminCloud('clouds:\n  admin:\n    auth_type: token\n', 'admin')).toThrow('has auth_type token; it must be a password cloud (auth_type password) or an application credential (auth_type v3applicationcredential)');
  });

  test('renderPasswordCloudsYaml: a password cloud without a project or a CA bundle; any password round-trips', () => {
    for (const password of ['yes', '123', "it's #1", ' padded ']) {
      const text = renderPasswordCloudsYaml({ authUrl: 'https://k/v3', username: 'u', password, userDomainName: 'Default' });
      expect(parse(text).clouds.openstack.auth).toEqual({ auth_url: 'https://k/v3', username: 'u', password, user_domain_name: 'Default' });
    }
    expect(() => renderPasswordCloudsYaml({ authUrl: 'https://k/v3', username: 'u', password: '', userDomainName: 'D' })).toThrow('password must not be empty');
  });
});
