// @needs keystone
/**
 * Least privilege on the real Keystone (issue 42), through the project's own Keystone port and client:
 * - a credential minted with a role subset carries exactly those roles (Keystone's GET shows them, a token from it
 *   lists only them), and one minted without keeps today's behaviour (every role of the user's token);
 * - a role the user does not hold is what the Pulumi face's gate reads from the user's token before any create;
 * - access rules are enforced where Keystone has them enforced, by keystonemiddleware's auth_token in the service that
 *   validates the token: a small service registered in the catalog under its type answers a token whose rule allows
 *   `GET /v1/things/*` with 200 there and 401 for DELETE or another path; without rules both pass;
 * - an admin that is an application credential (by id, and by name and user) does everything the identity plane does
 *   through its admin port, shows its own expiry, and may create neither application credentials nor trusts.
 */
import { randomBytes } from 'node:crypto';
import { ApplicationCredentials, KeystoneSession, authenticateApplicationCredential, credentialPort, isKeystoneError, parseAdminCloud, type ApplicationCredential } from '../../src/keystone';
import { keystoneAdmins } from '../../src/plane/keystone-admin';
import { startGuardedService, type GuardedService } from '../support/guarded-service';
import { adminSession, createServiceUser, keystoneTestEnv, uniqueName, type ServiceUser } from '../support/keystone-fixtures';

const secret = (): string => randomBytes(32).toString('base64url');
const THINGS_GET = { service: '', method: 'GET', path: '/v1/things/*' };

describe('role subsets on the real Keystone', () => {
  let svc: ServiceUser;
  beforeAll(async () => {
    svc = await createServiceUser('lp-roles'); // member, which implies reader
  });
  afterAll(async () => svc?.cleanup());

  test('a credential minted with a subset carries exactly it: GET shows it, a token from it lists only it; without, every role of the token', async () => {
    const session = svc.session();
    const port = credentialPort(session, 'lp-roles-1234abcd-applicationcredential', { fresh: true });
    const held = await port.roles?.();
    expect([...(held ?? [])].sort()).toEqual(['member', 'reader']);
    const subsetSecret = secret();
    const subset = await port.create({ name: 'lp-roles-1234abcd-applicationcredential-credential-v1', secret: subsetSecret, mark: { subset: true }, roles: ['reader'] });
    expect(subset.privileges).toEqual({ roles: ['reader'], subset: true, accessRules: [] });
    const everySecret = secret();
    const every = await port.create({ name: 'lp-roles-1234abcd-applicationcredential-credential-v2', secret: everySecret, mark: {} });
    expect([...(every.privileges?.roles ?? [])].sort()).toEqual(['member', 'reader']);
    expect(every.privileges?.subset).toBe(false);

    const got = await new ApplicationCredentials(session).get(subset.id);
    expect(got?.roles).toEqual(['reader']);
    const listed = await port.list();
    expect(listed.find((c) => c.id === subset.id)?.privileges).toEqual({ roles: ['reader'], subset: true, accessRules: [] });

    const fromSubset = await authenticateApplicationCredential({ authUrl: svc.authUrl, id: subset.id, secret: subsetSecret });
    expect(fromSubset.roles).toEqual(['reader']);
    const fromEvery = await authenticateApplicationCredential({ authUrl: svc.authUrl, id: every.id, secret: everySecret });
    expect([...fromEvery.roles].sort()).toEqual(['member', 'reader']);
    await session.close();
  });

  test('Keystone refuses a role the user does not hold (400) and a role that does not exist (404): what the gates keep it from seeing', async () => {
    const credentials = new ApplicationCredentials(svc.session());
    const refused = await credentials.create({ name: uniqueName('lp-admin'), secret: secret(), roles: ['admin'] }).catch((e: unknown) => e);
    expect(isKeystoneError(refused, 'bad-request')).toBe(true);
    expect(String((refused as Error).message)).toContain('Cannot create an application credential with unassigned role');
    const unknown = await credentials.create({ name: uniqueName('lp-none'), secret: secret(), roles: ['no-such-role'] }).catch((e: unknown) => e);
    expect(isKeystoneError(unknown, 'not-found')).toBe(true);
    expect(String((unknown as Error).message)).toContain('Role no-such-role is not defined');
  });
});

