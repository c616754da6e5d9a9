// @needs kube keystone
/**
 * The identity plane on the real components: `keystone-appcred operator` runs as a child process that authenticates as
 * a service account bound to exactly the construct's ClusterRole and Lease Role, against the real API server and the
 * real Keystone, which it reaches through a recording proxy (test/support/recording-proxy.ts) so the test counts its
 * Keystone calls. What Keystone holds is checked with the Keystone API (src/keystone, as the test's own admin, not
 * through the proxy), never only from the status.
 *
 * Proven: a wrong admin password → AdminCredentialReady=False/AuthenticationFailed, the fixed Secret → Ready without a
 * restart; project, user and assignment become Ready and exist in Keystone as ordered, owned by their orders; the
 * delivered clouds.yaml authenticates with `openstack token issue`; a role outside allowedRoles → RoleNotAllowed and no
 * grant; kill -9 between "created in Keystone" and "status written" converges with no duplicate and no orphan;
 * removing the namespace assignment freezes every order (no Keystone write, users, projects and grants unchanged);
 * deleting a held user waits with ReferencedByRoleAssignments; deleting everything leaves nothing the operator created
 * in Keystone or in the cluster. Measured (stderr): start-up time, and with 100 converged orders the RSS idle and the
 * Keystone calls and API writes of one full resync. One leader of two is proven in operator-runtime.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { KeystoneSession, Projects, Users } from '../../src/keystone';
import { ownerMarker } from '../../src/plane/naming';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { adminSession, keystoneTestEnv, uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, getJson, kubectl, kubectlOk, type KubeList, type KubeObject } from '../support/kubectl';
import { installCrds, metricSum, metricsText, operatorLog, operatorKubeconfig, removeOperatorRbac, rssMiB, startOperator, waitReady, type OperatorProcess, QUICK_ELECTION } from '../support/operator';
import { isWrite, startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(120_000);

const OP_NS = 'kac-e2e-plane-op';
const CP_NS = 'kac-e2e-plane-cp';
const T1 = 'kac-e2e-plane-t1';
const T2 = 'kac-e2e-plane-t2';
const IDENTITY = { namespace: OP_NS, binding: 'kac-e2e-plane-operator' };
const API = 'c5c3.io/v1alpha1';
const R = { user: 'keystoneusers.c5c3.io', project: 'keystoneprojects.c5c3.io', assignment: 'keystoneroleassignments.c5c3.io', cp: 'controlplanes.c5c3.io' };
const ORDERS = `${R.assignment},${R.user},${R.project}`;
const ADMIN_SECRET = 'keystone-admin';
const CP_REF = { name: 'cp', namespace: CP_NS };

const env = keystoneTestEnv();
/** Every Keystone name of this run starts with it (the afterAll sweeps them, whatever a failed test left). */
const RUN = uniqueName('kac-e2e-plane');

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message?: string;
  readonly observedGeneration?: number;
}
type Order = KubeObject & {
  spec: Record<string, unknown>;
  status?: { conditions?: Condition[]; userID?: string; projectID?: string; roleID?: string; passwordGeneration?: number; keystoneVersion?: string };
};

let unlock: (() => void) | undefined;
let workDir = '';
let kubeconfig = '';
let proxy: RecordingProxy;
let admin: KeystoneSession;
let current: OperatorProcess;
const started: OperatorProcess[] = [];

async function operator(name: string, args: readonly string[] = []): Promise<OperatorProcess> {
  const op = await startOperator({ name, kubeconfig, namespace: OP_NS, logDir: workDir, args: [...QUICK_ELECTION, ...args] });
  started.push(op);
  current = op;
  return op;
}

function cloudsYaml(password: string): string {
  return `clouds:\n  admin:\n    auth:\n      auth_url: ${proxy.url}\n      username: ${env.adminUser}\n      password: "${password}"\n      project_name: ${env.adminProject}\n      user_domain_name: ${env.domain}\n      project_domain_name: ${env.domain}\n`;
}

const adminSecret = (password: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: ADMIN_SECRET, namespace: CP_NS },
  data: { 'clouds.yaml': Buffer.from(cloudsYaml(password)).toString('base64') },
});

