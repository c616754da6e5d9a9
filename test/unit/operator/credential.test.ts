/**
 * The KeystoneApplicationCredential reconciler over the in-memory cluster and a fake Keystone (for speed; the e2e test
 * proves the same on the real API server and Keystone): consent, gates, the children, the delivered Secret, the status,
 * the steady state, teardown. Every rule of rotation is the lifecycle's and is tested there.
 */
import { TEARDOWN_FINALIZER, childPrefix, type KeystoneApplicationCredential } from '../../../src/api';
import { Kinds, MemoryCluster, type Secret } from '../../../src/kube';
import { CredentialPassError, CredentialReconciler } from '../../../src/operator/credential/reconciler';
import { PlaneCluster } from '../../../src/operator/plane-cluster';
import { EventRecorder } from '../../../src/operator/runtime/events';
import { shownCredentialId } from '../../../src/lifecycle';
import { passwordSecretName } from '../../../src/plane/naming';
import { Controller } from '../../../src/operator/runtime/controller';
import { silentLogger } from '../../../src/operator/runtime/log';
import { OperatorMetrics } from '../../../src/operator/runtime/metrics';
import { KeystoneError, KeystoneLimits, KeystoneSessions } from '../../../src/keystone';
import { FakeKeystone, FakeUser } from '../../support/fake-keystone';
import { FakeKeystone as FakeKeystoneHttp, json, tokenReply } from '../keystone/fake-keystone';

const NS = 'team-a';
const CP_NS = 'cp';
const T0 = new Date('2026-12-01T00:00:00Z');
const ready = (type: string) => [{ type, status: 'True' as const, reason: 'Ready', message: '', lastTransitionTime: '2026-12-01T00:00:00Z' }];
const b64 = (s: string) => Buffer.from(s).toString('base64');
const ref = { controlPlaneRef: { name: 'cp', namespace: CP_NS } };

function world(options: { readonly user?: FakeUser; readonly backups?: Map<string, string> } = {}) {
  let now = T0;
  const clock = () => now;
  const cluster = new MemoryCluster(clock);
  const prefix = childPrefix({ namespace: NS, name: 'app' });
  const keystone = new FakeKeystone(prefix, clock, options.user);
  const backups = options.backups;
  const connections: unknown[] = [];
  const fresh: boolean[] = [];
  const reconciler = new CredentialReconciler({
    cluster: new PlaneCluster(cluster, new EventRecorder(cluster)),
    keystone: (connection, _prefix, options) => {
      connections.push(connection);
      fresh.push(options.fresh);
      return answering(keystone, options.onAnswer);
    },
    clock,
    event: (order, e) => cluster.event(order, e),
    ...(backups
      ? {
          backup: (path: string) => ({
            read: async () => backups.get(path),
            write: async (data) => void backups.set(path, data.application_credential_id),
            remove: async () => void backups.delete(path),
          }),
        }
      : {}),
  });
  const controlPlane = (assigned: string[]) =>
    cluster.put(Kinds.ControlPlane, {
      apiVersion: 'c5c3.io/v1alpha1',
      kind: 'ControlPlane',
      metadata: { name: 'cp', namespace: CP_NS },
      spec: {
        services: { keystone: { external: { authURL: 'http://127.0.0.1:5000/v3' } } },
        adminCredential: { cloudCredentialsRef: { secretName: 'admin' } },
        namespaceAssignments: assigned.map((namespace) => ({ namespace })),
      },
      status: { conditions: ready('AdminCredentialReady') },
    });
  controlPlane([NS]);
  const user = cluster.put(Kinds.KeystoneUser, {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneUser',
    metadata: { name: 'svc', namespace: NS },
    spec: { ...ref },
    status: { userID: 'u-1', passwordGeneration: 1, conditions: ready('UserReady') },
  });
  cluster.put(Kinds.Secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: passwordSecretName({ namespace: NS, name: 'svc' }, 1), namespace: CP_NS }, data: { password: b64('user-password') } } as Secret);
  cluster.put(Kinds.KeystoneProject, {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneProject',
    metadata: { name: 'proj', namespace: NS },
    spec: { ...ref },
    status: { projectID: 'p-1', projectName: 'proj', conditions: ready('ProjectReady') },
  });
  const assignment = () =>
    cluster.put(Kinds.KeystoneRoleAssignment, {
      apiVersion: 'c5c3.io/v1alpha1',
      kind: 'KeystoneRoleAssignment',
      metadata: { name: 'member', namespace: NS },
      spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, role: 'member' },
      status: { roleID: 'r-1', userID: 'u-1', projectID: 'p-1', conditions: ready('AssignmentReady') },
    });
  const order = cluster.put(Kinds.KeystoneApplicationCredential, {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneApplicationCredential',
    metadata: { name: 'app', namespace: NS },
    spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, rotation: { interval: '1h', gracePeriod: '10m' } },
  } as KeystoneApplicationCredential);
  const get = () => cluster.get(Kinds.KeystoneApplicationCredential, NS, 'app') as KeystoneApplicationCredential;
  const delivered = () => cluster.get(Kinds.Secret, NS, 'app-credentials');
  const decoded = () => Object.fromEntries(Object.entries(delivered()?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  const converge = async () => {
    for (let i = 0; i < 5; i++) {
      const outcome = await reconciler.reconcile({ namespace: NS, name: 'app' });
      if (outcome.requeueAfterMs !== 0) return outcome;
    }
    throw new Error('no convergence');
  };
  return {
    cluster,
    keystone,
    reconciler,
    connections,
    fresh,
    user,
    order,
    prefix,
    assignment,
    controlPlane,
    get,
    delivered,
    decoded,
    converge,
    travel: (ms: number) => (now = new Date(now.getTime() + ms)),
    reason: (type: string) => get().status?.conditions?.find((c) => c.type === type)?.reason,
  };
}

/** The fake Keystone port telling each answer, as the real one does (src/keystone/credential-port.ts): a reply or a refusal. */
function answering(port: FakeKeystone, onAnswer: (() => void) | undefined): FakeKeystone {
  return new Proxy(port, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || !['list', 'create', 'delete', 'verify'].includes(String(property))) return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: unknown[]) => {
        try {
          const reply: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          onAnswer?.();
          return reply;
        } catch (error) {
          if (!(error as { retryable?: boolean }).retryable) onAnswer?.();
          throw error;
        }
      };
    },
  });
}