describe('access rules, enforced by keystonemiddleware auth_token in the service', () => {
  const env = keystoneTestEnv();
  const serviceType = `kac-things-${randomBytes(3).toString('hex')}`;
  let svc: ServiceUser;
  let service: GuardedService;
  let admin: KeystoneSession;
  let serviceId: string;
  let endpointId: string;
  const answers: string[] = [];

  beforeAll(async () => {
    svc = await createServiceUser('lp-rules');
    service = await startGuardedService({ authUrl: env.authUrl, username: env.adminUser, password: env.adminPassword, project: env.adminProject, domain: env.domain, serviceType });
    // The service in the catalog under its type: auth_token refuses a token with access rules whose catalog lacks it.
    admin = adminSession(env);
    const created = await admin.request({ method: 'POST', path: admin.transport.pathOf('services'), body: { service: { type: serviceType, name: serviceType, enabled: true } } });
    serviceId = (created.body as { service: { id: string } }).service.id;
    const endpoint = await admin.request({
      method: 'POST',
      path: admin.transport.pathOf('endpoints'),
      body: { endpoint: { service_id: serviceId, interface: 'public', url: service.url, region_id: 'RegionOne', enabled: true } },
    });
    endpointId = (endpoint.body as { endpoint: { id: string } }).endpoint.id;
  }, 120_000);

  afterAll(async () => {
    if (process.env.KAC_PRINT_MIDDLEWARE !== undefined) process.stderr.write(`${answers.join('\n')}\n${service?.log() ?? ''}\n`);
    await service?.stop();
    if (endpointId) await admin.request({ method: 'DELETE', path: admin.transport.pathOf(`endpoints/${endpointId}`) }).catch(() => undefined);
    if (serviceId) await admin.request({ method: 'DELETE', path: admin.transport.pathOf(`services/${serviceId}`) }).catch(() => undefined);
    await svc?.cleanup();
    await admin?.close();
  });

  /** A credential of the service user (with `rules`), and a token from it. */
  async function tokenOf(name: string, rules?: { service: string; method: string; path: string }[]): Promise<{ credential: ApplicationCredential; token: string }> {
    const session = svc.session();
    const s = secret();
    const credential = await new ApplicationCredentials(session).create({ name: uniqueName(name), secret: s, ...(rules ? { accessRules: rules } : {}) });
    const login = await authenticateApplicationCredential({ authUrl: svc.authUrl, id: credential.id, secret: s });
    await session.close();
    return { credential, token: login.token };
  }

  async function ask(method: string, path: string, token: string, headers: Record<string, string> = {}): Promise<number> {
    const response = await fetch(`${service.url}${path}`, { method, headers: { 'x-auth-token': token, ...headers } });
    const body = await response.text();
    answers.push(`${method} ${path}${headers['x-service-token'] ? ' (with a service token)' : ''} -> ${response.status} ${body.slice(0, 120)}`);
    return response.status;
  }

  test('a rule allowing GET /v1/things/* on the service: 200 there; 401 for DELETE, another path, a deeper path', async () => {
    const rule = { ...THINGS_GET, service: serviceType };
    const { credential, token } = await tokenOf('lp-get-things', [rule]);
    expect(credential.accessRules).toEqual([rule]);
    expect(await ask('GET', '/v1/things/42', token)).toBe(200);
    expect(await ask('DELETE', '/v1/things/42', token)).toBe(401);
    expect(await ask('GET', '/v1/other/42', token)).toBe(401);
    expect(await ask('GET', '/v1/things/42/parts', token)).toBe(401); // * is one segment
    expect(await ask('POST', '/v1/things/42', token)).toBe(401);
  });

  test('** allows any number of segments', async () => {
    const { token } = await tokenOf('lp-get-all', [{ service: serviceType, method: 'GET', path: '/v1/**' }]);
    expect(await ask('GET', '/v1/things/42/parts', token)).toBe(200);
    expect(await ask('DELETE', '/v1/things/42', token)).toBe(401);
  });

  test('a rule of another service type allows nothing here', async () => {
    const { token } = await tokenOf('lp-other-service', [{ service: 'compute', method: 'GET', path: '/v1/things/*' }]);
    expect(await ask('GET', '/v1/things/42', token)).toBe(401);
  });

  test('without access rules, both pass', async () => {
    const { credential, token } = await tokenOf('lp-no-rules');
    expect(credential.accessRules).toEqual([]);
    expect(await ask('GET', '/v1/things/42', token)).toBe(200);
    expect(await ask('DELETE', '/v1/things/42', token)).toBe(200);
  });

  test('a subset credential\'s token shows the service only its roles', async () => {
    const session = svc.session();
    const s = secret();
    const credential = await new ApplicationCredentials(session).create({ name: uniqueName('lp-reader'), secret: s, roles: ['reader'], accessRules: [{ ...THINGS_GET, service: serviceType }] });
    await session.close();
    const { token } = await authenticateApplicationCredential({ authUrl: svc.authUrl, id: credential.id, secret: s });
    const response = await fetch(`${service.url}/v1/things/7`, { headers: { 'x-auth-token': token } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { roles: string[] }).roles).toEqual(['reader']);
  });

  test('the service token requirement: only a valid service token (with the service role) beside the user token skips the rules', async () => {
    const { token } = await tokenOf('lp-chain', [{ ...THINGS_GET, service: serviceType }]);
    // The admin's token is no service token (no `service` role, service_token_roles_required): the rules still hold.
    const adminToken = (await admin.token()).token;
    expect(await ask('DELETE', '/v1/things/42', token, { 'x-service-token': adminToken })).toBe(401);
    // A service user's token is: the request is taken as one service calling another for the user, and not checked.
    await admin.request({ method: 'POST', path: admin.transport.pathOf('roles'), body: { role: { name: 'service' } } }).catch((e: unknown) => {
      if (!isKeystoneError(e, 'conflict')) throw e;
    });
    const serviceUser = await createServiceUser('lp-service-user', { roles: ['service'] });
    try {
      const serviceToken = (await serviceUser.session().token()).token;
      expect(await ask('DELETE', '/v1/things/42', token, { 'x-service-token': serviceToken })).toBe(200);
    } finally {
      await serviceUser.cleanup();
    }
  });
});

