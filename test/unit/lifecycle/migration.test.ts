/**
 * The backup's move from the path keystone-appcred 0.1.0 wrote (src/lifecycle/migration.ts): pure rules, and what
 * decide and teardown make of them.
 */
import { CredentialReason, resolveSpec, type KeystoneApplicationCredentialStatus } from '../../../src/api';
import { reconcile, type Ports } from '../../../src/lifecycle';
import { accountedIds, formerBackup, formerTeardown, migration, recordMigration } from '../../../src/lifecycle/migration';
import { teardown } from '../../../src/lifecycle/teardown';
import { MemoryDelivery, MemorySecretStore } from '../../../src/local';
import { FakeKeystone } from '../../support/fake-keystone';

const status = { credentialGeneration: 2, credentialID: 'id-2', previousCredentialGeneration: 1, previousCredentialID: 'id-1' };

describe('the document at the former path', () => {
  it('is the order\'s own when its id is one the status records or one of its own generations holds; else foreign; unreadable is unknown', () => {
    const ids = accountedIds(status, ['id-3']);
    expect([...ids].sort()).toEqual(['id-1', 'id-2', 'id-3']);
    expect(formerBackup(undefined, ids)).toEqual({ state: 'empty' });
    expect(formerBackup({}, ids)).toEqual({ state: 'empty' });
    expect(formerBackup({ credentialId: 'id-1' }, ids)).toEqual({ state: 'own', credentialId: 'id-1' });
    expect(formerBackup({ credentialId: 'id-3' }, ids)).toEqual({ state: 'own', credentialId: 'id-3' });
    expect(formerBackup({ credentialId: 'other' }, ids)).toEqual({ state: 'foreign', credentialId: 'other' });
    expect(formerBackup({ error: 'OpenBao GET: 503' }, ids)).toEqual({ state: 'unknown', error: 'OpenBao GET: 503' });
    expect(accountedIds({ credentialID: '' })).toEqual(new Set());
  });
});

describe('migration', () => {
  it('writes the delivered document at the own path, then removes the order\'s document from the former path', () => {
    const { actions, former } = migration({ status, deliveredParked: true, backup: {}, former: { credentialId: 'id-2' } });
    expect(actions.map((a) => a.type)).toEqual(['backup', 'remove-former-backup']);
    expect(actions[0]).toMatchObject({ generation: 2, credentialId: 'id-2' });
    expect(former).toEqual({ state: 'own', credentialId: 'id-2' });
  });

  it('removes only once the own path holds the document: held already, or written by the pass; never while it cannot be read or written', () => {
    expect(migration({ status, deliveredParked: true, backup: { credentialId: 'id-2' }, former: { credentialId: 'id-1' } }).actions.map((a) => a.type)).toEqual(['remove-former-backup']);
    expect(migration({ status, deliveredParked: false, backup: {}, writesBackup: true, former: { credentialId: 'id-1' } }).actions.map((a) => a.type)).toEqual(['remove-former-backup']);
    // No parked secret, no document: nothing to write, so the former one stays.
    expect(migration({ status, deliveredParked: false, backup: {}, former: { credentialId: 'id-1' } }).actions).toEqual([]);
    expect(migration({ status, deliveredParked: true, backup: {}, deliverable: false, former: { credentialId: 'id-1' } }).actions).toEqual([]);
    expect(migration({ status, deliveredParked: true, backup: { error: 'down' }, former: { credentialId: 'id-1' } }).actions).toEqual([]);
    expect(migration({ status, deliveredParked: true, former: { credentialId: 'id-1' } }).actions).toEqual([]);
  });

  it('leaves a foreign document and reports it; does nothing without a delivered credential; nothing without a former path looked at but the own write', () => {
    const foreign = migration({ status, deliveredParked: true, backup: { credentialId: 'id-2' }, former: { credentialId: 'someone-else' } });
    expect(foreign).toEqual({ actions: [], former: { state: 'foreign', credentialId: 'someone-else' }, done: true });
    expect(migration({ status: {}, deliveredParked: true, backup: {}, former: { credentialId: 'x' } }).actions).toEqual([]);
    expect(migration({ status, deliveredParked: true, backup: {} }).actions.map((a) => a.type)).toEqual(['backup']);
    expect(migration({ status, deliveredParked: true, backup: { credentialId: 'id-2' } }).actions).toEqual([]);
  });
});

