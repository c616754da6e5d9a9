/**
 * The Pulumi provider's verbs over a fake Keystone and a settable clock: check's defaults and rules, diff's decision from
 * the state alone, create/update/read/delete through the lifecycle engine, and the crash-safety of a failed update.
 */
import { alternateCredentialName } from '../../../src/api';
import { FakeKeystone, FakeUser } from '../../support/fake-keystone';
import { UNKNOWN, makeProvider, worldOf } from '../../../src/pulumi/provider-impl';
import type { ProviderInputs, ProviderOutputs } from '../../../src/pulumi/state';

const PREFIX = 'app-1234abcd-applicationcredential';
const T0 = new Date('2026-12-01T00:00:00Z');
const env = { OS_AUTH_URL: 'http://127.0.0.1:5000/v3', OS_USERNAME: 'svc', OS_PASSWORD: 'pw-not-in-state', OS_PROJECT_NAME: 'proj' };

/** An OpenBao of the fakes: each path's document (its credential id) and the owner its metadata names. */
interface FakeBao {
  readonly backed: Map<string, string>;
  readonly owners: Map<string, string>;
}

function setup(options: { readonly user?: FakeUser; readonly backupFails?: () => boolean; readonly afterWrite?: (path: string) => void; readonly bao?: FakeBao } = {}) {
  let now = T0;
  const clock = () => now;
  const keystone = new FakeKeystone(PREFIX, clock, options.user);
  const backups: string[] = [];
  const warnings: string[] = [];
  const backed = options.bao?.backed ?? new Map<string, string>();
  const owners = options.bao?.owners ?? new Map<string, string>();
  const provider = makeProvider({
    clock,
    // The backup's address and token from the environment only where a test backs up.
    env: options.backupFails || options.bao ? { ...env, BAO_ADDR: 'http://127.0.0.1:8200', BAO_TOKEN: 'not-in-state' } : env,
    keystone: () => ({ port: keystone, close: async () => undefined }),
    warn: async (message) => void warnings.push(message),
    backup: (settings) => ({
      read: async () => backed.get(settings.path),
      readOwner: async () => owners.get(settings.path),
      write: async (data) => {
        if (options.backupFails?.()) throw new Error('OpenBao PUT: no reply: connection refused');
        if (settings.owner !== undefined) owners.set(settings.path, settings.owner);
        backed.set(settings.path, data.application_credential_id);
        options.afterWrite?.(settings.path);
      },
      remove: async () => {
        backed.delete(settings.path);
        owners.delete(settings.path);
      },
    }),
  });
  const travel = (ms: number) => {
    now = new Date(now.getTime() + ms);
  };
  return { provider, keystone, travel, backups, clock, warnings, backed, owners };
}

const inputs = (extra: Partial<ProviderInputs> = {}): ProviderInputs => ({
  prefix: PREFIX,
  credentialGeneration: 1,
  rotation: { interval: '1h', gracePeriod: '20m' },
  ...extra,
});
const H = 3_600_000;
const M = 60_000;

describe('check', () => {
  const { provider } = setup();

  it('fills the CRD defaults', async () => {
    const { inputs: out, failures } = await provider.check({}, { prefix: PREFIX });
    expect(failures).toEqual([]);
    expect(out).toMatchObject({ credentialGeneration: 1, rotation: { interval: '720h', gracePeriod: '24h' } });
  });

  it('reports one failure per broken rule, on the resource, each naming the field, the value as written and the rule', async () => {
    const { failures } = await provider.check({}, { prefix: PREFIX, credentialGeneration: 0, rotation: { interval: '30s', gracePeriod: '-1s' } });
    expect(failures).toEqual([
      { property: '', reason: 'credentialGeneration (0): must be at least 1' },
      { property: '', reason: 'rotation.interval ("30s"): rotation.interval is 0s or at least 1m' },
      { property: '', reason: 'rotation.gracePeriod ("-1s"): rotation.gracePeriod is not negative' },
    ]);
  });

  it('never names a property: the engine would print its value as Go formats it ({map[...]}), a secret inside it in clear', async () => {
    const news = { prefix: PREFIX, credentialGeneration: 0, rotation: { interval: '30s' }, cloudName: '', connection: { authUrl: 'x', userName: '', password: '' } };
    const { failures } = await provider.check({}, news);
    expect(failures.length).toBeGreaterThan(4);
    for (const f of failures) expect(f.property).toBe('');
  });

  it('rejects a grace period not shorter than the interval', async () => {
    const { failures } = await provider.check({}, { prefix: PREFIX, rotation: { interval: '1h', gracePeriod: '2h' } });
    expect(failures).toEqual([{ property: '', reason: 'rotation.gracePeriod (2h) must be shorter than rotation.interval (1h)' }]);
  });

  it('lets credentialGeneration only increase', async () => {
    const { failures } = await provider.check({ credentialGeneration: 3 }, { prefix: PREFIX, credentialGeneration: 2 });
    expect(failures).toEqual([{ property: '', reason: 'credentialGeneration (2): credentialGeneration may only increase' }]);
  });

  it("tolerates preview's unknown values", async () => {
    const { failures, inputs: out } = await provider.check({}, { prefix: PREFIX, credentialGeneration: UNKNOWN, rotation: { interval: UNKNOWN, gracePeriod: '2h' } });
    expect(failures).toEqual([]);
    expect(out.credentialGeneration).toBe(UNKNOWN);
    expect((await provider.check({}, { prefix: PREFIX, rotation: UNKNOWN, connection: UNKNOWN })).failures).toEqual([]);
    // A connection with a field not known yet: the known fields are checked, the connection is not assembled yet.
    const bare = makeProvider({ env: {} });
    expect((await bare.check({}, { prefix: PREFIX, connection: { authUrl: UNKNOWN, userId: 'u', password: UNKNOWN, projectId: 'p' }, cloudName: UNKNOWN, backup: UNKNOWN })).failures).toEqual([]);
    expect((await bare.check({}, { prefix: PREFIX, connection: { authUrl: UNKNOWN, userId: ' ' } })).failures).toEqual([
      { property: '', reason: 'connection.userId (" "): must not be only whitespace' },
    ]);
  });

  it('reports a connection missing from the environment on the resource, without calling Keystone', async () => {
    const bare = makeProvider({ env: {} });
    const { failures } = await bare.check({}, { prefix: PREFIX });
    expect(failures).toEqual([{ property: '', reason: 'OS_* variables: the auth URL is missing (set OS_AUTH_URL or OS_CLOUD, or the connection input)' }]);
  });

  it('reports an incomplete connection input naming the field', async () => {
    const bare = makeProvider({ env: {} });
    const { failures } = await bare.check({}, { prefix: PREFIX, connection: { authUrl: 'https://k/v3', userId: 'u', projectId: 'p' } });
    expect(failures).toEqual([{ property: '', reason: 'connection: the password is missing (set connection.password)' }]);
  });

  it('refuses a rotation that is not an object, and a field rotation does not have, instead of ignoring them', async () => {
    expect((await provider.check({}, { prefix: PREFIX, rotation: '1h' })).failures).toEqual([
      { property: '', reason: 'rotation ("1h"): must be an object with the fields interval, gracePeriod' },
    ]);
    expect((await provider.check({}, { prefix: PREFIX, rotation: { interval: '48h', grace: '1h' } })).failures).toEqual([
      { property: '', reason: 'rotation.grace: is not a field of rotation (its fields: interval, gracePeriod)' },
    ]);
  });
});

