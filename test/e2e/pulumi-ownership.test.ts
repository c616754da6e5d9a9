// @needs keystone pulumi
/**
 * Ownership on the Pulumi face (issue 32), with the real Pulumi CLI and the real Keystone: two stacks with the same
 * project, stack and resource names in two backends (two teams, or a `--local` trial beside CI), so the same credential
 * names, for one Keystone user. After each `up`, rotation (the clock moved past `nextRotation`), sweep and `destroy` of
 * one, the other's credential still authenticates, and each holds its own working credential. Once through the
 * provider plugin from Pulumi YAML (installed with `pulumi plugin install --file`), once through the dynamic resource
 * from a Node.js program.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ApplicationCredentials, authenticateApplicationCredential } from '../../src/keystone';
import { APPLICATION_CREDENTIAL } from '../../src/pulumi/plugin/schema';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { buildProject } from '../support/package';
import { configureStack, runPulumi } from '../support/pulumi';
import { homeWithPlugin, testPlugin } from '../support/pulumi-plugin';
import { exportedResources, unwrapSecrets } from '../support/pulumi-state';

jest.setTimeout(600_000);

const REPO = resolve(__dirname, '..', '..');
const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const at = (offset: string): NodeJS.ProcessEnv => ({ LD_PRELOAD: FAKETIME_LIB, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' });
const DYNAMIC = 'pulumi-nodejs:dynamic/keystone-appcred:KeystoneApplicationCredential';

type Outputs = { credentialId?: string; credentialSecret?: string; credentialGeneration?: number; previousCredentialId?: string; owner?: string; prefix?: string };

/** One installation: a program directory, a backend of its own, the same stack name as the other. */
interface Installation {
  readonly name: string;
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
}

function workdir(prefix: string): string {
  const parent = process.env.KAC_TEST_WORKDIR ?? '/tmp';
  mkdirSync(parent, { recursive: true });
  return mkdtempSync(join(parent, prefix));
}

