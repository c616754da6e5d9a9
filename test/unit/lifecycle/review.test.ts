/**
 * The defects an independent review of the engine found, one named test each: failed passes repair first and say what
 * is wrong; an expired successor is never switched to and wakeAt is never in the past; teardown always removes the
 * backup; the schedule fires no earlier than the recorded status.nextRotation.
 */
import { CredentialReason, DeliveryReason, resolveSpec, type KeystoneApplicationCredentialStatus } from '../../../src/api';
import { ActionError, ObservationError, decide, reconcile, type Ports } from '../../../src/lifecycle';
import { MemoryDelivery, MemorySecretStore } from '../../../src/local';
import { FakeKeystone } from '../../support/fake-keystone';
import { T0, condition, held, hours, kinds, liveStatus, order, plus } from './builders';

const PREFIX = 'app-1234abcd-applicationcredential';
/** The delivered document (a function, so a test's own assignment does not narrow the property). */
const doc = (delivery: MemoryDelivery) => delivery.data;
const delivering = (g: number) => ({ state: 'delivered' as const, credentialId: `cred-${g}`, intact: true });

/** A converged order of generation 1 against a fake Keystone, a memory store and an optional failing backup. */
async function converged(withBackup: boolean) {
  const now = { t: T0 };
  const keystone = new FakeKeystone(PREFIX, () => now.t);
  const secrets = new MemorySecretStore();
  const delivery = new MemoryDelivery();
  const backup = { doc: undefined as string | undefined, down: false };
  let status: KeystoneApplicationCredentialStatus = {};
  const ports: Ports = {
    keystone,
    secrets,
    delivery,
    ...(withBackup
      ? {
          backup: {
            read: async () => {
              if (backup.down) throw new Error('connect ECONNREFUSED 127.0.0.1:8200');
              return backup.doc;
            },
            write: async (d) => {
              if (backup.down) throw new Error('connect ECONNREFUSED 127.0.0.1:8200');
              backup.doc = d.application_credential_id;
            },
            remove: async () => void (backup.doc = undefined),
          },
        }
      : {}),
    render: (id, secret) => ({ 'clouds.yaml': `id=${id}`, application_credential_id: id, application_credential_secret: secret }),
    writeStatus: async (s) => void (status = s),
    release: async () => undefined,
    isTerminal: () => false,
  };
  const spec = resolveSpec({ rotation: { interval: '1h', gracePeriod: '30m' } });
  const run = () => reconcile({ prefix: PREFIX, spec, status, secretName: 'app-credentials' }, ports, { clock: () => now.t });
  await run();
  return { keystone, delivery, backup, ports, now, run, get status() { return status; } };
}

