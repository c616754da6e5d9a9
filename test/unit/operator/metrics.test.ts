/**
 * Per-order metrics leave nothing behind when the order is deleted: every series of it goes, counters included, so the
 * registry holds the orders that exist and not every order the process ever met.
 */
import { Registry } from 'prom-client';
import { CredentialMetrics } from '../../../src/operator/credential/metrics';
import { HandoffMetrics } from '../../../src/operator/handoff/metrics';

const seriesOf = async (registry: Registry, name: string) => (await registry.metrics()).split('\n').filter((line) => !line.startsWith('#') && line.includes(`name="${name}"`));

describe('CredentialMetrics', () => {
  test('forget drops the gauges, the rotations and the failures of every reason of that order only', async () => {
    const registry = new Registry();
    const metrics = new CredentialMetrics(registry);
    const status = { nextRotation: '2026-12-04T00:00:00Z', lastRotation: '2026-12-03T00:00:00Z' };
    for (const name of ['gone', 'kept']) {
      metrics.observed('t', name, status);
      metrics.rotated('t', name);
      metrics.failed('t', name, 'KeystoneUnavailable');
      metrics.failed('t', name, 'BackupNotSynced');
    }
    metrics.observed('t', 'gone', status, 'edge-1');
    metrics.failed('t', 'gone', 'KeystoneUnavailable', 'edge-1');
    expect(await seriesOf(registry, 'gone')).toHaveLength(8);

    metrics.forget('t', 'gone');
    // the same name on a target cluster is another order, and stays
    expect((await seriesOf(registry, 'gone')).every((line) => line.includes('cluster="edge-1"'))).toBe(true);
    expect(await seriesOf(registry, 'gone')).toHaveLength(3);
    expect(await seriesOf(registry, 'kept')).toHaveLength(5);
    metrics.forget('t', 'gone', 'edge-1');
    expect(await seriesOf(registry, 'gone')).toEqual([]);
  });
});

describe('HandoffMetrics', () => {
  test('an order delivering nothing loses its gauges and keeps its roll count; a deleted one loses every series', async () => {
    const registry = new Registry();
    const metrics = new HandoffMetrics(registry);
    metrics.rolled('t', 'app');
    metrics.observed('t', 'app', 1, 0);
    metrics.forget('t', 'app');
    expect((await seriesOf(registry, 'app')).map((line) => line.split('{')[0])).toEqual(['keystone_appcred_handoff_rolls_total']);
    metrics.forget('t', 'app', true);
    expect(await seriesOf(registry, 'app')).toEqual([]);
  });
});
