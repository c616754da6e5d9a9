// @needs keystone pulumi
/**
 * Roles and access rules on a Pulumi stack (issue 42), with the real Pulumi CLI (the TypeScript resource in a plain
 * JavaScript program, the local file backend) against the real Keystone, through a recording proxy that counts every
 * Keystone call the provider makes:
 * - preview refuses what can be checked without Keystone, naming field, value and rule, with 0 Keystone calls;
 * - a role the user does not hold fails `up` (RoleNotAssigned) before anything is created, and the state keeps its
 *   credential;
 * - a change of roles and rules rotates: the successor carries exactly them (Keystone's GET), the superseded credential
 *   keeps working through the grace period; a change while a grace period runs waits (preview shows nothing to do, 0
 *   Keystone calls) and rotates at the first up after it;
 * - a consumer probe authenticating every second with the credential of the last `up` never fails.
 * The grace period runs on the wall clock (30 s), so this file takes about two minutes.
 */
import { cpSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ApplicationCredentials, authenticateApplicationCredential } from '../../src/keystone';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { buildProject } from '../support/package';
import { configureStack, runPulumi } from '../support/pulumi';
import { expectNoPlaintextInState, exportedResources, unwrapSecrets } from '../support/pulumi-state';
import { isWrite, startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';

jest.setTimeout(300_000);

const REPO = resolve(__dirname, '..', '..');
const TYPE = 'pulumi-nodejs:dynamic/keystone-appcred:KeystoneApplicationCredential';
const GRACE_MS = 30_000;
const GET_THINGS = { service: 'things', method: 'GET', path: '/v1/things/*' };
const HEAD_THINGS = { service: 'things', method: 'HEAD', path: '/v1/things/**' };

type Outputs = {
  credentialId?: string;
  credentialSecret?: string;
  credentialGeneration?: number;
  previousCredentialId?: string;
  previousCredentialGeneration?: number;
  previousCredentialDeleteAt?: string;
  roles?: string[];
  accessRules?: { service: string; method: string; path: string }[];
  credentialRoles?: string[];
};

describe('roles and access rules on a Pulumi stack', () => {
  let user: ServiceUser;
  let proxy: RecordingProxy;
  let dir: string;
  const stack = 'least-privilege';
  const secrets: string[] = [];
  /** The credential the consumer uses: the one the last `up` delivered. */
  let consumer: { id?: string; secret?: string } = {};
  const failures: string[] = [];
  let attempts = 0;
  let probing = true;
  let probe: Promise<void> | undefined;

  const pulumi = (args: string[]) => {
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    return runPulumi([...args.slice(0, end), '--stack', stack, '--non-interactive', ...args.slice(end)], { cwd: dir, timeoutMs: 240_000 });
  };
  async function ok(args: string[]): Promise<string> {
    const r = await pulumi(args);
    if (r.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed (${String(r.code)}):\n${r.stdout}\n${r.stderr}`.split(user.password).join('***'));
    return r.stdout;
  }
  async function outputs(): Promise<Outputs> {
    const resource = exportedResources(await ok(['stack', 'export', '--show-secrets'])).find((r) => r.type === TYPE);
    const out = unwrapSecrets(resource?.outputs ?? {}) as Outputs;
    if (out.credentialSecret) secrets.push(out.credentialSecret);
    return out;
  }
  async function up(): Promise<Outputs> {
    await ok(['up', '--yes', '--skip-preview']);
    const out = await outputs();
    consumer = { id: out.credentialId, secret: out.credentialSecret };
    return out;
  }
  const setConfig = async (key: string, value: unknown) => ok(['config', 'set', key, '--', JSON.stringify(value)]);
  const authenticates = async (id?: string, secret?: string) =>
    authenticateApplicationCredential({ authUrl: user.authUrl, id: id as string, secret: secret as string }).then(
      () => true,
      () => false,
    );
  async function keystoneCredential(id: string) {
    return new ApplicationCredentials(user.session()).get(id);
  }

  beforeAll(async () => {
    await buildProject();
    user = await createServiceUser('pulumi-lp'); // member, which implies reader
    proxy = await startRecordingProxy(user.authUrl);
    dir = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'pulumi-lp-'));
    cpSync(join(__dirname, 'fixtures', 'pulumi-appcred'), dir, { recursive: true });
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(REPO, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
    symlinkSync(join(REPO, 'node_modules', '@pulumi'), join(dir, 'node_modules', '@pulumi'), 'dir');
    await configureStack(ok, { interval: '1h', gracePeriod: `${GRACE_MS / 1000}s`, authUrl: proxy.url, userId: user.userId, projectId: user.projectId, password: user.password });
  });

  afterAll(async () => {
    probing = false;
    await probe;
    if (dir) await pulumi(['destroy', '--yes', '--skip-preview']).catch(() => undefined);
    await proxy?.close();
    await user?.cleanup();
  });

  it('without roles: every role of the user, as before', async () => {
    const g1 = await up();
    expect(g1).toMatchObject({ credentialGeneration: 1, credentialRoles: ['member', 'reader'] });
    expect(g1.roles).toBeUndefined();
    expect(g1.accessRules).toBeUndefined();
    probe = (async () => {
      while (probing) {
        const t0 = Date.now();
        attempts++;
        const { id, secret } = consumer;
        if (!(await authenticates(id, secret))) failures.push(`${new Date(t0).toISOString()} ${id}`);
        await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - t0))));
      }
    })();
  });

  it('preview refuses what it can check without Keystone, naming field, value and rule, with 0 Keystone calls', async () => {
    await setConfig('roles', []);
    await setConfig('accessRules', [{ ...GET_THINGS, method: 'FETCH' }, { ...GET_THINGS, path: 'v1/things' }]);
    const before = proxy.calls.length;
    const preview = await pulumi(['preview']);
    expect(preview.code).not.toBe(0);
    const text = `${preview.stdout}\n${preview.stderr}`;
    expect(text).toContain("resource 'app' has a problem: roles ([]): must have at least 1 item");
    expect(text).toContain('accessRules[0].method ("FETCH"): must be one of GET, HEAD, POST, PUT, PATCH, DELETE');
    expect(text).toContain('accessRules[1].path ("v1/things"): accessRules[].path must begin with /');
    expect(proxy.calls.length).toBe(before);
  });

  it('a role the user does not hold fails up before anything is created (RoleNotAssigned); the state keeps its credential', async () => {
    await ok(['config', 'rm', 'accessRules']);
    await setConfig('roles', ['reader', 'admin']);
    const before = await outputs();
    const writes = proxy.calls.filter(isWrite).length;
    const failed = await pulumi(['up', '--yes', '--skip-preview']);
    expect(failed.code).not.toBe(0);
    expect(`${failed.stdout}\n${failed.stderr}`).toContain(
      "RoleNotAssigned: roles names role admin, which the connection's user (connection) does not hold on its project (it holds: member, reader)",
    );
    expect(proxy.calls.filter(isWrite).length).toBe(writes);
    expect(await outputs()).toMatchObject({ credentialId: before.credentialId, credentialGeneration: 1 });
  });

  it('a change of roles and rules rotates: the successor carries exactly them, the superseded one works through the grace period', async () => {
    const g1 = await outputs();
    await setConfig('roles', ['reader']);
    await setConfig('accessRules', [GET_THINGS]);
    const g2 = await up();
    expect(g2).toMatchObject({ credentialGeneration: 2, roles: ['reader'], accessRules: [GET_THINGS], credentialRoles: ['reader'], previousCredentialId: g1.credentialId, previousCredentialGeneration: 1 });
    const held = await keystoneCredential(g2.credentialId as string);
    expect(held?.roles).toEqual(['reader']);
    expect(held?.accessRules).toEqual([GET_THINGS]);
    expect((await authenticateApplicationCredential({ authUrl: user.authUrl, id: g2.credentialId as string, secret: g2.credentialSecret as string })).roles).toEqual(['reader']);
    expect(await authenticates(g1.credentialId, g1.credentialSecret)).toBe(true);
  });

  it('a change while the grace period runs waits: preview has nothing to do (0 Keystone calls); the first up after it sweeps and rotates', async () => {
    const g2 = await outputs();
    await setConfig('accessRules', [GET_THINGS, HEAD_THINGS]);
    const before = proxy.calls.length;
    await ok(['preview', '--expect-no-changes']);
    expect(proxy.calls.length).toBe(before);
    const wait = Date.parse(g2.previousCredentialDeleteAt as string) - Date.now() + 1500;
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
    expect((await pulumi(['preview', '--expect-no-changes'])).code).not.toBe(0);
    const g3 = await up();
    expect(g3).toMatchObject({ credentialGeneration: 3, roles: ['reader'], accessRules: [GET_THINGS, HEAD_THINGS], previousCredentialId: g2.credentialId, previousCredentialGeneration: 2 });
    expect(await keystoneCredential(g2.previousCredentialId as string)).toBeUndefined();
    expect((await keystoneCredential(g3.credentialId as string))?.accessRules).toEqual([GET_THINGS, HEAD_THINGS]);
    expect(await authenticates(g2.credentialId, g2.credentialSecret)).toBe(true);
  }, 120_000);

  it('the consumer probe never failed; no secret in the state in plain text', async () => {
    probing = false;
    await probe;
    process.stderr.write(`[pulumi-least-privilege] consumer probe: ${attempts} authentications, ${failures.length} failed\n`);
    expect(attempts).toBeGreaterThan(20);
    expect(failures).toEqual([]);
    expectNoPlaintextInState([user.password, ...secrets], `${stack}.json`);
  });
});
