import fc from 'fast-check';
import { MergedStore, Store, labelSelector, matchesLabels, newerOf } from '../../../src/kube/store';
import type { KubeObject } from '../../../src/kube/object';
import { keyOf, objectKey, parseKey } from '../../../src/kube/object';

const obj = (namespace: string | undefined, name: string, extra: Partial<KubeObject['metadata']> & { ref?: string } = {}): KubeObject & { spec: { ref?: string } } => ({
  apiVersion: 'v1',
  kind: 'Thing',
  metadata: { name, ...(namespace ? { namespace } : {}), resourceVersion: '1', ...extra },
  spec: { ref: extra.ref },
});

describe('object keys', () => {
  it('are namespace/name, or name when cluster-scoped, and parse back', () => {
    expect(objectKey('a', 'b')).toBe('a/b');
    expect(objectKey(undefined, 'b')).toBe('b');
    expect(keyOf(obj('ns', 'x'))).toBe('ns/x');
    expect(parseKey('ns/x')).toEqual({ namespace: 'ns', name: 'x' });
    expect(parseKey('x')).toEqual({ name: 'x' });
  });
});

describe('Store', () => {
  it('gets, lists by namespace and labels, sorted by key', () => {
    const store = new Store();
    store.upsert(obj('b', 'one', { labels: { app: 'x', tier: 'db' } }));
    store.upsert(obj('a', 'two', { labels: { app: 'x' } }));
    store.upsert(obj('a', 'one'));
    expect(store.get('a', 'two')?.metadata.name).toBe('two');
    expect(store.list().map(keyOf)).toEqual(['a/one', 'a/two', 'b/one']);
    expect(store.list({ namespace: 'a' }).map(keyOf)).toEqual(['a/one', 'a/two']);
    expect(store.list({ labels: { app: 'x' } }).map(keyOf)).toEqual(['a/two', 'b/one']);
    expect(store.list({ namespace: 'b', labels: { tier: 'db' } }).map(keyOf)).toEqual(['b/one']);
    expect(store.list({ namespace: 'c' })).toEqual([]);
  });

  it('lists by labels from its label index, which follows relabelling and removal', () => {
    const store = new Store();
    for (let i = 0; i < 50; i++) store.upsert(obj('cp', `other-${i}`, { labels: { owner: `o${i}`, kind: 'child' } }));
    store.upsert(obj('cp', 'mine-1', { labels: { owner: 'me', kind: 'child' } }));
    store.upsert(obj('cp', 'mine-2', { labels: { owner: 'me', kind: 'other' } }));
    store.upsert(obj('elsewhere', 'mine-3', { labels: { owner: 'me', kind: 'child' } }));
    expect(store.list({ namespace: 'cp', labels: { owner: 'me', kind: 'child' } }).map(keyOf)).toEqual(['cp/mine-1']);
    expect(store.list({ labels: { owner: 'me' } }).map(keyOf)).toEqual(['cp/mine-1', 'cp/mine-2', 'elsewhere/mine-3']);
    store.upsert(obj('cp', 'mine-1', { labels: { owner: 'someone', kind: 'child' } }));
    store.remove('elsewhere/mine-3');
    expect(store.list({ labels: { owner: 'me' } }).map(keyOf)).toEqual(['cp/mine-2']);
    expect(store.list({ labels: { owner: 'nobody' } })).toEqual([]);
    expect(store.list({ namespace: 'cp', labels: {} })).toHaveLength(52);
  });

  it('keeps custom indexes up to date across upserts and removals', () => {
    const store = new Store<ReturnType<typeof obj>>();
    store.upsert(obj('a', 'x', { ref: 'cp1' }));
    store.addIndex('ref', (o) => (o.spec.ref ? [o.spec.ref] : []));
    store.upsert(obj('a', 'y', { ref: 'cp1' }));
    expect(store.list({ index: { name: 'ref', value: 'cp1' } }).map(keyOf)).toEqual(['a/x', 'a/y']);
    store.upsert(obj('a', 'x', { ref: 'cp2' }));
    expect(store.list({ index: { name: 'ref', value: 'cp1' } }).map(keyOf)).toEqual(['a/y']);
    expect(store.list({ index: { name: 'ref', value: 'cp2' } }).map(keyOf)).toEqual(['a/x']);
    store.remove('a/y');
    expect(store.list({ index: { name: 'ref', value: 'cp1' } })).toEqual([]);
    expect(() => store.list({ index: { name: 'nope', value: 'v' } })).toThrow('no index named nope');
  });

  it('lists by field paths from indexes built on first use, which follow updates and removals', () => {
    const store = new Store<ReturnType<typeof obj>>();
    for (let i = 0; i < 20; i++) store.upsert(obj(i % 2 ? 'a' : 'b', `t${i}`, { ref: `r${i % 4}` }));
    expect(store.list({ fields: { 'spec.ref': 'r1' } }).map(keyOf)).toEqual(['a/t1', 'a/t13', 'a/t17', 'a/t5', 'a/t9']);
    expect(store.list({ namespace: 'b', fields: { 'spec.ref': 'r1' } })).toEqual([]);
    expect(store.list({ fields: { 'spec.ref': 'r2', 'metadata.name': 't6' } }).map(keyOf)).toEqual(['b/t6']);
    store.upsert(obj('a', 't1', { ref: 'r2' }));
    store.remove('a/t5');
    store.upsert(obj('c', 'new', { ref: 'r1' }));
    expect(store.list({ fields: { 'spec.ref': 'r1' } }).map(keyOf)).toEqual(['a/t13', 'a/t17', 'a/t9', 'c/new']);
    expect(store.list({ fields: { 'spec.ref': 'r2', 'metadata.namespace': 'a' } }).map(keyOf)).toEqual(['a/t1']);
    expect(store.list({ fields: { 'spec.missing.deeper': 'x' } })).toEqual([]);
  });

  it('reports what a relist added, changed (by resourceVersion) and deleted', () => {
    const store = new Store();
    store.upsert(obj('a', 'kept'));
    store.upsert(obj('a', 'changed'));
    store.upsert(obj('a', 'gone'));
    const result = store.replace([obj('a', 'kept'), obj('a', 'changed', { resourceVersion: '2' }), obj('a', 'new')]);
    expect(result.added.map(keyOf)).toEqual(['a/new']);
    expect(result.updated.map((u) => [keyOf(u.old), u.old.metadata.resourceVersion, u.current.metadata.resourceVersion])).toEqual([['a/changed', '1', '2']]);
    expect(result.deleted.map(keyOf)).toEqual(['a/gone']);
    expect(store.keys().sort()).toEqual(['a/changed', 'a/kept', 'a/new']);
  });

  it('matches labels and renders selectors', () => {
    expect(matchesLabels({ a: '1', b: '2' }, { a: '1' })).toBe(true);
    expect(matchesLabels({ a: '1' }, { a: '2' })).toBe(false);
    expect(matchesLabels(undefined, {})).toBe(true);
    expect(labelSelector({ a: '1', 'c5c3.io/x': 'y' })).toBe('a=1,c5c3.io/x=y');
  });
});