describe('KeystoneApplicationCredential reconciler', () => {
  it('a restored cluster (the order re-created with a new uid and its status, the children restored, the delivered Secret collected) keeps its credential, and later sweeps it', async () => {
    const backups = new Map<string, string>();
    const w = world({ backups });
    w.assignment();
    await w.converge();
    const before = w.get();
    const id1 = before.status?.credentialID as string;
    const secret1 = w.decoded().application_credential_secret;
    // The restore: the order comes back from the backup under a new uid with its status; the Secret it controlled was
    // garbage-collected (its owner reference names the old uid).
    w.cluster.drop(Kinds.KeystoneApplicationCredential, NS, 'app');
    w.cluster.drop(Kinds.Secret, NS, 'app-credentials');
    const metadata = { ...before.metadata };
    delete metadata.uid;
    delete metadata.resourceVersion;
    w.cluster.put(Kinds.KeystoneApplicationCredential, { ...before, metadata } as KeystoneApplicationCredential);
    expect(w.get().metadata.uid).not.toBe(before.metadata.uid);
    const creates = w.keystone.writes.length;
    await w.converge();
    expect(w.get().status?.credentialID).toBe(id1);
    expect(w.decoded()).toMatchObject({ application_credential_id: id1, application_credential_secret: secret1 });
    expect(w.keystone.writes.length).toBe(creates);
    expect(w.reason('CredentialReady')).toBe('CredentialMinted');
    // Its backup now lives at the path of its new uid.
    expect(backups.get(`openstack/keystone/${CP_NS}/${w.prefix}/${w.get().metadata.uid}/service-accounts/application-credential`)).toBe(id1);
    // The schedule rotates it and the sweep deletes it: the restored order's own, by its record and its parked secret.
    for (let i = 0; i < 6; i++) {
      w.travel(20 * 60_000);
      await w.converge();
    }
    expect(w.get().status?.credentialGeneration).toBeGreaterThanOrEqual(2);
    expect(w.keystone.credentials.has(id1)).toBe(false);
    expect(w.keystone.authenticates(w.decoded().application_credential_id, w.decoded().application_credential_secret)).toBe(true);
  });

  it('two clusters ordering the same names for one Keystone user and one OpenBao: each mints, backs up and tears down only its own, and says so', async () => {
    const user = new FakeUser();
    const backups = new Map<string, string>();
    const a = world({ user, backups });
    const b = world({ user, backups });
    for (const w of [a, b]) w.assignment();
    await a.converge();
    await b.converge();
    for (const w of [a, b]) expect(w.get().status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const idA = a.get().status?.credentialID as string;
    const idB = b.get().status?.credentialID as string;
    expect(idB).not.toBe(idA);
    expect(a.keystone.authenticates(a.decoded().application_credential_id, a.decoded().application_credential_secret)).toBe(true);
    expect(b.keystone.authenticates(b.decoded().application_credential_id, b.decoded().application_credential_secret)).toBe(true);
    // Each backup at its own path, named by the order's uid: two paths, each holding its own cluster's credential.
    expect(backups.size).toBe(2);
    expect(backups.get(`openstack/keystone/${CP_NS}/${a.prefix}/${a.get().metadata.uid}/service-accounts/application-credential`)).toBe(idA);
    expect(backups.get(`openstack/keystone/${CP_NS}/${b.prefix}/${b.get().metadata.uid}/service-accounts/application-credential`)).toBe(idB);
    // Cluster B found A's credential under its names: reported on the condition and in one Warning Event, left alone.
    const credentialReady = b.get().status?.conditions?.find((c) => c.type === 'CredentialReady');
    expect(credentialReady).toMatchObject({ status: 'True', reason: 'ForeignCredential' });
    expect(credentialReady?.message).toContain(idA);
    const warnings = b.cluster.events.filter((e) => e.reason === 'ForeignCredential');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ type: 'Warning' });
    expect(warnings[0].note).toContain(idA);
    expect(warnings[0].note).toContain('openstack application credential delete');
    // A rotates (the schedule, then a raise) and sweeps; B's delivered credential keeps working throughout.
    for (let i = 0; i < 8; i++) {
      a.travel(20 * 60_000);
      b.travel(20 * 60_000);
      await a.converge();
      await b.converge();
      expect(b.keystone.authenticates(b.decoded().application_credential_id, b.decoded().application_credential_secret)).toBe(true);
      expect(a.keystone.authenticates(a.decoded().application_credential_id, a.decoded().application_credential_secret)).toBe(true);
    }
    expect(a.get().status?.credentialGeneration).toBeGreaterThanOrEqual(3);
    // B is torn down: A's credentials and backup stay.
    const aHeld = [...user.credentials.values()].filter((c) => c.description?.includes(`owner=${a.get().metadata.uid}`)).map((c) => c.id);
    expect(aHeld.length).toBeGreaterThan(0);
    const uidB = b.get().metadata.uid as string;
    expect([...user.credentials.values()].some((c) => c.description?.includes(`owner=${uidB}`))).toBe(true);
    await b.cluster.delete(Kinds.KeystoneApplicationCredential, NS, 'app');
    await b.converge();
    expect(b.cluster.get(Kinds.KeystoneApplicationCredential, NS, 'app')).toBeUndefined();
    for (const id of aHeld) expect(user.credentials.has(id)).toBe(true);
    expect([...user.credentials.values()].filter((c) => c.description?.includes(`owner=${uidB}`))).toEqual([]);
    expect(backups.size).toBe(1);
    expect(a.keystone.authenticates(a.decoded().application_credential_id, a.decoded().application_credential_secret)).toBe(true);
  });

  it('no role on the project: NoRoleOnProject, nothing created; the finalizer is installed once the namespace is assigned', async () => {
    const w = world();
    await w.converge();
    expect(w.get().metadata.finalizers).toEqual([TEARDOWN_FINALIZER]);
    expect(w.reason('CredentialReady')).toBe('NoRoleOnProject');
    expect(w.keystone.credentials.size).toBe(0);
    expect(w.delivered()).toBeUndefined();
  });

  it('with the role: parks secret-v1 in the ControlPlane namespace, mints, delivers the three keys with owner reference and labels', async () => {
    const w = world();
    w.assignment();
    const outcome = await w.converge();
    expect(w.keystone.credentials.size).toBe(1);
    const status = w.get().status;
    expect(status).toMatchObject({ credentialGeneration: 1, secretName: 'app-credentials', observedGeneration: 1 });
    expect(w.reason('Ready')).toBe('AllReady');
    const child = w.cluster.get(Kinds.Secret, CP_NS, `${w.prefix}-secret-v1`);
    expect(child?.metadata.labels).toEqual({
      'c5c3.io/keystoneapplicationcredential-name': 'app',
      'c5c3.io/keystoneapplicationcredential-namespace': NS,
      'c5c3.io/keystoneapplicationcredential-cluster': '',
    });
    const secret = w.delivered();
    expect(secret?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'KeystoneApplicationCredential', name: 'app', uid: w.order.metadata.uid, controller: true })]);
    expect(secret?.metadata.labels).toEqual({ 'c5c3.io/keystoneapplicationcredential-name': 'app', 'c5c3.io/keystoneapplicationcredential-namespace': NS });
    const data = w.decoded();
    expect(Object.keys(data).sort()).toEqual(['application_credential_id', 'application_credential_secret', 'clouds.yaml']);
    // The reference's document, byte for byte as every release delivered it: the auth URL, the id, the secret, the region.
    expect(data['clouds.yaml']).toBe(
      `clouds:\n  openstack:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: http://127.0.0.1:5000/v3\n      application_credential_id: ${data.application_credential_id}\n      application_credential_secret: ${data.application_credential_secret}\n    region_name: RegionOne\n    identity_api_version: 3\n`,
    );
    expect(w.keystone.authenticates(data.application_credential_id, data.application_credential_secret)).toBe(true);
    expect(w.connections[0]).toEqual({ authUrl: 'http://127.0.0.1:5000/v3', userId: 'u-1', password: 'user-password', passwordGeneration: 1, projectId: 'p-1' });
    expect(outcome.requeueAfterMs).toBe(3_600_000); // wakes at nextRotation
    expect(w.cluster.events.map((e) => e.reason)).toContain('Minted');
  });

  it('a new order takes at most 5 API writes, Events included: finalizer, parked secret, delivered Secret, one status, Minted (a first delivery is no switch)', async () => {
    const w = world();
    w.assignment();
    w.cluster.clear();
    await w.converge();
    expect(w.cluster.writes.map((x) => `${x.verb} ${x.kind}`).sort()).toEqual([
      'addFinalizer KeystoneApplicationCredential',
      'apply Secret',
      'create Secret',
      'event Event',
      'patchStatus KeystoneApplicationCredential',
    ]);
    expect(w.cluster.events.map((e) => e.reason)).toEqual(['Minted']);
    expect(w.cluster.writes.length).toBeLessThanOrEqual(5);
  });

  // The status is written on the copy the pass decided from (ClusterPort.writeStatus): its own finalizer write moves
  // that copy on (a new order's first pass records its status), a change of the user's during the pass loses the write.
  it('an order raised while its pass mints loses that pass\'s status write (409); the next pass decides from the raise', async () => {
    const w = world();
    w.assignment();
    const create = w.keystone.create.bind(w.keystone);
    let raised = false;
    w.keystone.create = async (request) => {
      if (!raised) {
        raised = true;
        const order = w.get();
        w.cluster.put(Kinds.KeystoneApplicationCredential, { ...order, spec: { ...order.spec, credentialGeneration: 2 } });
      }
      return create(request);
    };
    await expect(w.reconciler.reconcile({ namespace: NS, name: 'app' })).rejects.toThrow(/modified|409/);
    expect(w.get().status).toBeUndefined();
    expect(w.get().metadata.finalizers).toEqual([TEARDOWN_FINALIZER]);
    await w.converge();
    expect(w.get().status).toMatchObject({ credentialGeneration: 2 });
    expect(w.decoded()).toMatchObject({ application_credential_id: w.get().status?.credentialID });
  });

  it('a rotation records Minted and Switched (the delivered Secret carries the new generation), a first delivery Minted only', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    expect(w.cluster.events.map((e) => e.reason)).toEqual(['Minted']);
    const order = w.get();
    w.cluster.put(Kinds.KeystoneApplicationCredential, { ...order, metadata: { ...order.metadata, generation: 2 }, spec: { ...order.spec, credentialGeneration: 2 } });
    await w.converge();
    expect(w.get().status?.credentialGeneration).toBe(2);
    expect(w.cluster.events.map((e) => `${e.reason}: ${e.note}`)).toEqual(['Minted: created generation 1 in Keystone (first credential)', expect.stringMatching(/^Minted: created generation 2/), 'Switched: the delivered Secret carries generation 2']);
  });

  it('a rotation on a restored cluster (the order without status) still records Switched', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    const order = w.get();
    w.cluster.put(Kinds.KeystoneApplicationCredential, { ...order, metadata: { ...order.metadata, generation: 2 }, spec: { ...order.spec, credentialGeneration: 2 }, status: undefined });
    await w.converge();
    expect(w.get().status?.credentialGeneration).toBe(2);
    expect(w.cluster.events.map((e) => e.reason)).toContain('Switched');
  });

  it('the pass its own writes wake is vouched for by the cache: no second Keystone list after a pass that acted', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    const calls: string[] = [];
    w.keystone.fault = (call) => void calls.push(call);
    const woken = await w.reconciler.reconcile({ namespace: NS, name: 'app' });
    expect(woken).toMatchObject({ skipped: true, settled: true });
    expect(calls).toEqual([]);
    // A change after that is a full pass again: an edited key is rewritten.
    const secret = w.delivered() as Secret;
    w.cluster.put(Kinds.Secret, { ...secret, data: { ...secret.data, application_credential_id: b64('edited') } });
    expect((await w.reconciler.reconcile({ namespace: NS, name: 'app' })).skipped).toBeUndefined();
    expect(calls).toContain('list');
  });

  it('an order met anew (a namespace\'s Secret access changed under it) is settled by the cache, unless a change of the user\'s is still to be listed', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    const calls: string[] = [];
    w.keystone.fault = (call) => void calls.push(call);
    const key = { namespace: NS, name: 'app' };
    await w.reconciler.reconcile(key); // the pass the operator's own last writes woke, vouched for by the cache
    // Forgotten without `anew` (what a deleted order gets), the next pass is a full one.
    w.reconciler.forget(key);
    expect((await w.reconciler.reconcile(key)).skipped).toBeUndefined();
    expect(calls).toContain('list');
    // Met anew, the cache settles it: no Keystone call.
    calls.length = 0;
    w.reconciler.forget(key, undefined, { anew: true });
    expect(await w.reconciler.reconcile(key)).toMatchObject({ skipped: true, settled: true });
    expect(calls).toEqual([]);
    // A change of the user's, its pass failed: met anew, it still lists anew.
    w.cluster.put(Kinds.KeystoneApplicationCredential, { ...w.get(), metadata: { ...w.get().metadata, annotations: { 'example.com/recheck': '1' } } });
    w.keystone.fault = (call) => {
      if (call === 'list') throw new Error('Keystone is down');
    };
    await expect(w.reconciler.reconcile(key)).rejects.toThrow(/Keystone is down/);
    w.reconciler.forget(key, undefined, { anew: true });
    w.keystone.fault = () => undefined;
    w.fresh.length = 0;
    expect((await w.reconciler.reconcile(key)).skipped).toBeUndefined();
    expect(w.fresh).toEqual([true]);
  });

  it('a pass lists anew only after a change the user made to the order (its spec, its annotations), not after its own writes nor for a raised credentialGeneration', async () => {
    const w = world();
    w.assignment();
    await w.converge(); // first sight, then the passes the operator's own writes (finalizer, status) wake
    expect(w.fresh.length).toBeGreaterThan(0);
    expect(w.fresh.every((f) => !f)).toBe(true);
    const annotate = (annotations: Record<string, string>) => w.cluster.put(Kinds.KeystoneApplicationCredential, { ...w.get(), metadata: { ...w.get().metadata, annotations } });
    annotate({ 'example.com/recheck': '1' });
    w.fresh.length = 0;
    await w.reconciler.reconcile({ namespace: NS, name: 'app' });
    expect(w.fresh).toEqual([true]);
    const secret = w.delivered() as Secret; // a change that is not the user's order: the known credentials serve
    w.cluster.put(Kinds.Secret, { ...secret, data: { ...secret.data, application_credential_id: b64('edited') } });
    w.fresh.length = 0;
    await w.reconciler.reconcile({ namespace: NS, name: 'app' });
    expect(w.fresh).toEqual([false]);
    const respec = (spec: Partial<KeystoneApplicationCredential['spec']>) => {
      const order = w.get();
      w.cluster.put(Kinds.KeystoneApplicationCredential, { ...order, metadata: { ...order.metadata, generation: (order.metadata.generation ?? 1) + 1 }, spec: { ...order.spec, ...spec } });
      w.fresh.length = 0;
    };
    respec({ rotation: { interval: '2h', gracePeriod: '10m' } });
    await w.reconciler.reconcile({ namespace: NS, name: 'app' });
    expect(w.fresh[0]).toBe(true);
    respec({ credentialGeneration: 5 }); // a rotation by hand mints whatever Keystone holds: the known credentials serve
    await w.reconciler.reconcile({ namespace: NS, name: 'app' });
    expect(w.fresh[0]).toBe(false);
  });

  it('a pass that follows a change of the user and fails keeps listing anew on its retries until one succeeds', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    w.cluster.put(Kinds.KeystoneApplicationCredential, { ...w.get(), metadata: { ...w.get().metadata, annotations: { 'example.com/recheck': '1' } } });
    w.keystone.fault = (call) => {
      if (call === 'list') throw new Error('Keystone is down');
    };
    w.fresh.length = 0;
    await expect(w.reconciler.reconcile({ namespace: NS, name: 'app' })).rejects.toThrow(/Keystone is down/);
    await expect(w.reconciler.reconcile({ namespace: NS, name: 'app' })).rejects.toThrow(/Keystone is down/);
    w.keystone.fault = () => undefined;
    await w.reconciler.reconcile({ namespace: NS, name: 'app' });
    expect(w.fresh).toEqual([true, true, true]);
    // Once a pass succeeded, a change that is not the user's (an edited Secret) is served the known credentials again.
    const secret = w.delivered() as Secret;
    w.cluster.put(Kinds.Secret, { ...secret, data: { ...secret.data, application_credential_id: b64('edited') } });
    w.fresh.length = 0;
    await w.reconciler.reconcile({ namespace: NS, name: 'app' });
    expect(w.fresh).toEqual([false]);
  });

  it('a steady order: a resync makes no Keystone call and no write', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    await w.reconciler.reconcile({ namespace: NS, name: 'app' }); // the pass after our own status write
    w.cluster.clear();
    const calls: string[] = [];
    w.keystone.fault = (call) => void calls.push(call);
    const outcome = await w.reconciler.reconcile({ namespace: NS, name: 'app' });
    expect(outcome.skipped).toBe(true);
    expect(calls).toEqual([]);
    expect(w.cluster.writes).toEqual([]);
  });

  it('after a restart (a new reconciler, as on the standby that took over) a settled order costs no Keystone call and no write until its wake-up', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    const restarted = new CredentialReconciler({ cluster: new PlaneCluster(w.cluster, new EventRecorder(w.cluster)), keystone: () => w.keystone, clock: () => new Date(T0.getTime() + 60_000), event: (order, e) => w.cluster.event(order, e) });
    w.cluster.clear();
    const calls: string[] = [];
    w.keystone.fault = (call) => void calls.push(call);
    const first = await restarted.reconcile({ namespace: NS, name: 'app' });
    expect(first).toMatchObject({ skipped: true, settled: true, requeueAfterMs: 3_600_000 - 60_000 });
    expect(first.status?.credentialGeneration).toBe(1);
    const resync = await restarted.reconcile({ namespace: NS, name: 'app' });
    expect(resync).toMatchObject({ skipped: true });
    expect(resync.settled).toBeUndefined();
    expect(calls).toEqual([]);
    expect(w.cluster.writes).toEqual([]);
  });

  it('after a restart, an order its cache does not show settled gets the full pass: a generation parked above the delivered one (a crash between park and record), an edited Secret', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    const restart = () => new CredentialReconciler({ cluster: new PlaneCluster(w.cluster, new EventRecorder(w.cluster)), keystone: () => w.keystone, clock: () => T0, event: (order, e) => w.cluster.event(order, e) });
    w.cluster.put(Kinds.Secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${w.prefix}-secret-v2`, namespace: CP_NS, labels: { ...w.cluster.get(Kinds.Secret, CP_NS, `${w.prefix}-secret-v1`)?.metadata.labels } }, data: { value: b64('parked-before-the-crash') } } as Secret);
    const calls: string[] = [];
    w.keystone.fault = (call) => void calls.push(call);
    const after = await restart().reconcile({ namespace: NS, name: 'app' });
    expect(after.settled).toBeUndefined();
    expect(calls).toContain('list');
    await w.converge(); // the rotation under way is continued with the secret parked before the crash
    expect(w.get().status?.credentialGeneration).toBe(2);
    expect(w.decoded().application_credential_secret).toBe('parked-before-the-crash');
    calls.length = 0;
    const secret = w.delivered() as Secret;
    w.cluster.put(Kinds.Secret, { ...secret, data: { ...secret.data, application_credential_secret: b64('edited') } });
    expect((await restart().reconcile({ namespace: NS, name: 'app' })).settled).toBeUndefined();
    expect(calls).toContain('list');
    expect(w.decoded().application_credential_secret).not.toBe('edited');
  });

  it('reads only the assignments of its user and project: an assignment of another user leaves a steady order skipped, its own wakes it', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    await w.reconciler.reconcile({ namespace: NS, name: 'app' });
    const other = (name: string, user: string) =>
      w.cluster.put(Kinds.KeystoneRoleAssignment, {
        apiVersion: 'c5c3.io/v1alpha1',
        kind: 'KeystoneRoleAssignment',
        metadata: { name, namespace: NS },
        spec: { controlPlaneRef: { name: 'cp', namespace: CP_NS }, userRef: { name: user }, projectRef: { name: 'proj' }, role: 'reader' },
      });
    other('someone-else', 'other-user');
    expect((await w.reconciler.reconcile({ namespace: NS, name: 'app' })).skipped).toBe(true);
    other('second-role', 'svc');
    expect((await w.reconciler.reconcile({ namespace: NS, name: 'app' })).skipped).toBeUndefined();
  });

  it("a tenant writes the other cluster's credential id into the delivered Secret (the secret left as is): repaired, one Warning naming the Secret and the id, nothing recorded or deleted", async () => {
    const user = new FakeUser();
    const a = world({ user });
    const b = world({ user });
    for (const w of [a, b]) w.assignment();
    await b.converge();
    await a.converge();
    const idB = b.get().status?.credentialID as string;
    const stored = a.delivered() as Secret;
    a.cluster.put(Kinds.Secret, { ...stored, data: { ...stored.data, application_credential_id: b64(idB) } });
    await a.converge();
    expect(a.decoded().application_credential_id).toBe(a.get().status?.credentialID);
    const warnings = a.cluster.events.filter((e) => e.reason === 'SecretRepaired');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ type: 'Warning', action: 'Repair' });
    // The fake's ids are not of Keystone's form, so the note shows the value's length only (the e2e sees a real id shown).
    expect(warnings[0].note).toBe(`the delivered Secret ${NS}/app-credentials named application credential ${shownCredentialId(idB)}, which is not this order's; rewritten with generation 1, and nothing was recorded, adopted or deleted for that id`);
    expect([a.get().status?.credentialID, a.get().status?.previousCredentialID]).not.toContain(idB);
    // A rotates and sweeps its own; B's credential stays and works.
    for (let i = 0; i < 6; i++) {
      a.travel(20 * 60_000);
      await a.converge();
    }
    expect(a.get().status?.credentialGeneration).toBeGreaterThanOrEqual(2);
    expect(a.keystone.writes).not.toContain(`delete ${idB}`);
    expect(user.credentials.has(idB)).toBe(true);
  });

  it('rotates at nextRotation; an edited key is rewritten, a foreign key stays; a deleted Secret is written again', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    w.travel(3_600_000);
    await w.converge();
    expect(w.get().status).toMatchObject({ credentialGeneration: 2, previousCredentialGeneration: 1 });
    expect(w.keystone.credentials.size).toBe(2);
    const stored = w.delivered() as Secret;
    w.cluster.put(Kinds.Secret, { ...stored, data: { ...stored.data, application_credential_secret: b64('edited'), extra: b64('x') } });
    await w.converge();
    expect(w.decoded().application_credential_secret).not.toBe('edited');
    expect(w.decoded().extra).toBe('x');
    w.cluster.drop(Kinds.Secret, NS, 'app-credentials');
    await w.converge();
    expect(w.keystone.authenticates(w.decoded().application_credential_id, w.decoded().application_credential_secret)).toBe(true);
    expect(w.keystone.credentials.size).toBe(2); // no new credential
  });

  it('a foreign Secret of the delivered name: DeliveryRefused, untouched', async () => {
    const w = world();
    w.assignment();
    w.cluster.put(Kinds.Secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'app-credentials', namespace: NS }, data: { mine: b64('yes') } } as Secret);
    await w.converge();
    expect(w.reason('DeliveryReady')).toBe('DeliveryRefused');
    expect(w.decoded()).toEqual({ mine: 'yes' });
    expect(w.cluster.events.filter((e) => e.reason === 'DeliveryRefused')).toHaveLength(1);
    // A steady refusal records no further Event: Events come on condition transitions only.
    await w.converge();
    w.travel(60_000);
    await w.converge();
    expect(w.cluster.events.filter((e) => e.reason === 'DeliveryRefused')).toHaveLength(1);
  });

  it('the namespace assignment removed: frozen, nothing in Keystone or the Secret changes; back: rotates at once if due', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    const before = w.decoded();
    w.controlPlane([]);
    w.travel(2 * 3_600_000);
    const calls: string[] = [];
    w.keystone.fault = (call) => void calls.push(call);
    await w.converge();
    expect(w.reason('CredentialReady')).toBe('NamespaceNotAssigned');
    expect(calls).toEqual([]);
    expect(w.decoded()).toEqual(before);
    w.controlPlane([NS]);
    await w.converge();
    expect(w.get().status?.credentialGeneration).toBe(2);
  });

  it('deleting the order deletes every credential, the children and the delivered Secret, then releases the finalizer', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    await w.cluster.delete(Kinds.KeystoneApplicationCredential, NS, 'app');
    await w.converge();
    expect(w.get()).toBeUndefined();
    expect(w.keystone.credentials.size).toBe(0);
    expect(w.cluster.list(Kinds.Secret, { namespace: CP_NS }).filter((s) => s.metadata.name.startsWith(w.prefix))).toEqual([]);
    expect(w.delivered()).toBeUndefined();
  });

  it('deleting a frozen order (namespace assignment removed) still tears it down in Keystone', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    w.controlPlane([]);
    await w.converge();
    expect(w.reason('CredentialReady')).toBe('NamespaceNotAssigned');
    await w.cluster.delete(Kinds.KeystoneApplicationCredential, NS, 'app');
    await w.converge();
    expect(w.get()).toBeUndefined();
    expect(w.keystone.credentials.size).toBe(0);
    expect(w.delivered()).toBeUndefined();
  });

  it('deleting the order with the ControlPlane gone: one pass deletes what it can reach and releases', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    w.cluster.drop(Kinds.ControlPlane, CP_NS, 'cp');
    await w.cluster.delete(Kinds.KeystoneApplicationCredential, NS, 'app');
    await w.converge();
    expect(w.get()).toBeUndefined();
    expect(w.cluster.list(Kinds.Secret, { namespace: CP_NS }).filter((s) => s.metadata.name.startsWith(w.prefix))).toEqual([]);
  });

  it('no status field, event or condition message carries the secret', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    const secret = w.decoded().application_credential_secret;
    expect(JSON.stringify(w.get().status)).not.toContain(secret);
    expect(JSON.stringify(w.cluster.events)).not.toContain(secret);
    expect(JSON.stringify(w.get().status)).not.toContain('user-password');
  });
});

