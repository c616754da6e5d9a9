import { KubeApi } from '../../../../src/kube/api';
import { Kinds, type Secret } from '../../../../src/kube/kinds';
import { keyOf, metadataOf, type PartialObjectMetadata } from '../../../../src/kube/object';
import { withoutAnnotations } from '../../../../src/operator/runtime/partition';
import { longestDelay } from '../../../../src/operator/runtime/backoff';
import { Informer, RELIST_BACKOFF, listWatchOf } from '../../../../src/operator/runtime/informer';
import { FakeApiServer } from '../../kube/fake-api-server';
import { until } from './until';

const SECRETS = '/api/v1/secrets';
const secret = (name: string, data = 'MQ==') => ({ metadata: { name, namespace: 'ns' }, data: { v: data } });

function setup(options: ConstructorParameters<typeof Informer>[2] = {}) {
  const server = new FakeApiServer();
  const api = new KubeApi(server, 'test');
  const seen: string[] = [];
  const relists: string[] = [];
  const informer = new Informer<Secret>(Kinds.Secret, listWatchOf(api, Kinds.Secret), { backoff: { baseMs: 10, maxMs: 20 }, onRelist: (r) => relists.push(r), ...options });
  informer.addHandler({
    added: (o) => seen.push(`added ${o.metadata.name}`),
    updated: (old, o) => seen.push(`updated ${o.metadata.name} ${old.data?.v}->${o.data?.v}`),
    deleted: (o) => seen.push(`deleted ${o.metadata.name}`),
    resynced: (o) => seen.push(`resynced ${o.metadata.name}`),
  });
  const lists = () => server.requests.filter((r) => r.method === 'GET' && !r.watch).length;
  const watches = () => server.requests.filter((r) => r.watch);
  return { server, informer, seen, relists, lists, watches };
}

