/**
 * decide(): every rule of the spec's Rotation, Consent and Delivered Secret sections, one named test each.
 */
import { AdmissionReason, CredentialReason, DeliveryReason, resolveSpec } from '../../../src/api';
import { decide, decideFailure } from '../../../src/lifecycle';
import { T0, at, condition, held, hours, kinds, liveStatus, mintOf, order, plus, world } from './builders';

const EXP1 = plus(T0, hours(720 + 24)); // generation 1 minted at T0 with the defaults
const NEXT1 = plus(T0, hours(720));
const converged = () => order(liveStatus(1, T0, EXP1, NEXT1));

describe('first credential', () => {
  it('parks the secret before Keystone sees it, then mints generation spec.credentialGeneration', () => {
    const plan = decide(order(), world([]), T0);
    expect(kinds(plan)).toEqual(['park:1', 'mint:1']);
    expect(mintOf(plan)?.name).toBe('app-1234abcd-applicationcredential-credential-v1');
    expect(condition(plan, 'CredentialReady')).toMatchObject({ status: 'False', reason: CredentialReason.WaitingForCredential });
    expect(condition(plan, 'DeliveryReady')).toMatchObject({ status: 'False', reason: DeliveryReason.WaitingForCredential });
    expect(condition(plan, 'Ready')).toMatchObject({ status: 'False', reason: 'NotAllReady' });
  });

  it('with the schedule on, the credential expires at creation + interval + grace', () => {
    expect(mintOf(decide(order(), world([]), T0))?.expiresAt).toEqual(EXP1);
    const short = decide(order({}, { rotation: { interval: '1m', gracePeriod: '20s' } }), world([]), T0);
    expect(mintOf(short)?.expiresAt).toEqual(plus(T0, 80_000));
  });

  it('with interval 0s, the credential carries no expiry and no nextRotation is set', () => {
    const o = order({}, { rotation: { interval: '0s' } });
    expect(mintOf(decide(o, world([]), T0))?.expiresAt).toBeUndefined();
    const switched = decide(o, world([{ generation: 1, parked: true, credential: { id: 'cred-1' } }], { delivery: { state: 'absent' } }), T0);
    expect(switched.status.nextRotation).toBeUndefined();
    expect(switched.status.credentialExpiresAt).toBeUndefined();
  });

  it('starts at the ordered generation when it is above 1', () => {
    expect(kinds(decide(order({}, { credentialGeneration: 3 }), world([]), T0))).toEqual(['park:3', 'mint:3']);
  });
});

describe('the switch', () => {
  it('switches only once Keystone holds the successor', () => {
    const parkedOnly = decide(converged(), world([held(1, EXP1), { generation: 2, parked: true }]), plus(NEXT1, 1000));
    expect(kinds(parkedOnly)).toEqual(['mint:2']);
    expect(parkedOnly.status.credentialGeneration).toBe(1);
  });

  it('sets previousCredentialID/Generation/DeleteAt at the switch, deleteAt = switch + gracePeriod', () => {
    const now = plus(NEXT1, -5000); // a superseded credential that outlives switch + gracePeriod (see late-rotation.test.ts)
    const exp2 = plus(now, hours(744));
    const plan = decide(converged(), world([held(1, EXP1), held(2, exp2)], { delivery: { state: 'delivered', credentialId: 'cred-1', intact: true } }), now);
    expect(kinds(plan)).toEqual(['deliver:2']);
    expect(plan.status).toMatchObject({
      credentialID: 'cred-2',
      credentialGeneration: 2,
      previousCredentialID: 'cred-1',
      previousCredentialGeneration: 1,
      previousCredentialDeleteAt: plus(now, hours(24)).toISOString().replace('.000Z', 'Z'),
      lastRotation: now.toISOString().replace('.000Z', 'Z'),
      credentialExpiresAt: exp2.toISOString().replace('.000Z', 'Z'),
    });
    expect(condition(plan, 'DeliveryReady')).toMatchObject({ status: 'True', reason: DeliveryReason.Delivered });
    expect(plan.status.secretName).toBe('app-credentials');
    expect(plan.status.secretKeys).toEqual(['clouds.yaml', 'application_credential_id', 'application_credential_secret']);
  });

  it('backup before delivery: the backup takes the new document before the Secret does', () => {
    const now = plus(NEXT1, 5000);
    const plan = decide(converged(), world([held(1, EXP1), held(2)], { backup: { credentialId: 'cred-1' }, delivery: { state: 'delivered', credentialId: 'cred-1', intact: true } }), now);
    expect(kinds(plan)).toEqual(['backup:2', 'deliver:2']);
  });

  it('a Secret the order does not own is never taken over: DeliveryRefused, no switch', () => {
    const plan = decide(order(), world([held(1)], { delivery: { state: 'foreign' } }), T0);
    expect(kinds(plan)).toEqual([]);
    expect(plan.status.credentialGeneration).toBeUndefined();
    expect(condition(plan, 'DeliveryReady')).toMatchObject({ status: 'False', reason: DeliveryReason.DeliveryRefused });
  });
});

