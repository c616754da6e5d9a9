/**
 * Issue 49's lifecycle rules, one named test each, and the runner over simulated time with crashes (fast-check):
 * revoke now (rotation.ts), deletionPolicy Retain (teardown.ts), adoption (adoption.ts).
 */
import fc from 'fast-check';
import { CredentialReason, resolveSpec, type KeystoneApplicationCredentialStatus } from '../../../src/api';
import { decide, reconcile, rotation, settled, type LifecycleOrder, type Ports } from '../../../src/lifecycle';
import { MemoryDelivery, MemorySecretStore } from '../../../src/local';
import { FakeKeystone } from '../../support/fake-keystone';
import { T0, condition, held, hours, kinds, liveStatus, order, plus, world } from './builders';

const EXP1 = plus(T0, hours(744));
const NEXT1 = plus(T0, hours(720));
const deliveredAs = (id: string) => ({ delivery: { state: 'delivered' as const, credentialId: id, intact: true } });

describe('revoke now', () => {
  const request = (status: KeystoneApplicationCredentialStatus, value = 'incident-1') => order(status, {}, { revokeRequest: value });

  it('a new value rotates at once; the request is recorded even before anything is minted', () => {
    const plan = decide(request(liveStatus(1, T0, EXP1, NEXT1)), world([held(1, EXP1)]), plus(T0, hours(1)));
    expect(kinds(plan)).toEqual(['park:2', 'mint:2']);
    expect(plan.status).toMatchObject({ lastRevokeRequest: 'incident-1', revokeGeneration: 2 });
  });

  it('the switch skips the grace period, and the next step deletes the superseded credential: after the backup and the Secret', () => {
    const now = plus(T0, hours(1));
    const accepted = { ...liveStatus(1, T0, EXP1, NEXT1), lastRevokeRequest: 'incident-1', revokeGeneration: 2 };
    const switched = decide(request(accepted), world([held(1, EXP1), held(2, plus(now, hours(744)))], { ...deliveredAs('cred-1'), backup: { credentialId: 'cred-1' } }), now);
    expect(kinds(switched)).toEqual(['backup:2', 'deliver:2']);
    expect(switched.status.previousCredentialDeleteAt).toBe(now.toISOString().replace('.000Z', 'Z'));
    const swept = decide(request(switched.status), world([held(1, EXP1), held(2, plus(now, hours(744)))], { ...deliveredAs('cred-2'), backup: { credentialId: 'cred-2' } }), now);
    expect(kinds(swept)).toEqual(['delete:1', 'discard:1']);
    expect(swept.actions[0]).toMatchObject({ why: 'revoke requested (incident-1): grace period skipped' });
    expect(swept.status.previousCredentialID).toBeUndefined();
    expect(swept.status.revokeGeneration).toBeUndefined();
    expect(swept.status.lastRevokeRequest).toBe('incident-1');
  });

  it('fires once per value: the same value again does nothing, a new one rotates again', () => {
    const done = { ...liveStatus(2, T0, EXP1, NEXT1), lastRevokeRequest: 'incident-1' };
    expect(kinds(decide(request(done), world([held(2, EXP1)]), plus(T0, hours(1))))).toEqual([]);
    expect(kinds(decide(request(done, 'incident-2'), world([held(2, EXP1)]), plus(T0, hours(1))))).toEqual(['park:3', 'mint:3']);
  });

  it('during a grace period, deletes the superseded credential at once first: never more than two credentials', () => {
    const grace = { ...liveStatus(2, T0, EXP1, NEXT1), previousCredentialID: 'cred-1', previousCredentialGeneration: 1, previousCredentialDeleteAt: plus(T0, hours(24)).toISOString() };
    const plan = decide(request(grace), world([held(1, EXP1), held(2, EXP1)], deliveredAs('cred-2')), plus(T0, hours(1)));
    expect(kinds(plan)).toEqual(['delete:1', 'discard:1', 'park:3', 'mint:3']);
    expect(plan.status.revokeGeneration).toBe(3);
  });

  it('a pass that finds the Secret already switched (its status write lost) deletes below the revoke generation and does not rotate again', () => {
    const now = plus(T0, hours(1));
    const recorded = { ...liveStatus(1, T0, EXP1, NEXT1), lastRevokeRequest: 'incident-1', revokeGeneration: 2 };
    const plan = decide(request(recorded), world([held(1, EXP1), held(2, plus(now, hours(744)))], deliveredAs('cred-2')), now);
    expect(kinds(plan)).toEqual(['delete:1', 'discard:1']);
    expect(plan.status.credentialGeneration).toBe(2);
  });

  it('a pending request is never settled by the cache: a restart acts on it at once', () => {
    const status = { ...liveStatus(1, T0, EXP1, NEXT1), conditions: (['CredentialReady', 'DeliveryReady', 'Ready'] as const).map((type) => ({ type, status: 'True' as const, reason: 'x', message: '', lastTransitionTime: '' })), secretName: 'app-credentials', observedGeneration: 1 };
    const cached = { parked: [{ generation: 1, parked: true }], delivery: { state: 'delivered' as const, credentialId: 'cred-1', intact: true } };
    expect(settled(order(status), cached, plus(T0, hours(1)))).toMatchObject({ settled: true });
    expect(settled(request(status), cached, plus(T0, hours(1)))).toEqual({ settled: false, why: 'a revoke request is pending' });
  });

  it('an order being deleted, or not admitted, does not act on it', () => {
    const frozen = decide(request(liveStatus(1, T0, EXP1, NEXT1)), world([held(1, EXP1)], { admission: { reason: 'NamespaceNotAssigned', message: 'x' } }), T0);
    expect(frozen.actions).toEqual([]);
    expect(frozen.status.lastRevokeRequest).toBeUndefined();
  });
});

