/**
 * The recorded status is a hint: a status that is lost, stale or behind is rebuilt from what the delivered Secret and
 * the backup carry, and nothing they carry is deleted outside teardown (spec, Delivered Secret: "the delivered
 * credential is never invalid").
 */
import { DeliveryReason } from '../../../src/api';
import { decide } from '../../../src/lifecycle';
import { T0, condition, held, hours, kinds, liveStatus, order, plus } from './builders';

const delivering = (g: number) => ({ state: 'delivered' as const, credentialId: `cred-${g}`, intact: true });
const deleted = (plan: ReturnType<typeof decide>) => plan.actions.filter((a) => a.type === 'delete').map((a) => a.generation);

describe('a lost status (restored cluster)', () => {
  it('status {} with generations 1 and 2 in Keystone and the Secret carrying 1: continues the switch to 2, deletes nothing', () => {
    const now = plus(T0, hours(1));
    const plan = decide(order({}), { generations: [held(1), held(2)], delivery: delivering(1) }, now);
    expect(deleted(plan)).toEqual([]);
    expect(kinds(plan)).toEqual(['deliver:2']);
    expect(plan.status).toMatchObject({ credentialGeneration: 2, credentialID: 'cred-2', previousCredentialGeneration: 1, previousCredentialID: 'cred-1' });
    // The superseded credential gets its full grace period from the switch.
    expect(new Date(plan.status.previousCredentialDeleteAt as string).getTime()).toBeGreaterThanOrEqual(plus(now, hours(24)).getTime());
  });

  it('status {} with only the delivered generation in Keystone: adopts it as delivered, mints nothing', () => {
    const exp = plus(T0, hours(744));
    const plan = decide(order({}), { generations: [held(3, exp)], delivery: delivering(3) }, T0);
    expect(kinds(plan)).toEqual([]);
    expect(plan.status).toMatchObject({ credentialGeneration: 3, credentialID: 'cred-3', secretName: 'app-credentials' });
    expect(plan.status.nextRotation).toBe('2026-12-31T00:00:00Z'); // expiry − grace bounds the schedule
    expect(condition(plan, 'Ready')).toMatchObject({ status: 'True' });
  });

  it('status {} with the Secret deleted and the backup carrying 1: 1 is live and gets a grace period', () => {
    const plan = decide(order({}), { generations: [held(1), held(2)], backup: { credentialId: 'cred-1' }, delivery: { state: 'absent' } }, T0);
    expect(deleted(plan)).toEqual([]);
    expect(kinds(plan)).toEqual(['backup:2', 'deliver:2']);
    expect(plan.status).toMatchObject({ credentialGeneration: 2, previousCredentialGeneration: 1 });
  });
});

