/**
 * The delivered Secret port: a foreign Secret of the delivered name is never written, also when it appears while a pass
 * that found none is under way (the e2e proof with a slowed Keystone is test/reliability/foreign-writers.test.ts).
 */
import { Kinds, MemoryCluster } from '../../../src/kube';
import { DeliveredSecret } from '../../../src/operator/credential/delivery';
import { PlaneCluster } from '../../../src/operator/plane-cluster';
import { credential } from '../plane/fakes';
import { templateMetadata } from '../../../src/lifecycle/secret-template';

const DATA = { 'clouds.yaml': 'clouds: {}', application_credential_id: 'id-1', application_credential_secret: 'not-a-real-secret' };

function setup() {
  const cluster = new MemoryCluster(() => new Date('2026-12-01T00:00:00Z'));
  const order = credential();
  return { cluster, order, port: new DeliveredSecret(new PlaneCluster(cluster), order) };
}

describe('DeliveredSecret', () => {
  it('writes the Secret the pass found absent, owned by the order', async () => {
    const { cluster, order, port } = setup();
    expect(await port.read()).toBeUndefined();
    await port.write(DATA);
    const secret = cluster.get(Kinds.Secret, order.metadata.namespace, 'app-credentials');
    expect(secret?.metadata.ownerReferences?.[0]).toMatchObject({ uid: order.metadata.uid, controller: true });
    expect(await new DeliveredSecret(new PlaneCluster(cluster), order).read()).toMatchObject({ owned: true });
  });

  it('refuses a foreign Secret created after the pass found none, and leaves it as it is', async () => {
    const { cluster, order, port } = setup();
    expect(await port.read()).toBeUndefined();
    const foreign = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'app-credentials', namespace: order.metadata.namespace }, data: { token: Buffer.from('theirs').toString('base64') } };
    cluster.put(Kinds.Secret, foreign);
    await expect(port.write(DATA)).rejects.toThrow(`Secret ${order.metadata.namespace}/app-credentials appeared during the pass and is not this order's: not written`);
    const after = cluster.get(Kinds.Secret, order.metadata.namespace, 'app-credentials');
    expect(after?.data).toEqual(foreign.data);
    expect(after?.metadata.ownerReferences ?? []).toEqual([]);
  });

  it('writes the template\'s labels (the operator\'s own win) and annotations; what the template drops leaves the Secret', async () => {
    const { cluster, order } = setup();
    const first = new DeliveredSecret(new PlaneCluster(cluster), order, templateMetadata({ labels: { team: 'a', gone: 'x' }, annotations: { note: 'n' } }));
    await first.read();
    await first.write({ ...DATA, 'cloud.conf': '[Global]\n', 'extra.txt': 'x' });
    const stored = cluster.get(Kinds.Secret, order.metadata.namespace, 'app-credentials');
    expect(stored?.metadata.labels).toMatchObject({ team: 'a', gone: 'x', 'c5c3.io/keystoneapplicationcredential-name': order.metadata.name });
    expect(stored?.metadata.annotations).toMatchObject({ note: 'n', 'c5c3.io/keystoneapplicationcredential-template': expect.any(String) });
    // (A key another writer adds stays: the in-memory cluster hands a whole object to its writer, so that is proven on
    // the real API server, test/e2e/secret-delivery.test.ts.)
    const second = new DeliveredSecret(new PlaneCluster(cluster), order, templateMetadata({ labels: { team: 'a' } }));
    expect(await second.read()).toMatchObject({ owned: true, labels: { gone: 'x' }, annotations: { note: 'n' } });
    await second.write({ ...DATA, 'cloud.conf': '[Global]\n' });
    const after = cluster.get(Kinds.Secret, order.metadata.namespace, 'app-credentials');
    expect(Object.keys(after?.data ?? {}).sort()).toEqual(['application_credential_id', 'application_credential_secret', 'cloud.conf', 'clouds.yaml']);
    expect(after?.metadata.labels?.gone).toBeUndefined();
    expect(after?.metadata.annotations?.note).toBeUndefined();
  });

  it('retain applies the same document without the owner reference: the Secret stays with its keys, and the garbage collector leaves it', async () => {
    const { cluster, order, port } = setup();
    await port.read();
    await port.write(DATA);
    await port.retain(DATA);
    const kept = cluster.get(Kinds.Secret, order.metadata.namespace, 'app-credentials');
    expect(kept?.metadata.ownerReferences ?? []).toEqual([]);
    expect(Buffer.from(kept?.data?.application_credential_id ?? '', 'base64').toString()).toBe('id-1');
  });
});