describe('KeystoneApplicationCredential reconciler under several workers', () => {
  /** Orders of the one user `svc` in project `proj`, one per name. */
  const putOrders = (w: ReturnType<typeof world>, names: readonly string[]) => {
    for (const name of names) {
      w.cluster.put(Kinds.KeystoneApplicationCredential, {
        apiVersion: 'c5c3.io/v1alpha1',
        kind: 'KeystoneApplicationCredential',
        metadata: { name, namespace: NS },
        spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, rotation: { interval: '1h', gracePeriod: '10m' } },
      } as KeystoneApplicationCredential);
    }
  };

  it('the orders of one user, reconciled four at a time, each converge on a credential of their own; no park meets a 409', async () => {
    const w = world();
    w.assignment();
    const user = new FakeUser();
    const clock = () => T0;
    const names = Array.from({ length: 10 }, (_, i) => `app${i}`);
    putOrders(w, names);
    // Keystone answers after a moment, so that the passes overlap.
    const slow = <T>(call: () => Promise<T>) => new Promise<T>((resolve, reject) => setTimeout(() => call().then(resolve, reject), 1 + Math.floor(Math.random() * 3)));
    const reconciler = new CredentialReconciler({
      cluster: new PlaneCluster(w.cluster, new EventRecorder(w.cluster)),
      keystone: (_connection, prefix) => {
        const keystone = new FakeKeystone(prefix, clock, user);
        return { list: () => slow(() => keystone.list()), create: (r) => slow(() => keystone.create(r)), delete: (id) => slow(() => keystone.delete(id)) };
      },
      clock,
    });
    let inFlight = 0;
    let peak = 0;
    const controller = new Controller(
      {
        kind: Kinds.KeystoneApplicationCredential,
        concurrency: 4,
        reconcile: async ({ namespace, name }) => {
          peak = Math.max(peak, ++inFlight);
          try {
            const outcome = await reconciler.reconcile({ namespace: namespace ?? '', name });
            return outcome.requeueAfterMs !== undefined ? { requeueAfter: outcome.requeueAfterMs } : {};
          } finally {
            inFlight--;
          }
        },
      },
      { metrics: new OperatorMetrics({ defaultMetrics: false }), logger: silentLogger, keys: () => names.map((n) => `${NS}/${n}`) },
    );
    // The informer's part: a changed order is queued again.
    w.cluster.onChange((change) => {
      if (change.kind.kind === 'KeystoneApplicationCredential' && change.object.metadata.name !== 'app') controller.enqueue(`${NS}/${change.object.metadata.name}`);
    });
    w.cluster.clear();
    controller.start();
    const order = (name: string) => w.cluster.get(Kinds.KeystoneApplicationCredential, NS, name) as KeystoneApplicationCredential;
    const ready = () => names.every((n) => order(n).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    for (let i = 0; i < 400 && !(ready() && controller.queue.depth === 0 && inFlight === 0); i++) await new Promise((r) => setTimeout(r, 10));
    expect(await controller.stop(5_000)).toBe(true);
    expect(ready()).toBe(true);
    expect(peak).toBe(4);
    // One credential per order in Keystone, each delivered by its own order and no other.
    expect(user.credentials.size).toBe(names.length);
    const delivered = names.map((n) => Buffer.from(w.cluster.get(Kinds.Secret, NS, `${n}-credentials`)?.data?.application_credential_id ?? '', 'base64').toString());
    expect(new Set(delivered).size).toBe(names.length);
    for (const [i, n] of names.entries()) {
      expect(order(n).status?.credentialID).toBe(delivered[i]);
      expect(user.credentials.get(delivered[i])?.name.startsWith(childPrefix({ namespace: NS, name: n }))).toBe(true);
    }
    // Every parked secret was created once: no create of one order's child ever met another pass's.
    const creates = w.cluster.writes.filter((x) => x.verb === 'create' && x.kind === 'Secret').map((x) => x.key);
    expect(creates).toHaveLength(names.length);
    expect(new Set(creates).size).toBe(names.length);
  });

  it('eight workers, twenty orders of one user, a limit of 2 in flight: one login, never more than 2 requests at Keystone', async () => {
    const w = world();
    w.assignment();
    const names = Array.from({ length: 20 }, (_, i) => `burst${i}`);
    putOrders(w, names);
    // Keystone over HTTP (the real client, sessions and limit in front of it), each request taking 25 ms: Keystone, not
    // the passes' own work, is what they wait on, as with bcrypt.
    const held: { id: string; name: string; expires_at: string | null }[] = [];
    let inFlight = 0;
    let peak = 0;
    let ids = 0;
    const slowly = async (answer: () => Response): Promise<Response> => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((r) => setTimeout(r, 25));
      inFlight--;
      return answer();
    };
    const record = (c: { id: string; name: string; expires_at: string | null }) => ({ ...c, user_id: 'u1', project_id: 'p1', roles: [{ id: 'r1', name: 'member' }], unrestricted: false });
    const keystone = new FakeKeystoneHttp()
      .on('POST', /^\/v3\/auth\/tokens$/, () => slowly(() => tokenReply(`tok-${ids}`, new Date(T0.getTime() + 3600_000))))
      .on('GET', /^\/v3\/users\/u1\/application_credentials/, () => slowly(() => json(200, { application_credentials: held.map(record) })))
      .on('POST', /^\/v3\/users\/u1\/application_credentials$/, (request) =>
        slowly(() => {
          const body = (request.body as { application_credential: { name: string; expires_at?: string } }).application_credential;
          const created = { id: `ac-${++ids}`, name: body.name, expires_at: body.expires_at ?? null };
          held.push(created);
          return json(201, { application_credential: record(created) });
        }),
      );
    const limits = new KeystoneLimits({ requestsPerSecond: 0, inFlight: 2 });
    let busiest = 0;
    const reconciler = new CredentialReconciler({
      cluster: new PlaneCluster(w.cluster, new EventRecorder(w.cluster)),
      sessions: new KeystoneSessions({ limits, fetch: keystone.fetch, now: () => T0.getTime() }),
      clock: () => T0,
    });
    const controller = new Controller(
      {
        kind: Kinds.KeystoneApplicationCredential,
        concurrency: 8,
        reconcile: async ({ namespace, name }) => {
          busiest = Math.max(busiest, controller.activeWorkers);
          const outcome = await reconciler.reconcile({ namespace: namespace ?? '', name });
          return outcome.requeueAfterMs !== undefined ? { requeueAfter: outcome.requeueAfterMs } : {};
        },
      },
      { metrics: new OperatorMetrics({ defaultMetrics: false }), logger: silentLogger, keys: () => names.map((n) => `${NS}/${n}`) },
    );
    w.cluster.onChange((change) => {
      if (change.kind.kind === 'KeystoneApplicationCredential' && names.includes(change.object.metadata.name)) controller.enqueue(`${NS}/${change.object.metadata.name}`);
    });
    controller.start();
    const order = (name: string) => w.cluster.get(Kinds.KeystoneApplicationCredential, NS, name) as KeystoneApplicationCredential;
    const ready = () => names.every((n) => order(n).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    for (let i = 0; i < 1_000 && !(ready() && controller.queue.depth === 0 && controller.activeWorkers === 0); i++) await new Promise((r) => setTimeout(r, 10));
    expect(await controller.stop(5_000)).toBe(true);
    expect(ready()).toBe(true);
    expect(held).toHaveLength(names.length);
    // One login for the user's twenty orders, though eight passes began at once.
    expect(keystone.calls('POST', /auth\/tokens/)).toHaveLength(1);
    // The limit, not the eight workers (all of them busy at once), decided what reached Keystone.
    expect(busiest).toBe(8);
    expect(peak).toBe(2);
    expect(limits.all().map((l) => l.peakInFlight)).toEqual([2]);
  });
});


