/**
 * The provider plugin's adapter over a fake Keystone and a settable clock: the prefix from the URN (kept once in the
 * state), the engine's wire form of secrets and unknowns in and out, errors that name the resource, and the lifecycle
 * step by step beside the dynamic resource's verbs, which must decide the same thing at every step.
 */
import { FakeKeystone } from '../../support/fake-keystone';
import { UNKNOWN, makeProvider } from '../../../src/pulumi/provider-impl';
import { pulumiPrefix } from '../../../src/pulumi/prefix';
import { pluginProvider } from '../../../src/pulumi/plugin/provider';
import { APPLICATION_CREDENTIAL, INTERNAL_OUTPUTS, packageSchema } from '../../../src/pulumi/plugin/schema';
import { OUTPUT, SECRET, SIG, reveal } from '../../../src/pulumi/plugin/wire';
import { DEFAULT_CREDENTIAL_GENERATION, DEFAULT_GRACE_PERIOD, DEFAULT_INTERVAL } from '../../../src/api';
import { SECRET_OUTPUTS, STATUS_OUTPUTS } from '../../../src/pulumi/state';

type Loose = Record<string, unknown>;

const URN = `urn:pulumi:dev::proj::${APPLICATION_CREDENTIAL}::app`;
const PREFIX = pulumiPrefix({ project: 'proj', stack: 'dev', name: 'app', type: APPLICATION_CREDENTIAL });
const DYNAMIC_PREFIX = pulumiPrefix({ project: 'proj', stack: 'dev', name: 'app' });
const T0 = new Date('2026-12-01T00:00:00Z');
const H = 3_600_000;
const M = 60_000;
const env = { OS_AUTH_URL: 'http://127.0.0.1:5000/v3', OS_USERNAME: 'svc', OS_PASSWORD: 'pw-not-in-state', OS_PROJECT_NAME: 'proj' };
const secret = (value: unknown) => ({ [SIG]: SECRET, value });

function setup() {
  let now = T0;
  const clock = () => now;
  const keystone = new FakeKeystone(PREFIX, clock);
  const dynamicKeystone = new FakeKeystone(DYNAMIC_PREFIX, clock);
  const plugin = pluginProvider('1.2.3', { clock, env, keystone: () => ({ port: keystone, close: async () => undefined }) });
  const dynamic = makeProvider({ clock, env, keystone: () => ({ port: dynamicKeystone, close: async () => undefined }) });
  return { plugin, dynamic, keystone, dynamicKeystone, travel: (ms: number) => void (now = new Date(now.getTime() + ms)) };
}

/** Outputs with what must differ between two faces (ids, secrets, the prefix) replaced by what it is. */
function shape(outputs: Loose): Loose {
  const out: Loose = { ...reveal<Loose>(outputs) };
  for (const key of ['credentialId', 'previousCredentialId', 'credentialSecret', 'prefix', 'owner']) if (out[key] !== undefined) out[key] = typeof out[key];
  if (typeof out.cloudsYaml === 'string') out.cloudsYaml = out.cloudsYaml.includes('auth_type: v3applicationcredential');
  return out;
}

describe('the schema', () => {
  const schema = packageSchema('1.2.3');
  const resource = schema.resources[APPLICATION_CREDENTIAL];

  it('marks the secret, the document, the connection, the backup and their secret fields secret', () => {
    const secrets = Object.entries(resource.properties).filter(([, p]) => p.secret).map(([k]) => k);
    expect(secrets.sort()).toEqual(SECRET_OUTPUTS.filter((k) => !(INTERNAL_OUTPUTS as readonly string[]).includes(k)).sort());
    expect(resource.inputProperties.connection.secret).toBe(true);
    expect(resource.inputProperties.backup.secret).toBe(true);
    expect(schema.types['keystone-appcred:index:Connection'].properties.password.secret).toBe(true);
    expect(schema.types['keystone-appcred:index:Backup'].properties.token.secret).toBe(true);
  });

  it("states the CRD's defaults and types credentialGeneration and the rotation block", () => {
    expect(resource.inputProperties.credentialGeneration).toMatchObject({ type: 'integer', default: DEFAULT_CREDENTIAL_GENERATION });
    expect(resource.inputProperties.rotation.$ref).toBe('#/types/keystone-appcred:index:Rotation');
    expect(schema.types['keystone-appcred:index:Rotation'].properties).toMatchObject({
      interval: { type: 'string', default: DEFAULT_INTERVAL },
      gracePeriod: { type: 'string', default: DEFAULT_GRACE_PERIOD },
    });
  });

  it('has an output for every status field and the version it is given', () => {
    for (const key of STATUS_OUTPUTS) expect(resource.properties[key]?.description).toEqual(expect.any(String));
    expect(schema.version).toBe('1.2.3');
    for (const key of resource.required) expect(resource.properties).toHaveProperty(key);
  });
});

