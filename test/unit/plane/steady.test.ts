/**
 * A steady plane costs nothing (architecture.md): once every order has converged, a resync pass makes no Keystone call
 * and no API write; any change to an order's inputs is observed in full again.
 */
import { ConvergedPasses, reconcileAssignment, reconcileControlPlane, reconcileProject, reconcileUser, type PassResult } from '../../../src/plane';
import { CP_NS, NS, assignment, plane, project, user } from './fakes';

const keys = {
  user: { namespace: NS, name: 'alice' },
  project: { namespace: NS, name: 'proj' },
  assignment: { namespace: NS, name: 'alice-member' },
  cp: { namespace: CP_NS, name: 'cp' },
};

async function all(deps: Parameters<typeof reconcileUser>[1]): Promise<PassResult[]> {
  return [
    await reconcileControlPlane(keys.cp, deps),
    await reconcileUser(keys.user, deps),
    await reconcileProject(keys.project, deps),
    await reconcileAssignment(keys.assignment, deps),
  ];
}

describe('a steady plane', () => {
  it('a full resync of converged orders makes 0 Keystone calls and 0 API writes', async () => {
    const { cluster, keystone, deps: base } = plane();
    const deps = { ...base, memo: new ConvergedPasses() };
    cluster.put('KeystoneUser', user());
    cluster.put('KeystoneProject', project());
    cluster.put('KeystoneRoleAssignment', assignment());
    for (let i = 0; i < 3; i++) await all(deps);
    keystone.calls.length = 0;
    const writes = cluster.writes.length;
    const resync = await all(deps);
    expect(resync.map((r) => r.skipped)).toEqual([true, true, true, true]);
    expect(keystone.calls).toEqual([]);
    expect(cluster.writes.length).toBe(writes);
    expect(deps.memo.size).toBe(4);
  });

  it('a changed input is a full pass: a deleted delivered Secret is written again, a raised generation rotates', async () => {
    const { cluster, keystone, deps: base } = plane();
    const deps = { ...base, memo: new ConvergedPasses() };
    cluster.put('KeystoneUser', user());
    for (let i = 0; i < 3; i++) await reconcileUser(keys.user, deps);
    cluster.secrets.delete(`${NS}/alice-credentials`);
    expect((await reconcileUser(keys.user, deps)).actions).toEqual(['deliver']);
    cluster.put('KeystoneUser', { ...user('alice', { passwordGeneration: 2 }), status: cluster.object('KeystoneUser', keys.user)?.status });
    expect((await reconcileUser(keys.user, deps)).actions).toContain('set-password');
    expect([...keystone.users.values()][0].password).toBe('pw-2');
  });

  it('after a restart (a new memo, as on the standby that took over), converged orders settled by the cache make 0 Keystone calls and 0 API writes', async () => {
    const { cluster, keystone, deps: base } = plane();
    cluster.put('KeystoneUser', user());
    cluster.put('KeystoneProject', project());
    cluster.put('KeystoneRoleAssignment', assignment());
    const before = { ...base, memo: new ConvergedPasses() };
    for (let i = 0; i < 3; i++) await all(before);
    keystone.calls.length = 0;
    const writes = cluster.writes.length;
    const restarted = { ...base, memo: new ConvergedPasses() };
    expect((await all(restarted)).map((r) => r.skipped)).toEqual([true, true, true, true]);
    expect((await all(restarted)).map((r) => r.skipped)).toEqual([true, true, true, true]);
    expect(keystone.calls).toEqual([]);
    expect(cluster.writes.length).toBe(writes);
    // A change after that is a full pass, as without the restart.
    cluster.secrets.delete(`${NS}/alice-credentials`);
    expect((await reconcileUser(keys.user, restarted)).actions).toEqual(['deliver']);
  });

  it('after a restart, what the cache does not show settled gets its full pass: an edited delivered Secret, a raised generation, a status not Ready', async () => {
    const { cluster, keystone, deps: base } = plane();
    cluster.put('KeystoneUser', user());
    cluster.put('KeystoneProject', project());
    const before = { ...base, memo: new ConvergedPasses() };
    for (let i = 0; i < 3; i++) {
      await reconcileUser(keys.user, before);
      await reconcileProject(keys.project, before);
    }
    const secret = cluster.secrets.get(`${NS}/alice-credentials`);
    cluster.putSecret({ ...secret!, data: { ...secret!.data, password: 'edited' } });
    keystone.calls.length = 0;
    expect((await reconcileUser(keys.user, { ...base, memo: new ConvergedPasses() })).actions).toEqual(['deliver']);
    cluster.put('KeystoneUser', { ...user('alice', { passwordGeneration: 2 }), status: cluster.object('KeystoneUser', keys.user)?.status });
    expect((await reconcileUser(keys.user, { ...base, memo: new ConvergedPasses() })).actions).toContain('set-password');
    const p = cluster.object('KeystoneProject', keys.project)!;
    cluster.put('KeystoneProject', { ...p, status: { ...p.status, conditions: p.status!.conditions!.map((c) => ({ ...c, status: 'False' as const })) } });
    expect((await reconcileProject(keys.project, { ...base, memo: new ConvergedPasses() })).skipped).toBeUndefined();
    expect(keystone.calls.length).toBeGreaterThan(0);
  });

  it('a failed pass is never remembered', async () => {
    const { cluster, keystone, deps: base } = plane();
    const deps = { ...base, memo: new ConvergedPasses() };
    cluster.put('KeystoneProject', project());
    keystone.failNext('findProject');
    await expect(reconcileProject(keys.project, deps)).rejects.toThrow();
    expect(deps.memo.size).toBe(0);
  });
});

describe('the memo of converged passes', () => {
  it('forgets, at a sweep, the objects that no longer exist, and keeps the others', async () => {
    let now = 0;
    let live = ['a', 'b'];
    const memo = new ConvergedPasses({ live: () => live, sweepMs: 1_000, now: () => now });
    for (const uid of ['a', 'b', 'gone']) {
      memo.firstSight(uid);
      memo.record(uid, `fp-${uid}`);
    }
    expect(memo.size).toBe(3);
    now = 999;
    expect(memo.unchanged('gone', 'fp-gone')).toBe(true); // before the sweep period: nothing swept
    now = 1_000;
    live = ['a', 'b', 'new'];
    expect(memo.unchanged('a', 'fp-a')).toBe(true);
    expect([memo.size, memo.met]).toEqual([2, 2]);
    expect(memo.unchanged('gone', 'fp-gone')).toBe(false);
    expect(memo.firstSight('b')).toBe(false);
    // Without `live` nothing is ever swept.
    const plain = new ConvergedPasses({ sweepMs: 0, now: () => now });
    plain.record('x', 'fp');
    now = 1_000_000;
    expect(plain.unchanged('x', 'fp')).toBe(true);
  });
});