describe('Informer', () => {
  it('lists, syncs, then follows the watch into the store and the handlers', async () => {
    const { server, informer, seen } = setup();
    server.seed(SECRETS, secret('a'));
    informer.start();
    await informer.waitForSync();
    expect(informer.store.get('ns', 'a')).toMatchObject({ apiVersion: 'v1', kind: 'Secret' });
    await until(() => server.openWatches === 1);
    server.seed(SECRETS, secret('b'));
    server.seed(SECRETS, secret('a', 'Mg=='));
    server.remove(SECRETS, 'ns', 'b');
    await until(() => seen.length === 4);
    expect(seen).toEqual(['added a', 'added b', 'updated a MQ==->Mg==', 'deleted b']);
    expect(informer.store.keys()).toEqual(['ns/a']);
    await informer.stop();
  });

  it('keeps objects without their managedFields, listed or watched', async () => {
    const { server, informer } = setup();
    const managed = (name: string) => ({ ...secret(name), metadata: { ...secret(name).metadata, labels: { l: 'x' }, managedFields: [{ manager: 'someone', operation: 'Apply', fieldsV1: { 'f:data': {} } }] } });
    server.seed(SECRETS, managed('listed'));
    informer.start();
    await informer.waitForSync();
    await until(() => server.openWatches === 1);
    server.seed(SECRETS, managed('watched'));
    await until(() => informer.store.size === 2);
    for (const name of ['listed', 'watched']) {
      const cached = informer.store.get('ns', name) as Secret & { metadata: { managedFields?: unknown } };
      expect(cached.metadata.managedFields).toBeUndefined();
      expect(cached.metadata.labels).toEqual({ l: 'x' });
      expect(cached.data).toEqual({ v: 'MQ==' });
    }
    await informer.stop();
  });

  it('resumes a watch the server closed from the last resourceVersion it saw, without relisting', async () => {
    const { server, informer, lists, watches } = setup();
    informer.start();
    await until(() => server.openWatches === 1);
    const first = watches()[0].query?.resourceVersion;
    const b = server.seed(SECRETS, secret('b'));
    await until(() => informer.store.size === 1);
    await new Promise((r) => setTimeout(r, 1100)); // a watch that closes at once without an event counts as an error
    server.closeWatches();
    await until(() => server.openWatches === 1);
    expect(lists()).toBe(1);
    expect(watches().map((w) => w.query?.resourceVersion)).toEqual([first, b.metadata.resourceVersion]);
    expect(watches()[0].query).toMatchObject({ allowWatchBookmarks: true, timeoutSeconds: expect.any(Number) });
    await informer.stop();
  });

  it('relists when the watch expires (410), and reports what changed meanwhile', async () => {
    const { server, informer, seen, lists, relists } = setup();
    server.seed(SECRETS, secret('a'));
    server.seed(SECRETS, secret('gone'));
    informer.start();
    await until(() => server.openWatches === 1);
    server.closeWatches(new Error('network'));
    // While nobody watches: one object changes, one goes away, and history is compacted.
    server.seed(SECRETS, secret('a', 'Mg=='));
    server.remove(SECRETS, 'ns', 'gone');
    await until(() => lists() === 2, 3000, 'the relist after the error');
    await until(() => server.openWatches === 1);
    server.watchError(410, 'Expired');
    await until(() => lists() === 3, 3000, 'the relist after 410');
    expect(relists).toEqual(['error', 'expired']);
    expect(seen).toEqual(['added a', 'added gone', 'updated a MQ==->Mg==', 'deleted gone']);
    await informer.stop();
  });

  it("relists within 36 s at the longest (client-go's 30 s ceiling plus jitter), so a leader started during an API outage passes within a minute of its return", () => {
    expect(RELIST_BACKOFF).toMatchObject({ baseMs: 1000, maxMs: 30_000 });
    expect(longestDelay({ ...RELIST_BACKOFF, random: () => 0.999_999 })).toBeLessThanOrEqual(36_000);
  });

  it('keeps relisting after failed lists, with backoff, and never gives up', async () => {
    const { server, informer, lists } = setup();
    for (let i = 0; i < 3; i++) server.failNext((r) => r.method === 'GET', 500);
    informer.start();
    await informer.waitForSync();
    expect(lists()).toBe(4);
    expect(informer.synced).toBe(true);
    await informer.stop();
  });

  it('treats a watch that cannot start (403) as an error and relists after a backoff', async () => {
    const { server, informer, lists } = setup();
    const original = server.watch.bind(server);
    let calls = 0;
    server.watch = async (...args) => {
      calls++;
      if (calls === 1) throw new Error('403 Forbidden');
      return original(...args);
    };
    informer.start();
    await until(() => server.openWatches === 1);
    expect(lists()).toBe(2);
    await informer.stop();
  });

  it('resyncs every cached object to the handlers without an API call', async () => {
    const { server, informer, seen } = setup({ resyncPeriodMs: 50 });
    server.seed(SECRETS, secret('a'));
    server.seed(SECRETS, secret('b'));
    informer.start();
    await informer.waitForSync();
    const requests = server.requests.length;
    await until(() => seen.filter((s) => s.startsWith('resynced')).length >= 4);
    expect(seen.slice(2, 4)).toEqual(['resynced a', 'resynced b']);
    expect(server.requests.length).toBe(requests);
    await informer.stop();
    expect(informer.store.list().map(keyOf)).toEqual(['ns/a', 'ns/b']);
  });

  it('drops kubectl apply\'s last-applied annotation and keeps the other annotations', async () => {
    const { server, informer } = setup();
    const applied = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', data: { v: 'c2VjcmV0' } });
    server.seed(SECRETS, { ...secret('applied'), metadata: { name: 'applied', namespace: 'ns', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': applied, keep: 'me' } } });
    server.seed(SECRETS, { ...secret('only'), metadata: { name: 'only', namespace: 'ns', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': applied } } });
    informer.start();
    await informer.waitForSync();
    expect(informer.store.get('ns', 'applied')?.metadata.annotations).toEqual({ keep: 'me' });
    expect(informer.store.get('ns', 'only')?.metadata).not.toHaveProperty('annotations');
    await informer.stop();
  });

  it('of a metadata-only kind lists and watches PartialObjectMetadata: no data ever reaches the store or a handler', async () => {
    const server = new FakeApiServer();
    const api = new KubeApi(server, 'test');
    const view = metadataOf(Kinds.Secret);
    const informer = new Informer<PartialObjectMetadata>(view, listWatchOf(api, view, { labelSelector: '!mine' }), { transform: withoutAnnotations });
    const handed: unknown[] = [];
    informer.addHandler({ added: (o) => handed.push(o), updated: (_, o) => handed.push(o), deleted: (o) => handed.push(o) });
    server.seed(SECRETS, { ...secret('listed', 'TElTVEVE'), metadata: { name: 'listed', namespace: 'ns', labels: { app: 'x' }, annotations: { note: 'big' } } });
    server.seed(SECRETS, { ...secret('own'), metadata: { name: 'own', namespace: 'ns', labels: { mine: 'yes' } } });
    informer.start();
    await informer.waitForSync();
    await until(() => server.openWatches === 1);
    server.seed(SECRETS, { ...secret('watched', 'V0FUQ0hFRA=='), metadata: { name: 'watched', namespace: 'ns' } });
    server.seed(SECRETS, { ...secret('listed', 'Q0hBTkdFRA=='), metadata: { name: 'listed', namespace: 'ns', labels: { app: 'y' } } });
    // Labelled into the other partition: gone from this one.
    server.seed(SECRETS, { ...secret('watched', 'V0FUQ0hFRA=='), metadata: { name: 'watched', namespace: 'ns', labels: { mine: 'now' } } });
    await until(() => handed.length === 4);
    expect(informer.store.keys()).toEqual(['ns/listed']);
    expect(informer.store.get('ns', 'listed')).toEqual({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: expect.objectContaining({ name: 'listed', labels: { app: 'y' } }) });
    const everything = JSON.stringify([informer.store.list(), handed]);
    for (const payload of ['TElTVEVE', 'Q0hBTkdFRA==', 'V0FUQ0hFRA==', 'big', '"data"']) expect(everything).not.toContain(payload);
    const requests = server.requests.filter((r) => r.path === '/api/v1/secrets');
    expect(requests.map((r) => [r.watch ? 'watch' : 'list', r.accept, r.query?.labelSelector])).toEqual([
      ['list', 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1', '!mine'],
      ['watch', 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1', '!mine'],
    ]);
    await informer.stop();
  });
});