describe('a failed pass repairs first and says what is wrong', () => {
  it('Secret deleted while Keystone answers 503 on list: the Secret is written again from the parked secret and the recorded id', async () => {
    const w = await converged(false);
    const id = w.status.credentialID;
    w.delivery.data = undefined;
    w.keystone.fault = (call) => {
      if (call === 'list') throw Object.assign(new Error('Keystone answered 503 Service Unavailable'), { status: 503 });
    };
    await expect(w.run()).rejects.toBeInstanceOf(ObservationError);
    expect(doc(w.delivery)?.application_credential_id).toBe(id);
    expect(w.status.conditions?.find((c) => c.type === 'CredentialReady')).toMatchObject({ status: 'False', reason: CredentialReason.CredentialError });
    expect(w.status.conditions?.find((c) => c.type === 'CredentialReady')?.message).toContain('503');
    expect(w.status.secretName).toBe('app-credentials');
  });

  it('Secret deleted while the successor mint fails with 503: the repair comes before the mint', async () => {
    const w = await converged(false);
    const id = w.status.credentialID;
    w.delivery.data = undefined;
    w.now.t = plus(T0, hours(1) + 1000); // the schedule is due
    w.keystone.fault = (call) => {
      if (call === 'create') throw Object.assign(new Error('Keystone answered 503 Service Unavailable'), { status: 503 });
    };
    await expect(w.run()).rejects.toBeInstanceOf(ActionError);
    expect(doc(w.delivery)?.application_credential_id).toBe(id);
    expect(w.status.conditions?.find((c) => c.type === 'CredentialReady')).toMatchObject({ status: 'False', reason: CredentialReason.CredentialError });
    expect(w.status.conditions?.find((c) => c.type === 'CredentialReady')?.message).toMatch(/mint generation 2 failed: .*503/);
  });

  it('OpenBao down and the Secret deleted: the status stops claiming Delivered until the Secret carries the credential, BackupNotSynced says why', async () => {
    const w = await converged(true);
    expect(w.backup.doc).toBe(w.status.credentialID);
    w.backup.down = true;
    w.delivery.data = undefined;
    await expect(w.run()).rejects.toBeInstanceOf(ObservationError);
    const delivery = w.status.conditions?.find((c) => c.type === 'DeliveryReady');
    expect(delivery).toMatchObject({ status: 'False', reason: DeliveryReason.BackupNotSynced });
    expect(delivery?.message).toContain('ECONNREFUSED');
    // The live document was backed up at its switch; the Secret is written again for its consumers.
    expect(doc(w.delivery)?.application_credential_id).toBe(w.status.credentialID);
  });

  it('a failed deliver records DeliveryError and drops secretName while the Secret does not carry the credential', async () => {
    const w = await converged(false);
    w.delivery.data = undefined;
    const write = w.delivery.write.bind(w.delivery);
    w.delivery.write = async () => {
      throw new Error('secrets "app-credentials" is forbidden');
    };
    await expect(w.run()).rejects.toBeInstanceOf(ActionError);
    expect(w.status.conditions?.find((c) => c.type === 'DeliveryReady')).toMatchObject({ status: 'False', reason: DeliveryReason.DeliveryError });
    expect(w.status.secretName).toBeUndefined();
    expect(w.status.secretKeys).toBeUndefined();
    w.delivery.write = write;
    await w.run();
    expect(w.status.secretName).toBe('app-credentials');
  });

  it('a failed backup write records BackupNotSynced and the Secret keeps the old generation', async () => {
    const w = await converged(true);
    const old = w.status.credentialID;
    w.now.t = plus(T0, hours(1) + 1000);
    w.backup.down = true;
    await expect(w.run()).rejects.toBeInstanceOf(ObservationError);
    expect(doc(w.delivery)?.application_credential_id).toBe(old);
    expect(w.status.credentialID).toBe(old);
    expect(w.status.conditions?.find((c) => c.type === 'DeliveryReady')).toMatchObject({ status: 'False', reason: DeliveryReason.BackupNotSynced });
    w.backup.down = false;
    await w.run();
    expect(doc(w.delivery)?.application_credential_id).not.toBe(old);
    expect(w.backup.doc).toBe(w.delivery.data?.application_credential_id);
  });

  // spec, Rotation: "status.nextRotation is the earlier of status.lastRotation plus the interval and
  // status.credentialExpiresAt minus the grace period" (1h and 30m here), and "the schedule is due: the clock has
  // reached status.nextRotation". While the switch fails, the rotation is still due: the status names the old
  // credential, and nextRotation stays at the due time that passed (the overdue alert reads it). Once a pass records the
  // switch from the backup (it holds the successor; recorded.ts) while the Secret write still fails, nextRotation is the
  // successor's (before the fix it stayed at the old time beside the successor's lastRotation).
  const formula = (status: KeystoneApplicationCredentialStatus) =>
    new Date(Math.min(Date.parse(status.lastRotation as string) + hours(1), Date.parse(status.credentialExpiresAt as string) - hours(0.5))).toISOString().replace('.000Z', 'Z');
  const forbidden = async (): Promise<void> => {
    throw new Error('secrets "app-credentials" is forbidden');
  };

  it('a due rotation whose backup cannot be written (BackupNotSynced): status.nextRotation stays at the due time that passed until the switch', async () => {
    const w = await converged(true);
    const due = w.status.nextRotation;
    expect(due).toBe(formula(w.status));
    w.backup.down = true;
    for (const minutes of [1, 10, 40]) {
      w.now.t = plus(T0, hours(1) + minutes * 60_000);
      await expect(w.run()).rejects.toBeInstanceOf(ObservationError);
      expect(w.status).toMatchObject({ credentialGeneration: 1, nextRotation: due });
    }
    w.backup.down = false;
    await w.run();
    expect(w.status.credentialGeneration).toBe(2);
    expect(w.status.nextRotation).toBe(formula(w.status));
  });

  it('a due rotation whose Secret cannot be written (DeliveryError): status.nextRotation is the formula of the credential the status names, pass after pass', async () => {
    const w = await converged(true);
    const write = w.delivery.write.bind(w.delivery);
    w.delivery.write = forbidden;
    const seen: string[] = [];
    for (const minutes of [1, 10, 40]) {
      w.now.t = plus(T0, hours(1) + minutes * 60_000);
      await expect(w.run()).rejects.toBeInstanceOf(ActionError);
      expect(w.status.nextRotation).toBe(formula(w.status));
      seen.push(`${w.status.credentialGeneration} ${w.status.nextRotation}`);
    }
    // The first pass: generation 1, still due; the next ones record the switch the backup holds: generation 2's time.
    expect(seen).toEqual(['1 2026-12-01T01:00:00Z', '2 2026-12-01T02:01:00Z', '2 2026-12-01T02:01:00Z']);
    w.delivery.write = write;
    await w.run();
    expect(doc(w.delivery)?.application_credential_id).toBe(w.status.credentialID);
    expect(w.status.nextRotation).toBe(formula(w.status));
  });

  it('no failure message carries a secret', async () => {
    const w = await converged(false);
    const secret = w.delivery.data?.application_credential_secret as string;
    w.delivery.data = undefined;
    w.keystone.fault = (call) => {
      if (call === 'list') throw new Error('Keystone answered 503');
    };
    await expect(w.run()).rejects.toThrow();
    expect(JSON.stringify(w.status)).not.toContain(secret);
  });
});