describe('deletionPolicy Retain', () => {
  const retaining = (status: KeystoneApplicationCredentialStatus) => order(status, {}, { deleting: true, spec: resolveSpec({ deletionPolicy: 'Retain' }) });
  const grace = { ...liveStatus(2, T0, EXP1, NEXT1), previousCredentialID: 'cred-1', previousCredentialGeneration: 1 };

  it('keeps the delivered credential, its Secret and its backup; deletes what is superseded and every parked secret', () => {
    const plan = decide(retaining(grace), world([held(1, EXP1), held(2, EXP1), { generation: 3, parked: true }], { ...deliveredAs('cred-2'), backup: { credentialId: 'cred-2' } }), T0);
    expect(kinds(plan)).toEqual(['delete:1', 'retain:2', 'discard:1', 'discard:2', 'discard:3', 'release']);
    expect(plan.actions.find((a) => a.type === 'retain')).toMatchObject({ id: 'cred-2', backup: true });
  });

  it('removes a backup that does not hold the retained credential', () => {
    const plan = decide(retaining(grace), world([held(2, EXP1)], { ...deliveredAs('cred-2'), backup: { credentialId: 'cred-3' } }), T0);
    expect(kinds(plan)).toEqual(['remove-backup', 'retain:2', 'discard:2', 'release']);
    expect(plan.actions.find((a) => a.type === 'retain')).toMatchObject({ backup: false });
  });

  it('with no delivered Secret of its own, or its parked secret lost, keeps nothing: as Delete', () => {
    expect(kinds(decide(retaining(grace), world([held(2, EXP1)], { delivery: { state: 'foreign' } }), T0))).toEqual(['delete:2', 'discard:2', 'release']);
    const lost = { generation: 2, parked: false, credential: { id: 'cred-2' } };
    expect(kinds(decide(retaining(grace), world([lost], deliveredAs('cred-2')), T0))).toEqual(['delete:2', 'withdraw', 'release']);
  });

  // Found by the simulation (test/sim/cases.test.ts, "an order deleted under Retain ..."): the pass its own writes woke,
  // from a cache that still showed the order, found the Secret released and the parked secrets discarded, and deleted
  // the retained credential and its backup.
  it('a later pass of the teardown (woken by its own writes, or after a crash) keeps what the first kept', () => {
    const released = { delivery: { state: 'foreign' as const, credentialId: 'cred-2' }, backup: { credentialId: 'cred-2' } };
    expect(kinds(decide(retaining(grace), world([{ generation: 2, parked: false, credential: { id: 'cred-2' } }], released), T0))).toEqual(['release']);
    // A crash between the release of the Secret and the discard of the parked secrets: discarded now, nothing applied again.
    expect(kinds(decide(retaining(grace), world([held(1, EXP1), held(2, EXP1)], released), T0))).toEqual(['delete:1', 'discard:1', 'discard:2', 'release']);
    // A foreign Secret naming the credential while the backup holds another is no release of the order's.
    expect(kinds(decide(retaining(grace), world([held(2, EXP1)], { delivery: { state: 'foreign', credentialId: 'cred-2' }, backup: { credentialId: 'cred-1' } }), T0))).toEqual(['delete:2', 'remove-backup', 'discard:2', 'release']);
  });

  it('Delete, the default, is the reference teardown as before', () => {
    const plan = decide(order(grace, {}, { deleting: true }), world([held(1, EXP1), held(2, EXP1)], { ...deliveredAs('cred-2'), backup: { credentialId: 'cred-2' } }), T0);
    expect(kinds(plan)).toEqual(['delete:1', 'delete:2', 'remove-backup', 'discard:1', 'discard:2', 'withdraw', 'release']);
  });
});

