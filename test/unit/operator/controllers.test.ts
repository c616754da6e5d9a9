/**
 * The operator's controllers as registered: one per kind the configuration may name (`ReconciledKinds`, the keys of
 * `--workers-per-kind`), plus the consumer handoff's on KeystoneApplicationCredentials, each with the workers the
 * configuration gives its kind.
 */
import { ReconciledKinds } from '../../../src/api/operator-env';
import { KubeApi } from '../../../src/kube/api';
import { registerControllers } from '../../../src/operator/controllers';
import { Manager } from '../../../src/operator/runtime/manager';
import { OperatorMetrics } from '../../../src/operator/runtime/metrics';
import { FakeApiServer } from '../kube/fake-api-server';
import { until } from './runtime/until';

describe('registerControllers', () => {
  it.each([false, true])('runs a controller for each kind the configuration may name, with --workers, or --workers-per-kind for its kind (consumer handoff: %s)', async (consumerHandoff) => {
    const manager = new Manager(new KubeApi(new FakeApiServer(), 'kac-test'), {
      identity: 'a', namespace: 'ops', leaseName: 'leader', leaderElect: false, metrics: new OperatorMetrics({ defaultMetrics: false }),
      workers: 5, workersPerKind: { KeystoneApplicationCredential: 7 },
    });
    registerControllers(manager, { consumerHandoff });
    manager.start();
    try {
      let text = '';
      const refresh = () => void manager.metrics.text().then((t) => (text = t));
      await until(() => (refresh(), /max_concurrent_reconciles\{kind="KeystoneClusterIdentity"\}/.test(text)), 5000, 'every controller started');
      const workers = Object.fromEntries([...text.matchAll(/^keystone_appcred_max_concurrent_reconciles\{kind="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
      const kinds = { ControlPlane: 5, KeystoneProject: 5, KeystoneUser: 5, KeystoneRoleAssignment: 5, KeystoneApplicationCredential: 7, KeystoneClusterIdentity: 5 };
      expect(Object.keys(kinds).sort()).toEqual([...ReconciledKinds].sort());
      // The handoff's controller is one more controller of KeystoneApplicationCredentials: it runs that kind's workers.
      expect(workers).toEqual(consumerHandoff ? { ...kinds, ConsumerHandoff: 7 } : kinds);
    } finally {
      await manager.shutdown();
    }
  });
});
