/**
 * The KeystoneApplicationCredential reconciler for an order on a registered target cluster, over two in-memory clusters
 * (the management cluster and the target cluster) and a fake Keystone: the order, its references, status, finalizer,
 * Events and delivered Secret on the target cluster; the ControlPlane, the user's parked password and the `secret-v<N>`
 * children on the management cluster, named from the hash of `<cluster>/<namespace>/<name>` with the cluster label; the
 * delivered document's auth URL is the ControlPlane's public endpoint, and without one nothing is delivered
 * (KeystoneNotPublished). The e2e test proves the same with two real API servers.
 */
import { parse } from 'yaml';
import { TEARDOWN_FINALIZER, childPrefix, type KeystoneApplicationCredential } from '../../../src/api';
import { Kinds, MemoryCluster, type Secret } from '../../../src/kube';
import { CredentialReconciler } from '../../../src/operator/credential/reconciler';
import { PlaneCluster } from '../../../src/operator/plane-cluster';
import { EventRecorder } from '../../../src/operator/runtime/events';
import { passwordSecretName } from '../../../src/plane/naming';
import { FakeKeystone } from '../../support/fake-keystone';

const NS = 'team-a';
const CP_NS = 'cp';
const EDGE = 'edge-1';
const PUBLIC = 'https://keystone.example.com/v3';
const T0 = new Date('2026-12-01T00:00:00Z');
const ready = (type: string) => [{ type, status: 'True' as const, reason: 'Ready', message: '', lastTransitionTime: '2026-12-01T00:00:00Z' }];
const b64 = (s: string) => Buffer.from(s).toString('base64');
const ref = { controlPlaneRef: { name: 'cp', namespace: CP_NS } };
const location = { cluster: EDGE, namespace: NS, name: 'app' };

function fleet(options: { publicEndpoint?: string; assignedOn?: string } = { publicEndpoint: PUBLIC }) {
  const clock = () => T0;
  const management = new MemoryCluster(clock);
  const target = new MemoryCluster(clock);
  const prefix = childPrefix(location);
  const keystone = new FakeKeystone(prefix, clock);
  const connections: unknown[] = [];
  const events: string[] = [];
  const reconciler = new CredentialReconciler({
    cluster: new PlaneCluster(management, new EventRecorder(management)),
    keystone: (connection) => {
      connections.push(connection);
      return keystone;
    },
    clock,
    event: async (order, e, cluster) => {
      events.push(`${cluster ?? ''}:${e.reason}`);
      await (cluster === EDGE ? target : management).event(order, e);
    },
  });
  const site = { cluster: EDGE, orders: new PlaneCluster(target, new EventRecorder(target)) };
  management.put(Kinds.ControlPlane, {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'ControlPlane',
    metadata: { name: 'cp', namespace: CP_NS },
    spec: {
      services: { keystone: { external: { authURL: 'http://keystone.cp.svc:5000/v3' }, ...(options.publicEndpoint ? { publicEndpoint: options.publicEndpoint } : {}) } },
      adminCredential: { cloudCredentialsRef: { secretName: 'admin' } },
      namespaceAssignments: [{ namespace: NS, targetClusterRef: { name: options.assignedOn ?? EDGE } }],
    },
    status: { conditions: ready('AdminCredentialReady') },
  });
  target.put(Kinds.KeystoneUser, {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneUser',
    metadata: { name: 'svc', namespace: NS },
    spec: { ...ref },
    status: { userID: 'u-1', passwordGeneration: 1, conditions: ready('UserReady') },
  });
  management.put(Kinds.Secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: passwordSecretName({ cluster: EDGE, namespace: NS, name: 'svc' }, 1), namespace: CP_NS }, data: { password: b64('user-password') } } as Secret);
  target.put(Kinds.KeystoneProject, {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneProject',
    metadata: { name: 'proj', namespace: NS },
    spec: { ...ref },
    status: { projectID: 'p-1', projectName: 'proj', conditions: ready('ProjectReady') },
  });
  target.put(Kinds.KeystoneRoleAssignment, {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneRoleAssignment',
    metadata: { name: 'member', namespace: NS },
    spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, role: 'member' },
    status: { roleID: 'r-1', userID: 'u-1', projectID: 'p-1', conditions: ready('AssignmentReady') },
  });
  target.put(Kinds.KeystoneApplicationCredential, {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneApplicationCredential',
    metadata: { name: 'app', namespace: NS },
    spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, rotation: { interval: '1h', gracePeriod: '10m' } },
  } as KeystoneApplicationCredential);
  const get = () => target.get(Kinds.KeystoneApplicationCredential, NS, 'app') as KeystoneApplicationCredential;
  const reason = (type: string) => get().status?.conditions?.find((c) => c.type === type)?.reason;
  const converge = async () => {
    for (let i = 0; i < 5; i++) {
      const outcome = await reconciler.reconcile({ namespace: NS, name: 'app' }, site);
      if (outcome.requeueAfterMs !== 0) return outcome;
    }
    throw new Error('no convergence');
  };
  return { management, target, keystone, connections, events, reconciler, site, prefix, get, reason, converge };
}

