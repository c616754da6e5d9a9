// @needs keystone
/**
 * The lifecycle engine against a real Keystone, through the local face (parked secrets, delivered document and status in
 * a directory). The clock handed to the runner moves forward to make the schedule and the grace period fall due; Keystone
 * itself runs on real time, so every credential it holds is checked against what Keystone says.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPrefix, resolveSpec, type RotationSpec } from '../../src/api';
import { ApplicationCredentials, KeystoneSession, authenticateApplicationCredential, isKeystoneError } from '../../src/keystone';
import { reconcile, type RunResult } from '../../src/lifecycle';
import { DirectorySecretStore, directoryPorts, type DirectoryOrder } from '../../src/local';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';

const HOUR = 3_600_000;

interface Harness {
  readonly user: ServiceUser;
  readonly dir: string;
  readonly prefix: string;
  readonly local: DirectoryOrder;
  readonly session: KeystoneSession;
  pass(now: Date, spec?: { credentialGeneration?: number; rotation?: RotationSpec }): Promise<RunResult>;
  delivered(): Promise<{ id: string; secret: string; cloudsYaml: string }>;
  held(): Promise<{ id: string; name: string; expiresAt?: Date }[]>;
  cleanup(): Promise<void>;
}

async function harness(name: string): Promise<Harness> {
  const user = await createServiceUser(name);
  const dir = mkdtempSync(join(tmpdir(), 'kac-lifecycle-'));
  const session = user.session();
  const prefix = childPrefix({ namespace: 'tenant-a', name });
  const local = directoryPorts({ dir, session, prefix });
  return {
    user,
    dir,
    prefix,
    local,
    session,
    pass: (now, spec = {}) => reconcile({ prefix, owner: local.owner, spec: resolveSpec(spec), status: local.status() }, local.ports, { clock: () => now }),
    delivered: async () => {
      const read = await local.ports.delivery.read();
      if (!read) throw new Error('nothing delivered');
      return { id: read.data.application_credential_id, secret: read.data.application_credential_secret, cloudsYaml: read.data['clouds.yaml'] };
    },
    held: async () => (await new ApplicationCredentials(session).list()).filter((c) => c.name.startsWith(prefix)),
    cleanup: async () => {
      rmSync(dir, { recursive: true, force: true });
      await user.cleanup();
    },
  };
}

async function authenticates(authUrl: string, id: string, secret: string): Promise<'ok' | string> {
  try {
    await authenticateApplicationCredential({ authUrl, id, secret });
    return 'ok';
  } catch (error) {
    if (isKeystoneError(error)) return error.kind;
    throw error;
  }
}

describe('the lifecycle against a real Keystone', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness(expect.getState().currentTestName?.replace(/[^a-z0-9]+/gi, '-').toLowerCase().slice(0, 20) ?? 'order');
  });
  afterEach(async () => h.cleanup());

  it('mints generation 1 as the ordered user: scoped to the project, restricted, expiring at creation + interval + grace', async () => {
    const before = Date.now();
    const result = await h.pass(new Date());
    expect(result.status).toMatchObject({ credentialGeneration: 1, nextRotation: expect.any(String), credentialExpiresAt: expect.any(String) });
    expect(result.status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'AllReady' });
    const { id, secret, cloudsYaml } = await h.delivered();
    expect(cloudsYaml).toContain('v3applicationcredential');
    const login = await authenticateApplicationCredential({ authUrl: h.user.authUrl, id, secret });
    expect(login.projectId).toBe(h.user.projectId);
    expect(login.applicationCredential.restricted).toBe(true);
    // A token from a restricted credential cannot create another one.
    const fromCredential = new KeystoneSession({ authUrl: h.user.authUrl, auth: { method: 'application-credential', id, secret } });
    const refused = await new ApplicationCredentials(fromCredential).create({ name: 'escalation', secret: 'x'.repeat(40) }).catch((e: unknown) => e);
    expect(isKeystoneError(refused, 'forbidden')).toBe(true);
    const [held] = await h.held();
    const expected = before + (720 + 24) * HOUR;
    expect(held.expiresAt?.getTime()).toBeGreaterThanOrEqual(expected - 1000);
    expect(held.expiresAt?.getTime()).toBeLessThanOrEqual(Date.now() + (720 + 24) * HOUR + 1000);
    expect(JSON.stringify(result.status)).not.toContain(secret);
  });

  it('rotates to generation 2 when due: both authenticate during the grace period; after the sweep 1 fails (404) and 2 works', async () => {
    const t0 = new Date();
    await h.pass(t0);
    const first = await h.delivered();
    const due = new Date(h.local.status().nextRotation as string);
    const rotated = await h.pass(due);
    expect(rotated.status).toMatchObject({ credentialGeneration: 2, previousCredentialGeneration: 1, previousCredentialID: first.id });
    const second = await h.delivered();
    expect(second.id).not.toBe(first.id);
    expect(await authenticates(h.user.authUrl, first.id, first.secret)).toBe('ok');
    expect(await authenticates(h.user.authUrl, second.id, second.secret)).toBe('ok');
    expect(await h.held()).toHaveLength(2);
    const deleteAt = new Date(rotated.status.previousCredentialDeleteAt as string);
    expect(deleteAt.getTime() - due.getTime()).toBe(24 * HOUR);
    const swept = await h.pass(new Date(deleteAt.getTime() + 1000));
    expect(swept.status.previousCredentialGeneration).toBeUndefined();
    expect(await authenticates(h.user.authUrl, first.id, first.secret)).toBe('not-found');
    expect(await authenticates(h.user.authUrl, second.id, second.secret)).toBe('ok');
    expect((await h.held()).map((c) => c.id)).toEqual([second.id]);
  });

  it('a lost secret is replaced by a new generation; raising 2 → 5 mints 5; with the schedule off the next credential has no expiry', async () => {
    let now = new Date();
    await h.pass(now);
    await new DirectorySecretStore(join(h.dir, 'secrets')).discard(1);
    const replaced = await h.pass(now);
    expect(replaced.status.credentialGeneration).toBe(2);
    const two = await h.delivered();
    expect(await authenticates(h.user.authUrl, two.id, two.secret)).toBe('ok');

    now = new Date(now.getTime() + 25 * HOUR); // past the grace period of generation 1
    const raised = await h.pass(now, { credentialGeneration: 5 });
    expect(raised.status.credentialGeneration).toBe(5);
    expect((await h.held()).map((c) => c.name).sort()).toEqual([`${h.prefix}-credential-v2`, `${h.prefix}-credential-v5`]);

    now = new Date(now.getTime() + 25 * HOUR);
    const off = await h.pass(now, { credentialGeneration: 6, rotation: { interval: '0s' } });
    expect(off.status.credentialGeneration).toBe(6);
    expect(off.status.nextRotation).toBeUndefined();
    expect(off.status.credentialExpiresAt).toBeUndefined();
    const six = (await h.held()).find((c) => c.name.endsWith('-credential-v6'));
    expect(six?.expiresAt).toBeUndefined();
  });

  describe('a crash between "created in Keystone" and "recorded"', () => {
    const runPass = (crashAfter?: string) =>
      spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'support', 'bin', 'local-pass.ts')], {
        input: JSON.stringify({ authUrl: h.user.authUrl, auth: h.user.auth, dir: h.dir, prefix: h.prefix, spec: {}, crashAfter }),
        encoding: 'utf8',
        timeout: 60_000,
      });

    it('the killed pass leaves the credential in Keystone; the next pass adopts it: nothing leaked, nothing lost', async () => {
      const crashed = runPass('mint');
      expect(crashed.signal).toBe('SIGKILL');
      expect(h.local.status().credentialGeneration).toBeUndefined();
      const [orphan] = await h.held();
      expect(orphan.name).toBe(`${h.prefix}-credential-v1`);
      const next = runPass();
      expect(next.status).toBe(0);
      expect(h.local.status()).toMatchObject({ credentialGeneration: 1, credentialID: orphan.id });
      const { id, secret } = await h.delivered();
      expect(id).toBe(orphan.id);
      expect(await authenticates(h.user.authUrl, id, secret)).toBe('ok');
      expect(await h.held()).toHaveLength(1);
    });

    it('when the parked secret was lost too, the credential is deleted and created again', async () => {
      expect(runPass('mint').signal).toBe('SIGKILL');
      const [orphan] = await h.held();
      await new DirectorySecretStore(join(h.dir, 'secrets')).discard(1);
      expect(runPass().status).toBe(0);
      const held = await h.held();
      expect(held).toHaveLength(1);
      expect(held[0].id).not.toBe(orphan.id);
      const { id, secret } = await h.delivered();
      expect(id).toBe(held[0].id);
      expect(await authenticates(h.user.authUrl, id, secret)).toBe('ok');
    });

    it('killed after delivering but before recording the switch: the next pass records it without a new credential', async () => {
      expect(runPass('deliver').signal).toBe('SIGKILL');
      expect(h.local.status().credentialGeneration).toBeUndefined();
      expect(runPass().status).toBe(0);
      expect(h.local.status().credentialGeneration).toBe(1);
      expect(await h.held()).toHaveLength(1);
    });
  });
});