const carrying2 = { delivery: { state: 'delivered', credentialId: 'cred-2', intact: true } } as const;

describe('the sweep', () => {
  const inGrace = (deleteAt: Date) =>
    order({ ...liveStatus(2, NEXT1, plus(NEXT1, hours(744)), plus(NEXT1, hours(720))), previousCredentialID: 'cred-1', previousCredentialGeneration: 1, previousCredentialDeleteAt: deleteAt.toISOString() });

  it('deletes the superseded credential after previousCredentialDeleteAt, then clears the previous fields', () => {
    const deleteAt = plus(NEXT1, hours(24));
    const plan = decide(inGrace(deleteAt), world([held(1, EXP1), held(2)], carrying2), plus(deleteAt, 1));
    expect(kinds(plan)).toEqual(['delete:1', 'discard:1']);
    expect(plan.status.previousCredentialID).toBeUndefined();
    expect(plan.status.previousCredentialGeneration).toBeUndefined();
    expect(plan.status.previousCredentialDeleteAt).toBeUndefined();
  });

  it('keeps the superseded credential before previousCredentialDeleteAt', () => {
    const deleteAt = plus(NEXT1, hours(24));
    const plan = decide(inGrace(deleteAt), world([held(1, EXP1), held(2)], carrying2), plus(deleteAt, -1000));
    expect(kinds(plan)).toEqual([]);
    expect(plan.status.previousCredentialGeneration).toBe(1);
    expect(plan.wakeAt).toEqual(deleteAt);
  });
});

describe('rotation triggers', () => {
  it('the schedule is due: now >= status.nextRotation rotates to N+1', () => {
    expect(kinds(decide(converged(), world([held(1, EXP1)]), NEXT1))).toEqual(['park:2', 'mint:2']);
  });

  it('the schedule is not due: nothing happens and the order wakes at nextRotation', () => {
    const plan = decide(converged(), world([held(1, EXP1)]), plus(NEXT1, -1000));
    expect(kinds(plan)).toEqual([]);
    expect(plan.wakeAt).toEqual(NEXT1);
    expect(condition(plan, 'Ready')).toMatchObject({ status: 'True', reason: 'AllReady' });
  });

  it('spec.credentialGeneration above status.credentialGeneration creates that generation directly (1 → 5 mints 5)', () => {
    const o = order(liveStatus(1, T0, EXP1, NEXT1), { credentialGeneration: 5 });
    expect(kinds(decide(o, world([held(1, EXP1)]), plus(T0, 1000)))).toEqual(['park:5', 'mint:5']);
  });

  it('the live credential has expired in Keystone', () => {
    const o = order(liveStatus(1, T0, EXP1), { rotation: { interval: '0s' } });
    expect(kinds(decide(o, world([held(1, EXP1)]), EXP1))).toEqual(['park:2', 'mint:2']);
  });

  it('the secret of the live credential is lost (Keystone cannot hand it back)', () => {
    const lost = { generation: 1, parked: false, credential: { id: 'cred-1', expiresAt: EXP1 } };
    expect(kinds(decide(converged(), world([lost]), plus(T0, 1000)))).toEqual(['park:2', 'mint:2']);
  });

  it('the live credential is gone from Keystone (deleted out of band)', () => {
    const plan = decide(converged(), world([{ generation: 1, parked: true }]), plus(T0, 1000));
    expect(kinds(plan)).toEqual(['park:2', 'mint:2']);
    expect(condition(plan, 'CredentialReady')).toMatchObject({ status: 'False', reason: CredentialReason.WaitingForCredential });
  });
});

