/**
 * The operator's OpenBao login: token auth as given; Kubernetes auth logs in once with the service account token,
 * reuses the token, and logs in again once when OpenBao refuses it. The KV v2 reads and writes themselves are proven
 * against the real OpenBao in test/integration/openbao-backup.test.ts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenBao } from '../../../src/operator/credential/backup';

function fakeBao() {
  const calls: { url: string; token?: string; body?: string }[] = [];
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
});