describe('a stale status (a write that lost a conflict, or a crash after an action)', () => {
  it('status naming 1 while the Secret carries 2 and 3 is minted: 2 is never deleted; the switch to 3 supersedes 2', () => {
    const now = plus(T0, hours(800));
    const plan = decide(order(liveStatus(1, T0, plus(T0, hours(744)), plus(T0, hours(720)))), { generations: [held(1), held(2), held(3)], delivery: delivering(2) }, now);
    expect(deleted(plan)).not.toContain(2);
    expect(kinds(plan)).toEqual(['deliver:3']);
    expect(plan.status).toMatchObject({ credentialGeneration: 3, previousCredentialGeneration: 2, previousCredentialID: 'cred-2' });
  });

  it('status behind the Secret with no successor: the Secret generation is recorded, the recorded one gets a grace period', () => {
    const now = plus(T0, hours(721));
    const plan = decide(order(liveStatus(1, T0, plus(T0, hours(744)), plus(T0, hours(720)))), { generations: [held(1), held(2)], delivery: delivering(2) }, now);
    expect(kinds(plan)).toEqual([]);
    expect(plan.status).toMatchObject({ credentialGeneration: 2, previousCredentialGeneration: 1, previousCredentialDeleteAt: '2027-01-01T01:00:00Z' }); // now + grace
  });

  it('status two generations behind (restored from an older backup): the generation in its grace period keeps it, nothing is swept as a stray', () => {
    const now = plus(T0, hours(1));
    const plan = decide(order(liveStatus(1, T0, plus(T0, hours(744)), plus(T0, hours(720)))), { generations: [held(2), held(3)], delivery: delivering(3) }, now);
    expect(deleted(plan)).toEqual([]);
    expect(plan.status).toMatchObject({ credentialGeneration: 3, previousCredentialGeneration: 2, previousCredentialID: 'cred-2', previousCredentialDeleteAt: '2026-12-02T01:00:00Z' }); // now + grace
  });

  it('status ahead of the Secret (an older copy restored): the carried generation is kept for a grace period while the Secret is repaired', () => {
    const now = plus(T0, hours(1));
    const plan = decide(order(liveStatus(2, T0)), { generations: [held(1), held(2)], delivery: delivering(1) }, now);
    expect(deleted(plan)).toEqual([]);
    expect(kinds(plan)).toEqual(['deliver:2']);
    expect(plan.status).toMatchObject({ credentialGeneration: 2, previousCredentialGeneration: 1 });
  });

  it('a Secret switched from the superseded credential only now gives it a full grace period from now (found by the property test)', () => {
    // A switch crashed after the backup took generation 2; a later pass rebuilt the status (previous 1, deleteAt then)
    // but failed to write the Secret. Now, past that deleteAt, the Secret is repaired: 1 must live a grace period more.
    const status = { ...liveStatus(2, T0), previousCredentialID: 'cred-1', previousCredentialGeneration: 1, previousCredentialDeleteAt: plus(T0, hours(24)).toISOString() };
    const now = plus(T0, hours(25));
    const plan = decide(order(status), { generations: [held(1), held(2)], backup: { credentialId: 'cred-2' }, delivery: delivering(1) }, now);
    expect(kinds(plan)).toEqual(['deliver:2']);
    expect(plan.status.previousCredentialDeleteAt).toBe(plus(now, hours(24)).toISOString().replace('.000Z', 'Z'));
    const after = decide(order(plan.status), { generations: [held(1), held(2)], backup: { credentialId: 'cred-2' }, delivery: delivering(2) }, plus(now, 1000));
    expect(deleted(after)).toEqual([]);
  });

  it('the sweep waits while the Secret still carries the superseded credential, and the repair comes first', () => {
    const status = { ...liveStatus(2, T0), previousCredentialID: 'cred-1', previousCredentialGeneration: 1, previousCredentialDeleteAt: plus(T0, hours(24)).toISOString() };
    const plan = decide(order(status), { generations: [held(1), held(2)], delivery: delivering(1) }, plus(T0, hours(25)));
    expect(deleted(plan)).toEqual([]);
    expect(kinds(plan)).toEqual(['deliver:2']);
    expect(condition(plan, 'DeliveryReady')).toMatchObject({ status: 'True', reason: DeliveryReason.Delivered });
  });
});

describe('a backup ahead of the Secret whose successor\'s secret is lost (issue 39: a `pulumi up` killed after the backup write)', () => {
  it('no switch to it: the backup takes the delivered document again first, then the successor is deleted and created again', () => {
    const status = { ...liveStatus(2, T0), credentialGeneration: 2 };
    const successor = { generation: 3, parked: false, credential: { id: 'cred-3' } };
    const plan = decide(order(status, { credentialGeneration: 3 }), { generations: [held(2), successor], backup: { credentialId: 'cred-3' }, delivery: delivering(2) }, plus(T0, hours(1)));
    expect(kinds(plan)).toEqual(['backup:2', 'deliver:2', 'delete:3', 'park:3', 'mint:3']);
    expect(plan.status).toMatchObject({ credentialGeneration: 2, credentialID: 'cred-2' });
    expect(plan.status.previousCredentialID).toBeUndefined();
  });

  it('with its secret parked (the operator), the switch happened: it is delivered', () => {
    const plan = decide(order(liveStatus(2, T0), { credentialGeneration: 3 }), { generations: [held(2), held(3)], backup: { credentialId: 'cred-3' }, delivery: delivering(2) }, plus(T0, hours(1)));
    expect(kinds(plan)).toEqual(['deliver:3']);
    expect(plan.status).toMatchObject({ credentialGeneration: 3, previousCredentialGeneration: 2 });
  });
});
