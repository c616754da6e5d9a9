/**
 * A credential's roles and access rules (issue 42): the pure rule `privilegesDiffer` and the rotation it triggers.
 * Keystone keeps both immutable, so a change is a successor minted with the spec's, switched to with the usual grace
 * period, and never while a grace period runs, as for any trigger.
 */
import { decide, privilegesDiffer, rolesNotHeld, rotation, type GenerationRecord, type HeldPrivileges } from '../../../src/lifecycle';
import { T0, condition, hours, kinds, liveStatus, order, plus, world } from './builders';

const GET = { service: 'things', method: 'GET', path: '/v1/things/*' };
const DELETE = { ...GET, method: 'DELETE' };
const all = (roles: string[] = ['member', 'reader']): HeldPrivileges => ({ roles, subset: false, accessRules: [] });
const subset = (roles: string[], accessRules = [GET]): HeldPrivileges => ({ roles, subset: true, accessRules });

describe('privilegesDiffer', () => {
  it('no roles asked: a credential minted with every role does not differ, even after the user gained roles', () => {
    expect(privilegesDiffer({}, all())).toBe(false);
    expect(privilegesDiffer({}, all(['member']))).toBe(false);
  });
  it('no roles asked: one minted with a chosen subset differs (it must carry every role again)', () => {
    expect(privilegesDiffer({}, subset(['reader'], []))).toBe(true);
  });
  it('roles asked: the set Keystone lists must be that set, in any order, however it was minted', () => {
    expect(privilegesDiffer({ roles: ['reader', 'member'] }, all(['member', 'reader']))).toBe(false);
    expect(privilegesDiffer({ roles: ['reader'] }, all(['member', 'reader']))).toBe(true);
    expect(privilegesDiffer({ roles: ['reader'], accessRules: [GET] }, subset(['reader']))).toBe(false);
    expect(privilegesDiffer({ roles: ['member'], accessRules: [GET] }, subset(['reader']))).toBe(true);
  });
  it('roles asked of a face that cannot confirm the roles held: they differ (the update observes Keystone)', () => {
    expect(privilegesDiffer({ roles: ['reader'] }, { subset: false, accessRules: [] })).toBe(true);
  });
  it('access rules: as sets of (service, method, path); none asked and none held are the same', () => {
    expect(privilegesDiffer({ accessRules: [DELETE, GET] }, { ...all(), accessRules: [GET, DELETE] })).toBe(false);
    expect(privilegesDiffer({ accessRules: [GET] }, all())).toBe(true);
    expect(privilegesDiffer({}, { ...all(), accessRules: [GET] })).toBe(true);
    expect(privilegesDiffer({ accessRules: [GET] }, { ...all(), accessRules: [DELETE] })).toBe(true);
  });
  it('privileges a face does not know never differ (a state written before issue 42)', () => {
    expect(privilegesDiffer({ roles: ['reader'], accessRules: [GET] }, undefined)).toBe(false);
  });
  it('rolesNotHeld: the roles asked that are not held, in the order asked', () => {
    expect(rolesNotHeld(['admin', 'member', 'swift'], ['member', 'reader'])).toEqual(['admin', 'swift']);
    expect(rolesNotHeld(undefined, [])).toEqual([]);
  });
});

describe('a change of roles or access rules rotates (trigger privileges-changed)', () => {
  const EXP1 = plus(T0, hours(744));
  const NEXT1 = plus(T0, hours(720));
  const live = (privileges: HeldPrivileges): GenerationRecord => ({ generation: 1, parked: true, credential: { id: 'cred-1', expiresAt: EXP1, privileges } });

  it('mints a successor carrying the spec\'s roles and rules; the superseded credential keeps its own through the grace period', () => {
    const o = order(liveStatus(1, T0, EXP1, NEXT1), { roles: ['reader'], accessRules: [GET] });
    const now = plus(T0, hours(1));
    expect(rotation.trigger(o, live(all()), now)).toBe('privileges-changed');
    const plan = decide(o, world([live(all())]), now);
    expect(kinds(plan)).toEqual(['park:2', 'mint:2']);
    expect(rotation.describe('privileges-changed', o)).toBe("live credential's roles or access rules differ from the spec's");
  });

  it('nothing to do once the delivered credential carries what the spec asks', () => {
    const o = order(liveStatus(1, T0, EXP1, NEXT1), { roles: ['reader'], accessRules: [GET] });
    expect(kinds(decide(o, world([live(subset(['reader']))]), plus(T0, hours(1))))).toEqual([]);
  });

  it('waits for a running grace period, says so, and rotates at its end after the sweep', () => {
    const deleteAt = plus(T0, hours(24));
    const status = { ...liveStatus(2, T0, EXP1, NEXT1), credentialID: 'cred-2', previousCredentialID: 'cred-1', previousCredentialGeneration: 1, previousCredentialDeleteAt: deleteAt.toISOString() };
    const o = order(status, { accessRules: [GET] });
    const records: GenerationRecord[] = [
      { generation: 1, parked: true, credential: { id: 'cred-1', expiresAt: EXP1, privileges: all() } },
      { generation: 2, parked: true, credential: { id: 'cred-2', expiresAt: EXP1, privileges: all() } },
    ];
    const w = { generations: records, delivery: { state: 'delivered' as const, credentialId: 'cred-2', intact: true } };
    const waiting = decide(o, w, plus(T0, hours(1)));
    expect(kinds(waiting)).toEqual([]);
    expect(condition(waiting, 'CredentialReady')).toMatchObject({
      status: 'True',
      reason: 'CredentialMinted',
      message: `generation 2 exists in Keystone; its roles or access rules differ from the spec's: a successor carrying the spec's is created when the grace period of generation 1 ends (${deleteAt.toISOString()})`,
    });
    expect(waiting.wakeAt).toEqual(deleteAt);
    expect(kinds(decide(o, w, deleteAt))).toEqual(['delete:1', 'discard:1', 'park:3', 'mint:3']);
  });
});
