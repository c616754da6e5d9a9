import { KubeApi } from '../../../../src/kube/api';
import { Kinds, type Secret } from '../../../../src/kube/kinds';
import { keyOf, metadataOf, type KubeObject } from '../../../../src/kube/object';
import { Manager } from '../../../../src/operator/runtime/manager';
import { OperatorMetrics } from '../../../../src/operator/runtime/metrics';
import { cacheByLabels, labelPartitions, withoutAnnotations } from '../../../../src/operator/runtime/partition';
import { FakeApiServer } from '../../kube/fake-api-server';
import { until } from './until';

const SECRETS = '/api/v1/secrets';
const CP = '/apis/c5c3.io/v1alpha1/controlplanes';
const secret = (name: string, labels: Record<string, string> = {}, data = 'cGF5bG9hZA==') => ({ metadata: { name, namespace: 'ns', labels, annotations: { note: 'n' } }, data: { v: data } });

describe('labelPartitions', () => {
  it('selects each key whole and the complement of all of them', () => {
    expect(labelPartitions(['a.io/x', 'y'])).toEqual({ whole: [{ labelSelector: 'a.io/x' }, { labelSelector: 'y' }], others: { labelSelector: '!a.io/x,!y' } });
    expect(labelPartitions(['y'], 'ns')).toEqual({ whole: [{ namespace: 'ns', labelSelector: 'y' }], others: { namespace: 'ns', labelSelector: '!y' } });
  });

  it('refuses no key and what is not a label key', () => {
    expect(() => labelPartitions([])).toThrow('at least one label key');
    expect(() => labelPartitions(['a=b'])).toThrow('"a=b" is not a label key');
    expect(() => labelPartitions(['!a'])).toThrow('"!a" is not a label key');
  });

  it('withoutAnnotations drops them and nothing else', () => {
    const object: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a', labels: { l: '1' }, annotations: { big: 'x' } } };
    expect(withoutAnnotations(object)).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a', labels: { l: '1' } } });
    expect(object.metadata.annotations).toEqual({ big: 'x' });
  });
});

