// @needs keystone openbao
/**
 * The Pulumi provider's verbs in-process against the real Keystone and OpenBao, with an injected clock: the connection
 * from the OS_* variables, the mint, the rotation whose switch waits for the backup, the sweep, refresh after an
 * out-of-band deletion, and a destroy that leaves neither a credential nor the backup; every OpenBao call of the
 * Pulumi face with a token of exactly the policy docs/pulumi.md gives (issue 46); two creates racing for one explicit
 * `backup.path`. (The real Pulumi CLI drives the same verbs in test/e2e/pulumi.test.ts.)
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { authenticateApplicationCredential, ApplicationCredentials } from '../../src/keystone';
import { OpenBaoBackup } from '../../src/backup';
import { makeProvider } from '../../src/pulumi/provider-impl';
import type { ProviderInputs, ProviderOutputs } from '../../src/pulumi/state';
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
  it('two creates with the same explicit backup.path at once (both saw it empty at check): one claims the path, the other fails naming it, its credential recorded for its destroy (issue 46, finding 8)', async () => {
    const p = makeProvider({ clock: () => now, env: env() }); // the OpenBao backup port as the provider makes it
    const path = `it/${user.userName}/raced/application-credential`;
    const racer = (n: number): ProviderInputs => ({ ...inputs(), prefix: `it-${user.userName}-r${n}-applicationcredential`, backup: { path } });
    const checked = await Promise.all([1, 2].map((n) => p.check({}, { ...racer(n) })));
    for (const c of checked) expect(c.failures).toEqual([]);
    const results = await Promise.allSettled(checked.map((c) => p.create(c.inputs as unknown as ProviderInputs)));
    const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error & { properties?: ProviderOutputs }] : []));
    expect([won.length, lost.length]).toEqual([1, 1]);
    expect(lost[0].message).toContain(`backup.path ("${path}", mount "openstack") holds the backup of owner ${won[0].outs.owner as string}`);
    const at = new OpenBaoBackup({ address: process.env.KAC_BAO_ADDR as string, token: process.env.KAC_BAO_TOKEN as string, path });
    expect(await at.read()).toBe(won[0].outs.credentialId);
    expect(await at.readOwner()).toBe(won[0].outs.owner);
    // The loser minted before its backup was refused: the partial state Pulumi keeps records it, so its destroy deletes it
    // and leaves the winner's document alone.
    const partial = lost[0].properties as ProviderOutputs;
    expect(partial.successorCredentialId ?? partial.credentialId).toBeDefined();
    await p.delete(partial.prefix, partial);
    expect(await at.read()).toBe(won[0].outs.credentialId);
    await p.delete(won[0].id, won[0].outs);
    expect(await at.read()).toBeUndefined();
    expect(await new ApplicationCredentials(user.session()).list()).toEqual([]);
  });
  describe('with a token of exactly the OpenBao policy docs/pulumi.md gives (issue 46, finding 6)', () => {
    const address = process.env.KAC_BAO_ADDR as string;
    const root = process.env.KAC_BAO_TOKEN as string;
    /** The policy the docs' `bao policy write <name> - <<'HCL'` block writes, as it stands there (in whichever page). */
    const documented = (name: string): string => {
      const marker = `bao policy write ${name} - <<'HCL'\n`;
      const pages = readdirSync(join(__dirname, '../../docs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md'));
      const text = pages.map((f) => readFileSync(join(__dirname, '../../docs', f), 'utf8')).find((t) => t.includes(marker));
      if (text === undefined) throw new Error(`no page of docs/ documents the OpenBao policy ${name}`);
      const body = text.slice(text.indexOf(marker)).split('\n').slice(1);
      return body.slice(0, body.indexOf('HCL')).join('\n');
    };
    /** A token of `policy` alone (and OpenBao's default policy, as `bao token create -policy=...` gives it). */
    const tokenOf = async (name: string, policy: string): Promise<string> => {
      const headers = { 'x-vault-token': root, 'content-type': 'application/json' };
      expect((await fetch(`${address}/v1/sys/policies/acl/${name}`, { method: 'PUT', headers, body: JSON.stringify({ policy }) })).status).toBe(204);
      const created = await fetch(`${address}/v1/auth/token/create`, { method: 'POST', headers, body: JSON.stringify({ policies: [name], ttl: '10m' }) });
      return ((await created.json()) as { auth: { client_token: string } }).auth.client_token;
    };
    const scoped = (token: string) => makeProvider({ clock: () => now, env: { ...env(), BAO_TOKEN: token } });
    const at = (path: string) => new OpenBaoBackup({ address, token: root, path });

    it('a create, a rotation, a refresh and a destroy at the default path; the same at an explicit path; the move of a 0.1.0 document', async () => {
      const token = await tokenOf(`kac-pulumi-${user.userName}`, documented('keystone-appcred-pulumi'));
      const p = scoped(token);
      for (const backup of [{}, { path: `keystone/pulumi/team-${user.userName}/application-credential` }]) {
        const checked = await p.check({}, { ...inputs(), backup });
        expect(checked.failures).toEqual([]);
        const { id, outs: g1 } = await p.create(checked.inputs as unknown as ProviderInputs);
        const path = backup.path ?? `keystone/pulumi/${inputs().prefix}/${g1.owner as string}/service-accounts/application-credential`;
        expect(await at(path).read()).toBe(g1.credentialId);
        expect(await at(path).readOwner()).toBe(g1.owner);
        now = new Date(now.getTime() + 61 * M);
        const again = await p.check({ ...checked.inputs }, { ...inputs(), backup });
        expect(again.failures).toEqual([]);
        const { outs: g2 } = await p.update(id, g1, again.inputs as unknown as ProviderInputs);
        expect(await at(path).read()).toBe(g2.credentialId);
        await p.read(id, g2);
        await p.delete(id, g2);
        expect(await at(path).read()).toBeUndefined();
      }
      // A state keystone-appcred 0.1.0 wrote: no owner, its document at the path without one; the rotation moves it.
      const { id, outs } = await p.create({ ...inputs(), backup: {} });
      const { owner: drawn, ...state } = outs;
      await at(`keystone/pulumi/${inputs().prefix}/${drawn as string}/service-accounts/application-credential`).remove();
      const former = `keystone/pulumi/${inputs().prefix}/service-accounts/application-credential`;
      await new OpenBaoBackup({ address, token: root, path: former }).write({ 'clouds.yaml': '', application_credential_id: outs.credentialId as string, application_credential_secret: outs.credentialSecret as string });
      now = new Date(now.getTime() + 61 * M);
      const { outs: moved } = await p.update(id, state as ProviderOutputs, { ...inputs(), backup: {} });
      expect(await at(former).read()).toBeUndefined();
      expect(await at(`keystone/pulumi/${inputs().prefix}/${moved.owner as string}/service-accounts/application-credential`).read()).toBe(moved.credentialId);
      await p.delete(id, moved);
      expect(await new ApplicationCredentials(user.session()).list()).toEqual([]);
    });

    it("a token of the operator's policy (delete only on metadata/) fails the Pulumi backup: the rights Pulumi needs beyond it", async () => {
      const token = await tokenOf(`kac-operator-${user.userName}`, documented('keystone-appcred-operator'));
      const p = scoped(token);
      const failed = (await p.create({ ...inputs(), backup: {} }).catch((e: unknown) => e)) as Error & { properties?: ProviderOutputs };
      expect(failed.message).toMatch(/OpenBao POST \/v1\/openstack\/(data|metadata)\/keystone\/pulumi\/.*: 403/);
      await makeProvider({ clock: () => now, env: env() }).delete(failed.properties?.prefix as string, failed.properties as ProviderOutputs);
      expect(await new ApplicationCredentials(user.session()).list()).toEqual([]);
    });
  });
});
