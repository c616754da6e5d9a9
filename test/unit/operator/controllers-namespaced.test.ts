/**
 * The operator's controllers with the namespaced Secret access (src/operator/controllers.ts, issue 34), over the fake
 * API server with an RBAC-like authorizer and the real drivers (no Keystone answers here: the ControlPlane reports
 * KeystoneUnreachable): Secrets are listed and watched only in the namespaces the ControlPlane names; an order whose
 * namespace is not granted reads SecretAccessNotGranted, once, and costs a probe per backoff, not a reconcile; the grant
 * added, the order goes on without a restart; the ControlPlane's own namespace not granted shows on the ControlPlane; an
 * order waiting for its namespace's Secret cache to fill has the series of its cached conditions.
 */
import { KubeApi } from '../../../src/kube/api';
import { registerControllers } from '../../../src/operator/controllers';
import { jsonLogger } from '../../../src/operator/runtime/log';
import { Manager } from '../../../src/operator/runtime/manager';
import { OperatorMetrics } from '../../../src/operator/runtime/metrics';
import { FakeApiServer } from '../kube/fake-api-server';
import { until } from './runtime/until';

const GROUP = '/apis/c5c3.io/v1alpha1';
const USERS = `${GROUP}/keystoneusers`;
const CPS = `${GROUP}/controlplanes`;
const SECRETS = '/api/v1/secrets';

const controlPlane = {
  apiVersion: 'c5c3.io/v1alpha1',
  kind: 'ControlPlane',
  metadata: { name: 'cp', namespace: 'openstack' },
  spec: { services: { keystone: { external: { authURL: 'http://127.0.0.1:1/v3' } } }, adminCredential: { cloudCredentialsRef: { secretName: 'admin' } }, namespaceAssignments: [{ namespace: 'tenant-a' }] },
};
const cloudsYaml = 'clouds:\n  admin:\n    auth: { auth_url: http://127.0.0.1:1/v3, username: admin, password: pw, project_name: admin, user_domain_name: Default, project_domain_name: Default }\n';
const user = { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', metadata: { name: 'alice', namespace: 'tenant-a' }, spec: { controlPlaneRef: { name: 'cp', namespace: 'openstack' } } };
type Conditioned = { status?: { conditions?: { type: string; reason: string; message: string }[] }; metadata: { finalizers?: string[] } };
const conditionOf = (o: unknown, type: string) => (o as Conditioned | undefined)?.status?.conditions?.find((c) => c.type === type);

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.shutdown();
  manager = undefined;
});

function start(server: FakeApiServer) {
  const lines: Record<string, unknown>[] = [];
  manager = new Manager(new KubeApi(server, 'kac-test'), {
    identity: 'a', namespace: 'ops', leaseName: 'leader', leaderElect: false, workers: 2, metrics: new OperatorMetrics({ defaultMetrics: false }),
    logger: jsonLogger({ level: 'debug', write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) }),
  });
  registerControllers(manager, { secretAccess: { mode: 'namespaced', operator: 'kac', username: 'system:serviceaccount:ops:operator' } });
  manager.start();
  return lines;
}

it('an assigned namespace without its grant: SecretAccessNotGranted once, a probe per backoff; the grant added: the order goes on without a restart', async () => {
  const server = new FakeApiServer();
  let tenantGranted = false;
  server.authorize = (r) => r.plural !== 'secrets' || (r.namespace === 'openstack' || (r.namespace === 'tenant-a' && tenantGranted));
  server.seed(CPS, controlPlane);
  server.seed(SECRETS, { metadata: { name: 'admin', namespace: 'openstack' }, data: { 'clouds.yaml': Buffer.from(cloudsYaml).toString('base64') } });
  server.seed(SECRETS, { metadata: { name: 'unrelated', namespace: 'kube-system' }, data: { token: 'eA==' } });
  server.seed(USERS, user);
  const lines = start(server);
  await manager?.waitForCacheSync();

  await until(() => conditionOf(server.object(USERS, 'tenant-a', 'alice'), 'UserReady')?.reason === 'SecretAccessNotGranted', 5000, 'the refusal');
  const refused = conditionOf(server.object(USERS, 'tenant-a', 'alice'), 'UserReady');
  expect(refused?.message).toContain('kubectl create role kac-secrets -n tenant-a --verb=get,list,watch,create,patch,delete --resource=secrets && kubectl create rolebinding kac-secrets -n tenant-a --role=kac-secrets --serviceaccount=ops:operator');
  expect(refused?.message).toContain('secrets is forbidden');
  expect((server.object(USERS, 'tenant-a', 'alice') as unknown as Conditioned).metadata.finalizers).toBeUndefined();
  // The ControlPlane's own namespace is granted: its admin credential is read (Keystone does not answer here).
  await until(() => conditionOf(server.object(CPS, 'openstack', 'cp'), 'AdminCredentialReady')?.reason === 'KeystoneUnreachable', 5000, 'the ControlPlane');

  // While refused: a probe per backoff (1 s, 2 s, ...), one request each; the order is not reconciled for them.
  const passes = () => lines.filter((l) => l.msg === 'reconcile' && l.controller === 'KeystoneUser').length;
  const before = { passes: passes(), requests: server.requests.length };
  await new Promise((r) => setTimeout(r, 2500));
  const probes = server.requests.slice(before.requests).filter((r) => r.path === '/api/v1/namespaces/tenant-a/secrets');
  expect(probes.length).toBeGreaterThanOrEqual(1);
  expect(probes.length).toBeLessThanOrEqual(3);
  expect(passes() - before.passes).toBe(0);
  const statusWrites = server.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/keystoneusers/alice/status'));
  expect(statusWrites).toHaveLength(1);

  // The grant appears: within the probe's backoff the namespace fills and the order goes on (here to the admin wait).
  tenantGranted = true;
  await until(() => conditionOf(server.object(USERS, 'tenant-a', 'alice'), 'UserReady')?.reason === 'WaitingForAdminCredential', 15_000, 'the order going on once granted');
  expect((server.object(USERS, 'tenant-a', 'alice') as unknown as Conditioned).metadata.finalizers).toEqual(['c5c3.io/keystoneuser-teardown']);

  // Never a list or watch of Secrets across the cluster, nor in a namespace nobody names.
  expect(server.requests.filter((r) => r.path === '/api/v1/secrets' || r.path.startsWith('/api/v1/namespaces/kube-system/'))).toEqual([]);
  expect(lines.filter((l) => l.msg === 'reconcile' && l.result === 'error')).toEqual([]);
}, 30_000);