describe('check', () => {
  it('derives the prefix from the URN, distinct from a dynamic resource of the same name in the same stack', async () => {
    const { plugin } = setup();
    const { inputs, failures } = await plugin.check!(URN, {}, {});
    expect(failures).toEqual([]);
    expect(inputs).toMatchObject({ prefix: PREFIX, credentialGeneration: 1, rotation: { interval: '720h', gracePeriod: '24h' } });
    expect(PREFIX).toMatch(/^app-[0-9a-f]{8}-applicationcredential$/);
    expect(PREFIX).not.toBe(DYNAMIC_PREFIX);
  });

  it('keeps the prefix the state has, so a renamed resource (with an alias) keeps its credentials', async () => {
    const { plugin } = setup();
    const renamed = `urn:pulumi:dev::proj::${APPLICATION_CREDENTIAL}::renamed`;
    const { inputs } = await plugin.check!(renamed, { prefix: PREFIX, credentialGeneration: 1 }, {});
    expect(inputs.prefix).toBe(PREFIX);
  });

  it("reports the same failures as the dynamic resource's check, for secret and plain inputs alike", async () => {
    const { plugin, dynamic } = setup();
    const cases: Loose[] = [
      { credentialGeneration: 0 },
      { rotation: { interval: '30s', gracePeriod: '-1s' } },
      { rotation: { interval: '1h', gracePeriod: '2h' } },
      { rotation: { interval: '87601h' } },
      { connection: { authUrl: 'http://x/v3' } },
      { connection: { authUrl: 'http://x/v3', userName: '', password: 'pw', projectId: 'p' }, cloudName: ' ' },
      { backup: { address: 'http://127.0.0.1:8200', token: '' } },
    ];
    for (const news of cases) {
      const expected = (await dynamic.check({}, { ...news, prefix: PREFIX })).failures;
      expect(expected.length).toBeGreaterThan(0);
      expect((await plugin.check!(URN, {}, news)).failures).toEqual(expected);
      const wrapped = Object.fromEntries(Object.entries(news).map(([k, v]) => [k, secret(v)]));
      expect((await plugin.check!(URN, {}, wrapped)).failures).toEqual(expected);
    }
    expect((await plugin.check!(URN, { credentialGeneration: 3, prefix: PREFIX }, { credentialGeneration: 2 })).failures).toEqual([
      { property: '', reason: 'credentialGeneration (2): credentialGeneration may only increase' },
    ]);
  });

  it('returns the connection, the backup and every input that came secret as secrets', async () => {
    const { plugin } = setup();
    const connection = { authUrl: 'http://127.0.0.1:5000/v3', userId: 'u', password: secret('pw'), projectId: 'p' };
    const { inputs } = await plugin.check!(URN, {}, { connection, backup: {}, cloudName: secret('mine') });
    expect(inputs.connection).toEqual(secret({ ...connection, password: 'pw' }));
    expect(inputs.backup).toEqual(secret({}));
    expect(inputs.cloudName).toEqual(secret('mine'));
    expect(inputs.rotation).toEqual({ interval: '720h', gracePeriod: '24h' });
  });

  it("tolerates preview's unknowns, as bare values and as output values without a value", async () => {
    const { plugin } = setup();
    const { failures, inputs } = await plugin.check!(URN, {}, { credentialGeneration: UNKNOWN, rotation: { interval: { [SIG]: OUTPUT, secret: false }, gracePeriod: '2h' } });
    expect(failures).toEqual([]);
    expect(inputs.credentialGeneration).toBe(UNKNOWN);
  });

  it('refuses another resource type', async () => {
    const { plugin } = setup();
    await expect(plugin.check!('urn:pulumi:dev::proj::keystone-appcred:index:Other::x', {}, {})).rejects.toThrow(/no resource type keystone-appcred:index:Other/);
  });
});