describe('adopt', () => {
  const adopting = (status: KeystoneApplicationCredentialStatus = {}) => order(status, {}, { spec: resolveSpec({ adopt: { credentialID: 'hand-1' } }) });

  it('the first credential is adopted instead of minted, once', () => {
    const plan = decide(adopting(), world([]), T0);
    expect(plan.actions).toEqual([{ type: 'adopt', generation: 1, credentialId: 'hand-1', why: 'adopt application credential hand-1' }]);
  });

  it('an order that holds anything mints: adopt is read only before the first credential', () => {
    expect(kinds(decide(adopting(), world([{ generation: 1, parked: true }]), T0))).toEqual(['mint:1']);
    expect(kinds(decide(adopting(liveStatus(1, T0, EXP1, NEXT1)), world([held(1, EXP1)]), plus(NEXT1, 1)))).toEqual(['park:2', 'mint:2']);
  });

  it('the adopted credential is switched to and recorded, and its id is dropped from the status once it is swept', () => {
    const adopted = { generation: 1, parked: true, adopted: 'hand-1', credential: { id: 'hand-1' } };
    const switched = decide(adopting(), world([adopted], { delivery: { state: 'absent' } }), T0);
    expect(kinds(switched)).toEqual(['deliver:1']);
    expect(switched.status).toMatchObject({ credentialID: 'hand-1', credentialGeneration: 1, adoptedCredentialID: 'hand-1' });
    expect(condition(switched, 'CredentialReady')?.message).toBe('generation 1 (adopted application credential hand-1) exists in Keystone');
    const gone = decide(adopting({ ...liveStatus(2, T0), adoptedCredentialID: 'hand-1' }), world([held(2)]), T0);
    expect(gone.status.adoptedCredentialID).toBeUndefined();
  });
});