describe('check: an input that cannot work fails, naming the field and the rule, never a secret', () => {
  const { provider } = setup();
  const valid = { authUrl: 'http://127.0.0.1:5000/v3', userName: 'svc', password: 'pw-not-in-state', projectName: 'proj' };
  const reasons = async (news: Record<string, unknown>, olds: Record<string, unknown> = {}): Promise<string[]> => {
    const { failures } = await provider.check(olds, { prefix: PREFIX, ...news });
    expect(failures.every((f) => f.property === '')).toBe(true);
    return failures.map((f) => f.reason);
  };

  it('the issue: an explicit empty userName fails check (it used to pass and fail at Keystone with 400)', async () => {
    expect(await reasons({ connection: { ...valid, userName: '' } })).toEqual(['connection.userName (""): must not be empty']);
  });

  const FIELDS: [string, number][] = [
    ['cloud', 255],
    ['authUrl', 2048],
    ['userName', 255],
    ['userId', 64],
    ['userDomainName', 64],
    ['userDomainId', 64],
    ['projectName', 64],
    ['projectId', 64],
    ['projectDomainName', 64],
    ['projectDomainId', 64],
    ['regionName', 255],
  ];
  it.each(FIELDS)('connection.%s: empty, whitespace-only and longer than %d characters each fail', async (field, max) => {
    expect(await reasons({ connection: { ...valid, [field]: '' } })).toEqual([`connection.${field} (""): must not be empty`]);
    expect(await reasons({ connection: { ...valid, [field]: ' \t ' } })).toEqual([`connection.${field} (" \\t "): must not be only whitespace`]);
    const long = `https://k/${'a'.repeat(max)}/v3`.slice(-(max + 1));
    const [reason] = await reasons({ connection: { ...valid, [field]: long } });
    expect(reason).toMatch(new RegExp(`^connection\\.${field} \\(${max + 1} characters\\): must be at most ${max} characters long \\(.+\\)$`));
    // One character less passes the length rule.
    expect((await reasons({ connection: { ...valid, [field]: long.slice(1) } })).filter((r) => r.includes('at most'))).toEqual([]);
  });

  it('connection.password: empty, whitespace-only, too long fail by its length, never its value', async () => {
    expect(await reasons({ connection: { ...valid, password: '' } })).toEqual(['connection.password (0 characters): must not be empty']);
    expect(await reasons({ connection: { ...valid, password: '   ' } })).toEqual(['connection.password (3 characters): must not be only whitespace']);
    const long = 'p'.repeat(4097);
    const all = await reasons({ connection: { ...valid, password: long } });
    expect(all).toEqual(["connection.password (4097 characters): must be at most 4096 characters long (Keystone's limit for passwords)"]);
    expect(all.join()).not.toContain('ppp');
    expect(await reasons({ connection: { ...valid, password: 'p'.repeat(4096) } })).toEqual([]);
  });

  it('connection.authUrl must be an http(s) URL ending in /v3; caBundle must hold valid PEM certificates', async () => {
    expect(await reasons({ connection: { ...valid, authUrl: 'keystone:5000' } })).toEqual(['connection.authUrl ("keystone:5000"): must be an http or https URL ending in /v3']);
    expect(await reasons({ connection: { ...valid, authUrl: 'https://k.example/identity' } })).toEqual(['connection.authUrl ("https://k.example/identity"): must end in /v3 (the identity API v3 endpoint)']);
    expect(await reasons({ connection: { ...valid, authUrl: 'https://k.example/identity/v3/' } })).toEqual([]);
    expect(await reasons({ connection: { ...valid, caBundle: 'not a certificate' } })).toEqual(['connection.caBundle ("not a certificate"): must hold PEM certificates (-----BEGIN CERTIFICATE-----)']);
    expect(await reasons({ connection: { ...valid, caBundle: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' } })).toEqual([
      'connection.caBundle ("-----BEGIN CERTIFICATE-----\\nAAAA\\n-----END CERTIFICATE-----\\n"): must hold PEM certificates: certificate 1 of 1 is not a valid X.509 certificate',
    ]);
  });

  it('every bad connection field at once: one failure each', async () => {
    const all = await reasons({ connection: { cloud: '', authUrl: ' ', userName: '', userId: '', userDomainName: ' ', userDomainId: '', password: '', projectName: '', projectId: '', projectDomainName: '', projectDomainId: ' ', caBundle: '', regionName: '' } });
    expect(all.map((r) => r.split(' ')[0])).toEqual([
      'connection.cloud',
      'connection.authUrl',
      'connection.userName',
      'connection.userId',
      'connection.userDomainName',
      'connection.userDomainId',
      'connection.password',
      'connection.projectName',
      'connection.projectId',
      'connection.projectDomainName',
      'connection.projectDomainId',
      'connection.caBundle',
      'connection.regionName',
    ]);
  });

  it('a field connection does not have, a value that is no string, a connection that is no object', async () => {
    expect(await reasons({ connection: { ...valid, username: 'svc' } })).toEqual([expect.stringMatching(/^connection\.username: is not a field of connection \(its fields: cloud, authUrl, userName/)]);
    expect(await reasons({ connection: { ...valid, projectId: 7 } })).toEqual(['connection.projectId (7): must be a string']);
    expect(await reasons({ connection: { ...valid, password: 7 } })).toEqual(['connection.password (number): must be a string']);
    expect(await reasons({ connection: 'prod' })).toEqual([expect.stringMatching(/^connection: must be an object with the fields cloud, authUrl/)]);
  });

  it('the environment: a variable that is only whitespace or too long fails naming the variable; an empty one is unset, as for OpenStack clients', async () => {
    const check = (env: Record<string, string>) => makeProvider({ env }).check({}, { prefix: PREFIX }).then((r) => r.failures.map((f) => f.reason));
    const base = { OS_AUTH_URL: 'http://127.0.0.1:5000/v3', OS_USERNAME: 'svc', OS_PASSWORD: 'pw-not-in-state', OS_PROJECT_NAME: 'proj' };
    expect(await check(base)).toEqual([]);
    expect(await check({ ...base, OS_USERNAME: '  ' })).toEqual(['OS_* variables: OS_USERNAME ("  "): must not be only whitespace']);
    expect(await check({ ...base, OS_TENANT_NAME: 'x'.repeat(65), OS_PROJECT_NAME: '' })).toEqual([
      "OS_* variables: OS_TENANT_NAME (65 characters): must be at most 64 characters long (Keystone's limit for project names)",
    ]);
    expect(await check({ ...base, OS_PASSWORD: ' ' })).toEqual(['OS_* variables: OS_PASSWORD (1 characters): must not be only whitespace']);
    expect(await check({ ...base, OS_USERNAME: '' })).toEqual(['OS_* variables: the user is missing (set OS_USERNAME or OS_USER_ID)']);
    expect(await check({ ...base, OS_CACERT: '/nonexistent/ca.pem' })).toEqual(['OS_* variables: OS_CACERT ("/nonexistent/ca.pem") cannot be read: ENOENT']);
  });

  it('durations: empty, whitespace-only and longer than the CRD allows (64 characters) fail', async () => {
    expect(await reasons({ rotation: { interval: '', gracePeriod: ' ' } })).toEqual([
      'rotation.interval (""): is not a duration: it is empty',
      'rotation.gracePeriod (" "): is not a duration: expected a number like 720h, 1h30m or 300ms',
    ]);
    const long = `${'0'.repeat(62)}48h`;
    expect(await reasons({ rotation: { interval: long } })).toEqual([`rotation.interval (${JSON.stringify(long)}): must be at most 64 characters long`]);
    expect(await reasons({ rotation: { interval: long.slice(1) } })).toEqual([]);
  });

  it('cloudName: empty, whitespace-only, longer than 255 characters', async () => {
    expect(await reasons({ cloudName: '' })).toEqual(['cloudName (""): must not be empty']);
    expect(await reasons({ cloudName: '  ' })).toEqual(['cloudName ("  "): must not be only whitespace']);
    expect(await reasons({ cloudName: 'c'.repeat(256) })).toEqual(['cloudName (256 characters): must be at most 255 characters long (the limit of a cloud name)']);
    expect(await reasons({ cloudName: 'c'.repeat(255) })).toEqual([]);
  });

  it('backup: every field empty or whitespace-only fails, the token by its length; address and token must be set somewhere; the limits are OpenBao\'s', async () => {
    const backup = { address: 'http://127.0.0.1:8200', token: 'bao-token-not-in-state' };
    expect(await reasons({ backup })).toEqual([]);
    expect(await reasons({ backup: { address: '', token: ' ', mount: '', path: '  ', namespace: '' } })).toEqual([
      'backup.address (""): must not be empty',
      'backup.token (1 characters): must not be only whitespace',
      'backup.mount (""): must not be empty',
      'backup.path ("  "): must not be only whitespace',
      'backup.namespace (""): must not be empty',
    ]);
    expect(await reasons({ backup: { ...backup, mount: '/', address: 'bao:8200' } })).toEqual([
      'backup.address ("bao:8200"): must be an http or https URL',
      'backup.mount ("/"): must name a path, not only slashes',
    ]);
    expect(await reasons({ backup: { ...backup, token: 't'.repeat(1024 * 1024 + 1) } })).toEqual([
      "backup.token (1048577 characters): must be at most 1048576 characters long (OpenBao's limit for a request's header lines)",
    ]);
    // `{}` takes address and token from the environment: without them, preview fails instead of up.
    expect(await reasons({ backup: {} })).toEqual(['backup.address is not set and neither is BAO_ADDR (or VAULT_ADDR)', 'backup.token is not set and neither is BAO_TOKEN (or VAULT_TOKEN)']);
    const withEnv = makeProvider({ env: { ...env, BAO_ADDR: 'http://127.0.0.1:8200', VAULT_TOKEN: '  ' } });
    expect((await withEnv.check({}, { prefix: PREFIX, backup: {} })).failures.map((f) => f.reason)).toEqual(['VAULT_TOKEN (2 characters): must not be only whitespace']);
  });
});

describe('the lifecycle through create, diff, update, read, delete', () => {
  it('mints generation 1, then reports no change until the schedule is due', async () => {
    const { provider, keystone, travel } = setup();
    const { id, outs } = await provider.create(inputs());
    expect(id).toBe(PREFIX);
    expect(outs).toMatchObject({ credentialGeneration: 1, credentialId: 'id-1', lastRotation: '2026-12-01T00:00:00Z', nextRotation: '2026-12-01T01:00:00Z' });
    expect(outs.cloudsYaml).toContain('application_credential_id: id-1');
    expect(keystone.authenticates(outs.credentialId, outs.credentialSecret)).toBe(true);
    expect(JSON.stringify(outs)).not.toContain('pw-not-in-state');
    expect(Object.values(outs)).not.toContain(undefined);

    const writes = keystone.writes.length;
    expect((await provider.diff(id, outs, inputs())).changes).toBe(false);
    travel(59 * M);
    expect((await provider.diff(id, outs, inputs())).changes).toBe(false);
    travel(M);
    expect((await provider.diff(id, outs, inputs())).changes).toBe(true);
    expect(keystone.writes.length).toBe(writes);
  });

  it('rotates on update when due, keeps both during grace, sweeps after it, keeps the id', async () => {
    const { provider, keystone, travel } = setup();
    const { id, outs: g1 } = await provider.create(inputs());
    travel(H);
    const { outs: g2 } = await provider.update(id, g1, inputs());
    expect(g2).toMatchObject({ credentialGeneration: 2, previousCredentialId: g1.credentialId, previousCredentialGeneration: 1, previousCredentialDeleteAt: '2026-12-01T01:20:00Z' });
    expect(keystone.authenticates(g1.credentialId, g1.credentialSecret)).toBe(true);
    expect(keystone.authenticates(g2.credentialId, g2.credentialSecret)).toBe(true);
    expect((await provider.diff(id, g2, inputs())).changes).toBe(false);
    travel(20 * M);
    expect((await provider.diff(id, g2, inputs())).changes).toBe(true);
    const { outs: swept } = await provider.update(id, g2, inputs());
    expect(swept.previousCredentialId).toBeUndefined();
    expect(swept.credentialId).toBe(g2.credentialId);
    expect(keystone.credentials.has(g1.credentialId as string)).toBe(false);
  });

  it('rotates at once when credentialGeneration is raised above the live one', async () => {
    const { provider } = setup();
    const { id, outs } = await provider.create(inputs());
    expect((await provider.diff(id, outs, inputs({ credentialGeneration: 3 }))).changes).toBe(true);
    const { outs: g3 } = await provider.update(id, outs, inputs({ credentialGeneration: 3 }));
    expect(g3.credentialGeneration).toBe(3);
  });

  it('reports an update when an echoed input changes (new nextRotation, no Keystone write)', async () => {
    const { provider, keystone } = setup();
    const { id, outs } = await provider.create(inputs());
    const shorter = inputs({ rotation: { interval: '30m', gracePeriod: '10m' } });
    expect((await provider.diff(id, outs, shorter)).changes).toBe(true);
    const writes = keystone.writes.length;
    const { outs: next } = await provider.update(id, outs, shorter);
    expect(next.credentialGeneration).toBe(1);
    expect(next.nextRotation).toBe('2026-12-01T00:30:00Z');
    expect(keystone.writes.length).toBe(writes);
  });

  it('re-renders a document missing from the state without a Keystone write, keeping the parked secret', async () => {
    const { provider, keystone } = setup();
    const { id, outs } = await provider.create(inputs());
    const withoutDocument: ProviderOutputs = { ...outs };
    delete (withoutDocument as { cloudsYaml?: string }).cloudsYaml;
    expect((await provider.diff(id, withoutDocument, inputs())).changes).toBe(true);
    const writes = keystone.writes.length;
    const { outs: repaired } = await provider.update(id, withoutDocument, inputs());
    expect(repaired.cloudsYaml).toBe(outs.cloudsYaml);
    expect(repaired.credentialSecret).toBe(outs.credentialSecret);
    expect(keystone.writes.length).toBe(writes);
  });

  it('notices on read a live credential deleted out of band; the next diff and update rotate', async () => {
    const { provider, keystone } = setup();
    const { id, outs } = await provider.create(inputs());
    await keystone.delete(outs.credentialId as string);
    const { props } = await provider.read(id, outs);
    expect(props.credentialId).toBeUndefined();
    expect((await provider.diff(id, props, inputs())).changes).toBe(true);
    const { outs: next } = await provider.update(id, props, inputs());
    expect(next.credentialGeneration).toBe(2);
    expect(keystone.authenticates(next.credentialId, next.credentialSecret)).toBe(true);
  });

  it('deletes every generation on delete; an already-deleted one is fine', async () => {
    const { provider, keystone, travel } = setup();
    const { id, outs } = await provider.create(inputs());
    travel(H);
    const { outs: g2 } = await provider.update(id, outs, inputs());
    await keystone.delete(g2.previousCredentialId as string);
    await provider.delete(id, g2);
    expect(keystone.credentials.size).toBe(0);
  });

  it('an update killed after the create leaks nothing: from the state before it, the next update deletes the successor (its by the owner mark) whose secret was lost and re-creates it', async () => {
    const { provider, keystone, travel } = setup();
    const { id, outs } = await provider.create(inputs());
    travel(H);
    // Keystone creates the successor, but the reply is lost: the secret parked in memory is gone with the failed update.
    let created = 0;
    keystone.fault = (call) => {
      if (call === 'create-after' && ++created === 1) throw new Error('connection reset');
    };
    await expect(provider.update(id, outs, inputs())).rejects.toThrow('connection reset');
    expect(keystone.credentials.size).toBe(2);
    keystone.fault = () => undefined;
    const { outs: next } = await provider.update(id, outs, inputs());
    expect(next.credentialGeneration).toBe(2);
    expect(keystone.credentials.size).toBe(2);
    expect(keystone.authenticates(next.credentialId, next.credentialSecret)).toBe(true);
    expect(keystone.authenticates(outs.credentialId, outs.credentialSecret)).toBe(true);
  });

  it('a failure after the switch hands Pulumi the switched state as partial outputs', async () => {
    const { provider, keystone, travel } = setup();
    // With a grace period of 0s the sweep follows the switch in the same update; the sweep's delete fails.
    const { id, outs } = await provider.create(inputs({ rotation: { interval: '1h', gracePeriod: '0s' } }));
    travel(H);
    keystone.fault = (call) => {
      if (call === 'delete') throw new Error('connection reset');
    };
    const error = (await provider.update(id, outs, inputs({ rotation: { interval: '1h', gracePeriod: '0s' } })).catch((e: unknown) => e)) as { id?: string; properties?: ProviderOutputs };
    expect(error.id).toBe(id);
    expect(error.properties).toMatchObject({ credentialGeneration: 2, previousCredentialGeneration: 1 });
    expect(keystone.authenticates(error.properties?.credentialId, error.properties?.credentialSecret)).toBe(true);
  });
});

describe('a failed up keeps what is true in the world, and only that', () => {
  it('a run that changed nothing (Keystone refuses the login) is a plain error: Pulumi keeps the previous state whole', async () => {
    const { provider, keystone, travel } = setup();
    const { id, outs } = await provider.create(inputs());
    travel(H);
    keystone.fault = (call) => {
      if (call === 'list') throw new Error('Keystone POST /v3/auth/tokens: 401 Unauthorized: The request you have made requires authentication.');
    };
    const error = (await provider.update(id, outs, inputs({ connection: { authUrl: 'http://127.0.0.1:5000/v3', userName: 'svc', password: 'wrong', projectName: 'proj' } })).catch((e: unknown) => e)) as Error & { properties?: unknown };
    expect(error.message).toContain('401');
    expect(error.properties).toBeUndefined();
    expect(keystone.writes).toEqual(['create app-1234abcd-applicationcredential-credential-v1']);
  });

  it('a rotation that fails after the successor exists records the successor (not the new inputs); the next up switches to it without a second create', async () => {
    let failing = true;
    const { provider, keystone, travel, backed } = setup({ backupFails: () => failing });
    failing = false;
    const { id, outs } = await provider.create(inputs({ backup: {} }));
    failing = true;
    travel(H);
    const news = inputs({ backup: {}, cloudName: 'renamed' });
    const error = (await provider.update(id, outs, news).catch((e: unknown) => e)) as { id?: string; properties?: ProviderOutputs; message: string };
    expect(error.message).toContain('OpenBao');
    const partial = error.properties as ProviderOutputs;
    expect(partial).toMatchObject({ credentialGeneration: 1, credentialId: outs.credentialId, successorGeneration: 2, owner: outs.owner });
    expect(partial.cloudName).toBeUndefined(); // the new input did not take effect
    expect(partial.cloudsYaml).toBe(outs.cloudsYaml);
    expect(keystone.authenticates(partial.successorCredentialId, partial.successorSecret)).toBe(true);
    expect(keystone.writes.filter((w) => w.startsWith('create'))).toHaveLength(2);
    // The next up, from the partial state: the successor is switched to; nothing is created again.
    failing = false;
    const { outs: next } = await provider.update(id, partial, news);
    expect(keystone.writes.filter((w) => w.startsWith('create'))).toHaveLength(2);
    expect(next).toMatchObject({ credentialGeneration: 2, credentialId: partial.successorCredentialId, credentialSecret: partial.successorSecret, previousCredentialGeneration: 1, cloudName: 'renamed' });
    expect(next.successorGeneration).toBeUndefined();
    expect([...backed.values()]).toEqual([next.credentialId]);
  });

  it('diff from a partial state with a successor asks for an update; destroy from it deletes the successor too', async () => {
    let failing = false;
    const { provider, keystone, travel } = setup({ backupFails: () => failing });
    const { id, outs } = await provider.create(inputs({ backup: {} }));
    travel(H);
    failing = true;
    const { properties } = (await provider.update(id, outs, inputs({ backup: {} })).catch((e: unknown) => e)) as { properties: ProviderOutputs };
    expect((await provider.diff(id, properties, inputs({ backup: {} }))).changes).toBe(true);
    failing = false;
    await provider.delete(id, properties);
    expect(keystone.credentials.size).toBe(0);
  });

  it("a failed create's and a failed update's partial state keep the dynamic-provider host's __provider, so refresh and destroy can load the provider from it (issue 39)", async () => {
    let failing = true;
    const { provider } = setup({ backupFails: () => failing });
    const host = { __provider: 'exports.handler = __f0; /* the serialized provider */' };
    const created = (await provider.create({ ...inputs({ backup: {} }), ...host } as ProviderInputs).catch((e: unknown) => e)) as { properties?: Record<string, unknown> };
    expect(created.properties?.__provider).toBe(host.__provider);
    failing = false;
    const { outs } = await provider.create(inputs({ backup: {} }));
    failing = true;
    const updated = (await provider.update(PREFIX, outs, { ...inputs({ backup: {}, credentialGeneration: 2 }), ...host } as ProviderInputs).catch((e: unknown) => e)) as { properties?: Record<string, unknown> };
    expect(updated.properties?.__provider).toBe(host.__provider);
    expect(updated.properties?.successorGeneration).toBe(2);
  });

  it('a create that fails after the mint records its inputs and the minted generation; the next up delivers it', async () => {
    let failing = true;
    const { provider, keystone } = setup({ backupFails: () => failing });
    const error = (await provider.create(inputs({ backup: {} })).catch((e: unknown) => e)) as { id?: string; properties?: ProviderOutputs };
    expect(error.id).toBe(PREFIX);
    expect(error.properties).toMatchObject({ prefix: PREFIX, successorGeneration: 1, backup: {} });
    expect(error.properties?.credentialId).toBeUndefined();
    failing = false;
    const { outs } = await provider.update(PREFIX, error.properties as ProviderOutputs, inputs({ backup: {} }));
    expect(outs.credentialGeneration).toBe(1);
    expect(keystone.writes.filter((w) => w.startsWith('create'))).toHaveLength(1);
    expect(keystone.authenticates(outs.credentialId, outs.credentialSecret)).toBe(true);
  });
});

describe('an explicit backup.path two stacks share (issue 39)', () => {
  const PATH = 'shared/app';
  const withPath = (extra: Partial<ProviderInputs> = {}) => inputs({ backup: { path: PATH }, ...extra });
  /** The checked inputs of a create, as the engine records them before Create (the owner drawn by check). */
  const checkedCreate = async (p: ReturnType<typeof setup>['provider']) => {
    const checked = await p.check({}, { prefix: PREFIX, backup: { path: PATH }, rotation: { interval: '1h', gracePeriod: '20m' } });
    return checked;
  };

  it("the second stack's preview and up are refused naming the path and the fix; the first's credential and backup are untouched; its destroy leaves the first's document", async () => {
    const user = new FakeUser();
    const bao: FakeBao = { backed: new Map(), owners: new Map() };
    const a = setup({ user, bao });
    const b = setup({ user, bao });
    const aChecked = await checkedCreate(a.provider);
    expect(aChecked.failures).toEqual([]);
    const ca = await a.provider.create(aChecked.inputs as unknown as ProviderInputs);
    expect(bao.backed.get(PATH)).toBe(ca.outs.credentialId);
    expect(bao.owners.get(PATH)).toBe(ca.outs.owner);
    // B: preview (check) refuses, naming the path, whose it is and the fix; no Keystone call.
    const bChecked = await checkedCreate(b.provider);
    expect(bChecked.failures).toHaveLength(1);
    const reason = bChecked.failures[0]?.reason ?? '';
    expect(reason).toContain(`backup.path ("${PATH}", mount "openstack") holds the backup of owner ${ca.outs.owner}`);
    expect(reason).toContain('Give this resource a backup.path of its own, or leave backup.path unset');
    // An up that got past the check anyway fails before anything is created or written.
    const writes = b.keystone.writes.length;
    await expect(b.provider.create(bChecked.inputs as unknown as ProviderInputs)).rejects.toThrow(`holds the backup of owner ${ca.outs.owner}`);
    expect(b.keystone.writes.length).toBe(writes);
    expect(bao.backed.get(PATH)).toBe(ca.outs.credentialId);
    expect(a.keystone.authenticates(ca.outs.credentialId, ca.outs.credentialSecret)).toBe(true);
    // A rotates on: its path is its own.
    a.travel(H);
    const ua = await a.provider.update(ca.id, ca.outs, withPath({ owner: ca.outs.owner }));
    expect(ua.outs.credentialGeneration).toBe(2);
    expect(bao.backed.get(PATH)).toBe(ua.outs.credentialId);
    // B, given its own path, works; pointed back at A's, its destroy deletes its own credentials and leaves A's document.
    const own = await b.provider.create({ ...(bChecked.inputs as unknown as ProviderInputs), backup: { path: 'b/app' } });
    await b.provider.delete(own.id, { ...own.outs, backup: { path: PATH } });
    expect(b.warnings.join('\n')).toContain('destroyed; the backup was left alone');
    expect(bao.backed.get(PATH)).toBe(ua.outs.credentialId);
    expect(user.credentials.has(own.outs.credentialId as string)).toBe(false);
    expect(a.keystone.authenticates(ua.outs.credentialId, ua.outs.credentialSecret)).toBe(true);
  });

  it('a document written before owners (no owner in its metadata) is the resource\'s while its credential is the one the state records; any other is refused', async () => {
    const bao: FakeBao = { backed: new Map(), owners: new Map() };
    const a = setup({ bao });
    const ca = await a.provider.create((await checkedCreate(a.provider)).inputs as unknown as ProviderInputs);
    bao.owners.delete(PATH); // as an earlier build wrote it
    a.travel(H);
    const ua = await a.provider.update(ca.id, ca.outs, withPath());
    expect(ua.outs.credentialGeneration).toBe(2);
    expect(bao.owners.get(PATH)).toBe(ca.outs.owner); // claimed with the next document
    bao.owners.delete(PATH);
    bao.backed.set(PATH, 'somebody-elses');
    a.travel(H);
    await expect(a.provider.update(ca.id, ua.outs, withPath())).rejects.toThrow('holds a document this resource did not write (credential somebody-elses)');
  });
});

describe('two stacks ordering the same names for one Keystone user (two backends)', () => {
  it('each mints, rotates, sweeps and destroys only its own; the other\'s credential works throughout; the second is warned', async () => {
    const user = new FakeUser();
    const a = setup({ user });
    const b = setup({ user });
    const both = (ms: number) => (a.travel(ms), b.travel(ms));
    const ca = await a.provider.create(inputs());
    const cb = await b.provider.create(inputs());
    expect(cb.outs.owner).not.toBe(ca.outs.owner);
    expect(user.credentials.get(cb.outs.credentialId as string)?.name).toBe(alternateCredentialName(PREFIX, 1, cb.outs.owner as string));
    expect(b.warnings.join('\n')).toContain(ca.outs.credentialId as string);
    expect(a.warnings).toEqual([]);
    let sa = ca.outs;
    let sb = cb.outs;
    for (let i = 0; i < 6; i++) {
      both(30 * M);
      if ((await a.provider.diff(PREFIX, sa, inputs())).changes) sa = (await a.provider.update(PREFIX, sa, inputs())).outs;
      expect(b.keystone.authenticates(sb.credentialId, sb.credentialSecret)).toBe(true);
      if ((await b.provider.diff(PREFIX, sb, inputs())).changes) sb = (await b.provider.update(PREFIX, sb, inputs())).outs;
      expect(a.keystone.authenticates(sa.credentialId, sa.credentialSecret)).toBe(true);
    }
    expect(sa.credentialGeneration).toBeGreaterThanOrEqual(3);
    expect(sb.credentialGeneration).toBeGreaterThanOrEqual(3);
    // A refresh of one sees its own credential; the other's under the same names changes nothing.
    expect((await b.provider.read(PREFIX, sb)).props.credentialId).toBe(sb.credentialId);
    await a.provider.delete(PREFIX, sa);
    expect(b.keystone.authenticates(sb.credentialId, sb.credentialSecret)).toBe(true);
    expect([...user.credentials.values()].every((c) => c.description?.includes(`owner=${sb.owner as string}`))).toBe(true);
    await b.provider.delete(PREFIX, sb);
    expect(user.credentials.size).toBe(0);
  });
});

describe('worldOf', () => {
  it('takes the state as the world', () => {
    const w = worldOf({ credentialGeneration: 2, credentialId: 'b', credentialSecret: 's', cloudsYaml: 'y', previousCredentialGeneration: 1, previousCredentialId: 'a' }, true);
    expect(w.generations.map((g) => [g.generation, g.parked, g.credential?.id])).toEqual([
      [1, false, 'a'],
      [2, true, 'b'],
    ]);
    expect(w.backup).toEqual({ credentialId: 'b' });
    expect(w.delivery).toEqual({ state: 'delivered', credentialId: 'b', intact: true });
  });
});

describe('a stack keystone-appcred 0.1.0 created (no owner id; its backup at the path without one)', () => {
  const formerPath = `keystone/pulumi/${PREFIX}/service-accounts/application-credential`;
  /** A state as 0.1.0 left it: the current one without the owner id, its backup at the path without one. */
  async function fromOneZero(formerHolds?: string, afterWrite?: (path: string) => void) {
    const s = setup({ backupFails: () => false, ...(afterWrite ? { afterWrite } : {}) });
    const { id, outs } = await s.provider.create(inputs({ backup: {} }));
    const { owner, ...state } = outs;
    s.backed.clear();
    s.backed.set(formerPath, formerHolds ?? (outs.credentialId as string));
    return { ...s, id, state: state as ProviderOutputs, owner };
  }

  it('the first up after the upgrade changes nothing (no due rotation, no diff); the update that rotates writes the owner path and removes the 0.1.0 document, minting once', async () => {
    const { provider, keystone, travel, backed, id, state } = await fromOneZero();
    expect((await provider.diff(id, state, inputs({ backup: {} }))).changes).toBe(false);
    const creates = () => keystone.writes.filter((w) => w.startsWith('create')).length;
    expect(creates()).toBe(1);
    travel(H);
    const { outs } = await provider.update(id, state, inputs({ backup: {} }));
    expect(creates()).toBe(2);
    expect(outs.owner).toMatch(/^[0-9a-f-]{36}$/);
    expect([...backed.entries()]).toEqual([[`keystone/pulumi/${PREFIX}/${outs.owner}/service-accounts/application-credential`, outs.credentialId]]);
    // Destroy then leaves both paths empty.
    await provider.delete(id, outs);
    expect(backed.size).toBe(0);
  });

  it('a document at the 0.1.0 path the state does not record is left alone, with a warning', async () => {
    const { provider, travel, backed, id, state, warnings } = await fromOneZero('another-stacks-credential');
    travel(H);
    const { outs } = await provider.update(id, state, inputs({ backup: {} }));
    expect(backed.get(formerPath)).toBe('another-stacks-credential');
    expect(backed.get(`keystone/pulumi/${PREFIX}/${outs.owner}/service-accounts/application-credential`)).toBe(outs.credentialId);
    expect(warnings.some((w) => w.includes('another-stacks-credential') && w.includes('left alone'))).toBe(true);
  });

  it('an update killed right after the migration wrote the owner path (before any state was saved): the next update has the same owner, so that path is tracked, and destroy leaves nothing (issue 46, finding 7)', async () => {
    let killed: string | undefined;
    let armed = false;
    const { provider, travel, backed, keystone, id, state } = await fromOneZero(undefined, (path) => {
      if (!armed || killed !== undefined || path === formerPath) return;
      killed = path;
      throw new Error('SIGKILL'); // the process dies here: nothing the run knew reaches the state
    });
    armed = true;
    travel(H);
    await expect(provider.update(id, state, inputs({ backup: {} }))).rejects.toThrow('SIGKILL');
    expect(killed).toMatch(new RegExp(`^keystone/pulumi/${PREFIX}/[0-9a-f-]{36}/service-accounts/application-credential$`));
    // The next up runs from the state 0.1.0 left, as Pulumi kept it.
    const { outs } = await provider.update(id, state, inputs({ backup: {} }));
    expect(`keystone/pulumi/${PREFIX}/${outs.owner as string}/service-accounts/application-credential`).toBe(killed);
    expect([...backed.keys()]).toEqual([killed]);
    // The killed run's successor carries the same owner: the state's own (its secret was lost with the run: replaced);
    // every credential in Keystone is one the state tracks.
    expect([...keystone.credentials.keys()].sort()).toEqual([outs.credentialId, outs.previousCredentialId].sort());
    await provider.delete(id, outs);
    expect(backed.size).toBe(0);
    expect(keystone.credentials.size).toBe(0);
  });

  it('the owner of a state 0.1.0 wrote is its own, not guessable: a digest of its delivered secret, never that secret', async () => {
    const { provider, travel, id, state } = await fromOneZero();
    travel(H);
    const a = (await provider.update(id, state, inputs({ backup: {} }))).outs.owner as string;
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(a).not.toContain(state.credentialSecret as string);
    const other = await fromOneZero();
    other.travel(H);
    expect((await other.provider.update(other.id, other.state, inputs({ backup: {} }))).outs.owner).not.toBe(a);
  });

  it('destroy without an up between removes the 0.1.0 document (the state names no owner: its path is the one without)', async () => {
    const { provider, backed, id, state } = await fromOneZero();
    await provider.delete(id, state);
    expect(backed.size).toBe(0);
  });
});

describe('roles and accessRules (issue 42)', () => {
  const GET = { service: 'things', method: 'GET', path: '/v1/things/*' };

  it('preview refuses what can be checked without Keystone, naming field, value and rule, with no Keystone call', async () => {
    const { provider, keystone } = setup();
    const { failures } = await provider.check({}, { prefix: PREFIX, roles: ['member', 'member'], accessRules: [{ ...GET, method: 'FETCH', verb: 'x' }, { ...GET, path: 'v1' }] });
    expect(failures.map((f) => f.reason)).toEqual([
      'accessRules[0].verb: is not a field of an access rule (its fields: service, method, path)',
      'roles (["member","member"]): must not contain duplicates',
      'accessRules[0].method ("FETCH"): must be one of GET, HEAD, POST, PUT, PATCH, DELETE',
      expect.stringMatching(/^accessRules\[1\]\.path \("v1"\): accessRules\[\]\.path must begin with \//),
    ]);
    expect((await provider.check({}, { prefix: PREFIX, roles: [] })).failures).toEqual([{ property: '', reason: 'roles ([]): must have at least 1 item' }]);
    expect((await provider.check({}, { prefix: PREFIX, roles: UNKNOWN, accessRules: [UNKNOWN] })).failures).toEqual([]);
    expect(keystone.calls).toEqual([]);
  });

  it('a role subset and access rules are minted, marked and echoed; credentialRoles is what Keystone lists', async () => {
    const { provider, keystone } = setup();
    const { outs } = await provider.create(inputs({ roles: ['reader'], accessRules: [GET] }));
    expect(outs).toMatchObject({ roles: ['reader'], accessRules: [GET], credentialRoles: ['reader'] });
    expect(keystone.credentials.get(outs.credentialId as string)).toMatchObject({ roles: ['reader'], accessRules: [GET], description: expect.stringContaining('roles=subset') });
    const { outs: every } = await setup().provider.create(inputs());
    expect(every.credentialRoles).toEqual(['member', 'reader']);
    expect(every.roles).toBeUndefined();
  });

  it('a role the user does not hold fails up before anything is created (RoleNotAssigned), naming it and the roles held', async () => {
    const { provider, keystone } = setup();
    await expect(provider.create(inputs({ roles: ['reader', 'admin'] }))).rejects.toThrow(
      "RoleNotAssigned: roles names role admin, which the connection's user (OS_* variables) does not hold on its project (it holds: member, reader)",
    );
    expect(keystone.writes).toEqual([]);
  });

  it('a change rotates with the grace period; a change during a grace period waits for it (diff says nothing to do), then rotates', async () => {
    const { provider, keystone, travel } = setup();
    const { id, outs: g1 } = await provider.create(inputs());
    expect((await provider.diff(id, g1, inputs({ roles: ['reader'] }))).changes).toBe(true);
    const { outs: g2 } = await provider.update(id, g1, inputs({ roles: ['reader'] }));
    expect(g2).toMatchObject({ credentialGeneration: 2, roles: ['reader'], credentialRoles: ['reader'], previousCredentialGeneration: 1, previousCredentialDeleteAt: '2026-12-01T00:20:00Z' });
    expect(keystone.authenticates(g1.credentialId, g1.credentialSecret)).toBe(true);
    expect((await provider.diff(id, g2, inputs({ roles: ['reader'] }))).changes).toBe(false);
    // The rules change while generation 1's grace period runs: nothing to do until it ends (no Keystone call either).
    const calls = keystone.calls.length;
    expect((await provider.diff(id, g2, inputs({ roles: ['reader'], accessRules: [GET] }))).changes).toBe(false);
    expect(keystone.calls.length).toBe(calls);
    travel(20 * M);
    expect((await provider.diff(id, g2, inputs({ roles: ['reader'], accessRules: [GET] }))).changes).toBe(true);
    const { outs: g3 } = await provider.update(id, g2, inputs({ roles: ['reader'], accessRules: [GET] }));
    expect(g3).toMatchObject({ credentialGeneration: 3, roles: ['reader'], accessRules: [GET], previousCredentialGeneration: 2 });
    expect(keystone.credentials.has(g1.credentialId as string)).toBe(false);
    // Back to every role and no rules: a rotation again, once generation 2's grace period is over.
    travel(20 * M);
    const { outs: g4 } = await provider.update(id, g3, inputs());
    expect(g4).toMatchObject({ credentialGeneration: 4, credentialRoles: ['member', 'reader'] });
    expect(g4.roles).toBeUndefined();
    expect(g4.accessRules).toBeUndefined();
  });

  it('refresh reads what the delivered credential carries from Keystone', async () => {
    const { provider, keystone } = setup();
    const { id, outs } = await provider.create(inputs({ roles: ['reader'], accessRules: [GET] }));
    const stored = keystone.credentials.get(outs.credentialId as string);
    if (stored) stored.roles = ['reader', 'member']; // as Keystone lists it (another order)
    const { props } = await provider.read(id, { ...outs, credentialRoles: undefined, roles: undefined, accessRules: undefined });
    expect(props).toMatchObject({ credentialRoles: ['reader', 'member'], roles: ['reader', 'member'], accessRules: [GET] });
  });

  it('an up that cannot rotate yet records the delivered credential\'s privileges, not the new inputs', async () => {
    const { provider, travel } = setup();
    const { id, outs: g1 } = await provider.create(inputs());
    const { outs: g2 } = await provider.update(id, g1, inputs({ roles: ['reader'] }));
    travel(5 * M);
    const { outs: same } = await provider.update(id, g2, inputs({ roles: ['member'] }));
    expect(same).toMatchObject({ credentialGeneration: 2, roles: ['reader'] });
    travel(15 * M);
    expect((await provider.diff(id, same, inputs({ roles: ['member'] }))).changes).toBe(true);
  });
});
