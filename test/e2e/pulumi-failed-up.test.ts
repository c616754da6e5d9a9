// @needs keystone pulumi
/**
 * A failed `pulumi up` keeps the last good state (issue 33), with the real Pulumi CLI and the real Keystone behind a
 * recording proxy that injects the failures: the state keeps what is true in the world, and inputs that did not take
 * effect are not recorded. Once through the provider plugin from Pulumi YAML, once through the dynamic resource.
 *
 * - a wrong password (`pulumi config set --secret password <wrong>`): `up` fails with 401; once the password is fixed,
 *   `refresh`, `preview --expect-no-changes` and `destroy` work without an `up` in between;
 * - the same after an empty value, and after Keystone was down during `up`;
 * - a rotation that fails after the successor exists (Keystone creates it, the reply is lost, Keystone stays down): the
 *   next `up` switches to that successor, without creating a second one.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ApplicationCredentials, authenticateApplicationCredential } from '../../src/keystone';
import { APPLICATION_CREDENTIAL } from '../../src/pulumi/plugin/schema';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { buildProject } from '../support/package';
import { configureStack, type PulumiResult, runPulumi } from '../support/pulumi';
import { homeWithPlugin, testPlugin } from '../support/pulumi-plugin';
import { exportedResources, unwrapSecrets } from '../support/pulumi-state';
import { isWrite, startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';

jest.setTimeout(600_000);

const REPO = resolve(__dirname, '..', '..');
const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const at = (offset: string): NodeJS.ProcessEnv => ({ LD_PRELOAD: FAKETIME_LIB, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' });
const DYNAMIC = 'pulumi-nodejs:dynamic/keystone-appcred:KeystoneApplicationCredential';

type Outputs = Record<string, unknown> & { prefix?: string; credentialId?: string; credentialSecret?: string; credentialGeneration?: number; successorGeneration?: number; connection?: { password?: string } };

describe.each([
  ['the provider plugin from Pulumi YAML', 'yaml'],
  ['the dynamic resource from a Node.js program', 'dynamic'],
] as const)('a failed pulumi up keeps the last good state: %s', (_title, face) => {
  let user: ServiceUser;
  let proxy: RecordingProxy;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const type = face === 'yaml' ? APPLICATION_CREDENTIAL : DYNAMIC;
  let stack = '';

  async function pulumi(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<PulumiResult> {
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    return runPulumi([...args.slice(0, end), '--stack', stack, '--non-interactive', ...args.slice(end)], { cwd: dir, env: { ...env, ...extra }, timeoutMs: 300_000 });
  }
  async function ok(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<string> {
    const result = await pulumi(args, extra);
    const text = `${result.stdout}${result.stderr}`;
    if (result.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed (${String(result.code)}):\n${text}`.split(user.password).join('***'));
    return text;
  }
  async function fails(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<string> {
    const result = await pulumi(args, extra);
    const text = `${result.stdout}${result.stderr}`;
    expect(result.code).not.toBe(0);
    expect(text).not.toContain(user.password);
    return text;
  }
  /** The credential resource named `app` as the state holds it (decrypted). */
  async function app(): Promise<Outputs> {
    const resource = exportedResources(await ok(['stack', 'export', '--show-secrets'])).find((r) => r.type === type && r.urn.endsWith('::app'));
    if (!resource) throw new Error(`the state holds no ${type} app`);
    return unwrapSecrets(resource.outputs ?? {}) as Outputs;
  }
  const works = async (o: Outputs): Promise<true | string> =>
    authenticateApplicationCredential({ authUrl: user.authUrl, id: o.credentialId as string, secret: o.credentialSecret as string }).then(
      () => true as const,
      (e: Error) => e.message,
    );
  const held = async (): Promise<string[]> => (await new ApplicationCredentials(user.session()).list()).map((c) => c.id).sort();

  /** A fresh stack with `app`'s connection from the stack config (the password a secret), minted once. */
  async function freshStack(name: string): Promise<Outputs> {
    stack = name;
    await configureStack(ok, { interval: '1h', gracePeriod: '20m', authUrl: proxy.url, userId: user.userId, projectId: user.projectId, password: user.password });
    await ok(['up', '--yes', '--skip-preview']);
    const minted = await app();
    expect(await works(minted)).toBe(true);
    return minted;
  }

  /** Fixed: refresh, a no-change preview and destroy all work, with no up in between; nothing is left in Keystone. */
  async function recovers(before: Outputs): Promise<void> {
    expect(await app()).toEqual(before);
    await ok(['refresh', '--yes', '--skip-preview']);
    await ok(['preview', '--expect-no-changes']);
    await ok(['destroy', '--yes', '--skip-preview']);
    expect(await held()).toEqual([]);
  }

  beforeAll(async () => {
    if (!existsSync(FAKETIME_LIB)) throw new Error(`${FAKETIME_LIB} is missing: apt-get install faketime (.ci/run does)`);
    user = await createServiceUser(`pulumi-fail-${face}`);
    proxy = await startRecordingProxy(user.authUrl);
    const parent = process.env.KAC_TEST_WORKDIR ?? '/tmp';
    mkdirSync(parent, { recursive: true });
    dir = mkdtempSync(join(parent, `pulumi-fail-${face}-`));
    const connection = { OS_CLOUD: '', OS_AUTH_URL: proxy.url, OS_USER_ID: user.userId, OS_PASSWORD: user.password, OS_PROJECT_ID: user.projectId };
    if (face === 'yaml') {
      cpSync(join(__dirname, 'fixtures', 'pulumi-yaml'), dir, { recursive: true });
      env = { PULUMI_HOME: await homeWithPlugin(testPlugin()), ...connection };
    } else {
      // The build `npm run build` makes (the program loads the provider from lib/), under the lock every build takes.
      await buildProject();
      cpSync(join(__dirname, 'fixtures', 'pulumi-appcred'), dir, { recursive: true });
      mkdirSync(join(dir, 'node_modules'));
      symlinkSync(REPO, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
      symlinkSync(join(REPO, 'node_modules', '@pulumi'), join(dir, 'node_modules', '@pulumi'), 'dir');
      env = connection;
    }
  }, 600_000);

  afterEach(() => {
    proxy.fault = undefined;
    proxy.faultAfter = undefined;
  });

  afterAll(async () => {
    await proxy?.close();
    await user?.cleanup();
  });

  it('a wrong password: up fails with 401 and records nothing; fixed, refresh, preview --expect-no-changes and destroy work', async () => {
    const before = await freshStack('wrong-password');
    await ok(['config', 'set', '--secret', 'password', '--', 'not-the-password']);
    const text = await fails(['up', '--yes', '--skip-preview']);
    expect(text).toMatch(/401/);
    expect(text).not.toContain('not-the-password');
    const after = await app();
    expect(after).toEqual(before);
    expect(after.connection?.password).toBe(user.password);
    await ok(['config', 'set', '--secret', 'password', '--', user.password]);
    await recovers(before);
  });

  it('an empty value: up fails and records nothing; fixed, refresh, preview --expect-no-changes and destroy work', async () => {
    const before = await freshStack('empty-value');
    await ok(['config', 'set', 'userId', '']);
    const mark = proxy.calls.length;
    await fails(['up', '--yes', '--skip-preview']);
    expect(proxy.since(mark).filter(isWrite)).toEqual([]);
    await ok(['config', 'set', 'userId', user.userId]);
    await recovers(before);
  });

  it('Keystone down during up: up fails and records nothing; back, refresh, preview --expect-no-changes and destroy work', async () => {
    const before = await freshStack('keystone-down');
    await ok(['config', 'set', 'gracePeriod', '15m']);
    proxy.fault = () => 503;
    const text = await fails(['up', '--yes', '--skip-preview']);
    expect(text).toMatch(/503/);
    proxy.fault = undefined;
    expect(await app()).toEqual(before);
    await ok(['config', 'set', 'gracePeriod', '20m']);
    await recovers(before);
  });

  it('a rotation whose successor Keystone created before it went down: the next up switches to that successor, creating none again', async () => {
    const before = await freshStack('successor');
    /** Every credential resource of the stack, in the order of their prefixes (the export's order may vary). */
    const all = async (): Promise<Outputs[]> =>
      exportedResources(await ok(['stack', 'export', '--show-secrets']))
        .filter((r) => r.type === type)
        .map((r) => unwrapSecrets(r.outputs ?? {}) as Outputs)
        .sort((x, y) => String(x.prefix).localeCompare(String(y.prefix)));
    const minted = await all();
    // The first create reaches Keystone and its reply is lost; Keystone stays down for the rest of the up.
    let created = false;
    proxy.faultAfter = (call) => {
      if (call.method === 'POST' && call.path.endsWith('/application_credentials') && !created) {
        created = true;
        return 503;
      }
      return undefined;
    };
    proxy.fault = () => (created ? 503 : undefined);
    await fails(['up', '--yes', '--skip-preview'], at('+61m'));
    proxy.fault = undefined;
    proxy.faultAfter = undefined;
    expect(created).toBe(true);
    const partial = await all();
    // Each resource keeps its delivered generation 1 and records the successor it parked; the one whose create reached
    // Keystone holds it there, under generation 2's name.
    const credentials = await new ApplicationCredentials(user.session()).list();
    const successors = partial.map((p) => credentials.find((c) => c.name.startsWith(`${p.prefix as string}-credential-v2`)));
    expect(successors.filter(Boolean)).toHaveLength(1);
    for (const [i, p] of partial.entries()) {
      expect(p).toMatchObject({ credentialId: minted[i].credentialId, credentialGeneration: 1, successorGeneration: 2 });
      expect(await works(minted[i])).toBe(true);
    }
    // Keystone is back: the next up switches to the successor Keystone holds without creating it again, and creates
    // only what never reached Keystone.
    const mark = proxy.calls.length;
    await ok(['up', '--yes', '--skip-preview'], at('+62m'));
    const creates = proxy.since(mark).filter((c) => c.method === 'POST' && c.path.endsWith('/application_credentials'));
    expect(creates).toHaveLength(partial.length - 1);
    const rotated = await all();
    for (const [i, r] of rotated.entries()) {
      expect(r).toMatchObject({ credentialGeneration: 2, previousCredentialId: minted[i].credentialId });
      expect(r.successorGeneration).toBeUndefined();
      if (successors[i]) expect(r.credentialId).toBe(successors[i]?.id);
      expect(await works(r)).toBe(true);
      expect(await works(minted[i])).toBe(true);
    }
    expect((await held()).length).toBe(2 * rotated.length);
    expect(await works(before)).toBe(true);
    await ok(['destroy', '--yes', '--skip-preview'], at('+62m'));
    expect(await held()).toEqual([]);
  });
});
