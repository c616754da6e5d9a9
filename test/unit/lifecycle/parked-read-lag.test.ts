/**
 * A store whose reads lag behind its own parks (the operator reads its `secret-v<N>` children from an informer): the
 * mint of a generation the same pass parked waits briefly for the secret instead of failing the pass; a generation the
 * pass did not park still fails at once, and nothing is ever minted without a secret read back from the store. And a
 * listing that lags behind a park (the informer has not seen it yet) loses no secret: the delivered generation's is
 * asked of the store before the pass rotates for a lost secret.
 */
import { resolveSpec } from '../../../src/api';
import { ActionError, reconcile, type LifecycleOrder, type ParkedGeneration, type Ports } from '../../../src/lifecycle';
import { MemoryDelivery, MemorySecretStore } from '../../../src/local';
import { FakeKeystone } from '../../support/fake-keystone';

const PREFIX = 'lag-0000beef-applicationcredential';

/** A secret store whose first `misses` reads after each park answer "nothing parked". */
class LaggingStore extends MemorySecretStore {
  private pending = 0;
  constructor(private readonly misses: number) {
    super();
  }
  override async park(generation: number): Promise<void> {
    await super.park(generation);
    this.pending = this.misses;
  }
  override async read(generation: number): Promise<string | undefined> {
    if (this.pending > 0) {
      this.pending--;
      return undefined;
    }
    return super.read(generation);
  }
}

function setup(secrets: MemorySecretStore) {
  const now = new Date('2026-12-01T00:00:00Z');
  const keystone = new FakeKeystone(PREFIX, () => now);
  const ports: Ports = {
    keystone,
    secrets,
    delivery: new MemoryDelivery(),
    render: (id, secret) => ({ 'clouds.yaml': `id=${id}`, application_credential_id: id, application_credential_secret: secret }),
    writeStatus: async () => undefined,
    release: async () => undefined,
    isTerminal: () => false,
  };
  const order: LifecycleOrder = { prefix: PREFIX, generation: 1, spec: resolveSpec({}), status: {}, secretName: 'app-credentials' };
  return { now, keystone, ports, order };
}

describe('a mint after a park whose read lags', () => {
  it('waits for the secret it parked and mints it in the same pass', async () => {
    const secrets = new LaggingStore(3);
    const { now, keystone, ports, order } = setup(secrets);
    const result = await reconcile(order, ports, { clock: () => now });
    expect(result.status.credentialGeneration).toBe(1);
    const [minted] = [...keystone.credentials.values()];
    expect(minted.secret).toBe(await secrets.read(1));
  });

  it('gives up when the secret never shows, and mints nothing', async () => {
    const secrets = new LaggingStore(1_000);
    const { now, keystone, ports, order } = setup(secrets);
    await expect(reconcile(order, ports, { clock: () => now })).rejects.toBeInstanceOf(ActionError);
    expect(keystone.credentials.size).toBe(0);
  });
});

/** A secret store whose listing misses every parked generation (an informer behind its own parks); reads answer. */
class LaggingListing extends MemorySecretStore {
  lagging = false;
  override async list(): Promise<ParkedGeneration[]> {
    return this.lagging ? [] : super.list();
  }
}

describe('a listing that lags behind a park', () => {
  // Found by the simulation (test/sim/cases.test.ts, "an order adopts a hand-made credential"): an adoption parks its
  // secret last, and the pass its own writes woke listed the children before the park showed, took the delivered
  // generation's secret for lost and minted a successor at once.
  it("does not take the delivered generation's secret for lost: nothing rotates", async () => {
    const secrets = new LaggingListing();
    const { now, keystone, ports, order } = setup(secrets);
    const first = await reconcile(order, ports, { clock: () => now });
    secrets.lagging = true;
    const second = await reconcile({ ...order, status: first.status }, ports, { clock: () => now });
    expect(second.status.credentialGeneration).toBe(1);
    expect(keystone.credentials.size).toBe(1);
  });
});