describe('KeystoneApplicationCredential reconciler after an upgrade from 0.1.0 (the backup path without the uid)', () => {
  const former = (prefix: string) => `openstack/keystone/${CP_NS}/${prefix}/service-accounts/application-credential`;
  const own = (w: ReturnType<typeof world>) => `openstack/keystone/${CP_NS}/${w.prefix}/${w.get().metadata.uid}/service-accounts/application-credential`;
  /** A converged order whose backup is where 0.1.0 left it: at the spec's path, none at its own. */
  async function upgraded(formerHolds?: string) {
    const backups = new Map<string, string>();
    const w = world({ backups });
    w.assignment();
    await w.converge();
    const id = w.get().status?.credentialID as string;
    backups.delete(own(w));
    backups.set(former(w.prefix), formerHolds ?? id);
    // 0.1.0's status: no record of a migration (issue 46)
    const status = { ...w.get().status };
    delete status.backupPath;
    w.cluster.put(Kinds.KeystoneApplicationCredential, { ...w.get(), status });
    const calls: string[] = [];
    w.keystone.fault = (call) => void calls.push(call);
    w.cluster.clear();
    const restart = (atMs = 60_000) =>
      new CredentialReconciler({
        cluster: new PlaneCluster(w.cluster, new EventRecorder(w.cluster)),
        keystone: () => w.keystone,
        clock: () => new Date(T0.getTime() + atMs),
        event: (order, e) => w.cluster.event(order, e),
        backup: (path: string) => ({
          read: async () => backups.get(path),
          write: async (data) => void backups.set(path, data.application_credential_id),
          remove: async () => void backups.delete(path),
        }),
      });
    return { w, id, backups, calls, restarted: restart(), restart };
  }

  it('the first pass after the restart moves the backup to the own path and removes the one 0.1.0 wrote: settled, 0 Keystone calls, 1 API write (the record)', async () => {
    const { w, id, backups, calls, restarted } = await upgraded();
    const first = await restarted.reconcile({ namespace: NS, name: 'app' });
    expect(first).toMatchObject({ settled: true });
    expect(backups.get(own(w))).toBe(id);
    expect(backups.has(former(w.prefix))).toBe(false);
    expect(calls).toEqual([]);
    expect(w.cluster.writes.map((x) => x.verb)).toEqual(['patchStatus']);
    expect(w.get().status?.backupPath).toBe(own(w));
    // The pass that write wakes is vouched for by the cache: no Keystone call, no write.
    expect(await restarted.reconcile({ namespace: NS, name: 'app' })).toMatchObject({ skipped: true, settled: true });
    expect(calls).toEqual([]);
    expect(w.cluster.writes).toHaveLength(1);
    // Later passes of the same process look at the own path only; a document put back at the former path stays.
    backups.set(former(w.prefix), id);
    await restarted.reconcile({ namespace: NS, name: 'app' });
    expect(backups.get(former(w.prefix))).toBe(id);
  });

  it('a document at the former path the order does not record is left alone and reported (a Warning Event ForeignBackup), once per process', async () => {
    const { w, id, backups, calls, restarted } = await upgraded('another-installations-credential');
    expect(await restarted.reconcile({ namespace: NS, name: 'app' })).toMatchObject({ settled: true });
    expect(backups.get(own(w))).toBe(id);
    expect(backups.get(former(w.prefix))).toBe('another-installations-credential');
    expect(calls).toEqual([]);
    const warnings = w.cluster.events.filter((e) => e.reason === 'ForeignBackup');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].note).toContain('another-installations-credential');
    expect(w.cluster.writes.map((x) => x.verb)).toEqual(['event', 'patchStatus']);
    await restarted.reconcile({ namespace: NS, name: 'app' });
    expect(w.cluster.events.filter((e) => e.reason === 'ForeignBackup')).toHaveLength(1);
  });

  it('an order that is not settled (a rotation due) migrates in its full pass, after the switch the rotation makes', async () => {
    const { w, backups, restart } = await upgraded();
    w.travel(3_601_000);
    await restart(3_601_000).reconcile({ namespace: NS, name: 'app' });
    const status = w.get().status;
    expect(status?.credentialGeneration).toBe(2);
    expect(backups.get(own(w))).toBe(status?.credentialID);
    // The former document held generation 1, the superseded one the status records: the order's own, removed.
    expect(backups.has(former(w.prefix))).toBe(false);
  });

  it('teardown after the upgrade leaves both paths empty; a foreign document at the former path stays', async () => {
    for (const holds of [undefined, 'another-installations-credential']) {
      const { w, backups, restarted } = await upgraded(holds);
      const ownPath = own(w);
      await w.cluster.delete(Kinds.KeystoneApplicationCredential, NS, 'app');
      for (let i = 0; i < 3 && w.get(); i++) await restarted.reconcile({ namespace: NS, name: 'app' });
      expect(w.get()).toBeUndefined();
      expect(backups.has(ownPath)).toBe(false);
      expect(backups.get(former(w.prefix))).toBe(holds);
    }
  });

  it('a frozen order (its namespace no longer assigned) gets its backup moved too, and nothing else', async () => {
    const { w, id, backups, calls, restarted } = await upgraded();
    w.controlPlane([]);
    w.cluster.clear();
    await restarted.reconcile({ namespace: NS, name: 'app' });
    expect(w.reason('Ready')).toBe('NotAllReady');
    expect(backups.get(own(w))).toBe(id);
    expect(backups.has(former(w.prefix))).toBe(false);
    expect(calls.filter((c) => c !== 'list')).toEqual([]);
  });
});

