// @needs keystone pulumi
/**
 * The `keystone-appcred` provider plugin from Pulumi YAML: the real Pulumi CLI with the YAML language host (built from
 * the Go module proxy), the plugin the packed npm package ships (`npm pack`, as a user gets it, not the repository's
 * sources) installed with `pulumi plugin install resource keystone-appcred <version> --file`, against the real test
 * Keystone behind a recording proxy (every Keystone call counted). Time travel is libfaketime on
 * the CLI's environment, which the plugin (a Node.js process) inherits; the Go processes ignore it.
 *
 * One stack with two credentials walks the user flow of the TypeScript e2e (test/e2e/pulumi.test.ts): mint, a not-due
 * up with no Keystone call, a due preview, rotation with both credentials working during the grace period, the sweep,
 * refresh after an out-of-band delete then a new mint, a raised generation, destroy; after each step no secret is in
 * plain text in any file of the state backend, nor in anything the CLI printed. Other stacks prove that bad inputs fail
 * preview naming the field, the value and the rule, with no Keystone call: the CRD's rules, and every text input empty,
 * only whitespace or too long (the limits of src/pulumi/input-rules.ts), each in one preview of a project of its own.
 */
import { cpSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationCredentials, authenticateApplicationCredential } from '../../src/keystone';
import { APPLICATION_CREDENTIAL, packageSchema } from '../../src/pulumi/plugin/schema';
import { TEXT_INPUT_LIMITS } from '../support/pulumi-limits';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { configureStack, type PulumiResult, runPulumi } from '../support/pulumi';
import { homeWithPlugin, packedPlugin, pluginVersion } from '../support/pulumi-plugin';
import { expectNoPlaintextInState, exportedResources, unwrapSecrets } from '../support/pulumi-state';
import { isWrite, startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';

jest.setTimeout(300_000);

const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const at = (offset: string): NodeJS.ProcessEnv => ({ LD_PRELOAD: FAKETIME_LIB, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' });

type Outputs = Record<string, unknown> & {
  credentialId?: string;
  credentialSecret?: string;
  cloudsYaml?: string;
  credentialGeneration?: number;
  previousCredentialId?: string;
  previousCredentialGeneration?: number;
  prefix?: string;
  nextRotation?: string;
};

describe('the keystone-appcred provider plugin from Pulumi YAML', () => {
  let user: ServiceUser;
  let proxy: RecordingProxy;
  let dir: string;
  let home: string;
  let plugin: string;
  const stack = 'yaml';
  const seen: string[] = [];

  /** The environment of every pulumi command: the plugin's home, and `db`'s connection through the proxy. */
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    PULUMI_HOME: home,
    OS_CLOUD: '',
    OS_AUTH_URL: proxy.url,
    OS_USER_ID: user.userId,
    OS_PASSWORD: user.password,
    OS_PROJECT_ID: user.projectId,
    ...extra,
  });
  /** Nothing the CLI printed holds the password or a credential secret seen so far. */
  function expectNothingSecretIn(text: string): void {
    for (const value of [user.password, ...seen]) if (text.includes(value)) throw new Error('the CLI printed a secret');
  }
  async function pulumi(args: string[], extra: NodeJS.ProcessEnv = {}, stackName = stack): Promise<PulumiResult> {
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    const result = await runPulumi([...args.slice(0, end), '--stack', stackName, '--non-interactive', ...args.slice(end)], { cwd: dir, env: env(extra), timeoutMs: 240_000 });
    if (!args.includes('--show-secrets') && !args.includes('--secret')) expectNothingSecretIn(`${result.stdout}${result.stderr}`);
    return result;
  }
  async function ok(args: string[], extra: NodeJS.ProcessEnv = {}, stackName = stack): Promise<string> {
    const result = await pulumi(args, extra, stackName);
    if (result.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed (${String(result.code)}):\n${result.stdout}\n${result.stderr}`.split(user.password).join('***'));
    return result.stdout;
  }
  /** The outputs of both resources as the state holds them (decrypted). */
  async function outputs(stackName = stack): Promise<{ app: Outputs; db: Outputs }> {
    const resources = exportedResources(await ok(['stack', 'export', '--show-secrets'], {}, stackName)).filter((r) => r.type === APPLICATION_CREDENTIAL);
    const of = (name: string): Outputs => {
      const resource = resources.find((r) => r.urn.endsWith(`::${name}`));
      if (!resource) throw new Error(`the state holds no ${APPLICATION_CREDENTIAL} ${name}`);
      const out = unwrapSecrets(resource.outputs ?? {}) as Outputs;
      // The id is the prefix, whatever happened: a rotation is an update, never a replace.
      expect(resource.id).toBe(out.prefix);
      return out;
    };
    return { app: of('app'), db: of('db') };
  }
  const up = (extra: NodeJS.ProcessEnv = {}): Promise<string> => ok(['up', '--yes', '--skip-preview'], extra);
  const authenticates = (id: string | undefined, secret: string | undefined): Promise<true | string> =>
    authenticateApplicationCredential({ authUrl: user.authUrl, id: id as string, secret: secret as string }).then(
      () => true as const,
      (e: Error) => e.message,
    );
  const held = async (): Promise<string[]> => (await new ApplicationCredentials(user.session()).list()).map((c) => c.name).sort();
  const noPlaintext = (): void => expectNoPlaintextInState([user.password, ...seen], `${stack}.json`);
  async function configure(stackName: string): Promise<void> {
    await configureStack((args) => ok(args, {}, stackName), { interval: '1h', gracePeriod: '20m', authUrl: proxy.url, userId: user.userId, projectId: user.projectId, password: user.password });
  }

  beforeAll(async () => {
    if (!existsSync(FAKETIME_LIB)) throw new Error(`${FAKETIME_LIB} is missing: apt-get install faketime (.ci/run does)`);
    plugin = await packedPlugin();
    home = await homeWithPlugin(plugin);
    user = await createServiceUser('pulumi-yaml');
    proxy = await startRecordingProxy(user.authUrl);
    dir = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'pulumi-yaml-'));
    cpSync(join(__dirname, 'fixtures', 'pulumi-yaml'), dir, { recursive: true });
    await configure(stack);
  }, 600_000);

  afterAll(async () => {
    await proxy?.close();
    await user?.cleanup();
  });

  it('the installed plugin: pulumi plugin ls lists it, pulumi package get-schema prints its schema, pulumi about shows it', async () => {
    const version = pluginVersion();
    const listed = await runPulumi(['plugin', 'ls'], { cwd: dir, env: env() });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`keystone-appcred\\s+resource\\s+${version.replace(/\./g, '\\.')}`));
    const schema = await runPulumi(['package', 'get-schema', 'keystone-appcred'], { cwd: dir, env: env() });
    expect(schema.code).toBe(0);
    expect(JSON.parse(schema.stdout)).toEqual(JSON.parse(JSON.stringify(packageSchema(version))));
    const about = await runPulumi(['about', '--stack', stack], { cwd: dir, env: env() });
    // Among the project's plugins; its version is `unknown` there, as for any plugin a YAML program does not pin.
    expect(`${about.stdout}${about.stderr}`).toMatch(/\bresource\s+keystone-appcred\s+\S+/);
  });

  let first: { app: Outputs; db: Outputs };

  it('pulumi up mints both credentials and outputs them as secrets; the state holds no secret in plain text', async () => {
    const mark = proxy.calls.length;
    const out = await up();
    expect(out).toMatch(/\+ 3 created/);
    first = await outputs();
    for (const [name, o] of Object.entries(first)) {
      expect(o.credentialGeneration).toBe(1);
      expect(o.prefix).toMatch(new RegExp(`^${name}-[0-9a-f]{8}-applicationcredential$`));
      expect(o.cloudsYaml).toContain(`application_credential_id: ${o.credentialId}`);
      expect(await authenticates(o.credentialId, o.credentialSecret)).toBe(true);
      seen.push(o.credentialSecret as string);
    }
    expect(first.db.cloudsYaml).toContain('  db:\n');
    expect(first.app.connection).toMatchObject({ authUrl: proxy.url, userId: user.userId });
    expect(first.db.connection).toBeUndefined();
    const shown = JSON.parse(await ok(['stack', 'output', '--json', '--show-secrets'])) as Record<string, unknown>;
    expect(shown).toMatchObject({ appCredentialId: first.app.credentialId, appCredentialSecret: first.app.credentialSecret, appCloudsYaml: first.app.cloudsYaml, appGeneration: 1, dbCloudsYaml: first.db.cloudsYaml });
    expect(JSON.parse(await ok(['stack', 'output', '--json'])) as Record<string, unknown>).toMatchObject({
      appCredentialSecret: '[secret]',
      appCloudsYaml: '[secret]',
      dbCloudsYaml: '[secret]',
      appCredentialId: first.app.credentialId,
    });
    expect(proxy.since(mark).filter(isWrite).map((c) => c.method)).toEqual(['POST', 'POST']);
    expect(await held()).toEqual([`${first.app.prefix}-credential-v1`, `${first.db.prefix}-credential-v1`]);
    noPlaintext();
  });

  it('pulumi up again, not due: no changes and no Keystone call at all', async () => {
    const mark = proxy.calls.length;
    const out = await up();
    expect(out).not.toMatch(/updated|created|deleted/);
    expect(out).toMatch(/3 unchanged/);
    expect(proxy.since(mark)).toEqual([]);
  });

  it('pulumi preview with the clock past nextRotation shows both as updates, without calling Keystone', async () => {
    const mark = proxy.calls.length;
    const out = await ok(['preview'], at('+61m'));
    expect(out).toMatch(/~ 2 to update/);
    expect(out).toMatch(new RegExp(`~\\s+${APPLICATION_CREDENTIAL}\\s+app\\s+update`));
    expect(proxy.since(mark)).toEqual([]);
  });

  let second: { app: Outputs; db: Outputs };

  it('pulumi up past nextRotation rotates both in place; the previous ones still work during the grace period', async () => {
    const out = await up(at('+61m'));
    expect(out).toMatch(/2 updated/);
    expect(out).not.toMatch(/replaced|created/);
    second = await outputs();
    for (const name of ['app', 'db'] as const) {
      expect(second[name]).toMatchObject({ credentialGeneration: 2, previousCredentialGeneration: 1, previousCredentialId: first[name].credentialId });
      seen.push(second[name].credentialSecret as string);
      expect(await authenticates(first[name].credentialId, first[name].credentialSecret)).toBe(true);
      expect(await authenticates(second[name].credentialId, second[name].credentialSecret)).toBe(true);
    }
    noPlaintext();
  });

  it('a later pulumi up, after the grace period, deletes the previous ones', async () => {
    const mark = proxy.calls.length;
    await up(at('+82m'));
    const swept = await outputs();
    for (const name of ['app', 'db'] as const) {
      expect(swept[name].previousCredentialId).toBeUndefined();
      expect(await authenticates(first[name].credentialId, first[name].credentialSecret)).toMatch(/404|401/);
      expect(await authenticates(second[name].credentialId, second[name].credentialSecret)).toBe(true);
    }
    expect(proxy.since(mark).filter(isWrite).map((c) => c.method)).toEqual(['DELETE', 'DELETE']);
    expect(await held()).toEqual([`${first.app.prefix}-credential-v2`, `${first.db.prefix}-credential-v2`]);
  });

  it('a live credential deleted out of band: pulumi refresh notices, the next pulumi up mints again', async () => {
    await new ApplicationCredentials(user.session()).delete(second.app.credentialId as string);
    await ok(['refresh', '--yes', '--skip-preview'], at('+82m'));
    const refreshed = await outputs();
    expect(refreshed.app.credentialId).toBeUndefined();
    expect(refreshed.db.credentialId).toBe(second.db.credentialId);
    noPlaintext();
    await up(at('+82m'));
    const minted = await outputs();
    expect(minted.app.credentialGeneration).toBe(3);
    expect(minted.app.previousCredentialId).toBeUndefined();
    expect(minted.db.credentialId).toBe(second.db.credentialId);
    seen.push(minted.app.credentialSecret as string);
    expect(await authenticates(minted.app.credentialId, minted.app.credentialSecret)).toBe(true);
    noPlaintext();
  });

  it('raising credentialGeneration rotates at once, to that generation', async () => {
    await ok(['config', 'set', 'credentialGeneration', '5']);
    const preview = await ok(['preview'], at('+82m'));
    expect(preview).toMatch(/~ 1 to update/);
    await up(at('+82m'));
    const raised = await outputs();
    expect(raised.app).toMatchObject({ credentialGeneration: 5, previousCredentialGeneration: 3 });
    seen.push(raised.app.credentialSecret as string);
    expect(await authenticates(raised.app.credentialId, raised.app.credentialSecret)).toBe(true);
    expect(await held()).toEqual([`${first.app.prefix}-credential-v3`, `${first.app.prefix}-credential-v5`, `${first.db.prefix}-credential-v2`]);
    noPlaintext();
  });

  it('pulumi destroy leaves nothing in Keystone', async () => {
    await ok(['destroy', '--yes', '--skip-preview'], at('+82m'));
    expect(await held()).toEqual([]);
    noPlaintext();
  });

  it.each([
    ['interval', '30s', 'rotation.interval ("30s"): rotation.interval is 0s or at least 1m'],
    ['gracePeriod', '2h', 'rotation.gracePeriod (2h) must be shorter than rotation.interval (1h)'],
    ['credentialGeneration', '0', 'credentialGeneration (0): must be at least 1'],
  ])('a bad %s (%s) fails pulumi preview on the resource, naming the field, the value as written and the rule, with no Keystone call', async (key, value, message) => {
    const bad = `bad-${key.toLowerCase()}`;
    await configure(bad);
    await ok(['config', 'set', key, value], {}, bad);
    const mark = proxy.calls.length;
    const result = await pulumi(['preview'], {}, bad);
    expect(result.code).not.toBe(0);
    const text = `${result.stdout}${result.stderr}`;
    // The engine stops at the first resource whose check fails; both credentials take the same rotation.
    expect(text).toMatch(new RegExp(`${APPLICATION_CREDENTIAL} resource '(app|db)' has a problem: ${message.replace(/[()]/g, '\\$&')}`));
    // Never the engine's Go form of an input (`property rotation value {map[...]}`, `{<nil>}`).
    expect(text).not.toMatch(/property \S+ value/);
    expect(text).not.toContain('map[');
    expect(proxy.since(mark)).toEqual([]);
  });

  /**
   * `pulumi preview` of a project of its own with one credential of `properties` (JSON is YAML), with the environment's
   * connection through the proxy; returns what the CLI printed after checking that it failed and called no Keystone.
   */
  async function failedPreview(stackName: string, properties: Record<string, unknown>): Promise<string> {
    const project = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'pulumi-yaml-bad-'));
    writeFileSync(join(project, 'Pulumi.yaml'), `name: kac-yaml-bad\nruntime: yaml\nresources:\n  app:\n    type: keystone-appcred:ApplicationCredential\n    properties: ${JSON.stringify(properties)}\n`);
    const run = (args: string[]): Promise<PulumiResult> => runPulumi([...args, '--stack', stackName, '--non-interactive'], { cwd: project, env: env(), timeoutMs: 240_000 });
    expect((await run(['stack', 'init'])).code).toBe(0);
    const mark = proxy.calls.length;
    const result = await run(['preview']);
    const text = `${result.stdout}${result.stderr}`;
    expectNothingSecretIn(text);
    expect(result.code).not.toBe(0);
    expect(text).not.toMatch(/property \S+ value/);
    expect(proxy.since(mark)).toEqual([]);
    return text;
  }
  const problem = (reason: string): string => `${APPLICATION_CREDENTIAL} resource 'app' has a problem: ${reason}`;

  it('the issue: an explicit empty connection.userName fails pulumi preview (it used to pass and fail at Keystone with 400), with no Keystone call', async () => {
    const text = await failedPreview('empty-username', { connection: { authUrl: proxy.url, userName: '', password: 'not-the-password', projectId: user.projectId } });
    expect(text).toContain(problem('connection.userName (""): must not be empty'));
    // The CLI prints each failure twice (under the resource, and again among the diagnostics): one distinct failure.
    expect(new Set(text.match(/has a problem: .*/g)?.map((line) => line.trim()))).toEqual(new Set(['has a problem: connection.userName (""): must not be empty']));
  });

  /** Every text input at once: the connection's 13 fields, the durations, cloudName and the backup's 5 fields. */
  const TEXT_FIELDS = [
    ...['cloud', 'authUrl', 'userName', 'userId', 'userDomainName', 'userDomainId', 'password', 'projectName', 'projectId', 'projectDomainName', 'projectDomainId', 'caBundle', 'regionName'].map((f) => `connection.${f}`),
    'rotation.interval',
    'rotation.gracePeriod',
    'cloudName',
    ...['address', 'token', 'mount', 'path', 'namespace'].map((f) => `backup.${f}`),
  ];
  /** The inputs with each field of TEXT_FIELDS set to `value(field)`. */
  function everyField(value: (field: string) => string): Record<string, Record<string, string> | string> {
    const properties: Record<string, Record<string, string> | string> = {};
    for (const field of TEXT_FIELDS) {
      const [head, tail] = field.split('.');
      if (tail === undefined) properties[head] = value(field);
      else properties[head] = { ...(properties[head] as Record<string, string> | undefined), [tail]: value(field) };
    }
    return properties;
  }
  /** The failures the preview printed, by field, in order. */
  /** The fields of the distinct failures (the CLI prints each twice: under the resource, and among the diagnostics). */
  const failedFields = (text: string): string[] => [...new Set([...text.matchAll(/resource 'app' has a problem: ([\w.]+) \(/g)].map((m) => m[1]))];

  it.each([
    ['empty', (): string => '', (field: string): string => (['connection.password', 'backup.token'].includes(field) ? '(0 characters): must not be empty' : '(""): must not be empty')],
    ['only whitespace', (): string => ' \t ', (field: string): string => (['connection.password', 'backup.token'].includes(field) ? '(3 characters): must not be only whitespace' : '(" \\t "): must not be only whitespace')],
  ])('every text input %s fails pulumi preview, one failure per field naming it, with no Keystone call', async (name, value, reason) => {
    const text = await failedPreview(name === 'empty' ? 'every-empty' : 'every-whitespace', everyField(value));
    expect(failedFields(text).sort()).toEqual([...TEXT_FIELDS].sort());
    for (const field of TEXT_FIELDS.filter((f) => !f.startsWith('rotation.'))) expect(text).toContain(problem(`${field} ${reason(field)}`));
    expect(text).toContain(problem(name === 'empty' ? 'rotation.interval (""): is not a duration: it is empty' : 'rotation.interval (" \\t "): is not a duration'));
  });

  it('every text input one character longer than its limit fails pulumi preview naming the field, its length and whose limit it is; no secret shown', async () => {
    const limits = TEXT_INPUT_LIMITS;
    const secret = 'long-secret-'.repeat(400_000);
    const long = (field: string): string => {
      const n = limits[field] + 1;
      if (field.startsWith('rotation.')) return `${'0'.repeat(n - 3)}48h`;
      if (field === 'connection.password' || field === 'backup.token') return secret.slice(0, n);
      return 'x'.repeat(n);
    };
    const text = await failedPreview('every-too-long', everyField(long));
    expect(failedFields(text).sort()).toEqual([...TEXT_FIELDS].sort());
    for (const field of TEXT_FIELDS.filter((f) => !f.startsWith('rotation.'))) {
      expect(text).toContain(problem(`${field} (${limits[field] + 1} characters): must be at most ${limits[field]} characters long (`));
    }
    expect(text).toContain(problem(`rotation.interval ("${long('rotation.interval')}"): must be at most 64 characters long`));
    expect(text).not.toContain('long-secret-long-secret');
  });
});
