// @needs keystone pulumi
/**
 * The `keystone-appcred` provider plugin from Python, as a user installs it: the packed npm package (`npm pack`)
 * unpacked by root into a directory the user cannot write, a non-root user (`nobody`) that makes a fresh venv and
 * `pip install`s the package's prebuilt wheel of the generated Python SDK into it (nothing built, nothing written beside
 * the wheel; the SDK's dependencies from the cached wheels of PyPI's `pulumi`, `--no-index`), and, as that user, the
 * Pulumi Automation API for Python running an inline program on the SDK, with the real Pulumi CLI, the packed plugin on
 * PATH and the real test Keystone behind a recording proxy. An inline program needs no Python language host: the
 * driver process serves it.
 *
 * The flow: up mints; up with the plugin's clock past nextRotation (libfaketime in the CLI's environment, which the
 * plugin inherits) rotates; a later up sweeps; refresh after an out-of-band delete, then up mints again; destroy
 * leaves nothing in Keystone; after each step no secret is in plain text in any file of the user's state backend.
 */
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationCredentials, authenticateApplicationCredential } from '../../src/keystone';
import { APPLICATION_CREDENTIAL } from '../../src/pulumi/plugin/schema';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { packedTarball } from '../support/package';
import { packedPlugin } from '../support/pulumi-plugin';
import { USER, userPythonWithWheel, type UserPython } from '../support/pulumi-python';
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

describe('the keystone-appcred provider plugin from Python, as a non-root user (Automation API, inline program, the packed wheel)', () => {
  let user: ServiceUser;
  let proxy: RecordingProxy;
  let python: UserPython;
  let work: string;
  const seen: string[] = [];
  const config: Record<string, [string, boolean]> = {};

  /** The Pulumi variables of every process of the user: its backend and home, the tests' passphrase. */
  const pulumiVariables = (): NodeJS.ProcessEnv => ({
    PULUMI_HOME: join(python.home, '.pulumi'),
    PULUMI_BACKEND_URL: `file://${python.backend}`,
    PULUMI_CONFIG_PASSPHRASE: process.env.KAC_PULUMI_CONFIG_PASSPHRASE,
    PULUMI_SKIP_UPDATE_CHECK: 'true',
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: 'true',
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
  });

  /** Runs the driver as the user; the CLI (and the plugin it starts) gets `cli` in its environment. */
  async function driver(action: string, cli: NodeJS.ProcessEnv = {}): Promise<DriverResult> {
    const result = await python.run(python.python, [join(work, 'driver.py'), action], {
      cwd: work,
      env: {
        ...pulumiVariables(),
        PYTHONDONTWRITEBYTECODE: '1',
        KAC_PULUMI_ROOT: python.pulumiRoot,
        KAC_PULUMI_BACKEND_URL: `file://${python.backend}`,
        KAC_PY_STACK: STACK,
        // Each run: an inline program's workspace is a new temporary directory, which holds the stack's config.
        KAC_PY_CONFIG: JSON.stringify(config),
        KAC_PY_ENV: JSON.stringify({ PATH: `${python.bin}:/usr/local/bin:/usr/bin:/bin`, ...pulumiVariables(), ...cli }),
      },
      timeoutMs: 280_000,
    });
    const text = `${result.stdout}${result.stderr}`;
    for (const value of [user.password, ...seen]) if (result.stderr.includes(value)) throw new Error('the driver printed a secret');
    if (result.code !== 0) throw new Error(`driver.py ${action} as ${USER.name} failed (${String(result.code)}):\n${text}`.split(user.password).join('***'));
    return JSON.parse(result.stdout.trim().split('\n').pop() as string) as DriverResult;
  }
  function outputsOf(result: DriverResult): Outputs {
    const resource = (result.deployment.resources ?? []).find((r) => r.type === APPLICATION_CREDENTIAL);
    if (!resource) throw new Error(`the state holds no ${APPLICATION_CREDENTIAL}`);
    expect(resource.id).toBeDefined();
    return resource.outputs ?? {};
  }
  /** The state's outputs decrypted: the driver's export keeps them encrypted, so read them back with the CLI (as the user). */
  async function decrypted(): Promise<Outputs> {
    const exported = await python.run(join(python.pulumiRoot, 'bin', 'pulumi'), ['stack', 'export', '--show-secrets', '--stack', `organization/kac-python-e2e/${STACK}`, '--non-interactive'], {
      cwd: work,
      env: pulumiVariables(),
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
  const noPlaintext = (): void => expectNoPlaintextInState([user.password, ...seen], `${STACK}.json`, python.backend);

  beforeAll(async () => {
    if (!existsSync(FAKETIME_LIB)) throw new Error(`${FAKETIME_LIB} is missing: apt-get install faketime (.ci/run does)`);
    python = await userPythonWithWheel(await packedTarball(), await packedPlugin());
    user = await createServiceUser('pulumi-python');
    proxy = await startRecordingProxy(user.authUrl);
    work = join(python.home, 'project');
    cpSync(join(__dirname, 'fixtures', 'pulumi-python'), work, { recursive: true });
    python.own(work);
    Object.assign(config, {
      interval: ['1h', false],
      gracePeriod: ['20m', false],
      authUrl: [proxy.url, false],
      userId: [user.userId, false],
      projectId: [user.projectId, false],
      password: [user.password, true],
    });
  }, 900_000);

  it('the user imports the SDK from its venv, not from the repository', async () => {
    const result = await python.run(python.python, ['-c', 'import pulumi_keystone_appcred, os; print(pulumi_keystone_appcred.__file__); print(os.getuid())'], { cwd: python.home });
    expect(result.code).toBe(0);
    const [file, uid] = result.stdout.trim().split('\n');
    expect(file.startsWith(join(python.home, 'venv'))).toBe(true);
    expect(Number(uid)).toBe(USER.uid);
  });

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
