import { ParkedSecrets } from '../../../src/operator/credential/children';
import type { SecretObject } from '../../../src/plane/ports';
import { FakeCluster } from '../plane/fakes';

/** A cluster whose cache has not caught up with any Secret yet; reads of the API server are counted. */
class LaggingCache extends FakeCluster {
  apiReads = 0;
  override async getSecret(): Promise<SecretObject | undefined> {
    return undefined;
  }
  override async readSecret(key: { namespace: string; name: string }): Promise<SecretObject | undefined> {
    this.apiReads++;
    return super.getSecret(key);
  }
}

describe('ParkedSecrets with a cache that lags behind', () => {
  const location = { name: 'app', namespace: 'tenant' };

  it('reads its own park back without asking the API server', async () => {
    const cluster = new LaggingCache();
    const store = new ParkedSecrets(cluster, 'cp', 'app-1234abcd-applicationcredential', location, () => 'parked-value');
    await store.park(1);
    expect(await store.read(1)).toBe('parked-value');
    expect(cluster.apiReads).toBe(0);
  });

  it("asks the API server for a park it did not make (another pass's), once the cache does not have it", async () => {
    const cluster = new LaggingCache();
    await new ParkedSecrets(cluster, 'cp', 'app-1234abcd-applicationcredential', location, () => 'earlier-value').park(2);
    const store = new ParkedSecrets(cluster, 'cp', 'app-1234abcd-applicationcredential', location);
    expect(await store.read(2)).toBe('earlier-value');
    expect(cluster.apiReads).toBe(1);
    expect(await store.read(3)).toBeUndefined();
  });
});