describe('an expired successor is never switched to', () => {
  const spec = { rotation: { interval: '1h', gracePeriod: '30m' } };
  const live = () => order(liveStatus(1, T0, plus(T0, hours(1.5)), plus(T0, hours(1))), spec);

  it('a successor that expired while its switch was held up is deleted and created again', () => {
    const exp2 = plus(T0, hours(2.5)); // minted at T0 + 1h
    const now = plus(T0, hours(2.6));
    const plan = decide(live(), { generations: [held(1, plus(T0, hours(1.5))), held(2, exp2)], delivery: delivering(1) }, now);
    expect(kinds(plan)).toEqual(['delete:2', 'park:2', 'mint:2']);
    expect(plan.status.credentialGeneration).toBe(1);
  });

  it('a successor that would expire within two grace periods of now is replaced, not switched to', () => {
    const exp2 = plus(T0, hours(2.5));
    const now = plus(T0, hours(1.6)); // exp2 − now = 54m < 2 × 30m
    const plan = decide(live(), { generations: [held(1, plus(T0, hours(1.5))), held(2, exp2)], delivery: delivering(1) }, now);
    expect(kinds(plan)).toEqual(['delete:2', 'park:2', 'mint:2']);
  });

  it('a fresh successor is switched to', () => {
    const now = plus(T0, hours(1));
    const plan = decide(live(), { generations: [held(1, plus(T0, hours(1.5))), held(2, plus(now, hours(1.5)))], delivery: delivering(1) }, now);
    expect(kinds(plan)).toEqual(['deliver:2']);
  });

  it('wakeAt is never in the past: a successor held up by a foreign Secret wakes the order when it must be replaced', () => {
    const now = plus(T0, hours(1));
    const exp2 = plus(now, hours(1.5));
    const plan = decide(live(), { generations: [held(1, plus(T0, hours(1.5))), held(2, exp2)], delivery: { state: 'foreign' } }, now);
    expect(kinds(plan)).toEqual([]);
    expect(plan.wakeAt!.getTime()).toBeGreaterThan(now.getTime());
  });

  it('wakeAt is never in the past when the interval is shortened during a grace period', () => {
    const status = { ...liveStatus(2, T0, plus(T0, hours(744)), plus(T0, hours(720))), previousCredentialID: 'cred-1', previousCredentialGeneration: 1, previousCredentialDeleteAt: plus(T0, hours(24)).toISOString() };
    const now = plus(T0, hours(2));
    const plan = decide(order(status, { rotation: { interval: '1h', gracePeriod: '30m' } }), { generations: [held(1), held(2, plus(T0, hours(744)))], delivery: delivering(2) }, now);
    expect(kinds(plan)).toEqual([]); // no rotation during the grace period
    expect(plan.wakeAt!.getTime()).toBeGreaterThan(now.getTime());
    expect(plan.wakeAt).toEqual(plus(T0, hours(24)));
  });
});