describe('never more than two credentials', () => {
  const deleteAt = plus(NEXT1, hours(24));
  const grace = order({ ...liveStatus(2, NEXT1, plus(NEXT1, hours(744)), plus(NEXT1, hours(720))), previousCredentialID: 'cred-1', previousCredentialGeneration: 1, previousCredentialDeleteAt: deleteAt.toISOString() }, { credentialGeneration: 7 });

  it.each([
    ['generation raised', world([held(1, EXP1), held(2)], carrying2)],
    ['live gone', world([held(1, EXP1), { generation: 2, parked: true }])],
    ['secret lost', world([held(1, EXP1), { generation: 2, parked: false, credential: { id: 'cred-2' } }])],
  ])('no rotation starts while a grace period runs, whatever the trigger (%s)', (_name, w) => {
    expect(kinds(decide(grace, w, plus(NEXT1, 1000)))).toEqual([]);
  });

  it('the rotation starts once the grace period is over, after the sweep', () => {
    expect(kinds(decide(grace, world([held(1, EXP1), held(2)], carrying2), deleteAt))).toEqual(['delete:1', 'discard:1', 'park:7', 'mint:7']);
  });
});

describe('a rotation under way', () => {
  it('is continued, never restarted: a parked successor is minted under its own generation', () => {
    const o = order(liveStatus(1, T0, EXP1, NEXT1), { credentialGeneration: 9 });
    expect(kinds(decide(o, world([held(1, EXP1), { generation: 2, parked: true }]), plus(NEXT1, 1)))).toEqual(['mint:2']);
  });

  it('a successor with a terminal error is continued (CredentialFailed) until the generation is raised above it', () => {
    const failed = { generation: 2, parked: true, failure: 'Keystone refused: 403 forbidden' };
    const plan = decide(converged(), world([held(1, EXP1), failed]), plus(NEXT1, 1));
    expect(kinds(plan)).toEqual([]);
    expect(condition(plan, 'CredentialReady')).toMatchObject({ status: 'False', reason: CredentialReason.CredentialFailed });
    expect(condition(plan, 'CredentialReady')?.message).toContain('generation 2');
  });

  it('raised above a failed successor: the successor is deleted and the raised generation created', () => {
    const failed = { generation: 2, parked: true, failure: 'refused' };
    const o = order(liveStatus(1, T0, EXP1, NEXT1), { credentialGeneration: 3 });
    expect(kinds(decide(o, world([held(1, EXP1), failed]), plus(NEXT1, 1)))).toEqual(['discard:2', 'park:3', 'mint:3']);
  });

  it('raised to the failed generation itself: still continued, nothing deleted', () => {
    const failed = { generation: 2, parked: true, failure: 'refused' };
    const o = order(liveStatus(1, T0, EXP1, NEXT1), { credentialGeneration: 2 });
    expect(kinds(decide(o, world([held(1, EXP1), failed]), plus(NEXT1, 1)))).toEqual([]);
  });
});