describe('an admin that is an application credential', () => {
  const env = keystoneTestEnv();
  let admin: KeystoneSession;
  let adminUserId: string;
  const created: string[] = [];

  beforeAll(async () => {
    admin = adminSession(env);
    adminUserId = (await admin.token()).userId;
  });
  afterAll(async () => {
    const credentials = new ApplicationCredentials(admin);
    for (const id of created) await credentials.delete(id).catch(() => undefined);
    await admin?.close();
  });

  test('by id, and by name and user: the plane\'s admin port does users, projects, role assignments and passwords, and shows the expiry', async () => {
    const s = secret();
    const expiresAt = new Date(Date.now() + 3 * 86_400_000);
    const name = uniqueName('plane-admin');
    const credential = await new ApplicationCredentials(admin).create({ name, secret: s, expiresAt });
    created.push(credential.id);
    const documents = [
      `clouds:\n  admin:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: ${env.authUrl}\n      application_credential_id: ${credential.id}\n      application_credential_secret: ${s}\n`,
      `clouds:\n  admin:\n    auth_type: v3applicationcredential\n    auth:\n      application_credential_name: ${name}\n      application_credential_secret: ${s}\n      username: ${env.adminUser}\n      user_domain_name: ${env.domain}\n`,
    ];
    const admins = keystoneAdmins();
    try {
      for (const document of documents) {
        const port = admins.connect({ authUrl: env.authUrl, cloud: parseAdminCloud(document, 'admin') });
        const verified = await port.verify();
        expect(verified.applicationCredential).toMatchObject({ id: credential.id, name });
        expect(Math.abs((verified.applicationCredential?.expiresAt?.getTime() ?? 0) - expiresAt.getTime())).toBeLessThan(1000);
        const domainId = (await port.domainId('Default')) as string;
        const project = await port.createProject({ name: uniqueName('lp-p'), domainId, description: 'issue 42', tags: ['kac-test'] });
        const user = await port.createUser({ name: uniqueName('lp-u'), domainId, password: secret(), description: 'issue 42' });
        await port.setPassword(user.id, secret());
        const member = await port.findRole('member');
        const grant = { roleId: member?.id as string, userId: user.id, projectId: project.id };
        await port.grantRole(grant);
        expect(await port.hasRole(grant)).toBe(true);
        await port.revokeRole(grant);
        expect(await port.hasRole(grant)).toBe(false);
        await port.deleteUser(user.id);
        await port.deleteProject(project.id);
      }
    } finally {
      await admins.close();
    }
  });

  test('a restricted admin application credential may create neither application credentials nor trusts: the plane never asks', async () => {
    const s = secret();
    const credential = await new ApplicationCredentials(admin).create({ name: uniqueName('plane-admin-r'), secret: s });
    created.push(credential.id);
    const session = new KeystoneSession({ authUrl: env.authUrl, auth: { method: 'application-credential', id: credential.id, secret: s } });
    try {
      const again = await new ApplicationCredentials(session).create({ name: uniqueName('nested'), secret: secret() }).catch((e: unknown) => e);
      expect(isKeystoneError(again, 'forbidden')).toBe(true);
      const trust = await session
        .request({ method: 'POST', path: session.transport.pathOf('OS-TRUST/trusts'), body: { trust: { trustor_user_id: adminUserId, trustee_user_id: adminUserId, impersonation: false } } })
        .catch((e: unknown) => e);
      expect(isKeystoneError(trust, 'forbidden')).toBe(true);
    } finally {
      await session.close();
    }
  });
});
