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

describe('CredentialMetrics: what the alerts read', () => {
  const condition = (type: string, status: 'True' | 'False', reason: string) => ({ type, status, reason, message: '', lastTransitionTime: '2026-12-03T00:00:00Z' });
  const lines = async (registry: Registry, metric: string) => (await registry.metrics()).split('\n').filter((line) => line.startsWith(`${metric}{`));

  test('the delivered credential\'s expiry, and whether a successor exists: from the list, the creates and the deletes, against the delivered generation', async () => {
    const registry = new Registry();
    const metrics = new CredentialMetrics(registry);
    const g1 = { credentialGeneration: 1, credentialExpiresAt: '2026-12-05T00:00:00Z' };
    const successor = async () => (await lines(registry, 'keystone_appcred_credential_successor_exists')).map((l) => l.split(' ')[1]);
    metrics.listed('t', 'app', [1]);
    metrics.observed('t', 'app', g1);
    expect(await lines(registry, 'keystone_appcred_credential_expiry_timestamp_seconds')).toEqual([`keystone_appcred_credential_expiry_timestamp_seconds{namespace="t",name="app"} ${Date.parse('2026-12-05T00:00:00Z') / 1000}`]);
    expect(await successor()).toEqual(['0']);
    // a rotation: generation 2 created, its switch held (the backup): a successor exists
    metrics.changedInKeystone('t', 'app', 2, 'minted');
    metrics.observed('t', 'app', g1);
    expect(await successor()).toEqual(['1']);
    // the switch: generation 2 delivered, generation 1 in its grace period
    metrics.observed('t', 'app', { credentialGeneration: 2, credentialExpiresAt: '2026-12-06T00:00:00Z' });
    expect(await successor()).toEqual(['0']);
    // a successor replaced (deleted) and not yet created again
    metrics.changedInKeystone('t', 'app', 3, 'minted');
    metrics.changedInKeystone('t', 'app', 3, 'deleted');
    metrics.observed('t', 'app', { credentialGeneration: 2 });
    expect(await successor()).toEqual(['0']);
    expect(await lines(registry, 'keystone_appcred_credential_expiry_timestamp_seconds')).toEqual([]);
    // a new process lists what Keystone holds: a successor minted by the previous leader is found
    const fresh = new Registry();
    const restarted = new CredentialMetrics(fresh);
    restarted.listed('t', 'app', [2, 3]);
    restarted.observed('t', 'app', { credentialGeneration: 2 });
    expect((await lines(fresh, 'keystone_appcred_credential_successor_exists')).map((l) => l.split(' ')[1])).toEqual(['1']);
    // before the first credential nothing is delivered: no series
    metrics.observed('t', 'new', {});
    expect((await successor()).length).toBe(1);
  });

  test('during a rotation the successor counts as soon as Keystone holds it and stops at the switch, before the pass records its status', async () => {
    const registry = new Registry();
    const metrics = new CredentialMetrics(registry);
    const successor = async () => (await lines(registry, 'keystone_appcred_credential_successor_exists')).map((l) => l.split(' ')[1]);
    metrics.listed('t', 'app', [1]);
    metrics.observed('t', 'app', { credentialGeneration: 1 });
    // the pass mints generation 2: a scrape now sees its successor (nothing waits for the pass's end)
    metrics.changedInKeystone('t', 'app', 2, 'minted');
    expect(await successor()).toEqual(['1']);
    // the switch: generation 2 is delivered, so it is no successor any more
    metrics.delivered('t', 'app', 2);
    expect(await successor()).toEqual(['0']);
    metrics.observed('t', 'app', { credentialGeneration: 2 });
    expect(await successor()).toEqual(['0']);
  });

  test('a deregistered target cluster: every series of its orders goes, the management cluster\'s and the other clusters\' stay', async () => {
    const registry = new Registry();
    const metrics = new CredentialMetrics(registry);
    const status = { credentialGeneration: 1, nextRotation: '2026-12-04T00:00:00Z', conditions: [condition('Ready', 'True', 'AllReady')] };
    for (const cluster of [undefined, 'edge-1', 'edge-2']) {
      metrics.observed('t', 'app', status, cluster);
      metrics.rotated('t', 'other', cluster);
      metrics.failed('t', 'app', 'BackupNotSynced', cluster);
    }
    metrics.forgetCluster('edge-1');
    const all = (await registry.metrics()).split('\n').filter((l) => l.startsWith('keystone_appcred_credential_'));
    expect(all.filter((l) => l.includes('cluster="edge-1"'))).toEqual([]);
    expect(all.filter((l) => l.includes('cluster="edge-2"')).length).toBeGreaterThan(0);
    expect(all.filter((l) => !l.includes('cluster=')).length).toBe(all.filter((l) => l.includes('cluster="edge-2"')).length);
  });

  test('the conditions: one series per type with its current status and reason, the old one gone when it changes, all gone with the order', async () => {
    const registry = new Registry();
    const metrics = new CredentialMetrics(registry);
    metrics.observed('t', 'app', { conditions: [condition('Ready', 'False', 'NotAllReady'), condition('CredentialReady', 'False', 'WaitingForUser'), condition('DeliveryReady', 'True', 'Delivered')] }, 'edge-1');
    expect((await lines(registry, 'keystone_appcred_credential_condition')).sort()).toEqual(
      [
        'keystone_appcred_credential_condition{namespace="t",name="app",cluster="edge-1",type="Ready",status="False",reason="NotAllReady"} 1',
        'keystone_appcred_credential_condition{namespace="t",name="app",cluster="edge-1",type="CredentialReady",status="False",reason="WaitingForUser"} 1',
        'keystone_appcred_credential_condition{namespace="t",name="app",cluster="edge-1",type="DeliveryReady",status="True",reason="Delivered"} 1',
      ].sort(),
    );
    metrics.observed('t', 'app', { conditions: [condition('Ready', 'True', 'AllReady'), condition('CredentialReady', 'True', 'CredentialMinted'), condition('DeliveryReady', 'True', 'Delivered')] }, 'edge-1');
    expect((await lines(registry, 'keystone_appcred_credential_condition')).map((l) => /reason="(\w+)"/.exec(l)?.[1]).sort()).toEqual(['AllReady', 'CredentialMinted', 'Delivered']);
    metrics.forget('t', 'app', 'edge-1');
    expect(await lines(registry, 'keystone_appcred_credential_condition')).toEqual([]);
  });
});