describe('a restart after the backup\'s migration (issue 46, finding 1): recorded, so OpenBao is not read and its outage sends no settled order to Keystone', () => {
  const own = (w: ReturnType<typeof world>) => `openstack/keystone/${CP_NS}/${w.prefix}/${w.get().metadata.uid}/service-accounts/application-credential`;
  /** A converged order, and a restart of the operator whose OpenBao counts its calls and refuses them while `refusing`. */
  async function converged() {
    const backups = new Map<string, string>();
    const w = world({ backups });
    w.assignment();
    await w.converge();
    const keystone: string[] = [];
    w.keystone.fault = (call) => void keystone.push(call);
    const openBao: string[] = [];
    let refusing = false;
    const restart = () =>
      new CredentialReconciler({
        cluster: new PlaneCluster(w.cluster, new EventRecorder(w.cluster)),
        keystone: () => w.keystone,
        clock: () => new Date(T0.getTime() + 60_000),
        event: (order, e) => w.cluster.event(order, e),
        backup: (path: string) => {
          const call = async <T>(verb: string, then: () => T): Promise<T> => {
            openBao.push(`${verb} ${path}`);
            if (refusing) throw Object.assign(new Error(`OpenBao ${verb} /v1/${path}: 503: sealed`), { status: 503 });
            return then();
          };
          return {
            read: () => call('GET', () => backups.get(path)),
            write: (data) => call('POST', () => void backups.set(path, data.application_credential_id)),
            remove: () => call('DELETE', () => void backups.delete(path)),
          };
        },
      });
    w.cluster.clear();
    return { w, backups, keystone, openBao, restart, refuse: (on: boolean) => (refusing = on) };
  }
  const pass = (r: CredentialReconciler) =>
    r.reconcile({ namespace: NS, name: 'app' }).then(
      (outcome) => outcome,
      (error: unknown) => error as CredentialPassError,
    );

  it('the status records the path the backup lives at alone; a restart then reads OpenBao for nothing and writes nothing', async () => {
    const { w, keystone, openBao, restart } = await converged();
    expect(w.get().status?.backupPath).toBe(own(w));
    expect(await pass(restart())).toMatchObject({ skipped: true, settled: true });
    expect(openBao).toEqual([]);
    expect(keystone).toEqual([]);
    expect(w.cluster.writes).toEqual([]);
  });

  it('a new order whose first passes are gated records the migration with its first delivery, reading the path 0.1.0 wrote until then', async () => {
    const backups = new Map<string, string>();
    const w = world({ backups });
    await w.reconciler.reconcile({ namespace: NS, name: 'app' }); // no role on the project yet: nothing delivered, nothing recorded
    expect(w.get().status?.backupPath).toBeUndefined();
    w.assignment();
    await w.converge();
    expect(w.get().status?.backupPath).toBe(own(w));
  });

  it('a restart while OpenBao answers 503: a settled order costs Keystone nothing, with its migration recorded or not', async () => {
    const { w, keystone, openBao, restart, refuse } = await converged();
    refuse(true);
    expect(await pass(restart())).toMatchObject({ skipped: true, settled: true });
    expect([keystone, openBao]).toEqual([[], []]);
    // A status that lost the record (a lost write, an order of 0.2.0): the migration waits on OpenBao, Keystone is not asked.
    const lost = { ...w.get().status };
    delete lost.backupPath;
    w.cluster.put(Kinds.KeystoneApplicationCredential, { ...w.get(), status: lost });
    w.cluster.clear();
    const restarted = restart();
    const failed = await pass(restarted);
    expect(failed).toBeInstanceOf(CredentialPassError);
    expect((failed as CredentialPassError).waitsOn).toEqual(['OpenBao']);
    expect(keystone).toEqual([]);
    expect(w.cluster.writes).toEqual([]);
    // OpenBao answers again: the retry (its probe) migrates and records, still without Keystone, with one status write.
    refuse(false);
    expect(await pass(restarted)).toMatchObject({ settled: true });
    expect(keystone).toEqual([]);
    expect(w.get().status?.backupPath).toBe(own(w));
    expect(w.cluster.writes.map((x) => x.verb)).toEqual(['patchStatus']);
  });

  it('a restored cluster (the order re-created with a new uid, its status with the old record): the migration runs again and deletes nothing the Secret carries', async () => {
    const { w, backups, keystone, restart } = await converged();
    const before = w.get();
    const id = before.status?.credentialID as string;
    const oldPath = own(w);
    w.cluster.drop(Kinds.KeystoneApplicationCredential, NS, 'app');
    const metadata = { ...before.metadata };
    delete metadata.uid;
    delete metadata.resourceVersion;
    w.cluster.put(Kinds.KeystoneApplicationCredential, { ...before, metadata } as KeystoneApplicationCredential);
    w.cluster.clear();
    expect(own(w)).not.toBe(oldPath);
    await pass(restart());
    expect(backups.get(own(w))).toBe(id);
    expect(w.get().status?.backupPath).toBe(own(w));
    expect(keystone.filter((c) => c === 'delete')).toEqual([]);
    expect(w.get().status?.credentialID).toBe(id);
  });
});

