// @needs keystone pulumi openbao
/**
 * The Pulumi crash suite (issue 39), with the real Pulumi CLI, Keystone and OpenBao, once through the provider plugin
 * from Pulumi YAML and once through the dynamic resource from a Node.js program:
 *
 * - `pulumi up` killed with SIGKILL (the whole process group: CLI, language host, program, providers) at each action
 *   boundary of a create, an update (a raised `credentialGeneration`) and a scheduled rotation with its sweep, by the
 *   provider's test-only halt point (src/pulumi/halt.ts); then `pulumi cancel` (a killed `up` leaves the stack locked),
 *   `up`, and at the end `refresh` and `destroy`. After every run: every credential in Keystone is one the state tracks,
 *   or the leftover of an interrupted create, which Pulumi keeps as a pending create carrying its owner id and which
 *   the run reported with the exact command that deletes it; a consumer probe on every delivered credential never
 *   fails. At the end the reported commands leave nothing in Keystone or OpenBao. Prints the table of kill points.
 * - A partial failure (a successor minted, then OpenBao refuses the backup, in the same `up` as a create that fails the
 *   same way): `refresh` and `destroy` work without an `up` in between and leave nothing.
 */
import { cpSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { markOf } from '../../src/lifecycle';
import { ApplicationCredentials, authenticateApplicationCredential, isKeystoneError } from '../../src/keystone';
import { APPLICATION_CREDENTIAL } from '../../src/pulumi/plugin/schema';
import { pulumiPrefix } from '../../src/pulumi/prefix';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { buildProject } from '../support/package';
import { keystoneAndBaoEnv, runPulumi, runPulumiToHalt, type PulumiResult } from '../support/pulumi';
import { homeWithPlugin, testPlugin } from '../support/pulumi-plugin';
import { exportedResources, unwrapSecrets } from '../support/pulumi-state';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';

jest.setTimeout(900_000);

const REPO = resolve(__dirname, '..', '..');
const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const at = (offset: string): NodeJS.ProcessEnv => ({ LD_PRELOAD: FAKETIME_LIB, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' });
const DYNAMIC = 'pulumi-nodejs:dynamic/keystone-appcred:KeystoneApplicationCredential';
const MINUTE = 60_000;

type Outputs = {
  credentialId?: string;
  credentialSecret?: string;
  credentialGeneration?: number;
  previousCredentialId?: string;
  previousCredentialDeleteAt?: string;
  successorCredentialId?: string;
  successorGeneration?: number;
  owner?: string;
  prefix?: string;
  __provider?: string;
};

/** What the program declares: the resources' names and `app`'s credentialGeneration. */
interface Program {
  readonly names: readonly string[];
  readonly generation: number;
}

/** One row of the printed table. */
interface Row {
  face: string;
  point: string;
  next: string;
  left: number;
}
const table: Row[] = [];

afterAll(() => {
  if (table.length === 0) return;
  const lines = ['| face | kill point | what the next `up` did | credentials left that nothing tracks |', '| --- | --- | --- | ---: |'];
  for (const r of table) lines.push(`| ${r.face} | \`${r.point}\` | ${r.next} | ${r.left} |`);
  process.stdout.write(`\nPulumi crash suite:\n${lines.join('\n')}\n`);
});

describe.each([
  ['the provider plugin from Pulumi YAML', 'yaml'],
  ['the dynamic resource from a Node.js program', 'dynamic'],
] as const)('pulumi killed mid-run, and a partial failure: %s', (_title, face) => {
  let user: ServiceUser;
  let keystone: RecordingProxy;
  let bao: RecordingProxy;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const type = face === 'yaml' ? APPLICATION_CREDENTIAL : DYNAMIC;
  let stack = '';
  let program: Program = { names: ['app'], generation: 1 };
  /** The delivered credentials a consumer holds: id → secret, and until when (faked time) a superseded one must work. */
  const consumers = new Map<string, { secret: string; until?: number }>();
  /** The leftovers of interrupted creates that a run reported, with the command that deletes each. */
  const known = new Set<string>();
  const failures: string[] = [];
  let probe: NodeJS.Timeout | undefined;

  /** The program as `program` says: the YAML file, or the dynamic program's environment. */
  function programEnv(): NodeJS.ProcessEnv {
    if (face === 'dynamic') return { KAC_CRASH_NAMES: program.names.join(','), KAC_CRASH_GENERATION: String(program.generation) };
    const resources = program.names
      .map((name) => `  ${name}:\n    type: keystone-appcred:ApplicationCredential\n    properties:\n      rotation:\n        interval: 1h\n        gracePeriod: 20m\n      credentialGeneration: ${name === 'app' ? program.generation : 1}\n      backup: {}\n`)
      .join('');
    writeFileSync(join(dir, 'Pulumi.yaml'), `name: kac-crash-yaml\nruntime: yaml\nresources:\n${resources}`);
    return {};
  }

  async function pulumi(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<PulumiResult> {
    return runPulumi([...args, '--stack', stack, '--non-interactive'], { cwd: dir, env: { ...env, ...programEnv(), ...extra }, timeoutMs: 300_000 });
  }
  async function ok(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<string> {
    const result = await pulumi(args, extra);
    const text = `${result.stdout}${result.stderr}`;
    if (text.includes(user.password)) throw new Error(`pulumi ${args[0]} printed the password`);
    if (result.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed (${String(result.code)}):\n${text}`);
    return text;
  }
  /**
   * Before a run at `offset` minutes of faked time: a consumer has moved off a superseded credential whose grace period
   * is over by then (the run may sweep it).
   */
  function movedOn(offset: number): void {
    const now = Date.now() + offset * MINUTE;
    for (const [id, c] of consumers) if (c.until !== undefined && c.until <= now) consumers.delete(id);
  }

  /** `pulumi up` killed at `point`; then `pulumi cancel`, which a killed up's lock needs before anything else runs. */
  async function killedAt(point: string, offset: number): Promise<void> {
    movedOn(offset);
    const extra = offset === 0 ? {} : at(`+${offset}m`);
    const result = await runPulumiToHalt(['up', '--yes', '--skip-preview', '--stack', stack, '--non-interactive'], { cwd: dir, env: { ...env, ...programEnv(), ...extra }, point, timeoutMs: 300_000 });
    if (!result.halted) throw new Error(`pulumi up never reached ${point} (${String(result.code)}):\n${result.stdout}${result.stderr}`);
    await ok(['cancel', '--yes']);
  }

  /** The state: each credential resource's outputs by name, and the owner id of each pending create. */
  async function deployment(): Promise<{ resources: Map<string, Outputs>; pending: string[] }> {
    const text = await ok(['stack', 'export', '--show-secrets']);
    const resources = new Map<string, Outputs>();
    for (const r of exportedResources(text).filter((x) => x.type === type)) resources.set(r.urn.slice(r.urn.lastIndexOf('::') + 2), unwrapSecrets(r.outputs ?? {}) as Outputs);
    const pending = ((JSON.parse(text) as { deployment: { pending_operations?: { type: string; resource: { type: string; inputs?: { owner?: string } } }[] } }).deployment.pending_operations ?? [])
      .filter((op) => op.type === 'creating' && op.resource.type === type)
      .map((op) => op.resource.inputs?.owner as string);
    return { resources, pending };
  }
  const held = async () => (await new ApplicationCredentials(user.session()).list()).map((c) => ({ id: c.id, name: c.name, owner: markOf(c.description).owner }));

  /**
   * After a run (its output `text`) that completed: what a consumer holds now, and every credential in Keystone that the
   * state does not track: the leftovers of interrupted creates (a pending create of the state names the owner, and the
   * run reported it with the command that deletes it), and any other, which must not exist.
   */
  async function accounted(text: string): Promise<{ leftovers: { id: string; owner: string }[]; untracked: string[] }> {
    const { resources, pending } = await deployment();
    const tracked = new Set<string>();
    for (const o of resources.values()) for (const id of [o.credentialId, o.previousCredentialId, o.successorCredentialId]) if (id) tracked.add(id);
    for (const o of resources.values()) {
      if (o.credentialId && o.credentialSecret) consumers.set(o.credentialId, { secret: o.credentialSecret });
      const previous = o.previousCredentialId ? consumers.get(o.previousCredentialId) : undefined;
      if (previous && o.previousCredentialDeleteAt) previous.until = Date.parse(o.previousCredentialDeleteAt);
    }
    for (const [id, c] of consumers) if (!tracked.has(id) && c.until === undefined) consumers.delete(id);
    const leftovers: { id: string; owner: string }[] = [];
    const untracked: string[] = [];
    for (const c of await held()) {
      if (tracked.has(c.id)) continue;
      // A leftover is found by the run after the interrupted create (the one that creates the resource anew), which
      // reports it; later runs of a resource with nothing to do never look at Keystone.
      const reported = c.owner !== undefined && pending.includes(c.owner) && (known.has(c.id) || text.includes(`openstack application credential delete ${c.id}`));
      if (reported) leftovers.push({ id: c.id, owner: c.owner as string });
      else untracked.push(`${c.id} (${c.name}, owner ${c.owner ?? 'none'})`);
    }
    return { leftovers, untracked };
  }

  /** Runs `up` at `offset` minutes of faked time; what it did in Keystone, and the leftovers after it. */
  async function upAt(offset: number): Promise<{ text: string; did: string; leftovers: { id: string; owner: string }[]; untracked: string[] }> {
    movedOn(offset);
    const mark = keystone.calls.length;
    const text = await ok(['up', '--yes', '--skip-preview'], offset === 0 ? {} : at(`+${offset}m`));
    const calls = keystone.since(mark);
    const creates = calls.filter((c) => c.method === 'POST' && c.path.endsWith('/application_credentials')).length;
    const deletes = calls.filter((c) => c.method === 'DELETE').length;
    return { text, did: `${creates} created, ${deletes} deleted`, ...(await accounted(text)) };
  }

  /** The paths under keystone/pulumi that hold a document of this stack's resources (KV v2 metadata, recursively). */
  async function backups(names: readonly string[]): Promise<string[]> {
    const project = face === 'yaml' ? 'kac-crash-yaml' : 'kac-crash-e2e';
    const prefixes = names.map((name) => `keystone/pulumi/${pulumiPrefix({ project, stack, name, ...(face === 'yaml' ? { type: APPLICATION_CREDENTIAL } : {}) })}/`);
    const list = async (path: string): Promise<string[]> => {
      const response = await fetch(`${process.env.KAC_BAO_ADDR}/v1/openstack/metadata/${path}?list=true`, { headers: { 'x-vault-token': process.env.KAC_BAO_TOKEN as string } });
      if (response.status === 404) return [];
      const keys = ((await response.json()) as { data: { keys: string[] } }).data.keys;
      const out: string[] = [];
      for (const key of keys) out.push(...(key.endsWith('/') ? await list(`${path}${key}`) : [`${path}${key}`]));
      return out;
    };
    return (await list('keystone/pulumi/')).filter((p) => prefixes.some((prefix) => p.startsWith(prefix)));
  }

  beforeAll(async () => {
    user = await createServiceUser(`pulumi-crash-${face}`);
    keystone = await startRecordingProxy(user.authUrl);
    bao = await startRecordingProxy(process.env.KAC_BAO_ADDR as string);
    const parent = process.env.KAC_TEST_WORKDIR ?? '/tmp';
    mkdirSync(parent, { recursive: true });
    dir = mkdtempSync(join(parent, `pulumi-crash-${face}-`));
    const common = keystoneAndBaoEnv(user, keystone.url);
    if (face === 'yaml') env = { PULUMI_HOME: await homeWithPlugin(testPlugin()), ...common };
    else {
      // The build `npm run build` makes (the program loads the provider from lib/), under the lock every build takes.
      await buildProject();
      cpSync(join(__dirname, 'fixtures', 'pulumi-crash'), dir, { recursive: true });
      mkdirSync(join(dir, 'node_modules'));
      symlinkSync(REPO, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
      symlinkSync(join(REPO, 'node_modules', '@pulumi'), join(dir, 'node_modules', '@pulumi'), 'dir');
      env = common;
    }
    programEnv();
    // The consumers: each holds a delivered credential and authenticates with it, one after the other, every 2 s. Keystone
    // refusing it (401, 404) is a consumer failure; a request that did not get through (the machine's load) is retried.
    let probing = false;
    probe = setInterval(() => {
      if (probing) return;
      probing = true;
      void (async () => {
        for (const [id, c] of [...consumers]) {
          await authenticateApplicationCredential({ authUrl: user.authUrl, id, secret: c.secret }).catch((e: unknown) => {
            if (consumers.get(id) === c && isKeystoneError(e, 'unauthorized', 'not-found')) failures.push(`${id}: ${(e as Error).message}`);
          });
        }
      })().finally(() => (probing = false));
    }, 2000);
  }, 600_000);

  afterAll(async () => {
    if (probe) clearInterval(probe);
    await keystone?.close();
    await bao?.close();
    await user?.cleanup();
  });

  it('a partial failure (successor minted, then OpenBao refuses the backup; a create likewise): refresh and destroy work without an up between', async () => {
    stack = 'partial';
    program = { names: ['app'], generation: 1 };
    await ok(['stack', 'init']);
    const viaProxy = { BAO_ADDR: bao.url };
    await ok(['up', '--yes', '--skip-preview'], viaProxy);
    // OpenBao refuses every document write: app's raised generation is minted and not switched, p1 is minted and not
    // delivered; both failures leave a partial state.
    bao.fault = (call) => (call.method === 'POST' && call.path.startsWith('/v1/openstack/data/') ? 503 : undefined);
    program = { names: ['app', 'p1'], generation: 2 };
    const failed = await pulumi(['up', '--yes', '--skip-preview'], viaProxy);
    expect(failed.code).not.toBe(0);
    const { resources } = await deployment();
    expect(resources.get('app')).toMatchObject({ credentialGeneration: 1, successorGeneration: 2 });
    expect(resources.get('p1')).toMatchObject({ successorGeneration: 1 });
    // Without an up between, OpenBao still refusing writes: refresh, then destroy, leave nothing. (The dynamic
    // resource's partial state keeps `__provider`, which both load the provider from.)
    await ok(['refresh', '--yes', '--skip-preview'], viaProxy);
    if (face === 'dynamic') for (const o of resources.values()) expect(typeof o.__provider).toBe('string');
    await ok(['destroy', '--yes', '--skip-preview'], viaProxy);
    bao.fault = undefined;
    expect(await held()).toEqual([]);
    expect(await backups(['app', 'p1'])).toEqual([]);
    await ok(['stack', 'rm', '--yes']);
  });

  it('pulumi up killed at each action boundary of a create, an update and a rotation: the next runs leave nothing untracked and no consumer fails', async () => {
    stack = 'crash';
    program = { names: ['app'], generation: 1 };
    await ok(['stack', 'init']);
    await upAt(0);
    const row = async (point: string, change: Program, offset = 0) => {
      program = change;
      await killedAt(point, offset);
      const { did, leftovers, untracked, text } = await upAt(offset);
      const left = leftovers.filter((l) => !known.has(l.id));
      for (const l of leftovers) known.add(l.id);
      const reported = left.length > 0 ? `; reported ${left.length === 1 ? 'the leftover' : `${left.length} leftovers`} of the interrupted create with the command that deletes it` : '';
      table.push({ face, point: offset === 0 ? point : `${point} (+${offset}m)`, next: `${did}${reported}`, left: untracked.length });
      expect(untracked).toEqual([]);
      return { left, text };
    };
    // A create: c1 killed before Keystone saw anything, c2 right after Keystone created its credential, c3 after the
    // backup too.
    expect((await row('create:park', { names: ['app', 'c1'], generation: 1 })).left).toEqual([]);
    expect((await row('create:mint', { names: ['app', 'c1', 'c2'], generation: 1 })).left).toHaveLength(1);
    expect((await row('create:backup', { names: ['app', 'c1', 'c2', 'c3'], generation: 1 })).left).toHaveLength(1);
    // An update: app's generation raised, killed after the successor's mint; raised again once that grace period is
    // over (no rotation starts while one runs), killed after the successor's backup (the backup ahead of the state).
    const all = { names: ['app', 'c1', 'c2', 'c3'] };
    expect((await row('update:mint', { ...all, generation: 2 })).left).toEqual([]);
    expect((await row('update:backup', { ...all, generation: 3 }, 21)).left).toEqual([]);
    // A scheduled rotation (the clock past c1..c3's nextRotation), killed at a mint; then the sweeps (and app's
    // rotation), killed after a delete.
    expect((await row('update:mint', { ...all, generation: 3 }, 61)).left).toEqual([]);
    expect((await row('update:delete', { ...all, generation: 3 }, 82)).left).toEqual([]);
    const { resources } = await deployment();
    expect(resources.get('app')?.credentialGeneration).toBeGreaterThanOrEqual(4);
    // refresh and destroy: the leftovers are all that is left, reported by destroy with the commands that remove them.
    expect((await accounted(await ok(['refresh', '--yes', '--skip-preview'], at('+82m')))).untracked).toEqual([]);
    consumers.clear();
    const destroyed = await ok(['destroy', '--yes', '--skip-preview'], at('+82m'));
    const left = await held();
    expect(left.map((c) => c.id).sort()).toEqual([...known].sort());
    for (const c of left) expect(destroyed).toContain(`openstack application credential delete ${c.id}`);
    // The reported commands: each leftover's credential and the backup its interrupted create wrote, then the pending
    // creates. Nothing is left.
    for (const c of left) await new ApplicationCredentials(user.session()).delete(c.id);
    for (const path of await backups(all.names)) {
      const owner = left.find((c) => c.owner !== undefined && path.includes(c.owner))?.owner;
      expect(owner).toBeDefined();
      expect(destroyed).toContain(`bao kv metadata delete -mount=openstack ${path}`);
      await fetch(`${process.env.KAC_BAO_ADDR}/v1/openstack/metadata/${path}`, { method: 'DELETE', headers: { 'x-vault-token': process.env.KAC_BAO_TOKEN as string } });
    }
    await ok(['refresh', '--yes', '--skip-preview', '--clear-pending-creates']);
    expect((await deployment()).pending).toEqual([]);
    expect(await held()).toEqual([]);
    expect(await backups(all.names)).toEqual([]);
    expect(failures).toEqual([]);
  });
});