describe('MergedStore', () => {
  it('reads several stores of one kind as one: each key once, the newest copy, sorted; indexes and labels per part', () => {
    const a = new Store();
    const b = new Store();
    a.upsert(obj('ns', 'only-a', { labels: { app: 'x' } }));
    b.upsert(obj('ns', 'only-b', { labels: { app: 'x' } }));
    // In both (moving from one selection to the other): the newer resourceVersion wins, whichever part holds it.
    a.upsert(obj('ns', 'both', { uid: 'u', resourceVersion: '7', labels: { app: 'x' } }));
    b.upsert(obj('ns', 'both', { uid: 'u', resourceVersion: '9', labels: { app: 'y' } }));
    const merged = new MergedStore([a, b]);
    expect(merged.size).toBe(3);
    expect(merged.keys().sort()).toEqual(['ns/both', 'ns/only-a', 'ns/only-b']);
    expect(merged.get('ns', 'both')?.metadata.resourceVersion).toBe('9');
    expect(merged.get('ns', 'only-b')?.metadata.name).toBe('only-b');
    expect(merged.get('ns', 'none')).toBeUndefined();
    expect(merged.list().map((o) => `${keyOf(o)}@${o.metadata.resourceVersion}`)).toEqual(['ns/both@9', 'ns/only-a@1', 'ns/only-b@1']);
    expect(merged.list({ labels: { app: 'x' } }).map(keyOf)).toEqual(['ns/both', 'ns/only-a', 'ns/only-b']);
    expect(merged.list({ labels: { app: 'y' } }).map(keyOf)).toEqual(['ns/both']);
    expect(merged.list({ namespace: 'other' })).toEqual([]);
  });

  it('compares resourceVersions as integers, and keeps the first copy of another uid or an opaque version', () => {
    const v = (rv: string, uid = 'u') => obj('ns', 'x', { uid, resourceVersion: rv });
    expect(newerOf(v('9'), v('10')).metadata.resourceVersion).toBe('10');
    expect(newerOf(v('10'), v('9')).metadata.resourceVersion).toBe('10');
    expect(newerOf(v('9'), v('10', 'other')).metadata.resourceVersion).toBe('9');
    expect(newerOf(v('abc'), v('10')).metadata.resourceVersion).toBe('abc');
  });
});