describe('a kind cached by labels (Manager.cache partitions)', () => {
  const running: Manager[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((m) => m.shutdown()));
  });

  function setup() {
    const server = new FakeApiServer();
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const manager = new Manager(new KubeApi(server, 't'), { identity: 'a', namespace: 'ops', leaseName: 'l', leaderElect: false, metrics, resyncPeriodMs: 50 });
    const heard: string[] = [];
    const reconciled: string[] = [];
    cacheByLabels(manager, Kinds.Secret, ['own.io/a', 'own.io/b']);
    const record = (view: string) => (object: KubeObject) => {
      heard.push(`${view} ${object.metadata.name}`);
      return [];
    };
    manager.controller({
      kind: Kinds.ControlPlane,
      reconcile: async (r) => void reconciled.push(r.key),
      watches: [
        { kind: Kinds.Secret, map: record('whole') },
        { kind: metadataOf(Kinds.Secret), map: record('metadata') },
      ],
    });
    return { server, manager, metrics, heard, reconciled };
  }

  it('holds the labelled objects whole and the others as metadata only, each in one cache; a watch hears each view', async () => {
    const { server, manager, metrics, heard } = setup();
    server.seed(SECRETS, secret('a', { 'own.io/a': 'x' }));
    server.seed(SECRETS, secret('b', { 'own.io/b': 'y' }));
    server.seed(SECRETS, secret('both', { 'own.io/a': 'x', 'own.io/b': 'y' }));
    server.seed(SECRETS, secret('foreign', { app: 'helm' }, 'SEVMTVJFTEVBU0U='));
    manager.start();
    running.push(manager);
    await manager.waitForCacheSync();
    const whole = manager.cluster.list(Kinds.Secret) as Secret[];
    expect(whole.map(keyOf)).toEqual(['ns/a', 'ns/b', 'ns/both']);
    expect(whole.every((s) => s.data?.v === 'cGF5bG9hZA==' && s.metadata.annotations?.note === 'n')).toBe(true);
    expect(manager.cluster.get(Kinds.Secret, 'ns', 'foreign')).toBeUndefined();
    const foreign = manager.cluster.get(metadataOf(Kinds.Secret), 'ns', 'foreign');
    expect(foreign).toEqual({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: expect.objectContaining({ name: 'foreign', labels: { app: 'helm' } }) });
    expect(foreign?.metadata).not.toHaveProperty('annotations');
    expect(manager.cluster.list(metadataOf(Kinds.Secret)).map(keyOf)).toEqual(['ns/foreign']);
    expect(JSON.stringify(manager.cluster.list(metadataOf(Kinds.Secret)))).not.toContain('SEVMTVJFTEVBU0U=');
    await until(() => heard.includes('metadata foreign') && heard.includes('whole a'));
    expect(heard.filter((h) => h.endsWith(' foreign'))).toEqual(['metadata foreign']);
    // Three informers of whole Secrets (one per key: "both" is in two of them), one of the metadata view.
    const lists = server.requests.filter((r) => r.path === SECRETS && !r.watch);
    expect(lists.map((r) => `${r.query?.labelSelector} ${r.accept ?? 'json'}`).sort()).toEqual([
      '!own.io/a,!own.io/b application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
      'own.io/a json',
      'own.io/b json',
    ]);
    const text = await metrics.text();
    expect(text).toContain('keystone_appcred_informer_objects{kind="Secret"} 3');
    expect(text).toContain('keystone_appcred_informer_objects{kind="Secret/metadata"} 1');
    expect(text).toContain('keystone_appcred_informer_synced{kind="Secret/metadata"} 1');
  });

  it('moves an object between the caches when its labels change, and forgets a deleted one', async () => {
    const { server, manager, heard } = setup();
    server.seed(SECRETS, secret('moving', {}));
    manager.start();
    running.push(manager);
    await manager.waitForCacheSync();
    await until(() => server.openWatches === 4);
    server.seed(SECRETS, secret('moving', { 'own.io/b': 'now' }));
    await until(() => manager.cluster.get(Kinds.Secret, 'ns', 'moving') !== undefined && manager.cluster.get(metadataOf(Kinds.Secret), 'ns', 'moving') === undefined);
    expect(heard).toEqual(expect.arrayContaining(['metadata moving', 'whole moving']));
    server.seed(SECRETS, secret('moving', {}));
    await until(() => manager.cluster.get(Kinds.Secret, 'ns', 'moving') === undefined && manager.cluster.get(metadataOf(Kinds.Secret), 'ns', 'moving') !== undefined);
    server.remove(SECRETS, 'ns', 'moving');
    await until(() => manager.cluster.get(metadataOf(Kinds.Secret), 'ns', 'moving') === undefined);
  });

  it('resyncs only the kinds a controller reconciles', async () => {
    const { server, manager, heard, reconciled } = setup();
    server.seed(SECRETS, secret('a', { 'own.io/a': 'x' }));
    server.seed(SECRETS, secret('foreign'));
    server.seed(CP, { metadata: { name: 'cp', namespace: 'ns' }, spec: {} });
    manager.start();
    running.push(manager);
    await until(() => reconciled.length >= 3, 3000, 'three resyncs of the ControlPlane');
    // The Secrets were heard once each (their adds): their informers do not resync.
    expect(heard.sort()).toEqual(['metadata foreign', 'whole a']);
  });

  it('refuses a partition of a kind cached whole, and a whole cache of a partitioned kind', () => {
    const manager = new Manager(new KubeApi(new FakeApiServer(), 't'), { identity: 'a', namespace: 'ops', leaseName: 'l', leaderElect: false });
    manager.controller({ kind: Kinds.ControlPlane, reconcile: async () => undefined, watches: [{ kind: Kinds.Secret, map: () => [] }] });
    expect(() => manager.cache(Kinds.Secret, { labelSelector: 'a' })).toThrow('Secret is already cached whole');
    cacheByLabels(manager, Kinds.Namespace, ['x']);
    expect(() => manager.cache(Kinds.Namespace)).toThrow('Namespace is already cached by the selections {"labelSelector":"x"}');
    expect(() => manager.cache(metadataOf(Kinds.Namespace), { labelSelector: '!x' })).toThrow('Namespace/metadata is already cached with the selection {"labelSelector":"!x"} and another transform');
    manager.cache(metadataOf(Kinds.Namespace), { labelSelector: '!x', transform: withoutAnnotations });
  });
});
