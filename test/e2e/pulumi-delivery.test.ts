// @needs keystone pulumi openbao
/**
 * Issue 49 on a Pulumi stack, with the real Pulumi CLI (the TypeScript resource in a plain JavaScript program, the local
 * file backend), the real Keystone behind a recording proxy that counts every call the provider makes, and the real
 * OpenBao as the backup:
 * - preview refuses a template, a deletion policy and an adoption that cannot work, naming field, value and rule, with
 *   0 Keystone calls;
 * - `adopt`: a hand-made credential becomes the resource's, with no create in Keystone; the template's outputs
 *   (`cloudConf`, `env`, `data`) carry it, and only as secrets in the state;
 * - `revokePrevious` during a grace period: one `up` rotates and deletes both older credentials, warning that their
 *   grace period was skipped; the same value again is no change (0 Keystone calls);
 * - `deletionPolicy: Retain`: `destroy` keeps the delivered credential in Keystone and its backup in OpenBao, deletes
 *   the superseded one, and prints what it left and the commands that remove it, which do;
 * - Pulumi's `retainOnDelete`: `destroy` calls no provider (0 Keystone calls): every credential and the backup stay.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { OpenBaoBackup } from '../../src/backup/openbao';
import { ApplicationCredentials, authenticateApplicationCredential } from '../../src/keystone';
import { resolveBinary } from '../support/binaries';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { buildProject } from '../support/package';
import { configureStack, runPulumi } from '../support/pulumi';
import { expectNoPlaintextInState, exportedResources, unwrapSecrets } from '../support/pulumi-state';
import { isWrite, startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';

jest.setTimeout(300_000);

const REPO = resolve(__dirname, '..', '..');
const TYPE = 'pulumi-nodejs:dynamic/keystone-appcred:KeystoneApplicationCredential';

type Outputs = {
  credentialId?: string;
  credentialSecret?: string;
  credentialGeneration?: number;
  previousCredentialId?: string;
  cloudConf?: string;
  env?: Record<string, string>;
  data?: Record<string, string>;
  lastRevokeRequest?: string;
  adoptedCredentialId?: string;
  prefix?: string;
  owner?: string;
};

describe('Secret templates, revoke now, deletionPolicy and adoption on a Pulumi stack', () => {
  let user: ServiceUser;
  let proxy: RecordingProxy;
  let dir: string;
  const stack = 'delivery';
  const secrets: string[] = [];

  const pulumi = (args: string[]) => {
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    return runPulumi([...args.slice(0, end), '--stack', stack, '--non-interactive', ...args.slice(end)], { cwd: dir, timeoutMs: 240_000 });
  };
  async function ok(args: string[]): Promise<string> {
    const r = await pulumi(args);
    if (r.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed (${String(r.code)}):\n${r.stdout}\n${r.stderr}`.split(user.password).join('***'));
    return `${r.stdout}\n${r.stderr}`;
  }
  async function outputs(): Promise<Outputs> {
    const resource = exportedResources(await pulumi(['stack', 'export', '--show-secrets']).then((r) => r.stdout)).find((r) => r.type === TYPE);
    const out = unwrapSecrets(resource?.outputs ?? {}) as Outputs;
    if (out.credentialSecret) secrets.push(out.credentialSecret);
    return out;
  }
  const setConfig = async (key: string, value: unknown) => ok(['config', 'set', key, '--plaintext', '--', typeof value === 'string' ? value : JSON.stringify(value)]);
  const authenticates = async (id?: string, secret?: string) =>
    authenticateApplicationCredential({ authUrl: user.authUrl, id: id as string, secret: secret as string }).then(
      () => true,
      () => false,
    );
  const exists = async (id: string) => (await new ApplicationCredentials(user.session()).get(id)) !== undefined;
  const backupOf = (out: Outputs) =>
    new OpenBaoBackup({ address: process.env.KAC_BAO_ADDR as string, token: process.env.KAC_BAO_TOKEN as string, path: `keystone/pulumi/${out.prefix}/${out.owner}/service-accounts/application-credential` });
  /** A program run with exactly `environment` (and PATH, HOME); resolves with stdout. */
  const run = (program: string, args: readonly string[], environment: Record<string, string>) =>
    new Promise<string>((resolvePromise, reject) => {
      const home = mkdtempSync(join(tmpdir(), 'kac-pd-'));
      execFile(program, [...args], { env: { PATH: '/usr/bin:/bin', HOME: home, ...environment }, timeout: 60_000 }, (error, out, err) => {
        rmSync(home, { recursive: true, force: true });
        if (error) reject(new Error(`${program} failed: ${error.message}\n${err}`));
        else resolvePromise(out);
      });
    });

  beforeAll(async () => {
    await buildProject();
    user = await createServiceUser('pulumi-delivery');
    proxy = await startRecordingProxy(user.authUrl);
    dir = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'pulumi-delivery-'));
    cpSync(join(__dirname, 'fixtures', 'pulumi-appcred'), dir, { recursive: true });
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(REPO, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
    symlinkSync(join(REPO, 'node_modules', '@pulumi'), join(dir, 'node_modules', '@pulumi'), 'dir');
    await configureStack(ok, { interval: '1h', gracePeriod: '30s', authUrl: proxy.url, userId: user.userId, projectId: user.projectId, password: user.password });
    await ok(['config', 'set', 'keystone-appcred:openbaoAddress', process.env.KAC_BAO_ADDR as string]);
    await ok(['config', 'set', '--secret', 'keystone-appcred:openbaoToken', process.env.KAC_BAO_TOKEN as string]);
  });

  afterAll(async () => {
    if (dir) await pulumi(['destroy', '--yes', '--skip-preview']).catch(() => undefined);
    await proxy?.close();
    await user?.cleanup();
  });

  it('preview refuses a template, a deletion policy and an adoption that cannot work, with 0 Keystone calls', async () => {
    await setConfig('secretTemplate', { labels: { team: 'a' }, formats: ['Ini'], data: { 'a.txt': '{{ password }}', 'b.txt': '{{ interface }}', 'clouds.yaml': 'x' } });
    await setConfig('deletionPolicy', 'Orphan');
    await setConfig('adoptId', 'not-an-id');
    await ok(['config', 'set', '--secret', 'adoptSecret', '--', 'x']);
    const before = proxy.calls.length;
    const preview = await pulumi(['preview']);
    expect(preview.code).not.toBe(0);
    const text = `${preview.stdout}\n${preview.stderr}`;
    for (const expected of [
      'secretTemplate.labels: is not a field of secretTemplate on the Pulumi resource (its fields: formats, data); labels go on the Kubernetes Secret a CredentialSecret writes',
      'secretTemplate.formats[0] ("Ini"): must be one of CloudConf, Env',
      'secretTemplate.data values may hold {{ field }} only with a field of',
      'must not name a key the operator writes itself',
      'secretTemplate.data.b.txt names {{ interface }}, which the Pulumi resource does not know',
      'deletionPolicy ("Orphan"): must be one of Delete, Retain',
      'adopt.credentialId ("not-an-id"): must be a Keystone application credential id',
    ]) {
      expect(text).toContain(expected);
    }
    expect(proxy.calls.length).toBe(before);
  });

  it('adopts a hand-made credential with no create in Keystone; cloudConf, env and data carry it, as secrets only', async () => {
    const secret = randomBytes(24).toString('base64url');
    secrets.push(secret);
    const made = await new ApplicationCredentials(user.session()).create({ name: 'hand-made', secret });
    await setConfig('secretTemplate', { formats: ['CloudConf', 'Env'], data: { 'id.txt': '{{ applicationCredentialID }}', 'project.txt': '{{ projectName }}/{{ projectDomainName }}' } });
    await ok(['config', 'rm', 'deletionPolicy']);
    await setConfig('adoptId', made.id);
    await ok(['config', 'set', '--secret', 'adoptSecret', '--', secret]);
    const writes = proxy.calls.filter(isWrite).length;
    await ok(['up', '--yes', '--skip-preview']);
    expect(proxy.calls.filter(isWrite).length).toBe(writes);
    const out = await outputs();
    expect(out).toMatchObject({ credentialId: made.id, credentialSecret: secret, adoptedCredentialId: made.id, credentialGeneration: 1 });
    expect(out.cloudConf).toContain(`application-credential-id = "${made.id}"`);
    expect(out.env).toMatchObject({ OS_AUTH_TYPE: 'v3applicationcredential', OS_APPLICATION_CREDENTIAL_ID: made.id, OS_APPLICATION_CREDENTIAL_SECRET: secret, OS_IDENTITY_API_VERSION: '3' });
    expect(out.data).toEqual({ 'id.txt': made.id, 'project.txt': `${user.projectName}/Default` });
    // The env keys as a process's whole environment authenticate, through the proxy's URL the connection names.
    const issued = JSON.parse(await run('/usr/bin/openstack', ['token', 'issue', '-f', 'json'], { ...(out.env as Record<string, string>), OS_AUTH_URL: user.authUrl })) as { project_id: string };
    expect(issued.project_id).toBe(user.projectId);
    expectNoPlaintextInState([user.password, ...secrets], `${stack}.json`);
  });

  it('revokePrevious during a grace period: one up rotates and deletes both older credentials, warning so; the same value again changes nothing', async () => {
    const adopted = await outputs();
    await setConfig('credentialGeneration', '2');
    await ok(['up', '--yes', '--skip-preview']);
    const g2 = await outputs();
    expect(g2).toMatchObject({ credentialGeneration: 2, previousCredentialId: adopted.credentialId });
    await setConfig('revokePrevious', 'incident-7');
    const text = await ok(['up', '--yes', '--skip-preview']);
    const g3 = await outputs();
    expect(g3).toMatchObject({ credentialGeneration: 3, lastRevokeRequest: 'incident-7' });
    expect(g3.previousCredentialId).toBeUndefined();
    expect(g3.adoptedCredentialId).toBeUndefined();
    expect(text).toContain(`deleted generation 2 (application credential ${g2.credentialId}) at once, its grace period of 30s skipped: revoke requested (incident-7) by revokePrevious`);
    expect(text).toContain(`deleted generation 1 (application credential ${adopted.credentialId}) at once`);
    expect(await exists(adopted.credentialId as string)).toBe(false);
    expect(await authenticates(g2.credentialId, g2.credentialSecret)).toBe(false);
    expect(await authenticates(g3.credentialId, g3.credentialSecret)).toBe(true);
    expect(g3.data?.['id.txt']).toBe(g3.credentialId);
    const before = proxy.calls.length;
    await ok(['preview', '--expect-no-changes']);
    expect(proxy.calls.length).toBe(before);
  });

  it('deletionPolicy Retain: destroy keeps the delivered credential and its backup, deletes the superseded one, and prints the commands, which remove it', async () => {
    await setConfig('deletionPolicy', 'Retain');
    await setConfig('credentialGeneration', '4');
    await ok(['up', '--yes', '--skip-preview']);
    const g4 = await outputs();
    expect(g4).toMatchObject({ credentialGeneration: 4, previousCredentialId: expect.any(String) });
    const text = await ok(['destroy', '--yes', '--skip-preview']);
    const backup = backupOf(g4);
    const path = `keystone/pulumi/${g4.prefix}/${g4.owner}/service-accounts/application-credential`;
    expect(text).toContain(`destroyed with deletionPolicy Retain: left application credential ${g4.credentialId} (generation 4) in Keystone and its backup at openstack/${path}`);
    expect(text).toContain(`openstack application credential delete ${g4.credentialId}`);
    expect(text).toContain(`bao kv metadata delete -mount=openstack ${path}`);
    expect(await authenticates(g4.credentialId, g4.credentialSecret)).toBe(true);
    expect(await exists(g4.previousCredentialId as string)).toBe(false);
    expect(await backup.read()).toBe(g4.credentialId);
    // The printed commands, as the connection's user and with the test OpenBao.
    await run('/usr/bin/openstack', ['application', 'credential', 'delete', g4.credentialId as string], {
      OS_AUTH_URL: user.authUrl,
      OS_USER_ID: user.userId,
      OS_PASSWORD: user.password,
      OS_PROJECT_ID: user.projectId,
      OS_IDENTITY_API_VERSION: '3',
    });
    await run(resolveBinary('bao').path, ['kv', 'metadata', 'delete', '-mount=openstack', path], { BAO_ADDR: process.env.KAC_BAO_ADDR as string, BAO_TOKEN: process.env.KAC_BAO_TOKEN as string });
    expect(await authenticates(g4.credentialId, g4.credentialSecret)).toBe(false);
    expect(await backup.read()).toBeUndefined();
  });

  it("Pulumi's retainOnDelete: destroy calls no provider (0 Keystone calls); every credential and the backup stay", async () => {
    for (const key of ['deletionPolicy', 'revokePrevious', 'adoptId', 'adoptSecret', 'credentialGeneration']) await ok(['config', 'rm', key]);
    await setConfig('retainOnDelete', 'true');
    await ok(['up', '--yes', '--skip-preview']);
    await setConfig('credentialGeneration', '2');
    await ok(['up', '--yes', '--skip-preview']);
    const g2 = await outputs();
    expect(g2).toMatchObject({ credentialGeneration: 2, previousCredentialId: expect.any(String) });
    const before = proxy.calls.length;
    const text = await ok(['destroy', '--yes', '--skip-preview']);
    expect(proxy.calls.length).toBe(before);
    expect(text).not.toContain('deletionPolicy Retain');
    expect(await exists(g2.credentialId as string)).toBe(true);
    expect(await exists(g2.previousCredentialId as string)).toBe(true);
    expect(await backupOf(g2).read()).toBe(g2.credentialId);
    await backupOf(g2).remove();
  });
});
