/**
 * The operator's controllers (src/operator/controllers.ts) with a registered target cluster, over fake API servers and
 * the real drivers (no Keystone is reached: the orders here are refused or wait for the admin credential): an order on
 * the target cluster is judged by the ControlPlane on the management cluster and written on its own cluster; a ControlPlane
 * change requeues it across clusters; it is looked at again every 10 minutes at the latest; while its API server does
 * not answer it is not reconciled, and when it answers again it is.
 */
import { KubeApi } from '../../../src/kube/api';
import { registerControllers } from '../../../src/operator/controllers';
import { jsonLogger } from '../../../src/operator/runtime/log';
import { Manager } from '../../../src/operator/runtime/manager';
import { OperatorMetrics } from '../../../src/operator/runtime/metrics';
import { FakeApiServer } from '../kube/fake-api-server';
import { Switchable } from './runtime/switchable';
import { until } from './runtime/until';

const GROUP = '/apis/c5c3.io/v1alpha1';
const PROJECTS = `${GROUP}/keystoneprojects`;
const CPS = `${GROUP}/controlplanes`;

const project = { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneProject', metadata: { name: 'proj', namespace: 'tenant-a' }, spec: { controlPlaneRef: { name: 'cp', namespace: 'openstack' } } };
const controlPlane = (assignments: object[]) => ({
  apiVersion: 'c5c3.io/v1alpha1',
  kind: 'ControlPlane',
  metadata: { name: 'cp', namespace: 'openstack' },
  spec: { services: { keystone: { external: { authURL: 'http://127.0.0.1:1/v3' } } }, adminCredential: { cloudCredentialsRef: { secretName: 'admin' } }, namespaceAssignments: assignments },
});
type Conditioned = { status?: { conditions?: { type: string; reason: string }[] }; metadata: { finalizers?: string[] } };
const reasonOf = (o: unknown) => (o as Conditioned | undefined)?.status?.conditions?.find((c) => c.type === 'ProjectReady')?.reason;

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.shutdown();
  manager = undefined;
});

it('a target cluster\'s order: judged by the management cluster\'s ControlPlane, written on its own cluster, requeued across clusters, floored at 10 minutes, skipped while its API server is down', async () => {
  const management = new FakeApiServer();
  const target = new Switchable(new FakeApiServer());
  const lines: Record<string, unknown>[] = [];
  manager = new Manager(new KubeApi(management, 'kac-test'), {
    identity: 'a', namespace: 'ops', leaseName: 'leader', leaderElect: false, metrics: new OperatorMetrics({ defaultMetrics: false }),
    logger: jsonLogger({ level: 'debug', write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) }),
  });
  registerControllers(manager);
  manager.start();
  await manager.waitForCacheSync();
  target.inner.seed(PROJECTS, project);
  await manager.engage('edge-1', new KubeApi(target, 'kac-test'));

  // No ControlPlane: on a target cluster that is NamespaceNotAssigned (frozen), written there, not on the management cluster.
  await until(() => reasonOf(target.inner.object(PROJECTS, 'tenant-a', 'proj')) === 'NamespaceNotAssigned', 5000, 'the refusal written on the target cluster');
  expect(management.object(PROJECTS, 'tenant-a', 'proj')).toBeUndefined();
  const first = lines.find((l) => l.msg === 'reconcile' && l.controller === 'KeystoneProject' && l.cluster === 'edge-1');
  expect(first).toMatchObject({ key: 'tenant-a/proj', requeueAfterMs: 600_000 });

  // A ControlPlane assigning the namespace on edge-1 (its admin credential not ready): the order there is requeued, assigned
  // (its finalizer installed on the target cluster) and waits for the admin credential.
  management.seed(CPS, controlPlane([{ namespace: 'tenant-a', targetClusterRef: { name: 'edge-1' } }]));
  await until(() => reasonOf(target.inner.object(PROJECTS, 'tenant-a', 'proj')) === 'WaitingForAdminCredential', 5000, 'the order requeued by the ControlPlane');
  expect((target.inner.object(PROJECTS, 'tenant-a', 'proj') as unknown as Conditioned).metadata.finalizers).toEqual(['c5c3.io/keystoneproject-teardown']);

  // Its API server goes away: the order is not reconciled (nothing could be read or written), and nothing fails.
  target.cut();
  await until(() => !manager?.connected('edge-1'), 5000, 'the outage noticed');
  const before = lines.length;
  management.seed(CPS, controlPlane([{ namespace: 'tenant-a', targetClusterRef: { name: 'edge-2' } }]));
  await until(() => lines.slice(before).some((l) => l.msg === 'reconcile' && l.cluster === 'edge-1' && l.reason === 'ClusterUnreachable'), 5000, 'the skipped pass');
  expect(lines.slice(before).filter((l) => l.msg === 'reconcile' && l.result === 'error')).toEqual([]);
  expect(reasonOf(target.inner.object(PROJECTS, 'tenant-a', 'proj'))).toBe('WaitingForAdminCredential');

  // It answers again: every order of it is reconciled, and sees the ControlPlane as it is now.
  target.down = false;
  await until(() => reasonOf(target.inner.object(PROJECTS, 'tenant-a', 'proj')) === 'NamespaceNotAssigned', 10_000, 'the order reconciled after the outage');
});

it('a deregistered target cluster: the series of its orders go at once, and come back when it is registered again', async () => {
  const management = new FakeApiServer();
  const target = new FakeApiServer();
  manager = new Manager(new KubeApi(management, 'kac-test'), { identity: 'a', namespace: 'ops', leaseName: 'leader', leaderElect: false, metrics: new OperatorMetrics({ defaultMetrics: false }) });
  registerControllers(manager);
  manager.start();
  await manager.waitForCacheSync();
  target.seed(`${GROUP}/keystoneapplicationcredentials`, {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneApplicationCredential',
    metadata: { name: 'app', namespace: 'tenant-a' },
    spec: { controlPlaneRef: { name: 'cp', namespace: 'openstack' }, userRef: { name: 'svc' }, projectRef: { name: 'proj' } },
  });
  const series = async () => ((await manager?.metrics.text()) ?? '').split('\n').filter((l) => l.startsWith('keystone_appcred_credential_') && l.includes('cluster="edge-1"'));
  let text: string[] = [];
  const refresh = () => void series().then((s) => (text = s));
  await manager.engage('edge-1', new KubeApi(target, 'kac-test'));
  // frozen there (no ControlPlane assigns it): its conditions are exported with the cluster
  await until(() => (refresh(), text.some((l) => l.includes('reason="NamespaceNotAssigned"'))), 5000, 'the order\'s series');
  await manager.disengage('edge-1');
  expect(await series()).toEqual([]);
  await manager.engage('edge-1', new KubeApi(target, 'kac-test'));
  await until(() => (refresh(), text.some((l) => l.includes('reason="NamespaceNotAssigned"'))), 5000, 'the series back');
});
