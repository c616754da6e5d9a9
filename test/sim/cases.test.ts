/**
 * Named cases of the simulation: schedules that broke an invariant once (each found by the search or written to
 * reproduce a finding of issue 46), replayed on every run. A failing search prints its shrunk schedule in this form.
 */
import { CASE_TIMEOUT_MS, expectClean } from './replay';

describe('named cases', () => {
  // A restore of the cluster from a backup two generations old: the status names a generation Keystone no longer
  // holds, the Secret carries the newest one, and the one before it is in its grace period.
  it('a status restored two generations back keeps the superseded credential for its grace period', async () => {
    await expectClean({
      setup: { seed: 11, orders: [{ tenant: 'tenant-a', name: 'app-1', interval: '10m', gracePeriod: '5m' }], replicas: 1, consumerHandoff: false, secretAccess: 'cluster-wide', admin: 'password', targetCluster: false },
      steps: [{ wait: 1330, event: { kind: 'stale-status', tenant: 'tenant-a', name: 'app-1', back: 2 } }],
    });
  }, CASE_TIMEOUT_MS);
});
