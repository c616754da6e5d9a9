// @needs keystone pulumi
/**
 * The `keystone-appcred` provider plugin from Python: the Pulumi Automation API for Python (the `pulumi` package from
 * PyPI, in a venv the test setup caches) runs an inline program that uses the generated Python SDK (sdk/python,
 * installed with pip as a user installs it), with the real Pulumi CLI and the real test Keystone behind a recording
 * proxy. The plugin is found on PATH. An inline program needs no Python language host: the driver process serves it.
 *
 * The flow: up mints; up with the plugin's clock past nextRotation (libfaketime in the CLI's environment, which the
 * plugin inherits) rotates; a later up sweeps; refresh after an out-of-band delete, then up mints again; destroy
 * leaves nothing in Keystone; after each step no secret is in plain text in any file of the state backend.
 */
import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ApplicationCredentials, authenticateApplicationCredential } from '../../src/keystone';
import { APPLICATION_CREDENTIAL } from '../../src/pulumi/plugin/schema';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { run } from '../support/package';
import { pulumiEnv } from '../support/pulumi';
import { testPlugin } from '../support/pulumi-plugin';
import { pythonWithSdk } from '../support/pulumi-python';
import { expectNoPlaintextInState, unwrapSecrets, type ExportedResource } from '../support/pulumi-state';
import { isWrite, startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';

jest.setTimeout(300_000);

const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const at = (offset: string): NodeJS.ProcessEnv => ({ LD_PRELOAD: FAKETIME_LIB, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' });
const STACK = 'py';
const SECRET_SIG = '4dabf18193072939515e22adb298388d';

type Outputs = Record<string, unknown> & {
  credentialId?: string;
  credentialSecret?: string;
  cloudsYaml?: string;
  credentialGeneration?: number;
  previousCredentialId?: string;
  previousCredentialGeneration?: number;
  prefix?: string;
};

interface DriverResult {
  readonly changes: Record<string, number>;
  readonly outputs?: Record<string, unknown>;
  readonly deployment: { resources?: ExportedResource[] };
}

describe('the keystone-appcred provider plugin from Python (Automation API, inline program, generated SDK)', () => {
  let user: ServiceUser;
  let proxy: RecordingProxy;
  let python: { python: string; env: NodeJS.ProcessEnv };
  let pluginDir: string;
  let work: string;
  const seen: string[] = [];
  const config: Record<string, [string, boolean]> = {};

  /** Runs the driver; the CLI (and the plugin it starts) gets `cli` in its environment. */
  async function driver(action: string, cli: NodeJS.ProcessEnv = {}): Promise<DriverResult> {
    const base = pulumiEnv();
    const result = await run(python.python, [join(work, 'driver.py'), action], {
      cwd: work,
      env: {
        ...base,
        ...python.env,
        KAC_PY_STACK: STACK,
        // Each run: an inline program's workspace is a new temporary directory, which holds the stack's config.
        KAC_PY_CONFIG: JSON.stringify(config),
        KAC_PY_ENV: JSON.stringify({ PATH: `${pluginDir}:${base.PATH ?? ''}`, ...cli }),
      },
      timeoutMs: 280_000,
    });
    const text = `${result.stdout}${result.stderr}`;
    for (const value of [user.password, ...seen]) if (result.stderr.includes(value)) throw new Error('the driver printed a secret');
    if (result.code !== 0) throw new Error(`driver.py ${action} failed (${String(result.code)}):\n${text}`.split(user.password).join('***'));
    return JSON.parse(result.stdout.trim().split('\n').pop() as string) as DriverResult;
  }
  function outputsOf(result: DriverResult): Outputs {
    const resource = (result.deployment.resources ?? []).find((r) => r.type === APPLICATION_CREDENTIAL);
    if (!resource) throw new Error(`the state holds no ${APPLICATION_CREDENTIAL}`);
    expect(resource.id).toBeDefined();
    return resource.outputs ?? {};
  }
  /** The state's outputs decrypted: the driver's export keeps them encrypted, so read them back with the CLI. */
  async function decrypted(): Promise<Outputs> {
    const exported = await run(process.env.KAC_PULUMI as string, ['stack', 'export', '--show-secrets', '--stack', `organization/kac-python-e2e/${STACK}`, '--non-interactive'], {
      cwd: work,
      env: pulumiEnv(),
    });
    if (exported.code !== 0) throw new Error(`pulumi stack export failed:\n${exported.stdout}${exported.stderr}`);
    const resources = (JSON.parse(exported.stdout) as { deployment: { resources?: ExportedResource[] } }).deployment.resources ?? [];
    const resource = resources.find((r) => r.type === APPLICATION_CREDENTIAL);
    if (!resource) throw new Error(`the state holds no ${APPLICATION_CREDENTIAL}`);
    const out = unwrapSecrets(resource.outputs ?? {}) as Outputs;
    expect(resource.id).toBe(out.prefix);
    return out;
  }
  const authenticates = (id: string | undefined, secret: string | undefined): Promise<true | string> =>
    authenticateApplicationCredential({ authUrl: user.authUrl, id: id as string, secret: secret as string }).then(
      () => true as const,
      (e: Error) => e.message,
    );
  const held = async (): Promise<string[]> => (await new ApplicationCredentials(user.session()).list()).map((c) => c.name).sort();
  const noPlaintext = (): void => expectNoPlaintextInState([user.password, ...seen], `${STACK}.json`);

  beforeAll(async () => {
    if (!existsSync(FAKETIME_LIB)) throw new Error(`${FAKETIME_LIB} is missing: apt-get install faketime (.ci/run does)`);
    pluginDir = dirname(testPlugin());
    python = await pythonWithSdk(resolve(__dirname, '..', '..', 'sdk', 'python'));
    user = await createServiceUser('pulumi-python');
    proxy = await startRecordingProxy(user.authUrl);
    work = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'pulumi-python-'));
    cpSync(join(__dirname, 'fixtures', 'pulumi-python'), work, { recursive: true });
    Object.assign(config, {
      interval: ['1h', false],
      gracePeriod: ['20m', false],
      authUrl: [proxy.url, false],
      userId: [user.userId, false],
      projectId: [user.projectId, false],
      password: [user.password, true],
    });
  }, 900_000);

  afterAll(async () => {
    await proxy?.close();
    await user?.cleanup();
  });

  let g1: Outputs;
  let g2: Outputs;

  it('up mints generation 1; the secret outputs are secrets; the state holds no secret in plain text', async () => {
    const mark = proxy.calls.length;
    const result = await driver('up');
    expect(result.changes).toMatchObject({ create: 2 });
    expect(result.outputs).toMatchObject({ credentialSecret: '[secret]', cloudsYaml: '[secret]', credentialGeneration: 1 });
    // Secrets in the state (the Automation API's export shows them decrypted, inside the secret envelope).
    for (const key of ['credentialSecret', 'cloudsYaml', 'connection']) expect(outputsOf(result)[key]).toHaveProperty([SECRET_SIG]);
    g1 = await decrypted();
    expect(g1.credentialGeneration).toBe(1);
    expect(result.outputs?.credentialId).toBe(g1.credentialId);
    expect(g1.cloudsYaml).toContain(`application_credential_id: ${g1.credentialId}`);
    expect(await authenticates(g1.credentialId, g1.credentialSecret)).toBe(true);
    seen.push(g1.credentialSecret as string);
    expect(proxy.since(mark).filter(isWrite).map((c) => c.method)).toEqual(['POST']);
    expect(await held()).toEqual([`${g1.prefix}-credential-v1`]);
    noPlaintext();
  });

  it('up with the clock past nextRotation rotates to generation 2; both work during the grace period', async () => {
    const result = await driver('up', at('+61m'));
    expect(result.changes).toMatchObject({ update: 1 });
    g2 = await decrypted();
    expect(g2).toMatchObject({ credentialGeneration: 2, previousCredentialGeneration: 1, previousCredentialId: g1.credentialId });
    seen.push(g2.credentialSecret as string);
    expect(await authenticates(g1.credentialId, g1.credentialSecret)).toBe(true);
    expect(await authenticates(g2.credentialId, g2.credentialSecret)).toBe(true);
    noPlaintext();
  });

  it('up after the grace period deletes generation 1', async () => {
    await driver('up', at('+82m'));
    expect((await decrypted()).previousCredentialId).toBeUndefined();
    expect(await held()).toEqual([`${g1.prefix}-credential-v2`]);
  });

  it('refresh after an out-of-band delete notices it; the next up mints generation 3', async () => {
    await new ApplicationCredentials(user.session()).delete(g2.credentialId as string);
    await driver('refresh', at('+82m'));
    expect((await decrypted()).credentialId).toBeUndefined();
    await driver('up', at('+82m'));
    const g3 = await decrypted();
    expect(g3.credentialGeneration).toBe(3);
    seen.push(g3.credentialSecret as string);
    expect(await authenticates(g3.credentialId, g3.credentialSecret)).toBe(true);
    noPlaintext();
  });

  it('destroy leaves nothing in Keystone and no secret in the state', async () => {
    await driver('destroy', at('+82m'));
    expect(await held()).toEqual([]);
    noPlaintext();
  });
});
