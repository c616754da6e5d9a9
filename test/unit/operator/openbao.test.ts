/**
 * The operator's OpenBao login: token auth as given; Kubernetes auth logs in once with the service account token,
 * reuses the token, and logs in again once when OpenBao refuses it; a refused login or a missing token file says what
 * to check. The KV v2 reads and writes themselves are proven against the real OpenBao in
 * test/integration/openbao-backup.test.ts, the Kubernetes auth login in test/e2e/image-operator.test.ts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenBao } from '../../../src/operator/credential/backup';

/** A fake OpenBao; `delayMs` delays each KV reply by that many ms (by the number of KV calls so far), logins answer at once. */
function fakeBao(delayMs: (kvCalls: number) => number = () => 0) {
  const calls: { url: string; token?: string; body?: string }[] = [];
  let kvCalls = 0;
  let issued = 0;
  let valid = new Set<string>();
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    const headers = init.headers as Record<string, string>;
    calls.push({ url, ...(headers['x-vault-token'] ? { token: headers['x-vault-token'] } : {}), ...(init.body ? { body: String(init.body) } : {}) });
    if (url.endsWith('/v1/auth/kubernetes/login')) {
      const token = `t-${++issued}`;
      valid.add(token);
      return new Response(JSON.stringify({ auth: { client_token: token, lease_duration: 3600 } }), { status: 200 });
    }
    const wait = delayMs(kvCalls++);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (!valid.has(headers['x-vault-token'])) return new Response(JSON.stringify({ errors: ['permission denied'] }), { status: 403 });
    return new Response(JSON.stringify({ data: { data: { application_credential_id: 'cred-1' } } }), { status: 200 });
  };
  return { calls, fetch, revokeAll: () => (valid = new Set()) };
}

describe('OpenBao login for the backup', () => {
  const jwtFile = join(mkdtempSync(join(tmpdir(), 'kac-sa-')), 'token');
  writeFileSync(jwtFile, 'service-account-jwt\n');

  it('token auth sends the token as given, at the mount and path of the backing path', async () => {
    const bao = fakeBao();
    const backup = new OpenBao({ address: 'http://bao:8200', login: { method: 'token', token: 'root' }, fetch: bao.fetch }).at('openstack/keystone/cp/app-1234abcd-applicationcredential/service-accounts/application-credential');
    await expect(backup.read()).rejects.toThrow(/403/); // 'root' is not valid in the fake
    expect(bao.calls[0]).toMatchObject({ url: 'http://bao:8200/v1/openstack/data/keystone/cp/app-1234abcd-applicationcredential/service-accounts/application-credential', token: 'root' });
  });

  it('Kubernetes auth logs in once with the role and the service account token, and reuses the token', async () => {
    const bao = fakeBao();
    const backup = new OpenBao({ address: 'http://bao:8200', login: { method: 'kubernetes', role: 'kac', jwtFile }, fetch: bao.fetch }).at('openstack/a/b');
    expect(await backup.read()).toBe('cred-1');
    expect(await backup.read()).toBe('cred-1');
    const logins = bao.calls.filter((c) => c.url.endsWith('/login'));
    expect(logins).toHaveLength(1);
    expect(JSON.parse(logins[0].body as string)).toEqual({ role: 'kac', jwt: 'service-account-jwt' });
  });

  it('a refused token logs in again, once', async () => {
    const bao = fakeBao();
    const backup = new OpenBao({ address: 'http://bao:8200', login: { method: 'kubernetes', role: 'kac', jwtFile }, fetch: bao.fetch }).at('openstack/a/b');
    await backup.read();
    bao.revokeAll();
    expect(await backup.read()).toBe('cred-1');
    expect(bao.calls.filter((c) => c.url.endsWith('/login'))).toHaveLength(2);
  });

  it("a refused login names OpenBao's words, the role, the service account and what to check; never the token", async () => {
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const jwt = `${part({ alg: 'RS256' })}.${part({ sub: 'system:serviceaccount:keystone-appcred-system:keystone-appcred-operator' })}.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg`;
    const file = join(mkdtempSync(join(tmpdir(), 'kac-sa-')), 'token');
    writeFileSync(file, jwt);
    const fetch = async () => new Response(JSON.stringify({ errors: ['invalid role name "kac"'] }), { status: 400 });
    const backup = new OpenBao({ address: 'http://bao:8200', login: { method: 'kubernetes', role: 'kac', jwtFile: file }, fetch }).at('openstack/a/b');
    const error = (await backup.read().catch((e: unknown) => e)) as Error;
    expect(error.message).toBe(
      'OpenBao POST /v1/auth/kubernetes/login: 400: login as role kac refused (invalid role name "kac"); check that the role exists ' +
        '(bao read auth/kubernetes/role/kac), that it binds the service account keystone-appcred-system/keystone-appcred-operator ' +
        "(bound_service_account_names, bound_service_account_namespaces), and that auth/kubernetes/config reaches this cluster's API server with a token reviewer",
    );
    expect(error.message).not.toContain(jwt.split('.')[2]);
  });

  it('a missing service account token says so and how to mount it', async () => {
    const backup = new OpenBao({ address: 'http://bao:8200', login: { method: 'kubernetes', role: 'kac', jwtFile: '/nonexistent/token' }, fetch: fakeBao().fetch }).at('openstack/a/b');
    await expect(backup.read()).rejects.toThrow(
      "OpenBao's Kubernetes auth needs the service account token at /nonexistent/token, which cannot be read (ENOENT): run the operator with its service account token mounted (automountServiceAccountToken: true), or use token auth",
    );
  });

  it('concurrent passes share one login, and a token refused under several of them is replaced once', async () => {
    // The refusals come back one after the other, some after the new token is in hand: those must not drop it.
    const bao = fakeBao((n) => (n >= 8 && n < 16 ? (n - 8) * 3 : 0));
    const openBao = new OpenBao({ address: 'http://bao:8200', login: { method: 'kubernetes', role: 'kac', jwtFile }, fetch: bao.fetch });
    const orders = Array.from({ length: 8 }, (_, i) => openBao.at(`openstack/order-${i}/application-credential`));
    expect(await Promise.all(orders.map((b) => b.read()))).toEqual(orders.map(() => 'cred-1'));
    expect(bao.calls.filter((c) => c.url.endsWith('/login'))).toHaveLength(1);
    bao.revokeAll();
    expect(await Promise.all(orders.map((b) => b.write({ 'clouds.yaml': '', application_credential_id: 'cred-1', application_credential_secret: 's' })))).toHaveLength(8);
    expect(bao.calls.filter((c) => c.url.endsWith('/login'))).toHaveLength(2);
  });
});