describe('the lifecycle beside the dynamic resource', () => {
  it('decides the same at every step: mint, not due, rotate, grace, sweep, refresh after a delete, raise, destroy', async () => {
    const { plugin, dynamic, keystone, dynamicKeystone, travel } = setup();
    const news = { rotation: { interval: '1h', gracePeriod: '20m' } };
    const checked = (await plugin.check!(URN, {}, news)).inputs as Loose;
    const dynamicInputs = (await dynamic.check({}, { ...news, prefix: DYNAMIC_PREFIX })).inputs as never;

    const created = await plugin.create!(URN, checked);
    const dynamicCreated = await dynamic.create(dynamicInputs);
    expect(created.id).toBe(PREFIX);
    // The secret and the document leave as secrets; the engine stores them encrypted.
    expect(created.outs.credentialSecret).toEqual(secret(expect.any(String)));
    expect(created.outs.cloudsYaml).toEqual(secret(expect.stringContaining('v3applicationcredential')));
    expect(created.outs.rotation).toEqual({ interval: '1h', gracePeriod: '20m' });
    expect(shape(created.outs)).toEqual(shape(dynamicCreated.outs as unknown as Loose));

    let state: Loose = created.outs;
    let dynamicState = dynamicCreated.outs;
    const step = async () => {
      const diff = await plugin.diff!(PREFIX, URN, state, checked);
      const dynamicDiff = await dynamic.diff(DYNAMIC_PREFIX, dynamicState, dynamicInputs);
      expect({ ...diff, replaces: diff.replaces ?? [] }).toEqual(dynamicDiff);
      if (diff.changes) {
        state = (await plugin.update!(PREFIX, URN, state, checked)).outs;
        dynamicState = (await dynamic.update(DYNAMIC_PREFIX, dynamicState, dynamicInputs)).outs;
      }
      expect(shape(state)).toEqual(shape(dynamicState as unknown as Loose));
      return diff.changes;
    };

    expect(await step()).toBe(false); // not due
    travel(61 * M);
    expect(await step()).toBe(true); // rotates
    expect(reveal<Loose>(state)).toMatchObject({ credentialGeneration: 2, previousCredentialGeneration: 1 });
    expect(keystone.credentials.size).toBe(2);
    travel(21 * M);
    expect(await step()).toBe(true); // sweeps
    expect(reveal<Loose>(state).previousCredentialId).toBeUndefined();
    expect(keystone.credentials.size).toBe(1);

    // An out-of-band delete, noticed by refresh (read), then minted again.
    keystone.credentials.clear();
    dynamicKeystone.credentials.clear();
    const read = await plugin.read!(PREFIX, URN, state);
    const dynamicRead = await dynamic.read(DYNAMIC_PREFIX, dynamicState);
    expect(read.id).toBe(PREFIX);
    expect(reveal<Loose>(read.props).credentialId).toBeUndefined();
    expect((read.props as Loose).credentialSecret).toEqual(secret(expect.any(String)));
    state = read.props as Loose;
    dynamicState = dynamicRead.props;
    expect(await step()).toBe(true);
    expect(reveal<Loose>(state).credentialGeneration).toBe(3);

    // Raising credentialGeneration rotates at once.
    const raised = (await plugin.check!(URN, checked, { ...news, credentialGeneration: 5 })).inputs as Loose;
    expect(raised.prefix).toBe(PREFIX);
    expect((await plugin.diff!(PREFIX, URN, state, raised)).changes).toBe(true);
    state = (await plugin.update!(PREFIX, URN, state, raised)).outs;
    expect(reveal<Loose>(state)).toMatchObject({ credentialGeneration: 5, previousCredentialGeneration: 3 });

    await plugin.delete!(PREFIX, URN, state);
    expect(keystone.credentials.size).toBe(0);
  });

  it('hands a failure after the switch to the engine with the switched outputs, secrets wrapped, naming the resource', async () => {
    const { plugin, keystone, travel } = setup();
    // With a grace period of 0s the sweep follows the switch in the same update; the sweep's delete fails.
    const checked = (await plugin.check!(URN, {}, { rotation: { interval: '1h', gracePeriod: '0s' } })).inputs as Loose;
    const { outs } = await plugin.create!(URN, checked);
    travel(H);
    keystone.fault = (call) => {
      if (call === 'delete') throw new Error('503 Service Unavailable');
    };
    const error = (await plugin.update!(PREFIX, URN, outs, checked).catch((e: unknown) => e)) as Error & { id?: string; properties?: Loose };
    expect(error.message).toBe(`${APPLICATION_CREDENTIAL} resource 'app': delete generation 1 failed: 503 Service Unavailable`);
    expect(error.id).toBe(PREFIX);
    expect(reveal<Loose>(error.properties)).toMatchObject({ credentialGeneration: 2, previousCredentialGeneration: 1 });
    expect(error.properties?.credentialSecret).toEqual(secret(expect.any(String)));
    expect(JSON.stringify(error.message)).not.toContain(reveal<string>(error.properties?.credentialSecret));
  });

  it('refuses an import: there is no state to read the secret from', async () => {
    const { plugin } = setup();
    await expect(plugin.read!('some-id', URN, {})).rejects.toThrow(
      `${APPLICATION_CREDENTIAL} resource 'app': cannot import "some-id": Keystone never shows an application credential's secret again`,
    );
  });

  it('keeps a secret output secret after read and update when only its input was secret', async () => {
    const { plugin, travel } = setup();
    const checked = (await plugin.check!(URN, {}, { rotation: { interval: '1h', gracePeriod: '20m' }, cloudName: secret('mine') })).inputs as Loose;
    const { outs } = await plugin.create!(URN, checked);
    expect(outs.cloudName).toEqual(secret('mine'));
    travel(2 * H);
    const { outs: updated } = await plugin.update!(PREFIX, URN, outs, checked);
    expect(updated.cloudName).toEqual(secret('mine'));
    expect((await plugin.read!(PREFIX, URN, updated)).props.cloudName).toEqual(secret('mine'));
  });
});
