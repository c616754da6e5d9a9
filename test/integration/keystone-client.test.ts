// @needs keystone
/**
 * The Keystone client against a real Keystone (Debian's Zed, see test/support/keystone.ts): password login,
 * application credentials with client-supplied secrets, error classification, and an independent client (the
 * `openstack` CLI) accepting a rendered clouds.yaml.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApplicationCredentials,
  authenticateApplicationCredential,
  credentialPort,
  KeystoneError,
  KeystoneSession,
  renderCloudsYaml,
} from '../../src/keystone';
import { adminSession, createServiceUser, uniqueName, type ServiceUser } from '../support/keystone-fixtures';
import { failureOf } from '../support/keystone-error';

const newSecret = (): string => randomBytes(32).toString('base64url');
const inOneHour = (): Date => new Date(Date.now() + 3600_000 + 123);


/** A port nothing listens on (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Every text form of an error, where a secret must never appear. */
function textsOf(error: KeystoneError): string {
  return [error.message, error.stack ?? '', error.detail ?? '', String(error), JSON.stringify(error)].join('\n');
}

describe('Keystone client against a real Keystone', () => {
  let svc: ServiceUser;
  let session: KeystoneSession;
  let credentials: ApplicationCredentials;

  beforeAll(async () => {
    svc = await createServiceUser('kc');
    session = svc.session();
    credentials = new ApplicationCredentials(session);
  });

  afterAll(async () => {
    await svc?.cleanup();
  });

  test('password login is scoped to the project and carries the member role', async () => {
    const token = await session.token();
    expect(token.projectId).toBe(svc.projectId);
    expect(token.userId).toBe(svc.userId);
    expect([...token.roles].sort()).toEqual(['member', 'reader']);
    expect(token.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(await session.token()).toBe(token); // reused, not re-issued
  });

  test('a credential with a client-supplied secret and an expiry authenticates, restricted, on its project', async () => {
    const secret = newSecret();
    const expiresAt = inOneHour();
    const name = uniqueName('appcred');
    const created = await credentials.create({ name, description: 'integration test', secret, expiresAt });
    expect(created).toMatchObject({ name, projectId: svc.projectId, userId: svc.userId, unrestricted: false });
    expect([...created.roles].sort()).toEqual(['member', 'reader']);
    // What was sent (ms precision, UTC) is what Keystone reports back (naive UTC, microseconds).
    expect(created.expiresAt?.toISOString()).toBe(expiresAt.toISOString());
    expect((await credentials.get(created.id))?.expiresAt?.toISOString()).toBe(expiresAt.toISOString());
    expect((await credentials.findByName(name))?.id).toBe(created.id);
    expect((await credentials.list()).map((c) => c.id)).toContain(created.id);

    const login = await authenticateApplicationCredential({ authUrl: svc.authUrl, id: created.id, secret });
    expect(login.projectId).toBe(svc.projectId);
    expect(login.userId).toBe(svc.userId);
    expect(login.applicationCredential).toEqual({ id: created.id, name, restricted: true });
    expect(login.expiresAt.getTime()).toBeLessThanOrEqual(expiresAt.getTime());
    expect((await adminSession().validate(login.token)).projectId).toBe(svc.projectId);

    // Restricted: its token may not manage application credentials.
    const viaCredential = new ApplicationCredentials(
      new KeystoneSession({ authUrl: svc.authUrl, auth: { method: 'application-credential', id: created.id, secret } }),
    );
    const otherSecret = newSecret();
    const denied = await failureOf(viaCredential.create({ name: uniqueName('nested'), secret: otherSecret }));
    expect(denied).toMatchObject({ kind: 'forbidden', status: 403, retryable: false });
    expect(denied.message).toMatch(/^Keystone POST \/v3\/users\/[0-9a-f]+\/application_credentials: 403 Forbidden: /);
    expect(denied.message).toContain('application_credential');
    for (const value of [secret, otherSecret, login.token]) expect(textsOf(denied)).not.toContain(value);

    expect(await credentials.delete(created.id)).toBe('deleted');
  });

  test('the same name twice is a conflict', async () => {
    const name = uniqueName('dup');
    const first = await credentials.create({ name, secret: newSecret() });
    const secret = newSecret();
    const error = await failureOf(credentials.create({ name, secret }));
    expect(error).toMatchObject({ kind: 'conflict', status: 409, retryable: false });
    expect(error.message).toContain('Duplicate entry');
    expect(textsOf(error)).not.toContain(secret);
    await credentials.delete(first.id);
  });

  test('an expiry in the past is a bad request with Keystone\'s reason', async () => {
    const secret = newSecret();
    const error = await failureOf(
      credentials.create({ name: uniqueName('past'), secret, expiresAt: new Date(Date.now() - 60_000) }),
    );
    expect(error).toMatchObject({ kind: 'bad-request', status: 400, retryable: false });
    expect(error.message).toContain('must not be before now');
    expect(textsOf(error)).not.toContain(secret);
  });

  test("the lifecycle port's verify (issue 39): true only for the id with the secret it was created with; a wrong secret, another credential's id, a deleted one: false", async () => {
    const port = credentialPort(session, uniqueName('verify'));
    const secret = newSecret();
    const ours = await credentials.create({ name: uniqueName('ours'), secret });
    const theirs = await credentials.create({ name: uniqueName('theirs'), secret: newSecret() });
    expect(await port.verify?.(ours.id, secret)).toBe(true);
    expect(await port.verify?.(ours.id, newSecret())).toBe(false);
    expect(await port.verify?.(theirs.id, secret)).toBe(false); // a tenant's edit: another credential's id, our secret
    await credentials.delete(ours.id);
    expect(await port.verify?.(ours.id, secret)).toBe(false);
    await credentials.delete(theirs.id);
  });

  test('delete converges; a deleted credential no longer authenticates and its tokens are revoked', async () => {
    const secret = newSecret();
    const created = await credentials.create({ name: uniqueName('gone'), secret });
    const login = await authenticateApplicationCredential({ authUrl: svc.authUrl, id: created.id, secret });

    expect(await credentials.delete(created.id)).toBe('deleted');
    expect(await credentials.delete(created.id)).toBe('already-gone');
    expect(await credentials.get(created.id)).toBeUndefined();

    const error = await failureOf(authenticateApplicationCredential({ authUrl: svc.authUrl, id: created.id, secret }));
    expect(error).toMatchObject({ kind: 'not-found', status: 404, retryable: false });
    expect(error.message).toMatch(/^Keystone POST \/v3\/auth\/tokens: 404 Not Found/);
    expect(textsOf(error)).not.toContain(secret);

    const revoked = await failureOf(adminSession().validate(login.token));
    expect(revoked.kind).toBe('not-found');
    expect(textsOf(revoked)).not.toContain(login.token);
  });

  test('a wrong secret and a wrong password are unauthorized, and neither appears in the error', async () => {
    const created = await credentials.create({ name: uniqueName('wrong'), secret: newSecret() });
    const wrongSecret = newSecret();
    const error = await failureOf(
      authenticateApplicationCredential({ authUrl: svc.authUrl, id: created.id, secret: wrongSecret }),
    );
    expect(error).toMatchObject({ kind: 'unauthorized', status: 401, retryable: false });
    expect(error.message).toMatch(/^Keystone POST \/v3\/auth\/tokens: 401 Unauthorized: /);
    expect(textsOf(error)).not.toContain(wrongSecret);
    await credentials.delete(created.id);

    const wrongPassword = `wrong-${randomBytes(12).toString('hex')}`;
    const bad = new KeystoneSession({ authUrl: svc.authUrl, auth: { ...svc.auth, password: wrongPassword } });
    const denied = await failureOf(bad.token());
    expect(denied).toMatchObject({ kind: 'unauthorized', status: 401 });
    expect(textsOf(denied)).not.toContain(wrongPassword);
    expect(textsOf(denied)).not.toContain(svc.password);
  });

  test('nothing listens: a retryable transport error naming method and path', async () => {
    const port = await closedPort();
    const offline = new KeystoneSession({ authUrl: `http://127.0.0.1:${port}/v3`, auth: svc.auth, timeoutMs: 5000 });
    const error = await failureOf(offline.token());
    expect(error).toMatchObject({ kind: 'transport', retryable: true, status: undefined });
    expect(error.message).toMatch(/^Keystone POST \/v3\/auth\/tokens: transport: .*ECONNREFUSED/);
    expect(textsOf(error)).not.toContain(svc.password);
  });

  test('the openstack CLI accepts a rendered clouds.yaml and gets a token for the project', async () => {
    const secret = newSecret();
    const created = await credentials.create({ name: uniqueName('cli'), secret, expiresAt: inOneHour() });
    const home = mkdtempSync(join(tmpdir(), 'kac-osc-'));
    try {
      const file = join(home, 'clouds.yaml');
      writeFileSync(
        file,
        renderCloudsYaml({
          cloudName: 'kac-test',
          authUrl: svc.authUrl,
          applicationCredentialId: created.id,
          applicationCredentialSecret: secret,
          regionName: 'RegionOne',
          interface: 'public',
        }),
        { mode: 0o600 },
      );
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile(
          '/usr/bin/openstack',
          ['--os-cloud', 'kac-test', 'token', 'issue', '-f', 'json'],
          { env: { PATH: '/usr/bin:/bin', HOME: home, OS_CLIENT_CONFIG_FILE: file }, timeout: 60_000 },
          (error, out, err) => (error ? reject(new Error(`openstack failed: ${error.message}\n${err}`)) : resolve(out)),
        );
      });
      const issued = JSON.parse(stdout) as { project_id: string; user_id: string; id: string };
      expect(issued.project_id).toBe(svc.projectId);
      expect(issued.user_id).toBe(svc.userId);
      expect((await adminSession().validate(issued.id)).projectId).toBe(svc.projectId);
    } finally {
      rmSync(home, { recursive: true, force: true });
      await credentials.delete(created.id);
    }
  });
});