describe('crash-safe minting', () => {
  it('a credential found in Keystone whose secret is lost is deleted and re-created (it was never delivered)', () => {
    const orphan = { generation: 2, parked: false, credential: { id: 'cred-2' } };
    expect(kinds(decide(converged(), world([held(1, EXP1), orphan]), plus(NEXT1, 1)))).toEqual(['delete:2', 'park:2', 'mint:2']);
  });

  it('a credential created but not yet recorded is switched to, not minted again', () => {
    const plan = decide(order(), world([held(1)], { delivery: { state: 'absent' } }), T0);
    expect(kinds(plan)).toEqual(['deliver:1']);
    expect(plan.status.credentialGeneration).toBe(1);
  });

  it('a lower generation beside the delivered one with no grace period recorded (a lost status) gets one, then is swept', () => {
    const now = plus(T0, 1);
    const stray = decide(order(liveStatus(3, T0, EXP1, NEXT1)), world([held(1), held(3, EXP1)], { delivery: { state: 'delivered', credentialId: 'cred-3', intact: true } }), now);
    expect(kinds(stray)).toEqual([]);
    expect(stray.status).toMatchObject({ previousCredentialGeneration: 1, previousCredentialDeleteAt: '2026-12-02T00:00:01Z' });
    const later = decide(order(stray.status), world([held(1), held(3, EXP1)], { delivery: { state: 'delivered', credentialId: 'cred-3', intact: true } }), plus(T0, hours(25)));
    expect(kinds(later)).toEqual(['delete:1', 'discard:1']);
  });

  it('a stale successor above the delivered one that is not the newest is deleted at once', () => {
    const stray = decide(order(liveStatus(1, T0, EXP1, NEXT1)), world([held(1, EXP1), { generation: 2, parked: true }, { generation: 3, parked: true }]), plus(T0, 1));
    expect(kinds(stray)).toEqual(['discard:2', 'mint:3']);
  });
});

describe('schedule', () => {
  it('nextRotation = min(lastRotation + interval, credentialExpiresAt − gracePeriod): a lengthened interval never runs into the expiry', () => {
    const o = order(liveStatus(1, T0, EXP1, NEXT1), { rotation: { interval: '2000h' } });
    const plan = decide(o, world([held(1, EXP1)]), plus(T0, 1000));
    expect(plan.status.nextRotation).toBe(plus(EXP1, -hours(24)).toISOString().replace('.000Z', 'Z'));
    const shorter = decide(order(liveStatus(1, T0, EXP1, NEXT1), { rotation: { interval: '100h' } }), world([held(1, EXP1)]), plus(T0, 1000));
    expect(shorter.status.nextRotation).toBe(plus(T0, hours(100)).toISOString().replace('.000Z', 'Z'));
  });

  it('turning the schedule off removes nextRotation, keeps the expiry, and rotates when it expires', () => {
    const off = order(liveStatus(1, T0, EXP1, NEXT1), { rotation: { interval: '0s' } });
    const quiet = decide(off, world([held(1, EXP1)]), plus(NEXT1, 1000));
    expect(kinds(quiet)).toEqual([]);
    expect(quiet.status.nextRotation).toBeUndefined();
    expect(quiet.status.credentialExpiresAt).toBeDefined();
    expect(quiet.wakeAt).toEqual(EXP1);
    const expired = decide({ ...off, status: quiet.status }, world([held(1, EXP1)]), EXP1);
    expect(kinds(expired)).toEqual(['park:2', 'mint:2']);
    expect(mintOf(expired)?.expiresAt).toBeUndefined();
  });

  it('wakes at the earliest of nextRotation, previousCredentialDeleteAt and the live expiry', () => {
    const delivery = { state: 'delivered', credentialId: 'cred-2', intact: true } as const;
    const status = { ...liveStatus(2, at('2026-12-10T00:00:00Z'), at('2027-01-10T00:00:00Z')), previousCredentialID: 'cred-1', previousCredentialGeneration: 1, previousCredentialDeleteAt: '2027-01-02T00:00:00Z' };
    expect(decide(order(status), world([held(1), held(2)], { delivery }), T0).wakeAt).toEqual(at('2027-01-02T00:00:00Z'));
    const later = { ...status, previousCredentialDeleteAt: '2027-01-09T12:00:00Z' };
    expect(decide(order(later), world([held(1), held(2)], { delivery }), T0).wakeAt).toEqual(at('2027-01-09T00:00:00Z'));
    const off = order({ ...status, previousCredentialDeleteAt: '2027-01-12T00:00:00Z' }, { rotation: { interval: '0s' } });
    expect(decide(off, world([held(1), held(2)], { delivery }), T0).wakeAt).toEqual(at('2027-01-10T00:00:00Z'));
  });
});