describe('KeystoneApplicationCredential on a target cluster', () => {
  it('mints as the user found on the target cluster with the password parked on the management cluster; children on the management cluster, the rest on the target cluster', async () => {
    const w = fleet();
    await w.converge();
    expect(w.reason('Ready')).toBe('AllReady');
    expect(w.get().metadata.finalizers).toEqual([TEARDOWN_FINALIZER]);
    expect(w.get().status).toMatchObject({ credentialGeneration: 1, secretName: 'app-credentials' });
    expect(w.connections[0]).toEqual({ authUrl: 'http://keystone.cp.svc:5000/v3', userId: 'u-1', password: 'user-password', passwordGeneration: 1, projectId: 'p-1' });

    expect(w.prefix).toBe(childPrefix(location));
    expect(w.prefix).not.toBe(childPrefix({ namespace: NS, name: 'app' }));
    const child = w.management.get(Kinds.Secret, CP_NS, `${w.prefix}-secret-v1`);
    expect(child?.metadata.labels).toEqual({
      'c5c3.io/keystoneapplicationcredential-name': 'app',
      'c5c3.io/keystoneapplicationcredential-namespace': NS,
      'c5c3.io/keystoneapplicationcredential-cluster': EDGE,
    });
    expect(w.target.list(Kinds.Secret, { namespace: CP_NS })).toEqual([]);
    expect([...w.keystone.credentials.values()].map((c) => c.name)).toEqual([`${w.prefix}-credential-v1`]);

    const delivered = w.target.get(Kinds.Secret, NS, 'app-credentials');
    expect(delivered?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'KeystoneApplicationCredential', uid: w.get().metadata.uid, controller: true })]);
    const clouds = parse(Buffer.from(delivered?.data?.['clouds.yaml'] ?? '', 'base64').toString());
    expect(clouds.clouds.openstack.auth.auth_url).toBe(PUBLIC);
    expect(w.management.get(Kinds.Secret, NS, 'app-credentials')).toBeUndefined();
    expect(w.management.get(Kinds.KeystoneApplicationCredential, NS, 'app')).toBeUndefined();

    expect(w.events).toContain(`${EDGE}:Minted`);
    expect(w.target.events.map((e) => e.reason)).toEqual(['Minted']); // a first delivery is no switch
    expect(w.management.events).toEqual([]);
  });

  it('KeystoneNotPublished: no public endpoint, nothing minted or delivered', async () => {
    const w = fleet({});
    await w.converge();
    expect(w.reason('DeliveryReady')).toBe('KeystoneNotPublished');
    expect(w.keystone.credentials.size).toBe(0);
    expect(w.target.get(Kinds.Secret, NS, 'app-credentials')).toBeUndefined();
  });

  it('consent for another cluster only: NamespaceNotAssigned, no finalizer, nothing created', async () => {
    const w = fleet({ publicEndpoint: PUBLIC, assignedOn: 'edge-2' });
    await w.converge();
    expect(w.reason('CredentialReady')).toBe('NamespaceNotAssigned');
    expect(w.get().metadata.finalizers ?? []).toEqual([]);
    expect(w.keystone.credentials.size).toBe(0);
  });

  it('the ControlPlane gone: NamespaceNotAssigned (frozen), not ControlPlaneNotFound', async () => {
    const w = fleet();
    w.management.drop(Kinds.ControlPlane, CP_NS, 'cp');
    await w.converge();
    expect(w.reason('CredentialReady')).toBe('NamespaceNotAssigned');
    expect(w.keystone.credentials.size).toBe(0);
  });

  it('teardown: the credential in Keystone, the children on the management cluster, the delivered Secret on the target cluster', async () => {
    const w = fleet();
    await w.converge();
    await w.target.delete(Kinds.KeystoneApplicationCredential, NS, 'app');
    await w.reconciler.reconcile({ namespace: NS, name: 'app' }, w.site);
    expect(w.keystone.credentials.size).toBe(0);
    expect(w.management.list(Kinds.Secret, { namespace: CP_NS }).filter((s) => s.metadata.name.startsWith(w.prefix))).toEqual([]);
    expect(w.target.get(Kinds.Secret, NS, 'app-credentials')).toBeUndefined();
    expect(w.target.get(Kinds.KeystoneApplicationCredential, NS, 'app')).toBeUndefined();
  });

  it('a new order takes 5 API writes: on the target cluster the finalizer, the delivered Secret, one status and the Event Minted; on the management cluster the parked secret', async () => {
    const w = fleet();
    w.management.clear();
    w.target.clear();
    await w.converge();
    expect(w.target.writes.map((x) => `${x.verb} ${x.kind}`).sort()).toEqual(['addFinalizer KeystoneApplicationCredential', 'apply Secret', 'event Event', 'patchStatus KeystoneApplicationCredential']);
    expect(w.management.writes.map((x) => `${x.verb} ${x.kind}`)).toEqual(['create Secret']);
  });

  it('after a restart (a new reconciler) a settled order on a target cluster costs no Keystone call and no write on either cluster until its wake-up', async () => {
    const w = fleet();
    await w.converge();
    const later = new Date(T0.getTime() + 60_000);
    const restarted = new CredentialReconciler({ cluster: new PlaneCluster(w.management, new EventRecorder(w.management)), keystone: () => w.keystone, clock: () => later });
    w.management.clear();
    w.target.clear();
    const calls: string[] = [];
    w.keystone.fault = (call) => void calls.push(call);
    const first = await restarted.reconcile({ namespace: NS, name: 'app' }, w.site);
    expect(first).toMatchObject({ skipped: true, settled: true, requeueAfterMs: 3_600_000 - 60_000 });
    expect((await restarted.reconcile({ namespace: NS, name: 'app' }, w.site)).skipped).toBe(true);
    expect(calls).toEqual([]);
    expect([...w.management.writes, ...w.target.writes]).toEqual([]);
  });
});