describe('the migration\'s record (issue 46, finding 1)', () => {
  const path = 'openstack/keystone/cp/app-1234abcd-applicationcredential/uid-1/service-accounts/application-credential';
  it('is done once both paths were looked at, the own one holds the delivered document and the former one nothing of the order\'s', () => {
    const done = (input: Omit<Parameters<typeof migration>[0], 'status'>) => migration({ status, ...input }).done;
    expect(done({ deliveredParked: true, backup: {}, former: {} })).toBe(true); // written now, nothing at the former path
    expect(done({ deliveredParked: true, backup: { credentialId: 'id-2' }, former: { credentialId: 'id-1' } })).toBe(true); // removed now
    expect(done({ deliveredParked: true, backup: { credentialId: 'id-2' }, former: { credentialId: 'another' } })).toBe(true); // left alone, reported
    expect(done({ deliveredParked: true, backup: { credentialId: 'id-2' } })).toBe(false); // the former path not looked at
    expect(done({ deliveredParked: true, backup: { credentialId: 'id-2' }, former: { error: 'OpenBao GET: 503' } })).toBe(false);
    expect(done({ deliveredParked: true, backup: { error: 'OpenBao GET: 503' }, former: {} })).toBe(false);
    expect(done({ deliveredParked: false, backup: {}, former: {} })).toBe(false); // no document to write
    expect(migration({ status: {}, deliveredParked: true, backup: {}, former: {} }).done).toBe(false); // nothing delivered yet
  });

  it('records the own path once done, and keeps what the status recorded otherwise', () => {
    expect(recordMigration(status, path, true)).toEqual({ ...status, backupPath: path });
    const recorded = { ...status, backupPath: 'openstack/keystone/cp/app-1234abcd-applicationcredential/uid-0/service-accounts/application-credential' };
    expect(recordMigration(recorded, path, false)).toBe(recorded);
    expect(recordMigration(status, undefined, true)).toBe(status); // a face that records nothing (Pulumi)
  });
});

describe('teardown after an upgrade', () => {
  const world = (formerBackup?: { credentialId?: string; error?: string }) => ({
    generations: [{ generation: 2, parked: true, credential: { id: 'id-2' } }, { generation: 3, parked: false, credential: { id: 'id-3' } }],
    delivery: { state: 'delivered' as const, credentialId: 'id-2', intact: true },
    backup: { credentialId: 'id-2' },
    ...(formerBackup ? { formerBackup } : {}),
  });

  it('removes the order\'s own document at the former path beside the own one, keeps a foreign one, and waits while it cannot be read', () => {
    expect(teardown(status, world({ credentialId: 'id-3' })).actions.map((a) => a.type)).toEqual(['delete', 'delete', 'remove-backup', 'remove-former-backup', 'discard', 'withdraw', 'release']);
    expect(teardown(status, world({ credentialId: 'other' })).actions.map((a) => a.type)).toEqual(['delete', 'delete', 'remove-backup', 'discard', 'withdraw', 'release']);
    expect(teardown(status, world({ error: 'OpenBao GET: 503' })).actions).toEqual([]);
    expect(formerTeardown(status, undefined, [])).toEqual({ actions: [], hold: false, former: { state: 'empty' } });
  });
});

describe('a pass of an order that cannot act (issue 46.1, simulation seed 1052929859)', () => {
  const prefix = 'app-1234abcd-applicationcredential';
  const path = `openstack/keystone/cp/${prefix}/uid-1/service-accounts/application-credential`;
  const gate = { reason: CredentialReason.WaitingForCredential, message: 'the ControlPlane cannot log in to Keystone' };

  /** One delivered generation backed up at the own path; the backup counts its reads. */
  async function converged() {
    const clock = () => new Date('2026-12-01T00:00:00Z');
    const keystone = new FakeKeystone(prefix, clock);
    const secrets = new MemorySecretStore();
    const delivery = new MemoryDelivery();
    let backedUp: string | undefined;
    let reads = 0;
    const ports: Ports = {
      keystone,
      secrets,
      delivery,
      backup: { read: async () => (reads++, backedUp), write: async (d) => void (backedUp = d.application_credential_id), remove: async () => void (backedUp = undefined) },
      render: (id, secret) => ({ 'clouds.yaml': `id=${id}`, application_credential_id: id, application_credential_secret: secret }),
      writeStatus: async () => undefined,
      release: async () => undefined,
      isTerminal: () => false,
    };
    const spec = resolveSpec({ rotation: { interval: '0s', gracePeriod: '2m' } });
    const first = await reconcile({ prefix, spec, status: {}, backupPath: path }, ports, { clock });
    const status: KeystoneApplicationCredentialStatus = { ...first.status, backupPath: path };
    return { ports, spec, status, clock, reads: () => reads, reset: () => (reads = 0) };
  }

  it('reads no backup when gated and its status records the migration; reads it while the record is missing, and when not gated', async () => {
    const w = await converged();
    const gated: Ports = { ...w.ports, gate: async () => gate };
    w.reset();
    await reconcile({ prefix, spec: w.spec, status: w.status, backupPath: path }, gated, { clock: w.clock });
    expect(w.reads()).toBe(0);
    // Without the record the migration may still have work there: the backup is read.
    await reconcile({ prefix, spec: w.spec, status: { ...w.status, backupPath: undefined }, backupPath: path }, gated, { clock: w.clock });
    expect(w.reads()).toBe(1);
    // An order that acts reads it: a switch or a repair writes the backup first.
    await reconcile({ prefix, spec: w.spec, status: w.status, backupPath: path }, w.ports, { clock: w.clock });
    expect(w.reads()).toBe(2);
  });
});