describe('CredentialMetrics: the failures and a condition that goes', () => {
  test('each failure reason has one series, counted per failure; a condition the status drops loses its series; the order forgotten, none is left', async () => {
    const registry = new Registry();
    const metrics = new CredentialMetrics(registry);
    const failures = async () => (await registry.metrics()).split('\n').filter((l) => l.startsWith('keystone_appcred_credential_failures_total{'));
    for (const reason of ['BackupNotSynced', 'CredentialError', 'BackupNotSynced']) metrics.failed('t', 'app', reason);
    expect((await failures()).sort()).toEqual(['keystone_appcred_credential_failures_total{namespace="t",name="app",reason="BackupNotSynced"} 2', 'keystone_appcred_credential_failures_total{namespace="t",name="app",reason="CredentialError"} 1']);
    const conditions = async () => (await registry.metrics()).split('\n').filter((l) => l.startsWith('keystone_appcred_credential_condition{')).map((l) => /type="(\w+)"/.exec(l)?.[1]);
    const c = (type: string) => ({ type, status: 'True' as const, reason: 'R', message: '', lastTransitionTime: '2026-12-03T00:00:00Z' });
    metrics.observed('t', 'app', { conditions: [c('Ready'), c('DeliveryReady')] });
    metrics.observed('t', 'app', { conditions: [c('Ready')] });
    expect(await conditions()).toEqual(['Ready']);
    metrics.forget('t', 'app');
    expect([await failures(), await conditions()]).toEqual([[], []]);
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