describe('consent', () => {
  const refused = { admission: { reason: AdmissionReason.NamespaceNotAssigned, message: 'namespace app is not assigned' } };

  it('consent missing → frozen: no action at all, both conditions False/NamespaceNotAssigned', () => {
    const due = order({ ...liveStatus(2, T0, EXP1, NEXT1), previousCredentialID: 'cred-1', previousCredentialGeneration: 1, previousCredentialDeleteAt: T0.toISOString() }, { credentialGeneration: 4 });
    const plan = decide(due, world([held(1), held(2, EXP1)], { ...refused, delivery: { state: 'absent' } }), plus(EXP1, 1));
    expect(kinds(plan)).toEqual([]);
    expect(plan.wakeAt).toBeUndefined();
    expect(condition(plan, 'CredentialReady')).toMatchObject({ status: 'False', reason: 'NamespaceNotAssigned' });
    expect(condition(plan, 'DeliveryReady')).toMatchObject({ status: 'False', reason: 'NamespaceNotAssigned' });
    expect(plan.status.nextRotation).toBe(due.status.nextRotation);
  });

  it('consent back with nextRotation passed → rotates at once', () => {
    expect(kinds(decide(converged(), world([held(1, EXP1)]), plus(NEXT1, hours(1))))).toEqual(['park:2', 'mint:2']);
  });

  it('a gate refusal after the first credential pauses the schedule and keeps the delivered credential', () => {
    const gate = { reason: CredentialReason.NoRoleOnProject, message: 'no role' };
    const plan = decide(converged(), world([held(1, EXP1)], { gate }), plus(NEXT1, 1));
    expect(kinds(plan)).toEqual([]);
    expect(plan.wakeAt).toBeUndefined();
    expect(condition(plan, 'CredentialReady')).toMatchObject({ status: 'False', reason: 'NoRoleOnProject' });
    expect(condition(plan, 'DeliveryReady')).toMatchObject({ status: 'True', reason: 'Delivered' });
  });
});

describe('fleet defaults (issue 48): status.policy says the policy in force', () => {
  const policy = {
    rotation: { interval: '30m', gracePeriod: '5m', jitterPercent: 10 },
    sources: { 'rotation.interval': 'ControlPlane', 'rotation.gracePeriod': 'Order', 'rotation.window': 'Default', 'rotation.jitterPercent': 'ControlPlane', roles: 'Default', accessRules: 'Default' },
  } as const;
  const adopting = (status = {}, defaults = true) => order(status, {}, { spec: resolveSpec({ adopt: { credentialID: 'hand-1' } }), ...(defaults ? { policy: { status: policy } } : {}) });

  it('recorded while defaults apply, dropped once none do', () => {
    expect(decide(adopting(), world([]), T0).status.policy).toEqual(policy);
    expect(decide(adopting({ policy }, false), world([]), T0).status.policy).toBeUndefined();
  });

  it('recorded by a pass whose action failed too: an adoption refused at every pass (finding 48.s1)', () => {
    const [adopt] = decide(adopting(), world([]), T0).actions;
    const failure = { action: adopt!, message: 'adopt generation 1 failed: application credential hand-1 was minted by another order' };
    const status = decideFailure(adopting(), world([]), failure, T0);
    expect(status.conditions?.find((c) => c.type === 'CredentialReady')).toMatchObject({ status: 'False', reason: CredentialReason.AdoptionRefused });
    expect(status.policy).toEqual(policy);
    expect(decideFailure(adopting({ policy }, false), world([]), failure, T0).policy).toBeUndefined();
  });
});

