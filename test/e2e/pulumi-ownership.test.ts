// @needs keystone pulumi openbao
/**
 * Ownership on the Pulumi face (issue 32), with the real Pulumi CLI and the real Keystone: two stacks with the same
 * project, stack and resource names in two backends (two teams, or a `--local` trial beside CI), so the same credential
 * names, for one Keystone user. After each `up`, rotation (the clock moved past `nextRotation`), sweep and `destroy` of
 * one, the other's credential still authenticates, and each holds its own working credential. Once through the
 * provider plugin from Pulumi YAML (installed with `pulumi plugin install --file`), once through the dynamic resource
 * from a Node.js program.
 *
 * And the same explicit `backup.path` in both stacks (issue 39): the second is refused at `preview` and at `up`, naming
 * the path and the fix, before anything is created; the first's credential and backup are untouched.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ApplicationCredentials, authenticateApplicationCredential } from '../../src/keystone';
import { APPLICATION_CREDENTIAL } from '../../src/pulumi/plugin/schema';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { buildProject } from '../support/package';
import { configureStack, keystoneAndBaoEnv, runPulumi } from '../support/pulumi';
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

describe.each([
  ['the provider plugin from Pulumi YAML', 'yaml'],
  ['the dynamic resource from a Node.js program', 'dynamic'],
] as const)('two stacks of the same names in two backends, the same explicit backup.path: %s', (_title, face) => {
  let user: ServiceUser;
  const stack = 'prod';
  const path = `shared/${face}/app`;
  const dirs: { dir: string; env: NodeJS.ProcessEnv }[] = [];

  async function run(who: number, args: string[]) {
    const { dir, env } = dirs[who];
    const result = await runPulumi([...args, '--stack', stack, '--non-interactive'], { cwd: dir, env, timeoutMs: 300_000 });
    return { code: result.code, text: `${result.stdout}${result.stderr}` };
  }
  async function ok(who: number, args: string[]): Promise<string> {
    const { code, text } = await run(who, args);
    if (code !== 0) throw new Error(`pulumi ${args.join(' ')} failed (${String(code)}):\n${text}`);
    return text;
  }
  const bao = async (kind: 'data' | 'metadata') => {
    const response = await fetch(`${process.env.KAC_BAO_ADDR}/v1/openstack/${kind}/${path}`, { headers: { 'x-vault-token': process.env.KAC_BAO_TOKEN as string } });
    return response.status === 404 ? undefined : ((await response.json()) as { data: Record<string, unknown> }).data;
  };

  beforeAll(async () => {
    user = await createServiceUser(`pulumi-path-${face}`);
    const home = face === 'yaml' ? await homeWithPlugin(testPlugin()) : undefined;
    if (face === 'dynamic') await buildProject();
    for (const name of ['a', 'b']) {
      const dir = workdir(`pulumi-path-${face}-${name}-`);
      const backend = join(dir, '.backend');
      mkdirSync(backend);
      const env: NodeJS.ProcessEnv = { PULUMI_BACKEND_URL: `file://${backend}`, ...keystoneAndBaoEnv(user) };
      if (face === 'yaml') {
        writeFileSync(
          join(dir, 'Pulumi.yaml'),
          `name: kac-path-yaml\nruntime: yaml\nresources:\n  app:\n    type: keystone-appcred:ApplicationCredential\n    properties:\n      backup:\n        path: ${path}\n`,
        );
        env.PULUMI_HOME = home;
      } else {
        cpSync(join(__dirname, 'fixtures', 'pulumi-crash'), dir, { recursive: true });
        mkdirSync(join(dir, 'node_modules'));
        symlinkSync(REPO, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
        symlinkSync(join(REPO, 'node_modules', '@pulumi'), join(dir, 'node_modules', '@pulumi'), 'dir');
        env.KAC_CRASH_BACKUP_PATH = path;
      }
      dirs.push({ dir, env });
      await ok(dirs.length - 1, ['stack', 'init']);
    }
  }, 600_000);

  afterAll(async () => {
    await user?.cleanup();
  });

  it("the second is refused at preview and at up, naming the path and the fix; the first's credential and backup are untouched", async () => {
    await ok(0, ['up', '--yes', '--skip-preview']);
    const [first] = Object.values(
      Object.fromEntries(exportedResources(await ok(0, ['stack', 'export', '--show-secrets'])).filter((r) => r.type === (face === 'yaml' ? APPLICATION_CREDENTIAL : DYNAMIC)).map((r) => [r.urn, unwrapSecrets(r.outputs ?? {}) as Outputs])),
    );
    const document = await bao('data');
    expect((document?.data as Record<string, string>).application_credential_id).toBe(first.credentialId);
    expect((await bao('metadata'))?.custom_metadata).toEqual({ owner: first.owner });
    const before = (await new ApplicationCredentials(user.session()).list()).map((c) => c.id);
    for (const verb of [['preview'], ['up', '--yes', '--skip-preview']]) {
      const { code, text } = await run(1, verb);
      expect(code).not.toBe(0);
      expect(text).toContain(`backup.path ("${path}", mount "openstack") holds the backup of owner ${first.owner as string}`);
      expect(text).toContain('Give this resource a backup.path of its own, or leave backup.path unset');
    }
    // Nothing was created for the second; the first's credential works and its backup is as it was.
    expect((await new ApplicationCredentials(user.session()).list()).map((c) => c.id)).toEqual(before);
    expect(await bao('data')).toEqual(document);
    expect(await authenticateApplicationCredential({ authUrl: user.authUrl, id: first.credentialId as string, secret: first.credentialSecret as string })).toBeDefined();
    await ok(0, ['destroy', '--yes', '--skip-preview']);
    expect(await bao('metadata')).toBeUndefined();
    expect(await new ApplicationCredentials(user.session()).list()).toEqual([]);
  });
});
