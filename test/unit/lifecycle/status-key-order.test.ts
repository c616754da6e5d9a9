/**
 * A converged order writes nothing: the runner compares the status it would record with the recorded one field by
 * field, not by the order their keys were written in. An API server returns a status with its keys sorted, and `decide`
 * builds one in the order its rules set the fields; before this, every pass of a converged order on a cluster wrote its
 * unchanged status (found by bench/operator.ts: each resync patched every order and never skipped one).
 */
import { resolveSpec, type KeystoneApplicationCredentialStatus } from '../../../src/api';
import { reconcile, type LifecycleOrder, type Ports } from '../../../src/lifecycle';
import { MemoryDelivery, MemorySecretStore } from '../../../src/local';
import { FakeKeystone } from '../../support/fake-keystone';

const PREFIX = 'keys-0000beef-applicationcredential';

/** Every object's keys in reverse alphabetical order (arrays kept as they are), as another writer may order them. */
function reordered<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reordered) as T;
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, reordered(v)])) as T;
}

function setup() {
  const now = new Date('2026-12-01T00:00:00Z');
  const keystone = new FakeKeystone(PREFIX, () => now);
  const secrets = new MemorySecretStore();
  const delivery = new MemoryDelivery();
  const writes: KeystoneApplicationCredentialStatus[] = [];
  const ports: Ports = {
    keystone,
    secrets,
    delivery,
    render: (id, secret) => ({ 'clouds.yaml': `id=${id}`, application_credential_id: id, application_credential_secret: secret }),
    writeStatus: async (s) => void writes.push(s),
    release: async () => undefined,
    isTerminal: () => false,
  };
  const order = (status: KeystoneApplicationCredentialStatus): LifecycleOrder => ({ prefix: PREFIX, generation: 1, spec: resolveSpec({}), status, secretName: 'app-credentials' });
  return { now, ports, writes, order };
}

describe('recording the status', () => {
  it('a converged pass over a status stored with its keys in another order writes nothing', async () => {
    const { now, ports, writes, order } = setup();
    const first = await reconcile(order({}), ports, { clock: () => now });
    expect(writes.length).toBeGreaterThan(0);
    const stored = reordered(first.status);
    expect(JSON.stringify(stored)).not.toBe(JSON.stringify(first.status)); // the order differs, the content does not
    writes.length = 0;
    const again = await reconcile(order(stored), ports, { clock: () => now });
    expect(writes).toEqual([]);
    expect(again.status).toEqual(first.status);
  });

  it('a status that differs in any field is still written', async () => {
    const { now, ports, writes, order } = setup();
    const first = await reconcile(order({}), ports, { clock: () => now });
    writes.length = 0;
    const stale = reordered({ ...first.status, nextRotation: '2030-01-01T00:00:00Z' });
    await reconcile(order(stale), ports, { clock: () => now });
    expect(writes).toHaveLength(1);
    expect(writes[0].nextRotation).toBe(first.status.nextRotation);
  });

});