it('the ControlPlane\'s own namespace not granted: AdminCredentialReady=False/SecretAccessNotGranted; its orders wait on it', async () => {
  const server = new FakeApiServer();
  server.authorize = (r) => r.plural !== 'secrets' || r.namespace === 'tenant-a';
  server.seed(CPS, controlPlane);
  server.seed(USERS, user);
  start(server);
  await until(() => conditionOf(server.object(CPS, 'openstack', 'cp'), 'AdminCredentialReady')?.reason === 'SecretAccessNotGranted', 5000, 'the ControlPlane refused');
  expect(conditionOf(server.object(CPS, 'openstack', 'cp'), 'AdminCredentialReady')?.message).toContain('namespace openstack, which it needs for the admin credential and the children of ControlPlane cp');
  await until(() => conditionOf(server.object(USERS, 'tenant-a', 'alice'), 'UserReady')?.reason === 'WaitingForAdminCredential', 5000, 'the order waiting on it');
  expect(conditionOf(server.object(USERS, 'tenant-a', 'alice'), 'UserReady')?.message).toContain('SecretAccessNotGranted');
});

// Found by the simulation (seed 460001, schedule 30: a slow target cluster, then a restart): while an order waits for
// its namespace's Secret cache to fill, the new leader exported no series of its conditions, for as long as the lists
// took; an alert reading them lost the time it had been pending.
it('an order waiting for its namespace\'s Secret cache to fill: its condition series say what its cached status says', async () => {
  const server = new FakeApiServer();
  let fill: () => void = () => undefined;
  const filled = new Promise<void>((resolve) => (fill = resolve));
  const request = server.request.bind(server);
  server.request = async (r) => {
    if (r.method === 'GET' && r.path === '/api/v1/namespaces/tenant-a/secrets') await filled; // a list that takes its time
    return request(r);
  };
  server.seed(CPS, controlPlane);
  server.seed(SECRETS, { metadata: { name: 'admin', namespace: 'openstack' }, data: { 'clouds.yaml': Buffer.from(cloudsYaml).toString('base64') } });
  const condition = (type: string, status: string, reason: string) => ({ type, status, reason, message: '', lastTransitionTime: '2026-12-03T00:00:00Z' });
  server.seed(`${GROUP}/keystoneapplicationcredentials`, {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneApplicationCredential',
    metadata: { name: 'app', namespace: 'tenant-a' },
    spec: { controlPlaneRef: { name: 'cp', namespace: 'openstack' }, userRef: { name: 'alice' }, projectRef: { name: 'proj' } },
    status: { conditions: [condition('Ready', 'False', 'NotAllReady'), condition('CredentialReady', 'False', 'CredentialError'), condition('DeliveryReady', 'True', 'Delivered')] },
  });
  const lines = start(server);
  const series = async () => ((await manager?.metrics.text()) ?? '').split('\n').filter((l) => l.startsWith('keystone_appcred_credential_condition{') && l.includes('name="app"'));
  let text: string[] = [];
  try {
    await until(() => (void series().then((s) => (text = s)), text.length === 3), 5000, "the order's condition series");
    expect(lines.filter((l) => l.msg === 'reconcile' && l.key === 'tenant-a/app').map((l) => l.reason)).toEqual(expect.arrayContaining(['WaitingForSecrets']));
    expect(text.map((l) => l.replace(/^.*type="(\w+)",status="(\w+)",reason="(\w+)".* 1$/, '$1 $2 $3')).sort()).toEqual(['CredentialReady False CredentialError', 'DeliveryReady True Delivered', 'Ready False NotAllReady']);
  } finally {
    fill(); // the list answers: the manager can stop
  }
});
