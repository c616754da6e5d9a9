// @needs keystone pulumi openbao
/**
 * KeystoneApplicationCredential with the real Pulumi CLI (local file backend) against the real test Keystone. The
 * provider reaches Keystone through a recording proxy, so every Keystone call it makes is counted; time travel is
 * libfaketime on the CLI's environment, which the Node.js provider process inherits (Go ignores it).
 *
 * One stack walks the whole lifecycle in order: mint, no-op up, preview of a due rotation, rotation, both credentials
 * authenticating during grace, the sweep, an out-of-band deletion noticed by refresh, a raised generation, destroy.
 * Other stacks prove that bad inputs fail preview with the CRD's messages and no Keystone call, and so does every text
 * input empty, only whitespace or too long (the limits of src/pulumi/input-rules.ts), each in one preview.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { OpenBaoBackup } from '../../src/backup';
import { ApplicationCredentials, authenticateApplicationCredential } from '../../src/keystone';
import { TEXT_INPUT_LIMITS } from '../support/pulumi-limits';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { buildProject } from '../support/package';
import { configureStack, type PulumiResult, runPulumi } from '../support/pulumi';
import { expectNoPlaintextInState as scanState, exportedResources, unwrapSecrets } from '../support/pulumi-state';
import { isWrite, startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';

jest.setTimeout(300_000);

const REPO = resolve(__dirname, '..', '..');
const TYPE = 'pulumi-nodejs:dynamic/keystone-appcred:KeystoneApplicationCredential';
const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** The environment that shifts the provider's clock by `offset` (libfaketime syntax: `+61m`). */
const at = (offset: string): NodeJS.ProcessEnv => ({ LD_PRELOAD: FAKETIME_LIB, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' });

/** A program dir with the fixture, node_modules/keystone-appcred → the repository, node_modules/@pulumi → its copy. */
function programDir(): string {
  const parent = process.env.KAC_TEST_WORKDIR ?? '/tmp';
  const dir = mkdtempSync(join(parent, 'pulumi-appcred-'));
  cpSync(join(__dirname, 'fixtures', 'pulumi-appcred'), dir, { recursive: true });
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(REPO, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
  symlinkSync(join(REPO, 'node_modules', '@pulumi'), join(dir, 'node_modules', '@pulumi'), 'dir');
  return dir;
}

type Outputs = Record<string, unknown> & {
  lastRotation?: string;
  nextRotation?: string;
  credentialId?: string;
  credentialSecret?: string;
  cloudsYaml?: string;
  credentialGeneration?: number;
  previousCredentialId?: string;
  previousCredentialGeneration?: number;
  prefix?: string;
};

describe('KeystoneApplicationCredential with the real Pulumi CLI', () => {
  let user: ServiceUser;
  let proxy: RecordingProxy;
  let dir: string;
  const stack = 'e2e';
  const seenSecrets: string[] = [];

  async function pulumi(args: string[], env: NodeJS.ProcessEnv = {}, stackName = stack): Promise<PulumiResult> {
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    const result = await runPulumi([...args.slice(0, end), '--stack', stackName, '--non-interactive', ...args.slice(end)], { cwd: dir, env, timeoutMs: 240_000 });
    return result;
  }
  async function ok(args: string[], env: NodeJS.ProcessEnv = {}, stackName = stack): Promise<string> {
    const result = await pulumi(args, env, stackName);
    if (result.code !== 0) {
      const text = `pulumi ${args.join(' ')} failed (${String(result.code)}):\n${result.stdout}\n${result.stderr}`;
      throw new Error(user ? text.split(user.password).join('***') : text);
    }
    return result.stdout;
  }
  /** The resource's outputs as the state holds them (decrypted): refresh changes these, not the stack outputs. */
  async function outputs(stackName = stack): Promise<Outputs> {
    const resource = exportedResources(await ok(['stack', 'export', '--show-secrets'], {}, stackName)).find((r) => r.type === TYPE);
    if (!resource) throw new Error(`the state holds no ${TYPE}`);
    const out = unwrapSecrets(resource.outputs ?? {}) as Outputs;
    // The id is the prefix, whatever happened: a rotation is an update, never a replace.
    expect(resource.id).toBe(out.prefix);
    return out;
  }
  async function configure(stackName: string): Promise<void> {
    await configureStack((args) => ok(args, {}, stackName), { interval: '1h', authUrl: proxy.url, userId: user.userId, projectId: user.projectId, password: user.password });
  }
  async function up(env: NodeJS.ProcessEnv = {}): Promise<string> {
    return ok(['up', '--yes', '--skip-preview'], env);
  }
  async function authenticates(id: string | undefined, secret: string | undefined): Promise<boolean | string> {
    try {
      await authenticateApplicationCredential({ authUrl: user.authUrl, id: id as string, secret: secret as string });
      return true;
    } catch (error) {
      return (error as Error).message;
    }
  }
  /** Neither a credential secret seen so far nor the user's password appears in any file of the state backend. */
  function expectNoPlaintextInState(): void {
    scanState([user.password, ...seenSecrets], `${stack}.json`);
  }
  async function userCredentials(): Promise<string[]> {
    const list = await new ApplicationCredentials(user.session()).list();
    return list.map((c) => c.name);
  }

  beforeAll(async () => {
    // Without the library, ld.so only warns and the clock would silently not move.
    if (!existsSync(FAKETIME_LIB)) throw new Error(`${FAKETIME_LIB} is missing: apt-get install faketime (.ci/run does)`);
    // The build `npm run build` makes (the program loads the provider from lib/), under the lock every build takes.
    await buildProject();
    user = await createServiceUser('pulumi-e2e');
    proxy = await startRecordingProxy(user.authUrl);
    dir = programDir();
    await configureStack((args) => ok(args), { interval: '1h', gracePeriod: '20m', authUrl: proxy.url, userId: user.userId, projectId: user.projectId, password: user.password });
  });

  afterAll(async () => {
    await proxy?.close();
    await user?.cleanup();
  });

  let g1: Outputs;
  let g2: Outputs;

  it('pulumi up mints generation 1; the state holds neither its secret nor the password in plain text', async () => {
    const mark = proxy.calls.length;
    const out = await up();
    expect(out).toMatch(/\+ 2 created/);
    g1 = await outputs();
    expect(g1.credentialGeneration).toBe(1);
    expect(g1.prefix).toMatch(/^app-[0-9a-f]{8}-applicationcredential$/);
    expect(g1.cloudsYaml).toContain('auth_type: v3applicationcredential');
    expect(g1.cloudsYaml).toContain(`application_credential_id: ${g1.credentialId}`);
    const stackOutputs = JSON.parse(await ok(['stack', 'output', '--json', '--show-secrets'])) as Outputs;
    expect(stackOutputs.credentialSecret).toBe(g1.credentialSecret);
    expect(JSON.parse(await ok(['stack', 'output', '--json'])) as Outputs).toMatchObject({ credentialSecret: '[secret]', cloudsYaml: '[secret]' });
    expect(await authenticates(g1.credentialId, g1.credentialSecret)).toBe(true);
    seenSecrets.push(g1.credentialSecret as string);
    expectNoPlaintextInState();
    const exported = await ok(['stack', 'export']);
    expect(exported).toContain(g1.credentialId as string);
    expect(exported).not.toContain(g1.credentialSecret as string);
    expect(exported).not.toContain(user.password);
    const writes = proxy.since(mark).filter(isWrite);
    expect(writes.map((c) => c.method)).toEqual(['POST']);
    expect(await userCredentials()).toEqual([`${g1.prefix}-credential-v1`]);
  });

  it('pulumi up again, not due: no changes and no Keystone call at all', async () => {
    const mark = proxy.calls.length;
    const out = await up();
    expect(out).not.toMatch(/updated|created|deleted/);
    expect(out).toMatch(/unchanged/);
    expect(proxy.since(mark)).toEqual([]);
    expect((await outputs()).credentialId).toBe(g1.credentialId);
  });

  it('pulumi preview shows the due rotation as an update, without calling Keystone', async () => {
    const mark = proxy.calls.length;
    const out = await ok(['preview'], at('+61m'));
    expect(out).toMatch(/~ 1 to update|1 to update/);
    expect(out).toMatch(new RegExp(`~\\s+${TYPE}\\s+app\\s+update`));
    expect(proxy.since(mark)).toEqual([]);
  });

  it('pulumi up when due rotates to generation 2 in place; both authenticate during the grace period', async () => {
    const out = await up(at('+61m'));
    expect(out).toMatch(/1 updated/);
    expect(out).not.toMatch(/replaced|created/);
    g2 = await outputs();
    expect(g2.credentialGeneration).toBe(2);
    expect(g2.previousCredentialId).toBe(g1.credentialId);
    expect(g2.previousCredentialGeneration).toBe(1);
    seenSecrets.push(g2.credentialSecret as string);
    expect(await authenticates(g1.credentialId, g1.credentialSecret)).toBe(true);
    expect(await authenticates(g2.credentialId, g2.credentialSecret)).toBe(true);
    expectNoPlaintextInState();
  });

  it('pulumi up after the grace period deletes generation 1', async () => {
    const mark = proxy.calls.length;
    await up(at('+82m'));
    const swept = await outputs();
    expect(swept.credentialGeneration).toBe(2);
    expect(swept.previousCredentialId).toBeUndefined();
    expect(await authenticates(g1.credentialId, g1.credentialSecret)).toMatch(/404|401/);
    expect(await authenticates(g2.credentialId, g2.credentialSecret)).toBe(true);
    expect(proxy.since(mark).filter(isWrite).map((c) => c.method)).toEqual(['DELETE']);
    expect(await userCredentials()).toEqual([`${g1.prefix}-credential-v2`]);
  });

  it('a live credential deleted by hand: pulumi refresh notices, pulumi up mints a new generation', async () => {
    await new ApplicationCredentials(user.session()).delete(g2.credentialId as string);
    await ok(['refresh', '--yes', '--skip-preview'], at('+82m'));
    const refreshed = await outputs();
    expect(refreshed.credentialId).toBeUndefined();
    expectNoPlaintextInState();
    await up(at('+82m'));
    const g3 = await outputs();
    expect(g3.credentialGeneration).toBe(3);
    expect(g3.previousCredentialId).toBeUndefined();
    seenSecrets.push(g3.credentialSecret as string);
    expect(await authenticates(g3.credentialId, g3.credentialSecret)).toBe(true);
    expectNoPlaintextInState();
  });

  it('raising credentialGeneration rotates at once, to that generation', async () => {
    await ok(['config', 'set', 'credentialGeneration', '5']);
    const out = await ok(['preview'], at('+82m'));
    expect(out).toMatch(/1 to update/);
    await up(at('+82m'));
    const g5 = await outputs();
    expect(g5.credentialGeneration).toBe(5);
    expect(g5.previousCredentialGeneration).toBe(3);
    seenSecrets.push(g5.credentialSecret as string);
    expect(await authenticates(g5.credentialId, g5.credentialSecret)).toBe(true);
    expect((await userCredentials()).sort()).toEqual([`${g1.prefix}-credential-v3`, `${g1.prefix}-credential-v5`]);
    expectNoPlaintextInState();
  });

  it('pulumi up long after the expiry (a late rotation): the expired superseded credential gets no grace period and goes in the same up', async () => {
    const before = await outputs();
    const mark = proxy.calls.length;
    await up(at('+8d'));
    const late = await outputs();
    expect(late.credentialGeneration).toBe(6);
    expect(late.previousCredentialId).toBeUndefined();
    expect(late.previousCredentialDeleteAt).toBeUndefined();
    seenSecrets.push(late.credentialSecret as string);
    // generation 3's grace period was over (swept first), generation 5 had expired (swept right after the switch)
    expect(proxy.since(mark).filter(isWrite).map((c) => c.method)).toEqual(['DELETE', 'POST', 'DELETE']);
    expect(await userCredentials()).toEqual([`${g1.prefix}-credential-v6`]);
    expect(before.credentialGeneration).toBe(5);
    expect(await authenticates(late.credentialId, late.credentialSecret)).toBe(true);
    expectNoPlaintextInState();
  });

  it('pulumi destroy leaves nothing of the resource in Keystone', async () => {
    await ok(['destroy', '--yes', '--skip-preview'], at('+82m'));
    expect(await userCredentials()).toEqual([]);
    expectNoPlaintextInState();
  });

  it('a failure half-way converges on the next pulumi up: no leaked credential, no lost delivered secret', async () => {
    const crash = 'crash';
    await configure(crash);
    await ok(['config', 'set', 'gracePeriod', '20m'], {}, crash);
    await ok(['up', '--yes', '--skip-preview'], {}, crash);
    const c1 = await outputs(crash);
    /** Keystone acts on the first call of `method` to the credentials, but its reply is lost (503 instead). */
    const loseReply = (method: string) => {
      let seen = 0;
      proxy.faultAfter = (call) => (call.method === method && call.path.includes('/application_credentials') && ++seen === 1 ? 503 : undefined);
    };

    // Keystone creates the successor but the reply is lost: the update fails before the switch.
    loseReply('POST');
    const failed = await pulumi(['up', '--yes', '--skip-preview'], at('+61m'), crash);
    proxy.faultAfter = undefined;
    expect(failed.code).not.toBe(0);
    expect(`${failed.stdout}${failed.stderr}`).toContain('503');
    expect((await userCredentials()).sort()).toEqual([`${c1.prefix}-credential-v1`, `${c1.prefix}-credential-v2`]);
    const kept = await outputs(crash);
    expect(kept.credentialId).toBe(c1.credentialId);
    expect(await authenticates(kept.credentialId, kept.credentialSecret)).toBe(true);
    // The next up deletes the successor whose secret was lost, creates it again and switches.
    await ok(['up', '--yes', '--skip-preview'], at('+61m'), crash);
    const c2 = await outputs(crash);
    expect(c2.credentialGeneration).toBe(2);
    expect((await userCredentials()).sort()).toEqual([`${c1.prefix}-credential-v1`, `${c1.prefix}-credential-v2`]);
    expect(await authenticates(c1.credentialId, c1.credentialSecret)).toBe(true);
    expect(await authenticates(c2.credentialId, c2.credentialSecret)).toBe(true);
    seenSecrets.push(c1.credentialSecret as string, c2.credentialSecret as string);

    // Keystone deletes generation 1 in the sweep but the reply is lost: Pulumi keeps the state as observed before the
    // sweep (the superseded credential still recorded) as the resource's partial state.
    loseReply('DELETE');
    const failedSweep = await pulumi(['up', '--yes', '--skip-preview'], at('+82m'), crash);
    proxy.faultAfter = undefined;
    expect(failedSweep.code).not.toBe(0);
    const partial = await outputs(crash);
    expect(partial.credentialId).toBe(c2.credentialId);
    expect(partial.previousCredentialId).toBe(c1.credentialId);
    expect(await userCredentials()).toEqual([`${c1.prefix}-credential-v2`]);
    // Pulumi retries a resource whose last operation failed with an update; with nothing left to do it writes nothing.
    const mark = proxy.calls.length;
    await ok(['up', '--yes', '--skip-preview'], at('+82m'), crash);
    expect(proxy.since(mark).filter(isWrite)).toEqual([]);
    const converged = await ok(['up', '--yes', '--skip-preview'], at('+82m'), crash);
    expect(converged).not.toMatch(/updated|created|deleted/);
    expect((await outputs(crash)).credentialId).toBe(c2.credentialId);
    expect(await authenticates(c2.credentialId, c2.credentialSecret)).toBe(true);
    expectNoPlaintextInState();
    await ok(['destroy', '--yes', '--skip-preview'], at('+82m'), crash);
    expect(await userCredentials()).toEqual([]);
  });

  it('with the OpenBao backup from the stack config: the backup holds the delivered credential, the token stays secret', async () => {
    const backed = 'backup';
    await configure(backed);
    await ok(['config', 'set', 'gracePeriod', '20m'], {}, backed);
    await ok(['config', 'set', 'keystone-appcred:openbaoAddress', process.env.KAC_BAO_ADDR as string], {}, backed);
    await ok(['config', 'set', '--secret', 'keystone-appcred:openbaoToken', process.env.KAC_BAO_TOKEN as string], {}, backed);
    await ok(['up', '--yes', '--skip-preview'], {}, backed);
    const b1 = await outputs(backed);
    const at1 = new OpenBaoBackup({
      address: process.env.KAC_BAO_ADDR as string,
      token: process.env.KAC_BAO_TOKEN as string,
      path: `keystone/pulumi/${b1.prefix as string}/${b1.owner as string}/service-accounts/application-credential`,
    });
    expect(await at1.readDocument()).toEqual({
      'clouds.yaml': b1.cloudsYaml,
      application_credential_id: b1.credentialId,
      application_credential_secret: b1.credentialSecret,
    });
    await ok(['up', '--yes', '--skip-preview'], at('+61m'), backed);
    const b2 = await outputs(backed);
    expect(b2.credentialGeneration).toBe(2);
    expect(await at1.read()).toBe(b2.credentialId);
    seenSecrets.push(b1.credentialSecret as string, b2.credentialSecret as string, process.env.KAC_BAO_TOKEN as string);
    expectNoPlaintextInState();
    await ok(['destroy', '--yes', '--skip-preview'], at('+61m'), backed);
    expect(await at1.read()).toBeUndefined();
    expect(await userCredentials()).toEqual([]);
  });

  it("pulumi preview tolerates an input that is unknown until another resource exists", async () => {
    const computed = 'computed';
    await configure(computed);
    await ok(['config', 'set', 'gracePeriod', '20m'], {}, computed);
    await ok(['config', 'set', 'computedInterval', 'true'], {}, computed);
    const preview = await ok(['preview'], {}, computed);
    expect(preview).toMatch(/\+ 3 to create/);
    await ok(['up', '--yes', '--skip-preview'], {}, computed);
    const out = await outputs(computed);
    // 2h after the switch, or a second earlier when the expiry (minted a moment before the switch) bounds it.
    const scheduled = Date.parse(out.nextRotation as string) - Date.parse(out.lastRotation as string);
    expect(scheduled).toBeGreaterThanOrEqual(2 * 3_600_000 - 2_000);
    expect(scheduled).toBeLessThanOrEqual(2 * 3_600_000);
    await ok(['destroy', '--yes', '--skip-preview'], {}, computed);
    expect(await userCredentials()).toEqual([]);
  });

  it.each([
    ['interval', '30s', 'rotation.interval ("30s"): rotation.interval is 0s or at least 1m'],
    ['gracePeriod', '2h', 'rotation.gracePeriod (2h) must be shorter than rotation.interval (1h)'],
    ['credentialGeneration', '0', 'credentialGeneration (0): must be at least 1'],
  ])('a bad %s (%s) fails pulumi preview on the resource, with the rule message and no Keystone call', async (key, value, message) => {
    const bad = `bad-${key.toLowerCase()}`;
    await configure(bad);
    await ok(['config', 'set', key, value], {}, bad);
    const mark = proxy.calls.length;
    const result = await pulumi(['preview'], {}, bad);
    expect(result.code).not.toBe(0);
    const text = `${result.stdout}${result.stderr}`;
    expect(text).toContain(`${TYPE} resource 'app' has a problem: ${message}`);
    // Never the engine's Go form of an input (`property rotation value {map[...]}`, `{<nil>}`).
    expect(text).not.toMatch(/property \S+ value/);
    expect(text).not.toContain('map[');
    expect(proxy.since(mark)).toEqual([]);
  });

  /**
   * `pulumi preview` of a program of its own that declares one credential with `args` (args.json), with the
   * environment's connection through the proxy; returns what the CLI printed after checking that it failed, printed no
   * secret and called no Keystone.
   */
  async function failedPreview(stackName: string, args: Record<string, unknown>, secrets: readonly string[] = []): Promise<string> {
    const program = programDir();
    writeFileSync(join(program, 'index.js'), "'use strict';\nconst { KeystoneApplicationCredential } = require('keystone-appcred/pulumi');\nnew KeystoneApplicationCredential('app', require('./args.json'));\n");
    writeFileSync(join(program, 'args.json'), JSON.stringify(args));
    const env = { OS_CLOUD: '', OS_AUTH_URL: proxy.url, OS_USER_ID: user.userId, OS_PASSWORD: user.password, OS_PROJECT_ID: user.projectId };
    const run = (cmd: string[]): Promise<PulumiResult> => runPulumi([...cmd, '--stack', stackName, '--non-interactive'], { cwd: program, env, timeoutMs: 240_000 });
    expect((await run(['stack', 'init'])).code).toBe(0);
    const mark = proxy.calls.length;
    const result = await run(['preview']);
    const text = `${result.stdout}${result.stderr}`;
    for (const value of [user.password, ...secrets]) expect(text.includes(value)).toBe(false);
    expect(result.code).not.toBe(0);
    expect(text).not.toMatch(/property \S+ value/);
    expect(proxy.since(mark)).toEqual([]);
    return text;
  }
  const problem = (reason: string): string => `${TYPE} resource 'app' has a problem: ${reason}`;

  it('the issue: an explicit empty connection.userName fails pulumi preview, with no Keystone call', async () => {
    const text = await failedPreview('empty-username', { connection: { authUrl: proxy.url, userName: '', password: 'not-the-password', projectId: user.projectId } });
    expect(text).toContain(problem('connection.userName (""): must not be empty'));
    // The CLI prints each failure twice (under the resource, and again among the diagnostics): one distinct failure.
    expect(new Set(text.match(/has a problem: .*/g)?.map((line) => line.trim()))).toEqual(new Set(['has a problem: connection.userName (""): must not be empty']));
  });

  /** Every text input: the connection's 13 fields, the durations, cloudName and the backup's 5 fields, with its limit. */
  const LIMITS = TEXT_INPUT_LIMITS;
  const FIELDS = Object.keys(LIMITS);
  const SECRET_FIELDS = ['connection.password', 'backup.token'];
  /** The args with each text input set to `value(field)`. */
  function everyField(value: (field: string) => string): Record<string, unknown> {
    const args: Record<string, Record<string, string> | string> = {};
    for (const field of FIELDS) {
      const [head, tail] = field.split('.');
      if (tail === undefined) args[head] = value(field);
      else args[head] = { ...(args[head] as Record<string, string> | undefined), [tail]: value(field) };
    }
    return args;
  }
  /** The fields of the distinct failures, sorted (the CLI prints each twice: under the resource, and among the diagnostics). */
  const failedFields = (text: string): string[] => [...new Set([...text.matchAll(/resource 'app' has a problem: ([\w.]+) \(/g)].map((m) => m[1]))].sort();

  it('every text input empty, or only whitespace, fails pulumi preview: one failure per field, naming it', async () => {
    for (const [stackName, value, shown] of [
      ['every-empty', '', '""'],
      ['every-whitespace', ' \t ', '" \\t "'],
    ] as const) {
      const text = await failedPreview(stackName, everyField(() => value));
      expect(failedFields(text)).toEqual([...FIELDS].sort());
      const rule = value === '' ? 'must not be empty' : 'must not be only whitespace';
      for (const field of FIELDS.filter((f) => !f.startsWith('rotation.'))) {
        expect(text).toContain(problem(`${field} (${SECRET_FIELDS.includes(field) ? `${value.length} characters` : shown}): ${rule}`));
      }
    }
  });

  it('every text input one character longer than its limit fails pulumi preview naming the field and its length; no secret shown', async () => {
    const secret = 'long-secret-'.repeat(400_000);
    const long = (field: string): string => {
      const n = LIMITS[field] + 1;
      if (field.startsWith('rotation.')) return `${'0'.repeat(n - 3)}48h`;
      return SECRET_FIELDS.includes(field) ? secret.slice(0, n) : 'x'.repeat(n);
    };
    const text = await failedPreview('every-too-long', everyField(long), ['long-secret-long-secret']);
    expect(failedFields(text)).toEqual([...FIELDS].sort());
    for (const field of FIELDS.filter((f) => !f.startsWith('rotation.'))) {
      expect(text).toContain(problem(`${field} (${LIMITS[field] + 1} characters): must be at most ${LIMITS[field]} characters long (`));
    }
    expect(text).toContain(problem(`rotation.gracePeriod ("${long('rotation.gracePeriod')}"): must be at most 64 characters long`));
  });

  it('a connection the environment cannot assemble fails pulumi preview on the resource, naming the variable', async () => {
    const bare = 'bad-connection';
    await ok(['stack', 'init'], {}, bare);
    const result = await pulumi(['preview'], { OS_CLOUD: '', OS_AUTH_URL: '' }, bare);
    expect(result.code).not.toBe(0);
    const text = `${result.stdout}${result.stderr}`;
    expect(text).toContain("resource 'app' has a problem: OS_* variables: the auth URL is missing (set OS_AUTH_URL or OS_CLOUD, or the connection input)");
    expect(text).not.toContain('<nil>');
  });
});