/** The runner against the fake Keystone: an adoption and its refusals, and revoke now with crashes between actions. */
describe('through the runner', () => {
  const PREFIX = 'sim-0000beef-applicationcredential';
  const setup = (spec = resolveSpec({ rotation: { interval: '1h', gracePeriod: '10m' } }), extra: Partial<LifecycleOrder> = {}) => {
    let now = new Date(T0);
    const keystone = new FakeKeystone(PREFIX, () => now);
    const secrets = new MemorySecretStore();
    const delivery = new MemoryDelivery();
    const backup: { id?: string } = {};
    let status: KeystoneApplicationCredentialStatus = {};
    let given: { secret: string } | { refused: string } = { refused: 'no Secret given' };
    const ports: Ports = {
      keystone,
      secrets,
      delivery,
      backup: { read: async () => backup.id, write: async (d) => void (backup.id = d.application_credential_id), remove: async () => void delete backup.id },
      render: (id, secret) => ({ 'clouds.yaml': `id=${id}`, application_credential_id: id, application_credential_secret: secret }),
      adoption: async () => given,
      writeStatus: async (s) => void (status = s),
      release: async () => undefined,
      isTerminal: () => false,
    };
    const run = (more: Partial<LifecycleOrder> = {}) => reconcile({ prefix: PREFIX, spec, status, secretName: 's', ...extra, ...more }, ports, { clock: () => now });
    return {
      keystone,
      delivery,
      backup,
      run,
      give: (g: typeof given) => void (given = g),
      advance: (ms: number) => void (now = new Date(now.getTime() + ms)),
      get status() {
        return status;
      },
    };
  };

  it('adopts a hand-made credential: no create, the Secret carries it, the backup holds it; the next rotation supersedes and sweeps it', async () => {
    const w = setup(resolveSpec({ rotation: { interval: '1h', gracePeriod: '10m' }, adopt: { credentialID: 'id-1' } }));
    const id = w.keystone.handMade('hand-made-secret');
    w.give({ secret: 'hand-made-secret' });
    await w.run();
    expect(w.keystone.writes).toEqual([]);
    expect(w.status).toMatchObject({ credentialID: id, adoptedCredentialID: id, credentialGeneration: 1 });
    expect(w.delivery.data?.application_credential_secret).toBe('hand-made-secret');
    expect(w.backup.id).toBe(id);
    w.advance(hours(1));
    await w.run();
    expect(w.status).toMatchObject({ credentialGeneration: 2, previousCredentialID: id, adoptedCredentialID: id });
    w.advance(11 * 60_000);
    await w.run();
    expect(w.keystone.credentials.has(id)).toBe(false);
    expect(w.status.adoptedCredentialID).toBeUndefined();
  });

  it.each([
    ['a wrong secret', (k: FakeKeystone) => k.handMade('right'), { secret: 'wrong' }, 'Keystone does not authenticate application credential'],
    ['another user\'s', (k: FakeKeystone) => k.handMade('s', { userId: 'someone-else' }), { secret: 's' }, "is not one of the ordered user's"],
    ['another project\'s', (k: FakeKeystone) => k.handMade('s', { projectId: 'other' }), { secret: 's' }, 'not the ordered project'],
    ['an unrestricted one', (k: FakeKeystone) => k.handMade('s', { unrestricted: true }), { secret: 's' }, 'is unrestricted'],
    ['one whose Secret is missing', (k: FakeKeystone) => k.handMade('s'), { refused: 'Secret tenant-a/legacy does not exist' }, 'Secret tenant-a/legacy does not exist'],
    // Simulation seed 1059590276: after the upgrade from 0.1.0, whose credentials carry no mark, another order's.
    ["another order's from before marks (0.1.0: its name an order's credential name)", (k: FakeKeystone) => k.handMade('s', { name: 'app-2-1234abcd-applicationcredential-credential-v1' }), { secret: 's' }, "is an order's credential name"],
    ["another order's under its alternate name, unmarked", (k: FakeKeystone) => k.handMade('s', { name: 'app-2-1234abcd-applicationcredential-credential-v3-0badcafe' }), { secret: 's' }, "is an order's credential name"],
  ])('refuses %s: AdoptionRefused, nothing minted in its place', async (_what, make, given, message) => {
    const w = setup(resolveSpec({ adopt: { credentialID: 'id-1' } }));
    make(w.keystone);
    w.give(given);
    await expect(w.run()).rejects.toThrow(message);
    expect(w.keystone.writes).toEqual([]);
    expect(w.status.conditions?.find((c) => c.type === 'CredentialReady')).toMatchObject({ status: 'False', reason: CredentialReason.AdoptionRefused });
  });

  it('revoke now, with a crash after any action: the revoked credential is deleted only once the Secret and the backup carry its successor; never more than two', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 1, max: 3 }), async (crashAt, requests) => {
        const w = setup();
        await w.run();
        for (let r = 1; r <= requests; r++) {
          const before = w.status.credentialID as string;
          let calls = 0;
          w.keystone.fault = (call) => {
            if (call === 'delete' && w.keystone.credentials.has(before)) {
              // The revoked credential goes only after its successor is delivered and backed up.
              expect(w.delivery.data?.application_credential_id).not.toBe(before);
              expect(w.backup.id).toBe(w.delivery.data?.application_credential_id);
            }
            if (calls++ === crashAt) throw new Error('crash');
          };
          await w.run({ revokeRequest: `r${r}` }).catch(() => undefined);
          w.keystone.fault = () => undefined;
          await w.run({ revokeRequest: `r${r}` });
          expect(w.keystone.credentials.size).toBeLessThanOrEqual(2);
          expect(w.keystone.credentials.has(before)).toBe(false);
          expect(w.keystone.authenticates(w.delivery.data?.application_credential_id, w.delivery.data?.application_credential_secret)).toBe(true);
          expect(w.status).toMatchObject({ lastRevokeRequest: `r${r}` });
          expect(w.status.previousCredentialID).toBeUndefined();
          expect(rotation.revoked(w.status, w.status.credentialGeneration)).toBe(false);
        }
      }),
      { numRuns: 60 },
    );
  });
});
