import { isAlreadyExists, isConflict, KubeApiError } from '../../../src/kube/errors';
import { Kinds, type Secret } from '../../../src/kube/kinds';
import { MemoryCluster } from '../../../src/kube/memory';
import { defineKind, type KubeObject } from '../../../src/kube/object';

type Thing = KubeObject & { spec?: { size?: number }; status?: { phase?: string; note?: string } };
const Thing = defineKind<Thing>({ group: 'example.io', version: 'v1', kind: 'Thing', plural: 'things', namespaced: true });
const thing = (name: string, extra: Partial<Thing> = {}): Thing => ({ apiVersion: 'example.io/v1', kind: 'Thing', metadata: { name, namespace: 'ns' }, spec: { size: 1 }, ...extra });

describe('MemoryCluster', () => {
  it('stamps uid, resourceVersion and generation; generation moves only with the spec', () => {
    const cluster = new MemoryCluster();
    const a = cluster.put(Thing, thing('a'));
    expect(a.metadata).toMatchObject({ generation: 1, uid: expect.any(String), resourceVersion: expect.any(String) });
    const b = cluster.put(Thing, { ...a, metadata: { ...a.metadata, labels: { x: 'y' } } });
    expect(b.metadata.generation).toBe(1);
    expect(b.metadata.resourceVersion).not.toBe(a.metadata.resourceVersion);
    const c = cluster.put(Thing, { ...b, spec: { size: 2 } });
    expect(c.metadata.generation).toBe(2);
    expect(cluster.get(Thing, 'ns', 'a')).toBe(c);
    expect(cluster.writes).toEqual([]);
  });

  it('writes status guarded by resourceVersion: a stale object fails with 409', async () => {
    const cluster = new MemoryCluster();
    const a = cluster.put(Thing, thing('a'));
    const written = await cluster.patchStatus(Thing, a, { phase: 'Ready' });
    expect(written.status).toEqual({ phase: 'Ready' });
    expect(written.metadata.generation).toBe(1);
    expect(isConflict(await cluster.patchStatus(Thing, a, { phase: 'Other' }).catch((e: unknown) => e))).toBe(true);
    expect(cluster.writes.map((w) => w.verb)).toEqual(['patchStatus', 'patchStatus']);
  });

  it('adds and removes finalizers; delete waits for them and removes the object with the last one', async () => {
    const cluster = new MemoryCluster();
    let a: Thing | undefined = cluster.put(Thing, thing('a'));
    a = await cluster.addFinalizer(Thing, a, 'example.io/teardown');
    expect(await cluster.addFinalizer(Thing, a, 'example.io/teardown')).toBe(a); // no write
    expect(cluster.writes.filter((w) => w.verb === 'addFinalizer')).toHaveLength(1);
    expect(await cluster.delete(Thing, 'ns', 'a')).toBe(true);
    a = cluster.get(Thing, 'ns', 'a');
    expect(a?.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect(await cluster.removeFinalizer(Thing, a as Thing, 'example.io/teardown')).toBeUndefined();
    expect(cluster.get(Thing, 'ns', 'a')).toBeUndefined();
    expect(await cluster.delete(Thing, 'ns', 'a')).toBe(false);
  });

  it('applies: creates, merges, prunes fields it applied before, and refuses a field another manager set unless forced', async () => {
    const cluster = new MemoryCluster();
    const created = await cluster.apply(Kinds.Secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns', labels: { a: '1' } }, data: { k: 'dg==', old: 'dg==' } });
    expect(created.metadata.uid).toEqual(expect.any(String));
    const updated = await cluster.apply<Secret>(Kinds.Secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns', labels: { a: '1' } }, data: { k: 'dw==' } });
    expect(updated.data).toEqual({ k: 'dw==' });
    cluster.put(Kinds.Secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'foreign', namespace: 'ns' }, data: { k: 'eA==' } } as Secret);
    const config = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'foreign', namespace: 'ns' }, data: { k: 'eQ==' } };
    await expect(cluster.apply(Kinds.Secret, config)).rejects.toThrow(/conflict with "user": \.data\.k/);
    expect((await cluster.apply<Secret>(Kinds.Secret, config, { force: true })).data).toEqual({ k: 'eQ==' });
  });

  it('applies with a resourceVersion precondition: 409 unless the object is at that version', async () => {
    const cluster = new MemoryCluster();
    const a = cluster.put(Thing, thing('a'));
    const applied = await cluster.apply(Thing, { apiVersion: 'example.io/v1', kind: 'Thing', metadata: { name: 'a', namespace: 'ns', resourceVersion: a.metadata.resourceVersion }, spec: { size: 3 } }, { force: true });
    expect(applied.spec?.size).toBe(3);
    const stale = await cluster.apply(Thing, { apiVersion: 'example.io/v1', kind: 'Thing', metadata: { name: 'a', namespace: 'ns', resourceVersion: a.metadata.resourceVersion }, spec: { size: 4 } }, { force: true }).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
    expect(cluster.get(Thing, 'ns', 'a')?.spec?.size).toBe(3);
  });

  it('collects dependents of a deleted owner, records events and injected failures', async () => {
    const cluster = new MemoryCluster();
    const owner = cluster.put(Thing, thing('owner'));
    await cluster.apply(Kinds.Secret, {
      apiVersion: 'v1', kind: 'Secret',
      metadata: { name: 'child', namespace: 'ns', ownerReferences: [{ apiVersion: 'example.io/v1', kind: 'Thing', name: 'owner', uid: owner.metadata.uid as string }] },
    });
    await cluster.delete(Thing, 'ns', 'owner');
    expect(cluster.get(Kinds.Secret, 'ns', 'child')).toBeUndefined();
    await cluster.event(owner, { type: 'Normal', reason: 'Ready', action: 'Reconcile', note: 'ready' });
    expect(cluster.events.map((e) => [e.reason, e.regarding.name, e.metadata.namespace])).toEqual([['Ready', 'owner', 'ns']]);
    cluster.failNext('apply', new KubeApiError(500, 'InternalError', 'boom', 'PATCH'));
    await expect(cluster.apply(Kinds.Secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x', namespace: 'ns' } })).rejects.toThrow('boom');
  });

  it('serves indexes and notifies listeners', async () => {
    const cluster = new MemoryCluster();
    const changes: string[] = [];
    cluster.onChange((c) => changes.push(`${c.type} ${c.object.metadata.name}`));
    cluster.index(Thing, 'size', (t) => [String(t.spec?.size)]);
    cluster.put(Thing, thing('a'));
    cluster.put(Thing, thing('b', { spec: { size: 2 } }));
    expect(cluster.list(Thing, { index: { name: 'size', value: '2' } }).map((t) => t.metadata.name)).toEqual(['b']);
    cluster.drop(Thing, 'ns', 'a');
    expect(changes).toEqual(['added a', 'added b', 'deleted a']);
  });
});

describe('MemoryCluster create and read', () => {
  it('creates once; a second create fails with AlreadyExists, which is not a conflict', async () => {
    const cluster = new MemoryCluster();
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'p', namespace: 'ns' }, data: { v: 'MQ==' } } as Secret;
    const created = await cluster.create(Kinds.Secret, secret);
    expect(created.metadata.uid).toEqual(expect.any(String));
    const error = await cluster.create(Kinds.Secret, secret).catch((e: unknown) => e);
    expect([isAlreadyExists(error), isConflict(error)]).toEqual([true, false]);
    expect(await cluster.read(Kinds.Secret, 'ns', 'p')).toBe(created);
  });
});