describe.each([
  ['the provider plugin from Pulumi YAML', 'yaml'],
  ['the dynamic resource from a Node.js program', 'dynamic'],
] as const)('two stacks of the same names in two backends, one Keystone user: %s', (_title, face) => {
  let user: ServiceUser;
  let home: string | undefined;
  const installations: Installation[] = [];
  const stack = 'prod';
  const type = face === 'yaml' ? APPLICATION_CREDENTIAL : DYNAMIC;

  async function ok(who: Installation, args: string[], extra: NodeJS.ProcessEnv = {}): Promise<string> {
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    const result = await runPulumi([...args.slice(0, end), '--stack', stack, '--non-interactive', ...args.slice(end)], { cwd: who.dir, env: { ...who.env, ...extra }, timeoutMs: 300_000 });
    const text = `${result.stdout}${result.stderr}`;
    if (!args.includes('--show-secrets') && text.includes(user.password)) throw new Error(`pulumi ${args[0]} printed the password`);
    if (result.code !== 0) throw new Error(`${who.name}: pulumi ${args.join(' ')} failed (${String(result.code)}):\n${text}`);
    return text;
  }
  async function outputs(who: Installation): Promise<Record<string, Outputs>> {
    const out: Record<string, Outputs> = {};
    for (const r of exportedResources(await ok(who, ['stack', 'export', '--show-secrets'])).filter((r) => r.type === type)) {
      out[r.urn.slice(r.urn.lastIndexOf('::') + 2)] = unwrapSecrets(r.outputs ?? {}) as Outputs;
    }
    return out;
  }
  const works = async (o: Outputs | undefined): Promise<true | string> =>
    authenticateApplicationCredential({ authUrl: user.authUrl, id: o?.credentialId as string, secret: o?.credentialSecret as string }).then(
      () => true as const,
      (e: Error) => e.message,
    );
  /** Every credential of both installations' current outputs authenticates. */
  async function allWork(...states: Record<string, Outputs>[]): Promise<void> {
    for (const state of states) for (const o of Object.values(state)) expect(await works(o)).toBe(true);
  }

  function installation(name: string): Installation {
    const dir = workdir(`pulumi-own-${face}-${name}-`);
    const backend = join(dir, '.backend');
    mkdirSync(backend);
    const connection = { OS_CLOUD: '', OS_AUTH_URL: user.authUrl, OS_USER_ID: user.userId, OS_PASSWORD: user.password, OS_PROJECT_ID: user.projectId };
    if (face === 'yaml') {
      cpSync(join(__dirname, 'fixtures', 'pulumi-yaml'), dir, { recursive: true });
      return { name, dir, env: { PULUMI_HOME: home, PULUMI_BACKEND_URL: `file://${backend}`, ...connection } };
    }
    cpSync(join(__dirname, 'fixtures', 'pulumi-appcred'), dir, { recursive: true });
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(REPO, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
    symlinkSync(join(REPO, 'node_modules', '@pulumi'), join(dir, 'node_modules', '@pulumi'), 'dir');
    return { name, dir, env: { PULUMI_BACKEND_URL: `file://${backend}`, ...connection } };
  }

  async function configure(who: Installation): Promise<void> {
    await configureStack((args) => ok(who, args), { interval: '1h', gracePeriod: '20m', authUrl: user.authUrl, userId: user.userId, projectId: user.projectId, password: user.password });
  }

  beforeAll(async () => {
    if (!existsSync(FAKETIME_LIB)) throw new Error(`${FAKETIME_LIB} is missing: apt-get install faketime (.ci/run does)`);
    user = await createServiceUser(`pulumi-own-${face}`);
    if (face === 'yaml') home = await homeWithPlugin(testPlugin());
    else {
      // The build `npm run build` makes (the program loads the provider from lib/), under the lock every build takes.
      await buildProject();
    }
    installations.push(installation('a'), installation('b'));
    for (const who of installations) await configure(who);
  }, 600_000);

  afterAll(async () => {
    await user?.cleanup();
  });

  it('each up, rotation, sweep and destroy of one leaves the other\'s credentials working; each holds its own', async () => {
    const [a, b] = installations;
    await ok(a, ['up', '--yes', '--skip-preview']);
    const a1 = await outputs(a);
    const bUp = await ok(b, ['up', '--yes', '--skip-preview']);
    const b1 = await outputs(b);
    expect(Object.keys(b1).sort()).toEqual(Object.keys(a1).sort());
    for (const [name, o] of Object.entries(b1)) {
      // The same names, so the same prefix; a credential of its own, minted beside the other's under another name.
      expect(o.prefix).toBe(a1[name].prefix);
      expect(o.credentialId).not.toBe(a1[name].credentialId);
      expect(o.owner).not.toBe(a1[name].owner);
      // B is told about A's credential under its names.
      expect(bUp).toContain(a1[name].credentialId as string);
    }
    expect(bUp).toMatch(/warning/i);
    await allWork(a1, b1);
    expect(await ok(a, ['preview', '--expect-no-changes'])).toBeDefined();

    // A rotates (the clock past nextRotation); B's credentials work, and so do A's both in the grace period.
    await ok(a, ['up', '--yes', '--skip-preview'], at('+61m'));
    const a2 = await outputs(a);
    for (const o of Object.values(a2)) expect(o.credentialGeneration).toBe(2);
    await allWork(a1, a2, b1);
    // B rotates too.
    await ok(b, ['up', '--yes', '--skip-preview'], at('+61m'));
    const b2 = await outputs(b);
    for (const o of Object.values(b2)) expect(o.credentialGeneration).toBe(2);
    await allWork(a2, b1, b2);
    // A sweeps after its grace period: only its own previous credentials are gone.
    await ok(a, ['up', '--yes', '--skip-preview'], at('+82m'));
    for (const o of Object.values(a1)) expect(await works(o)).toMatch(/401|404/);
    await allWork(a2, b1, b2);
    await ok(b, ['up', '--yes', '--skip-preview'], at('+82m'));
    await allWork(a2, b2);
    // A is destroyed: B's credentials stay, and are all that is left under these names.
    await ok(a, ['destroy', '--yes', '--skip-preview'], at('+82m'));
    await allWork(b2);
    const left = await new ApplicationCredentials(user.session()).list();
    expect(left.map((c) => c.id).sort()).toEqual(Object.values(b2).map((o) => o.credentialId as string).sort());
    // B's refresh and a no-change preview see its own credentials, whatever else the user holds.
    await ok(b, ['refresh', '--yes', '--skip-preview'], at('+82m'));
    await ok(b, ['preview', '--expect-no-changes'], at('+82m'));
    await ok(b, ['destroy', '--yes', '--skip-preview'], at('+82m'));
    expect(await new ApplicationCredentials(user.session()).list()).toEqual([]);
  });
});