describe('teardown removes the backup whatever its latest version reads', () => {
  it('the latest KV v2 version is soft-deleted (reads as empty): remove-backup is still planned', () => {
    const plan = decide(order(liveStatus(1, T0), {}, { deleting: true }), { generations: [held(1)], backup: {}, delivery: delivering(1) }, T0);
    expect(kinds(plan)).toEqual(['delete:1', 'remove-backup', 'discard:1', 'withdraw', 'release']);
  });

  it('Keystone cannot be listed: nothing is deleted and the order is not released', () => {
    const plan = decide(order(liveStatus(1, T0), {}, { deleting: true }), { generations: [{ generation: 1, parked: true }], keystoneError: '503', backup: {}, delivery: delivering(1) }, T0);
    expect(kinds(plan)).toEqual([]);
  });
});

describe('the schedule fires when the clock reaches the recorded status.nextRotation, not before', () => {
  it('an interval with a fraction of a second: no rotation before the recorded (rounded-up) nextRotation', () => {
    const spec = { rotation: { interval: '1h0.5s', gracePeriod: '30m' } };
    const exp = new Date('2026-12-01T02:00:00.500Z'); // the schedule, not the expiry, bounds nextRotation
    const first = decide(order({}, spec), { generations: [held(1, exp)], delivery: { state: 'absent' } }, T0);
    expect(first.status.nextRotation).toBe('2026-12-01T01:00:01Z');
    const o = order(first.status, spec);
    const w = { generations: [held(1, exp)], delivery: delivering(1) };
    expect(kinds(decide(o, w, new Date('2026-12-01T01:00:00.700Z')))).toEqual([]);
    expect(kinds(decide(o, w, new Date('2026-12-01T01:00:01.000Z')))).toEqual(['park:2', 'mint:2']);
  });

  it('a recorded nextRotation rounded up from lastRotation + interval: nothing starts at the unrounded instant', () => {
    // lastRotation as recorded is rounded down; the recorded deadline rounds up: compare with the recorded value.
    const status = { ...liveStatus(1, T0), lastRotation: '2026-12-01T00:00:00Z', nextRotation: '2026-12-01T01:00:01Z', credentialExpiresAt: '2026-12-01T01:30:01Z' };
    const o = order(status, { rotation: { interval: '1h', gracePeriod: '30m' } });
    const plan = decide(o, { generations: [held(1, new Date('2026-12-01T01:30:01Z'))], delivery: delivering(1) }, new Date('2026-12-01T01:00:00.500Z'));
    expect(kinds(plan)).toEqual([]);
    expect(condition(plan, 'Ready')).toMatchObject({ status: 'True' });
  });
});

describe('one observation per pass', () => {
  it('the first pass lists Keystone once and creates once; a rotation pass the same; a steady pass only lists', async () => {
    const calls: string[] = [];
    const w = await converged(false);
    w.keystone.fault = (call) => void calls.push(call);
    w.now.t = plus(T0, hours(1) + 1000);
    await w.run();
    expect(calls).toEqual(['list', 'create', 'create-after']);
    calls.length = 0;
    await w.run();
    expect(calls).toEqual(['list']);
  });
});