const controlPlane = (assigned: readonly string[]): KubeObject => ({
  apiVersion: API,
  kind: 'ControlPlane',
  metadata: { name: CP_REF.name, namespace: CP_NS },
  spec: {
    services: { keystone: { external: { authURL: proxy.url } } },
    adminCredential: { cloudCredentialsRef: { secretName: ADMIN_SECRET } },
    namespaceAssignments: assigned.map((namespace) => ({ namespace, allowedRoles: ['member', 'reader'] })),
  },
});

const project = (namespace: string, name: string, projectName: string): KubeObject => ({ apiVersion: API, kind: 'KeystoneProject', metadata: { name, namespace }, spec: { controlPlaneRef: CP_REF, projectName } });
const user = (namespace: string, name: string, userName: string): KubeObject => ({ apiVersion: API, kind: 'KeystoneUser', metadata: { name, namespace }, spec: { controlPlaneRef: CP_REF, userName } });
const assignment = (namespace: string, name: string, userRef: string, projectRef: string, role: string): KubeObject => ({
  apiVersion: API,
  kind: 'KeystoneRoleAssignment',
  metadata: { name, namespace },
  spec: { controlPlaneRef: CP_REF, userRef: { name: userRef }, projectRef: { name: projectRef }, role },
});

const conditionOf = (o: Order, type: string): Condition | undefined => o.status?.conditions?.find((c) => c.type === type);
const get = (resource: string, name: string, namespace = T1) => getJson<Order>(resource, name, { namespace });

/**
 * Waits until the object's condition `type` has `status` (and `reason`) for the object's current generation; the
 * timeout names what it last saw.
 */
async function until(resource: string, name: string, type: string, want: { status: string; reason?: string }, namespace = T1, timeoutMs = 30_000): Promise<Order> {
  return eventually(async () => {
    const o = await get(resource, name, namespace);
    const c = conditionOf(o, type);
    if (c?.status === want.status && (want.reason === undefined || c.reason === want.reason) && c.observedGeneration === o.metadata.generation) return o;
    throw new Error(`${resource} ${namespace}/${name}: ${type} is ${JSON.stringify(c)}`);
  }, timeoutMs, 200);
}

const delivered = async (name: string, namespace = T1): Promise<{ clouds: string; password: string }> => {
  const secret = await getJson<KubeObject & { data: Record<string, string> }>('secret', `${name}-credentials`, { namespace });
  const text = (k: string) => Buffer.from(secret.data[k], 'base64').toString('utf8');
  return { clouds: text('clouds.yaml'), password: text('password') };
};

/** `openstack token issue` with a delivered clouds.yaml and a clean environment, optionally scoped to a project. */
async function tokenIssue(clouds: string, projectName?: string): Promise<{ user_id: string; project_id?: string }> {
  const home = mkdtempSync(join(workDir, 'osc-'));
  try {
    const file = join(home, 'clouds.yaml');
    writeFileSync(file, clouds, { mode: 0o600 });
    const scope = projectName ? ['--os-project-name', projectName, '--os-project-domain-name', env.domain] : [];
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile('/usr/bin/openstack', ['--os-cloud', 'openstack', ...scope, 'token', 'issue', '-f', 'json'], { env: { PATH: '/usr/bin:/bin', HOME: home, OS_CLIENT_CONFIG_FILE: file }, timeout: 60_000 }, (error, out, err) =>
        error ? reject(new Error(`openstack token issue failed: ${error.message}\n${err}`)) : resolve(out),
      );
    });
    return JSON.parse(stdout) as { user_id: string; project_id?: string };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** A GET of the Keystone admin API (directly, not through the proxy). */
async function keystoneGet<T>(path: string): Promise<T> {
  return (await admin.request({ method: 'GET', path: admin.transport.pathOf(path) })).body as T;
}

type KeystoneThing = { id: string; name: string; description?: string; tags?: string[]; [k: string]: unknown };
/** This run's users, projects and their grants in Keystone, as Keystone lists them (sorted, links dropped). */
async function keystoneState(prefix = RUN): Promise<{ users: KeystoneThing[]; projects: KeystoneThing[]; grants: string[] }> {
  const clean = (list: KeystoneThing[]) => list.filter((x) => x.name.startsWith(prefix)).map(({ links: _l, ...rest }) => rest as KeystoneThing).sort((a, b) => a.name.localeCompare(b.name));
  const users = clean((await keystoneGet<{ users: KeystoneThing[] }>('users')).users);
  const projects = clean((await keystoneGet<{ projects: KeystoneThing[] }>('projects')).projects);
  const grants: string[] = [];
  for (const p of projects) {
    const { role_assignments } = await keystoneGet<{ role_assignments: { user?: { id: string }; role: { id: string } }[] }>(`role_assignments?scope.project.id=${p.id}`);
    for (const a of role_assignments) grants.push(`${a.user?.id ?? '-'} ${a.role.id} ${p.id}`);
  }
  return { users, projects, grants: grants.sort() };
}

