/**
 * A rotation that came late (the operator was down, nobody ran `pulumi up`): the superseded credential has already
 * expired in Keystone, or will before a full grace period. Its grace period ends no later than its own expiry, and one
 * that has passed is swept in the same pass as the switch (spec, Rotation step 3: the grace period is for consumers of
 * a credential that still works).
 */
import { resolveSpec } from '../../../src/api';
import { decide, reconcile, rotation, type Ports } from '../../../src/lifecycle';
import { MemoryDelivery, MemorySecretStore } from '../../../src/local';
import { FakeKeystone } from '../../support/fake-keystone';
import { T0, held, hours, kinds, liveStatus, order, plus, world } from './builders';

const EXP1 = plus(T0, hours(720 + 24));
const NEXT1 = plus(T0, hours(720));
const iso = (d: Date) => d.toISOString().replace('.000Z', 'Z');
const carrying1 = { delivery: { state: 'delivered', credentialId: 'cred-1', intact: true } } as const;

describe('graceDeadline', () => {
  const spec = resolveSpec({});
  it('is switch + gracePeriod while the superseded credential outlives it', () => {
    expect(rotation.graceDeadline(NEXT1, spec, EXP1)).toBe(iso(plus(NEXT1, hours(24))));
    expect(rotation.graceDeadline(NEXT1, spec, undefined)).toBe(iso(plus(NEXT1, hours(24))));
  });
  it('is the superseded credential\'s expiry, rounded down, when that comes first', () => {
    const expiry = new Date(plus(NEXT1, hours(3)).getTime() + 750);
    expect(rotation.graceDeadline(NEXT1, spec, expiry)).toBe(iso(plus(NEXT1, hours(3))));
    expect(new Date(rotation.graceDeadline(NEXT1, spec, expiry)) <= expiry).toBe(true);
  });
});

describe('a late rotation', () => {
  it('caps previousCredentialDeleteAt at the superseded credential\'s expiry when it would outlive it', () => {
    const now = plus(EXP1, -hours(2)); // rotated 22 h late: generation 1 has 2 h left
    const plan = decide(order(liveStatus(1, T0, EXP1, NEXT1)), world([held(1, EXP1), held(2, plus(now, hours(744)))], carrying1), now);
    expect(kinds(plan)).toEqual(['deliver:2']);
    expect(plan.status.previousCredentialDeleteAt).toBe(iso(EXP1));
    expect(plan.wakeAt).toEqual(EXP1);
  });

  it('an already expired superseded credential is due at its expiry, so the next step sweeps it', () => {
    const now = plus(T0, hours(8 * 24 * 4)); // +32 days: generation 1 expired 1 day ago
    const switched = decide(order(liveStatus(1, T0, EXP1, NEXT1)), world([held(1, EXP1), held(2, plus(now, hours(744)))], carrying1), now);
    expect(kinds(switched)).toEqual(['deliver:2']);
    expect(switched.status.previousCredentialDeleteAt).toBe(iso(EXP1));
    const next = decide(order(switched.status), world([held(1, EXP1), held(2, plus(now, hours(744)))], { delivery: { state: 'delivered', credentialId: 'cred-2', intact: true } }), now);
    expect(kinds(next)).toEqual(['delete:1', 'discard:1']);
    expect(next.status.previousCredentialGeneration).toBeUndefined();
  });

  it('a status rebuilt from a Secret ahead of it caps the grace period of an expired superseded credential too', () => {
    const now = plus(EXP1, hours(5));
    const plan = decide(order(liveStatus(1, T0, EXP1, NEXT1)), world([held(1, EXP1), held(2, plus(now, hours(700)))], { delivery: { state: 'delivered', credentialId: 'cred-2', intact: true } }), now);
    expect(plan.status.credentialGeneration).toBe(2);
    expect(kinds(plan)).toEqual(['delete:1', 'discard:1']);
  });

  it('in one runner pass: rotate, switch and sweep the expired credential, leaving one credential in Keystone', async () => {
    let now = T0;
    const clock = () => now;
    const prefix = 'app-1234abcd-applicationcredential';
    const keystone = new FakeKeystone(prefix, clock);
    const secrets = new MemorySecretStore();
    const delivery = new MemoryDelivery();
    let status = {};
    const ports: Ports = {
      keystone,
      secrets,
      delivery,
      render: (id, secret) => ({ 'clouds.yaml': `id=${id}`, application_credential_id: id, application_credential_secret: secret }),
      writeStatus: async (s) => {
        status = s;
      },
      release: async () => undefined,
      isTerminal: () => false,
    };
    const spec = resolveSpec({ rotation: { interval: '168h', gracePeriod: '24h' } });
    const pass = () => reconcile({ prefix, generation: 1, spec, status, secretName: 'app-credentials' }, ports, { clock });
    await pass();
    const first = (await delivery.read())?.data.application_credential_id;
    now = plus(T0, hours(8 * 24 + 1)); // +8 days: generation 1 (7d + 24h) expired an hour ago
    const result = await pass();
    expect(result.status.credentialGeneration).toBe(2);
    expect(result.status.previousCredentialGeneration).toBeUndefined();
    expect(result.status.previousCredentialDeleteAt).toBeUndefined();
    expect([...keystone.credentials.keys()]).toEqual([result.status.credentialID]);
    expect(keystone.credentials.has(first as string)).toBe(false);
    expect(result.wakeAt).toEqual(new Date(result.status.nextRotation as string));
  });
});