describe('a failed pass says what the order says, and what did not answer', () => {
  /** OpenBao as the world's backups: refusing (403) while `refusing`. */
  class Backups extends Map<string, string> {
    refusing = false;
    override get(key: string) {
      if (this.refusing) throw Object.assign(new Error('OpenBao GET /v1/openstack/data/x: 403: permission denied'), { status: 403 });
      return super.get(key);
    }
    override set(key: string, value: string) {
      if (this.refusing) throw Object.assign(new Error('OpenBao POST /v1/openstack/data/x: 403: permission denied'), { status: 403 });
      return super.set(key, value);
    }
  }
  const failure = async (w: ReturnType<typeof world>) => {
    const error = await w.reconciler.reconcile({ namespace: NS, name: 'app' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CredentialPassError);
    return error as CredentialPassError;
  };

  it('OpenBao refusing a raised generation: the successor is minted, the pass fails naming OpenBao, with the status it recorded (BackupNotSynced)', async () => {
    const backups = new Backups();
    const w = world({ backups });
    w.assignment();
    await w.converge();
    backups.refusing = true;
    w.cluster.put(Kinds.KeystoneApplicationCredential, { ...w.get(), spec: { ...w.get().spec, credentialGeneration: 2 } });
    const error = await failure(w);
    expect(error.waitsOn).toEqual(['OpenBao']);
    expect(error.message).toContain('403');
    expect(error.status?.conditions?.find((c) => c.type === 'DeliveryReady')).toMatchObject({ status: 'False', reason: 'BackupNotSynced' });
    // what it says is what the order says
    expect(w.reason('DeliveryReady')).toBe('BackupNotSynced');
    expect(error.status?.credentialGeneration).toBe(1);
    expect([...w.keystone.credentials.values()].map((c) => c.name).sort()).toEqual([`${w.prefix}-credential-v1`, `${w.prefix}-credential-v2`]);
    // OpenBao back: the next pass switches
    backups.refusing = false;
    await w.converge();
    expect(w.get().status?.credentialGeneration).toBe(2);
  });

  it('Keystone unreachable: the pass names Keystone at the ControlPlane\'s auth URL; a refusal of the user\'s (401) names nothing', async () => {
    const w = world();
    w.assignment();
    await w.converge();
    w.cluster.put(Kinds.KeystoneApplicationCredential, { ...w.get(), spec: { ...w.get().spec, credentialGeneration: 2 } });
    w.keystone.fault = () => {
      throw new KeystoneError({ kind: 'transport', method: 'GET', path: '/v3/users/u-1/application_credentials', detail: 'read ECONNRESET' });
    };
    const unreachable = await failure(w);
    expect(unreachable.waitsOn).toEqual(['Keystone http://127.0.0.1:5000/v3']);
    expect(unreachable.status?.conditions?.find((c) => c.type === 'CredentialReady')).toMatchObject({ status: 'False', reason: 'CredentialError' });
    w.keystone.fault = () => {
      throw new KeystoneError({ kind: 'unauthorized', method: 'POST', path: '/v3/auth/tokens', status: 401 });
    };
    expect((await failure(w)).waitsOn).toEqual([]);
  });

  it('a pass names what it reached and was answered by, and only that (issue 46, finding 2): a gated pass not Keystone, a skipped one nothing, one OpenBao refused not OpenBao', async () => {
    const backups = new Backups();
    const w = world({ backups });
    // No role on the project: gated, Keystone not reached (its backup read and its status write were answered)
    const gated = await w.reconciler.reconcile({ namespace: NS, name: 'app' });
    expect([...(gated.answered ?? [])].sort()).toEqual(['OpenBao', 'the API server']);
    w.assignment();
    const first = await w.reconciler.reconcile({ namespace: NS, name: 'app' });
    expect([...(first.answered ?? [])].sort()).toEqual(['Keystone http://127.0.0.1:5000/v3', 'OpenBao', 'the API server']);
    await w.converge();
    // A skipped pass (nothing changed) reaches nothing
    expect((await w.reconciler.reconcile({ namespace: NS, name: 'app' })).answered).toBeUndefined();
    backups.refusing = true;
    w.cluster.put(Kinds.KeystoneApplicationCredential, { ...w.get(), spec: { ...w.get().spec, credentialGeneration: 2 } });
    const refused = await failure(w);
    expect(refused.waitsOn).toEqual(['OpenBao']);
    expect([...refused.answered].sort()).toEqual(['Keystone http://127.0.0.1:5000/v3', 'the API server']);
  });
});