/** Users of exactly this name in Keystone (a duplicate would show as two). */
async function usersNamed(name: string): Promise<KeystoneThing[]> {
  return (await keystoneGet<{ users: KeystoneThing[] }>(`users?name=${encodeURIComponent(name)}`)).users;
}

/** Removes the finalizers of what a failed test left, so the namespaces can go. */
async function unblock(namespace: string): Promise<void> {
  const names = (await kubectl(['get', ORDERS, '-n', namespace, '-o', 'name'])).stdout.split('\n').filter(Boolean);
  for (const name of names) await kubectl(['patch', name, '-n', namespace, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
}

beforeAll(async () => {
  unlock = await lockCluster('identity-plane.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  admin = adminSession(env);
  proxy = await startRecordingProxy(env.authUrl);
  const manifests = synthesizeManifests();
  await installCrds(manifests);
  kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'identity-plane.kubeconfig'));
  for (const ns of [CP_NS, T1, T2]) await kubectl(['create', 'namespace', ns]);
  await applyOk([adminSecret(`${env.adminPassword}-wrong`), controlPlane([T1, T2])]);
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await Promise.all(started.map((op) => op.server.stop(5_000)));
  for (const ns of [T1, T2]) await unblock(ns);
  await kubectl(['delete', 'namespace', T1, T2, CP_NS, OP_NS, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  // Whatever a failed test left in Keystone.
  const left = await keystoneState().catch(() => ({ users: [], projects: [] }));
  for (const u of left.users) await new Users(admin).delete(u.id);
  for (const p of left.projects) await new Projects(admin).delete(p.id);
  await admin.close();
  await proxy?.close();
  unlock?.();
}, 60_000);

describe('the identity plane: the operator under the construct\'s RBAC, the real API server and the real Keystone', () => {
  test('start-up; a wrong admin password → AuthenticationFailed; the fixed Secret → Ready without a restart', async () => {
    const op = await operator('plane-a');
    const startup = await waitReady(op);
    const inProcess = operatorLog(op).find((l) => String(l.msg).startsWith('ready'))?.sinceProcessStartMs;
    process.stderr.write(`[identity-plane] start-up to /readyz 200: ${startup} ms from spawn (node --import tsx), ${String(inProcess)} ms in-process\n`);

    const failed = await until(R.cp, 'cp', 'AdminCredentialReady', { status: 'False', reason: 'AuthenticationFailed' }, CP_NS);
    expect(conditionOf(failed, 'Ready')).toMatchObject({ status: 'False' });
    await applyOk(adminSecret(env.adminPassword));
    const ready = await until(R.cp, 'cp', 'Ready', { status: 'True' }, CP_NS);
    expect(conditionOf(ready, 'AdminCredentialReady')).toMatchObject({ status: 'True', reason: 'AdminCredentialReady', observedGeneration: ready.metadata.generation });
    expect(ready.status?.keystoneVersion).toMatch(/^v?3\./);
    expect(op.server.exited()).toBeUndefined();
  });

  test('project, user and assignment become Ready and exist in Keystone as ordered; the delivered clouds.yaml authenticates with openstack token issue', async () => {
    await applyOk([project(T1, 'proj', `${RUN}-proj`), user(T1, 'alice', `${RUN}-alice`), assignment(T1, 'alice-member', 'alice', 'proj', 'member')]);
    const a = await until(R.assignment, 'alice-member', 'Ready', { status: 'True' });
    const u = await until(R.user, 'alice', 'Ready', { status: 'True' });
    const p = await until(R.project, 'proj', 'Ready', { status: 'True' });

    const kUser = await keystoneGet<{ user: KeystoneThing & { description: string; domain_id: string; enabled: boolean } }>(`users/${u.status?.userID}`);
    expect(kUser.user).toMatchObject({ name: `${RUN}-alice`, domain_id: 'default', enabled: true });
    expect(kUser.user.description).toContain(ownerMarker(u.metadata.uid as string));
    const kProject = await keystoneGet<{ project: KeystoneThing & { tags: string[]; domain_id: string } }>(`projects/${p.status?.projectID}`);
    expect(kProject.project).toMatchObject({ name: `${RUN}-proj`, domain_id: 'default', tags: [ownerMarker(p.metadata.uid as string)] });
    const member = (await keystoneGet<{ roles: KeystoneThing[] }>('roles?name=member')).roles[0];
    expect(a.status).toMatchObject({ roleID: member.id, userID: u.status?.userID, projectID: p.status?.projectID });
    expect((await keystoneState()).grants).toEqual([`${u.status?.userID} ${member.id} ${p.status?.projectID}`]);

    const { clouds, password } = await delivered('alice');
    expect((parse(clouds) as { clouds: { openstack: { auth: { password: string; auth_url: string } } } }).clouds.openstack.auth).toMatchObject({ password, auth_url: proxy.url });
    const token = await tokenIssue(clouds, `${RUN}-proj`);
    expect(token).toMatchObject({ user_id: u.status?.userID, project_id: p.status?.projectID });
  });

  test('a role outside allowedRoles → RoleNotAllowed, and Keystone grants nothing', async () => {
    await applyOk(assignment(T1, 'alice-admin', 'alice', 'proj', 'admin'));
    const refused = await until(R.assignment, 'alice-admin', 'AssignmentReady', { status: 'False', reason: 'RoleNotAllowed' });
    expect(conditionOf(refused, 'Ready')).toMatchObject({ status: 'False', reason: 'RoleNotAllowed' });
    expect((await keystoneState()).grants).toHaveLength(1);
  });

  test('kill -9 between "created in Keystone" and "status written" converges with no duplicate and no orphan', async () => {
    // No log line marks that moment (the plane driver does not log; the controller's one line per reconcile comes
    // after the status write), so the kill is driven by the Keystone side: the recording proxy sees Keystone answer the
    // user's create (POST /v3/users → 201) and SIGKILLs the operator before it relays the reply. The user then exists
    // in Keystone and the order's status has no userID, which the test checks before the restart.
    const killed = current;
    let killedAt = 0;
    proxy.onReply = async (call) => {
      if (call.method !== 'POST' || call.path !== '/v3/users' || call.status !== 201) return;
      proxy.onReply = undefined;
      killed.server.process.kill('SIGKILL');
      killedAt = Date.now();
      await eventually(async () => killed.server.exited() !== undefined, 10_000, 10);
    };
    await applyOk(user(T1, 'crash', `${RUN}-crash`));
    await eventually(async () => killed.server.exited(), 30_000, 50);
    expect(killed.server.exited()).toBe('SIGKILL');
    expect(killedAt).toBeGreaterThan(0);

    const [kUser] = await usersNamed(`${RUN}-crash`);
    const before = await get(R.user, 'crash');
    expect(kUser).toBeDefined();
    expect(before.status?.userID).toBeUndefined();
    expect(kUser.description).toContain(ownerMarker(before.metadata.uid as string));

    const op = await operator('plane-b');
    await waitReady(op);
    const after = await until(R.user, 'crash', 'Ready', { status: 'True' });
    expect(after.status).toMatchObject({ userID: kUser.id, passwordGeneration: 1 });
    expect((await usersNamed(`${RUN}-crash`)).map((x) => x.id)).toEqual([kUser.id]);
    // The password Keystone holds is the parked one the restarted operator delivered: one generation, no orphan.
    const parked = (await kubectlOk(['get', 'secrets', '-n', CP_NS, '-l', `c5c3.io/keystoneuser-name=crash,c5c3.io/keystoneuser-namespace=${T1}`, '-o', 'name'])).trim().split('\n');
    expect(parked).toHaveLength(1);
    expect(parked[0]).toMatch(/-password-v1$/);
    expect((await tokenIssue((await delivered('crash')).clouds)).user_id).toBe(kUser.id);
  });

  test('removing the namespace assignment freezes every order: nothing in Keystone changes', async () => {
    const snapshot = await keystoneState();
    const password = (await delivered('alice')).password;
    const mark = proxy.calls.length;
    const resourceOf = (o: Order) => `${o.kind.toLowerCase()}s.c5c3.io`;
    await applyOk(controlPlane([T2]));
    const orders = (await getJson<KubeList<Order>>(ORDERS, undefined, { namespace: T1 })).items;
    expect(orders.map((o) => o.metadata.name).sort()).toEqual(['alice', 'alice-admin', 'alice-member', 'crash', 'proj']);
    for (const o of orders) await until(resourceOf(o), o.metadata.name, 'Ready', { status: 'False', reason: 'NamespaceNotAssigned' });
    // What an assigned namespace would act on: a rotation and a new project. (A deletion is the owner's own act and
    // proceeds whatever the consent: src/plane/consent.ts teardownPath.)
    await kubectlOk(['patch', R.user, 'alice', '-n', T1, '--type=merge', '-p', '{"spec":{"passwordGeneration":2}}']);
    await applyOk(project(T1, 'frozen', `${RUN}-frozen`));
    await until(R.user, 'alice', 'Ready', { status: 'False', reason: 'NamespaceNotAssigned' });
    const frozen = await until(R.project, 'frozen', 'Ready', { status: 'False', reason: 'NamespaceNotAssigned' });

    expect(proxy.since(mark).filter(isWrite)).toEqual([]);
    expect(await keystoneState()).toEqual(snapshot);
    expect((await delivered('alice')).password).toBe(password);
    expect((await get(R.user, 'alice')).status?.passwordGeneration).toBe(1);
    expect([frozen.status?.projectID, frozen.metadata.finalizers]).toEqual([undefined, undefined]);

    // Assigned again, both proceed.
    await applyOk(controlPlane([T1, T2]));
    await until(R.project, 'frozen', 'Ready', { status: 'True' });
    await eventually(async () => (await get(R.user, 'alice')).status?.passwordGeneration === 2 || undefined, 30_000, 200);
    await until(R.user, 'alice', 'Ready', { status: 'True' });
    expect((await delivered('alice')).password).not.toBe(password);
  });

  test('deleting a user an assignment holds waits with ReferencedByRoleAssignments; deleting everything leaves nothing the operator created', async () => {
    const alice = await until(R.user, 'alice', 'Ready', { status: 'True' });
    await kubectlOk(['delete', R.user, 'alice', '-n', T1, '--wait=false']);
    const held = await until(R.user, 'alice', 'Ready', { status: 'False', reason: 'ReferencedByRoleAssignments' });
    expect(conditionOf(held, 'Ready')?.message).toContain('alice-member');
    expect((await usersNamed(`${RUN}-alice`)).map((x) => x.id)).toEqual([alice.status?.userID]);

    const uids = (await getJson<KubeList<Order>>(ORDERS, undefined, { namespace: T1 })).items.map((o) => o.metadata.uid as string);
    await kubectlOk(['delete', ORDERS, '--all', '-n', T1, '--wait=false']);
    await eventually(async () => (await getJson<KubeList>(ORDERS, undefined, { namespace: T1 })).items.length === 0 || undefined, 45_000, 250);

    expect(await keystoneState()).toEqual({ users: [], projects: [], grants: [] });
    const markers = uids.map(ownerMarker);
    const carried = (x: { description?: string; tags?: string[] }) => markers.some((m) => (x.description ?? '').includes(m) || (x.tags ?? []).includes(m));
    expect((await keystoneGet<{ users: KeystoneThing[] }>('users')).users.filter(carried)).toEqual([]);
    expect((await keystoneGet<{ projects: KeystoneThing[] }>('projects')).projects.filter(carried)).toEqual([]);
    expect((await getJson<KubeList>('secrets', undefined, { namespace: CP_NS })).items.map((s) => s.metadata.name)).toEqual([ADMIN_SECRET]);
    expect((await getJson<KubeList>('secrets', undefined, { namespace: T1 })).items).toEqual([]);
    // and no secret reached a log line
    const log = started.map((op) => readFileSync(op.server.log, 'utf8')).join('\n');
    expect(log).not.toContain(env.adminPassword);
  });

  test('100 converged orders: RSS idle, and one full resync makes no Keystone call and no API write', async () => {
    const before = { rss: rssMiB(current), orders: (await getJson<KubeList>(ORDERS, undefined, { namespace: T1 })).items.length };
    const N = { projects: 40, users: 30 };
    const objects: KubeObject[] = [];
    for (let i = 0; i < N.projects; i++) objects.push(project(T2, `p${i}`, `${RUN}-bp${i}`));
    for (let i = 0; i < N.users; i++) objects.push(user(T2, `u${i}`, `${RUN}-bu${i}`), assignment(T2, `a${i}`, `u${i}`, `p${i}`, 'reader'));
    const total = objects.length;
    expect(total).toBe(100);
    const t0 = Date.now();
    await applyOk(objects);
    const readyCount = async () => (await getJson<KubeList<Order>>(ORDERS, undefined, { namespace: T2 })).items.filter((o) => conditionOf(o, 'Ready')?.status === 'True').length;
    await eventually(async () => (await readyCount()) === total || undefined, 90_000, 500);
    const converged = Date.now() - t0;

    // A fresh operator with a short resync period, over the converged orders.
    current.server.process.kill('SIGTERM');
    await eventually(async () => current.server.exited(), 30_000, 50);
    const op = await operator('plane-resync', ['--resync-period', '10s']);
    const startup = await waitReady(op);
    const quiet = async (): Promise<void> => {
      let last = '';
      let since = Date.now();
      await eventually(async () => {
        const now = `${proxy.calls.length} ${metricSum(await metricsText(op), 'keystone_appcred_reconcile_total')}`;
        if (now !== last) [last, since] = [now, Date.now()];
        return Date.now() - since >= 1_500;
      }, 60_000, 250);
    };
    const firstMark = proxy.calls.length;
    await eventually(async () => metricSum(await metricsText(op), 'keystone_appcred_reconcile_total') >= total + 1 || undefined, 60_000, 250);
    await quiet();
    const firstPass = { calls: proxy.since(firstMark).length, writes: metricSum(await metricsText(op), 'keystone_appcred_api_writes_total') };

    const mark = { calls: proxy.calls.length, metrics: await metricsText(op) };
    const reconciles = () => metricSum(mark.metrics, 'keystone_appcred_reconcile_total');
    await eventually(async () => metricSum(await metricsText(op), 'keystone_appcred_reconcile_total') - reconciles() >= total + 1 || undefined, 30_000, 250);
    await quiet();
    const after = await metricsText(op);
    const resync = {
      reconciles: metricSum(after, 'keystone_appcred_reconcile_total') - reconciles(),
      calls: proxy.since(mark.calls),
      writes: metricSum(after, 'keystone_appcred_api_writes_total') - metricSum(mark.metrics, 'keystone_appcred_api_writes_total'),
    };
    const rss = rssMiB(op);
    const heap = Math.round(metricSum(after, 'nodejs_heap_size_used_bytes') / 2 ** 20);
    process.stderr.write(
      `[identity-plane] 100 orders (40 projects, 30 users, 30 assignments) Ready in ${converged} ms; restart over them: /readyz in ${startup} ms, ` +
        `first pass ${firstPass.calls} Keystone calls and ${firstPass.writes} API writes\n` +
        `[identity-plane] one full resync (${resync.reconciles} reconciles): ${resync.calls.length} Keystone calls, ${resync.writes} API writes\n` +
        `[identity-plane] RSS idle under tsx: ${rss} MiB (heap used ${heap} MiB) with 100 converged orders; ${before.rss} MiB in the earlier operator with ${before.orders} orders\n`,
    );
    expect(resync.calls).toEqual([]);
    expect(resync.writes).toBe(0);
    // The restart itself: every order settled by the cache (src/plane/settled.ts), so its first pass costs nothing either.
    expect(firstPass).toEqual({ calls: 0, writes: 0 });

    await kubectlOk(['delete', ORDERS, '--all', '-n', T2, '--wait=false']);
    await eventually(async () => (await getJson<KubeList>(ORDERS, undefined, { namespace: T2 })).items.length === 0 || undefined, 90_000, 500);
    expect(await keystoneState(`${RUN}-b`)).toEqual({ users: [], projects: [], grants: [] });
    // its own waits (convergence, restart, two quiet resyncs, teardown) add up to more than the file's 120 s
  }, 420_000);
});
