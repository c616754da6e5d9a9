// @needs keystone openbao
/**
 * The Pulumi provider's verbs in-process against the real Keystone and OpenBao, with an injected clock: the connection
 * from the OS_* variables, the mint, the rotation whose switch waits for the backup, the sweep, refresh after an
 * out-of-band deletion, and a destroy that leaves neither a credential nor the backup. (The real Pulumi CLI drives the
 * same verbs in test/e2e/pulumi.test.ts.)
 */
import { authenticateApplicationCredential, ApplicationCredentials } from '../../src/keystone';
import { OpenBaoBackup } from '../../src/backup';
import { makeProvider } from '../../src/pulumi/provider-impl';
import type { ProviderInputs } from '../../src/pulumi/state';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';

const M = 60_000;

describe('the Pulumi provider against Keystone and OpenBao', () => {
  let user: ServiceUser;
  let now = new Date();
  const writes: string[] = [];

  beforeAll(async () => {
    user = await createServiceUser('pulumi-provider');
  });
  afterAll(async () => {
    await user?.cleanup();
  });

  const env = () => ({
    OS_AUTH_URL: user.authUrl,
    OS_USER_ID: user.userId,
    OS_PASSWORD: user.password,
    OS_PROJECT_ID: user.projectId,
    BAO_ADDR: process.env.KAC_BAO_ADDR,
    BAO_TOKEN: process.env.KAC_BAO_TOKEN,
  });
  const provider = () =>
    makeProvider({
      clock: () => now,
      env: env(),
      backup: (settings) => {
        const real = new OpenBaoBackup(settings);
        return {
          read: () => real.read(),
          write: async (data) => {
            writes.push(data.application_credential_id);
            await real.write(data);
          },
          remove: () => real.remove(),
        };
      },
    });
  const inputs = (): ProviderInputs => ({
    prefix: `it-${user.userName}-applicationcredential`,
    credentialGeneration: 1,
    rotation: { interval: '1h', gracePeriod: '20m' },
    backup: {},
  });
  /** The backup at the default path, which names the resource's owner id (docs/configure/pulumi.md, OpenBao backup). */
  let owner = '';
  const bao = () => new OpenBaoBackup({ address: process.env.KAC_BAO_ADDR as string, token: process.env.KAC_BAO_TOKEN as string, path: `keystone/pulumi/${inputs().prefix}/${owner}/service-accounts/application-credential` });
  const login = (id?: string, secret?: string) =>
    authenticateApplicationCredential({ authUrl: user.authUrl, id: id as string, secret: secret as string }).then(
      () => true,
      (e: Error) => e.message,
    );

  it('runs the whole lifecycle', async () => {
    const p = provider();
    expect((await p.check({}, { ...inputs() })).failures).toEqual([]);
    const { id, outs: g1 } = await p.create(inputs());
    expect(g1.credentialGeneration).toBe(1);
    owner = g1.owner as string;
    expect(owner).toMatch(/^[0-9a-f-]{36}$/);
    expect(await login(g1.credentialId, g1.credentialSecret)).toBe(true);
    expect(await bao().read()).toBe(g1.credentialId);
    expect(g1.cloudsYaml).toContain(user.authUrl);

    expect((await p.diff(id, g1, inputs())).changes).toBe(false);
    now = new Date(now.getTime() + 61 * M);
    expect((await p.diff(id, g1, inputs())).changes).toBe(true);
    const { outs: g2 } = await p.update(id, g1, inputs());
    expect(g2).toMatchObject({ credentialGeneration: 2, previousCredentialId: g1.credentialId });
    expect(writes).toEqual([g1.credentialId, g2.credentialId]);
    expect(await bao().read()).toBe(g2.credentialId);
    expect(await login(g1.credentialId, g1.credentialSecret)).toBe(true);
    expect(await login(g2.credentialId, g2.credentialSecret)).toBe(true);

    now = new Date(now.getTime() + 21 * M);
    const { outs: swept } = await p.update(id, g2, inputs());
    expect(swept.previousCredentialId).toBeUndefined();
    expect(await login(g1.credentialId, g1.credentialSecret)).toMatch(/404/);

    await new ApplicationCredentials(user.session()).delete(g2.credentialId as string);
    const { props } = await p.read(id, swept);
    expect(props.credentialId).toBeUndefined();
    expect((await p.diff(id, props, inputs())).changes).toBe(true);
    const { outs: g3 } = await p.update(id, props, inputs());
    expect(g3.credentialGeneration).toBe(3);
    expect(await login(g3.credentialId, g3.credentialSecret)).toBe(true);

    await p.delete(id, g3);
    expect(await new ApplicationCredentials(user.session()).list()).toEqual([]);
    expect(await bao().read()).toBeUndefined();
  });
});
