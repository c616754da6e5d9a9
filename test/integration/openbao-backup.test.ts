// @needs openbao
/**
 * The OpenBao backup port against a real OpenBao (dev server, KV v2 mounted at `openstack/`): read of an empty path,
 * write and read back at the spec's backing path, a new version on rewrite, removal of every version, an idempotent
 * remove, the owner in the path's metadata, and errors that name the path and status without the token.
 */
import { randomBytes } from 'node:crypto';
import { backingPath } from '../../src/api';
import { OpenBaoBackup } from '../../src/backup';

function env() {
  const address = process.env.KAC_BAO_ADDR;
  const token = process.env.KAC_BAO_TOKEN;
  if (!address || !token) throw new Error('KAC_BAO_ADDR is not set: start the test file with `// @needs openbao`');
  return { address, token, mount: process.env.KAC_BAO_KV_MOUNT ?? 'openstack' };
}

const doc = (id: string) => ({
  'clouds.yaml': `clouds:\n  openstack:\n    auth:\n      application_credential_id: ${id}\n`,
  application_credential_id: id,
  application_credential_secret: randomBytes(16).toString('hex'),
});

describe('OpenBaoBackup', () => {
  const { address, token, mount } = env();
  const prefix = `it-${randomBytes(4).toString('hex')}-applicationcredential`;
  const path = backingPath('pulumi', prefix).split('/').slice(1).join('/');
  const backup = new OpenBaoBackup({ address, token, mount, path });

  async function raw(kind: 'data' | 'metadata'): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${address}/v1/${mount}/${kind}/${path}`, { headers: { 'x-vault-token': token } });
    return { status: res.status, body: res.status === 200 ? await res.json() : undefined };
  }

  it('reads nothing at an empty path', async () => {
    expect(await backup.read()).toBeUndefined();
    expect(await backup.readDocument()).toBeUndefined();
  });

  it('writes the three keys at the backing path and reads the credential id back', async () => {
    const first = doc('cred-1');
    await backup.write(first);
    expect(await backup.read()).toBe('cred-1');
    expect(await backup.readDocument()).toEqual(first);
    const stored = (await raw('data')).body as { data: { data: Record<string, string>; metadata: { version: number } } };
    expect(stored.data.data).toEqual(first);
    expect(stored.data.metadata.version).toBe(1);
  });

  it('writes a new version on a switch', async () => {
    await backup.write(doc('cred-2'));
    expect(await backup.read()).toBe('cred-2');
    const meta = (await raw('metadata')).body as { data: { current_version: number } };
    expect(meta.data.current_version).toBe(2);
  });

  it('removes every version, and removing again is fine', async () => {
    await backup.remove();
    expect(await backup.read()).toBeUndefined();
    expect((await raw('metadata')).status).toBe(404);
    await backup.remove();
  });

  it("with an owner, the path's metadata names it (custom_metadata.owner) from the first write; removal takes it along (issue 39)", async () => {
    const owned = `${path}-owned`;
    const mine = new OpenBaoBackup({ address, token, mount, path: owned, owner: 'owner-a' });
    const theirs = new OpenBaoBackup({ address, token, mount, path: owned, owner: 'owner-b' });
    expect(await mine.readOwner()).toBeUndefined();
    await mine.write(doc('c-1'));
    expect(await theirs.readOwner()).toBe('owner-a');
    expect(await new OpenBaoBackup({ address, token, mount, path: owned }).readOwner()).toBe('owner-a');
    await mine.write(doc('c-2')); // a second write keeps it
    expect(await mine.readOwner()).toBe('owner-a');
    await mine.remove();
    expect(await theirs.readOwner()).toBeUndefined();
  });

  it('two owners that both saw the path empty and both write (two creates of one explicit path): the first write claims it, the second is refused, the first\'s document and owner stand (issue 46, finding 8)', async () => {
    const shared = `${path}-raced`;
    const a = new OpenBaoBackup({ address, token, mount, path: shared, owner: 'owner-a' });
    const b = new OpenBaoBackup({ address, token, mount, path: shared, owner: 'owner-b' });
    // Both check: nothing there, no owner
    for (const racer of [a, b]) {
      expect(await racer.readOwner()).toBeUndefined();
      expect(await racer.read()).toBeUndefined();
    }
    await a.write(doc('c-a'));
    const refused = (await b.write(doc('c-b')).catch((e: unknown) => e)) as Error;
    expect(refused).toBeInstanceOf(Error);
    expect(refused.message).toContain(shared);
    expect(await new OpenBaoBackup({ address, token, mount, path: shared }).read()).toBe('c-a');
    expect(await b.readOwner()).toBe('owner-a');
    // The winner goes on writing its path; a document written before owners (none in the metadata) it had read is its to
    // overwrite, and names it from then on.
    await a.write(doc('c-a2'));
    expect(await a.read()).toBe('c-a2');
    await a.remove();
    const legacy = new OpenBaoBackup({ address, token, mount, path: shared });
    await legacy.write(doc('c-0'));
    const upgraded = new OpenBaoBackup({ address, token, mount, path: shared, owner: 'owner-c' });
    expect(await upgraded.readOwner()).toBeUndefined();
    expect(await upgraded.read()).toBe('c-0');
    await upgraded.write(doc('c-1'));
    expect(await upgraded.readOwner()).toBe('owner-c');
    await upgraded.remove();
  });

  it('fails with the path and status, never the token', async () => {
    const denied = new OpenBaoBackup({ address, token: 'not-a-token', mount, path });
    const error = (await denied.write(doc('x')).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(`POST /v1/${mount}/data/${path}: 403`);
    expect(error.message).not.toContain(token);
    const unreachable = new OpenBaoBackup({ address: 'http://127.0.0.1:1', token, mount, path, timeoutMs: 2000 });
    await expect(unreachable.read()).rejects.toThrow(/OpenBao GET .*: no reply/);
  });
});