describe('delivery repair', () => {
  it('a deleted Secret is written again', () => {
    expect(kinds(decide(converged(), world([held(1, EXP1)], { delivery: { state: 'absent' } }), plus(T0, 1)))).toEqual(['deliver:1']);
  });

  it('an edited key is rewritten', () => {
    expect(kinds(decide(converged(), world([held(1, EXP1)], { delivery: { state: 'delivered', credentialId: 'cred-1', intact: false } }), plus(T0, 1)))).toEqual(['deliver:1']);
  });

  it('a backup that lost the document is written before the Secret is trusted', () => {
    const plan = decide(converged(), world([held(1, EXP1)], { backup: {} }), plus(T0, 1));
    expect(kinds(plan)).toEqual(['backup:1', 'deliver:1']);
  });
});

describe('KeystoneNotPublished: an order on a cluster its ControlPlane publishes no endpoint for', () => {
  const undeliverable = { reason: DeliveryReason.KeystoneNotPublished, message: 'cluster edge-1 cannot reach Keystone and the ControlPlane publishes no services.keystone.publicEndpoint' } as const;

  it('mints nothing: no credential is created that nobody can be handed', () => {
    const plan = decide(order(), world([], { undeliverable }), T0);
    expect(kinds(plan)).toEqual([]);
    expect(condition(plan, 'DeliveryReady')).toMatchObject({ status: 'False', reason: DeliveryReason.KeystoneNotPublished, message: undeliverable.message });
    expect(condition(plan, 'CredentialReady')).toMatchObject({ status: 'False', reason: CredentialReason.WaitingForCredential, message: expect.stringContaining('cannot be delivered') });
    expect(condition(plan, 'Ready')).toMatchObject({ status: 'False', reason: 'NotAllReady' });
  });

  it('delivers, repairs and switches nothing; the Secret keeps what it carries and secretName is withdrawn from the status', () => {
    const now = plus(NEXT1, 5000);
    const edited = decide(converged(), world([held(1, EXP1)], { undeliverable, delivery: { state: 'delivered', credentialId: 'cred-1', intact: false } }), plus(T0, 1000));
    expect(kinds(edited)).toEqual([]);
    expect(edited.status.secretName).toBeUndefined();
    expect(condition(edited, 'CredentialReady')).toMatchObject({ status: 'True', reason: CredentialReason.CredentialMinted });
    const successor = decide(converged(), world([held(1, EXP1), held(2)], { undeliverable }), now);
    expect(kinds(successor)).toEqual([]);
    expect(successor.status.credentialGeneration).toBe(1);
    expect(kinds(decide(converged(), world([held(1, EXP1)], { undeliverable }), now))).toEqual([]);
  });

  it('a teardown still removes everything', () => {
    const plan = decide(order(liveStatus(1, T0, EXP1, NEXT1), {}, { deleting: true }), world([held(1, EXP1)], { undeliverable }), T0);
    expect(kinds(plan)).toEqual(['delete:1', 'discard:1', 'withdraw', 'release']);
  });
});

describe('teardown', () => {
  it('deletes every generation in Keystone, then the backup, the parked secrets and the Secret, then releases', () => {
    const o = order({ ...liveStatus(2, T0), previousCredentialID: 'cred-1', previousCredentialGeneration: 1 }, {}, { deleting: true });
    const plan = decide(o, world([held(1), held(2), { generation: 3, parked: true }], { backup: { credentialId: 'cred-2' } }), T0);
    expect(kinds(plan)).toEqual(['delete:1', 'delete:2', 'remove-backup', 'discard:1', 'discard:2', 'discard:3', 'withdraw', 'release']);
  });

  it('never removes a Secret it does not own', () => {
    const plan = decide(order({}, {}, { deleting: true }), world([], { delivery: { state: 'foreign' } }), T0);
    expect(kinds(plan)).toEqual(['release']);
  });
});

describe('plans carry no secret', () => {
  it('a plan serializes without any secret material', () => {
    const plan = decide(order(), world([]), T0);
    expect(JSON.stringify(plan)).not.toMatch(/secret"\s*:/);
  });
});