describe('Store indexes, against a model', () => {
  // Few namespaces, names, label values: values shared by one, a few (arrays) and many (Sets) objects, and objects moving
  // between them as they are replaced and removed.
  const namespace = fc.constantFrom('a', 'b');
  const name = fc.integer({ min: 0, max: 29 }).map((i) => `o${i}`);
  const labels = fc.record({ app: fc.constantFrom('x', 'y'), owner: fc.integer({ min: 0, max: 12 }).map(String) }, { requiredKeys: [] });
  const op = fc.oneof(
    fc.record({ kind: fc.constant('upsert' as const), namespace, name, labels, ref: fc.integer({ min: 0, max: 3 }).map((i) => `r${i}`) }),
    fc.record({ kind: fc.constant('remove' as const), namespace, name }),
  );

  it('every list by namespace, label, field and named index returns what filtering every object returns, sorted by key', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const store = new Store<ReturnType<typeof obj>>();
        store.addIndex('ref', (o) => (o.spec.ref ? [o.spec.ref] : []));
        store.list({ fields: { 'spec.ref': 'r0' } }); // the field index built early, kept up to date after
        const model = new Map<string, ReturnType<typeof obj>>();
        for (const o of ops) {
          const key = objectKey(o.namespace, o.name);
          if (o.kind === 'remove') {
            store.remove(key);
            model.delete(key);
          } else {
            const object = obj(o.namespace, o.name, { labels: o.labels, ref: o.ref });
            store.upsert(object);
            model.set(key, object);
          }
        }
        const expected = (keep: (x: ReturnType<typeof obj>) => boolean) => [...model.values()].filter(keep).map(keyOf).sort();
        const got = (options: Parameters<typeof store.list>[0]) => store.list(options).map(keyOf);
        for (const ns of ['a', 'b']) expect(got({ namespace: ns })).toEqual(expected((x) => x.metadata.namespace === ns));
        for (const owner of ['0', '5', '12']) {
          expect(got({ labels: { owner } })).toEqual(expected((x) => x.metadata.labels?.owner === owner));
          expect(got({ namespace: 'a', labels: { app: 'x', owner } })).toEqual(expected((x) => x.metadata.namespace === 'a' && x.metadata.labels?.app === 'x' && x.metadata.labels.owner === owner));
        }
        for (const ref of ['r0', 'r3']) {
          expect(got({ index: { name: 'ref', value: ref } })).toEqual(expected((x) => x.spec.ref === ref));
          expect(got({ fields: { 'spec.ref': ref } })).toEqual(expected((x) => x.spec.ref === ref));
        }
        expect(store.size).toBe(model.size);
      }),
      { numRuns: 300 },
    );
  });
});
