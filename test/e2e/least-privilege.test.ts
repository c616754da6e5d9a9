// @needs kube keystone
/**
 * Least privilege on the operator (issue 42), with `keystone-appcred operator` as a child process under the
 * construct's RBAC, the real API server and the real Keystone, the ControlPlane's admin an application credential:
 * - the identity plane end to end with an admin application credential instead of the admin password (project, user,
 *   role assignments in Keystone as ordered), its approaching expiry reported (`AdminCredentialReady=True/
 *   AdminCredentialExpiring`, `status.adminCredentialExpiresAt`, the metric), kept through a Keystone blip (issue 46:
 *   the field, its gauge series), and its rotation by hand;
 * - an order with `spec.roles` carries exactly those roles (Keystone's GET, a token from it); one without, every role;
 * - a role not allowed in the namespace → `RoleNotAllowed`, one not assigned → `RoleNotAssigned`, each naming it, and
 *   nothing in Keystone;
 * - a change of `spec.roles` and `spec.accessRules` rotates with the grace period (the successor carries them, the
 *   superseded credential works through the grace period, then is deleted); a change while a grace period runs waits
 *   for it, saying so; a consumer probe re-reading the delivered Secret every second never fails.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ApplicationCredentials, KeystoneSession, authenticateApplicationCredential, type ApplicationCredential } from '../../src/keystone';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures, type Order, type Probe } from '../support/credential-fixtures';
import { startCutProxy } from '../support/cut-proxy';
import { adminSession, uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, getJson, kubectl, kubectlOk, type KubeObject } from '../support/kubectl';
import { installCrds, metricsText, operatorKubeconfig, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess, QUICK_ELECTION } from '../support/operator';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(240_000);

const NS = 'kac-lp';
const CP_NS = 'kac-lp-cp';
const IDENTITY = { namespace: 'kac-lp-operator', binding: 'kac-lp-operator' };
const USER = uniqueName('lp');
const PROJECT = uniqueName('lp');
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: USER, projectName: PROJECT });
const env = fx.env;
const API = 'c5c3.io/v1alpha1';
const GRACE = '30s';
const GET_THINGS = { service: 'things', method: 'GET', path: '/v1/things/*' };
const HEAD_THINGS = { service: 'things', method: 'HEAD', path: '/v1/things/**' };
const DAY = 86_400_000;

let unlock: (() => void) | undefined;
let operator: OperatorProcess;
let admin: KeystoneSession;
let adminUserId = '';
let consumer: Probe | undefined;
const adminCredentials: string[] = [];

/** An admin application credential (restricted, as the admin user on its project), and the clouds.yaml naming it by id. */
async function adminApplicationCredential(expiresInMs: number): Promise<{ credential: ApplicationCredential; cloudsYaml: string }> {
  const secret = randomBytes(32).toString('base64url');
  const credential = await new ApplicationCredentials(admin).create({ name: uniqueName('lp-plane-admin'), secret, expiresAt: new Date(Date.now() + expiresInMs) });
  adminCredentials.push(credential.id);
  const cloudsYaml = `clouds:\n  admin:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: ${env.authUrl}\n      application_credential_id: ${credential.id}\n      application_credential_secret: "${secret}"\n`;
  return { credential, cloudsYaml };
}

const controlPlane = (): KubeObject => ({
  apiVersion: API,
  kind: 'ControlPlane',
  metadata: { name: 'cp', namespace: CP_NS },
  spec: {
    services: { keystone: { external: { authURL: env.authUrl } } },
    adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } },
    namespaceAssignments: [{ namespace: NS, allowedRoles: ['member', 'reader', 'observer'] }],
  },
});
const ref = fx.ref;
const identity = (kind: string, name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: API, kind, metadata: { name, namespace: NS }, spec: { ...ref, ...spec } });
const assignment = (name: string, role: string) => identity('KeystoneRoleAssignment', name, { userRef: { name: 'svc' }, projectRef: { name: 'proj' }, role });
const credential = (name: string, spec: Record<string, unknown> = {}): KubeObject =>
  identity('KeystoneApplicationCredential', name, { userRef: { name: 'svc' }, projectRef: { name: 'proj' }, rotation: { interval: '1h', gracePeriod: GRACE }, ...spec });

async function controlPlaneWhere(check: (cp: Order) => boolean, what: string): Promise<Order> {
  return eventually(async () => {
    const cp = await fx.controlPlaneNow();
    if (check(cp)) return cp;
    throw new Error(`ControlPlane ${what}: ${JSON.stringify(cp.status)}`);
  }, 60_000);
}

async function orderWhere(name: string, check: (o: Order) => boolean, what: string, timeoutMs = 60_000): Promise<Order> {
  return eventually(async () => {
    const o = await fx.order(name);
    if (check(o)) return o;
    throw new Error(`${name} ${what}: ${JSON.stringify(o.status?.conditions)}`);
  }, timeoutMs);
}

const delivered = (generation: number) => (o: Order) => o.status?.credentialGeneration === generation && o.status.secretName !== undefined && condition(o, 'Ready')?.status === 'True';

/** What Keystone's GET of one of the ordered user's credentials shows: its roles (sorted) and access rules; undefined when gone. */
async function keystoneCredential(id: string): Promise<{ roles: string[]; accessRules: { service: string; method: string; path: string }[] } | undefined> {
  const users = (await admin.request({ method: 'GET', path: admin.transport.pathOf(`users?name=${encodeURIComponent(USER)}`) })).body as { users: { id: string }[] };
  const userId = users.users[0]?.id;
  if (!userId) return undefined;
  const got = await admin.request({ method: 'GET', path: admin.transport.pathOf(`users/${userId}/application_credentials/${id}`) }).catch(() => undefined);
  if (!got) return undefined;
  const c = (got.body as { application_credential: { roles: { name: string }[]; access_rules?: { service: string; method: string; path: string }[] } }).application_credential;
  return { roles: c.roles.map((r) => r.name).sort(), accessRules: (c.access_rules ?? []).map(({ service, method, path }) => ({ service, method, path })) };
}

beforeAll(async () => {
  unlock = await lockCluster('least-privilege.test.ts');
  const workDir = process.env.KAC_TEST_WORKDIR as string;
  admin = adminSession(env);
  adminUserId = (await admin.token()).userId;
  const manifests = await installCrds(synthesizeManifests());
  for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  const kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'least-privilege.kubeconfig'));
  // The admin is an application credential that expires in 3 days: within the week the operator warns of.
  const { cloudsYaml } = await adminApplicationCredential(3 * DAY);
  await applyOk([fx.adminSecret('keystone-admin', cloudsYaml), controlPlane()], { fieldManager: 'kac-test' });
  operator = await startOperator({ name: 'lp', kubeconfig, namespace: IDENTITY.namespace, logDir: workDir, args: QUICK_ELECTION });
  await waitReady(operator);
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await consumer?.stop();
  await operator?.server.stop(5_000);
  await releaseLeftovers([NS, CP_NS]);
  for (const ns of [NS, CP_NS, IDENTITY.namespace]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  const credentials = new ApplicationCredentials(admin);
  for (const id of adminCredentials) await credentials.delete(id).catch(() => undefined);
  // Whatever the orders left of the user (and with it its credentials) and the project.
  const left = (await admin.request({ method: 'GET', path: admin.transport.pathOf(`users?name=${encodeURIComponent(USER)}`) })).body as { users: { id: string }[] };
  for (const u of left.users) await admin.request({ method: 'DELETE', path: admin.transport.pathOf(`users/${u.id}`) }).catch(() => undefined);
  const projects = (await admin.request({ method: 'GET', path: admin.transport.pathOf(`projects?name=${encodeURIComponent(PROJECT)}`) })).body as { projects: { id: string }[] };
  for (const p of projects.projects) await admin.request({ method: 'DELETE', path: admin.transport.pathOf(`projects/${p.id}`) }).catch(() => undefined);
  await admin.close();
  unlock?.();
}, 60_000);

describe('the identity plane with an admin application credential', () => {
  it('the ControlPlane logs in with it and reports its approaching expiry: AdminCredentialExpiring, the status field, the metric', async () => {
    const cp = await controlPlaneWhere((c) => condition(c, 'AdminCredentialReady')?.reason === 'AdminCredentialExpiring', 'AdminCredentialExpiring');
    expect(condition(cp, 'AdminCredentialReady')).toMatchObject({ status: 'True', message: expect.stringContaining('as the admin application credential lp-plane-admin-') });
    expect(condition(cp, 'Ready')).toMatchObject({ status: 'True' });
    const expiresAt = Date.parse(cp.status?.adminCredentialExpiresAt as string);
    expect(Math.abs(expiresAt - (Date.now() + 3 * DAY))).toBeLessThan(10 * 60_000);
    const metric = await eventually(async () => {
      const line = (await metricsText(operator)).split('\n').find((l) => l.startsWith(`keystone_appcred_admin_credential_expiry_timestamp_seconds{namespace="${CP_NS}",name="cp"}`));
      return line;
    }, 30_000);
    expect(Number(metric.split(' ').pop())).toBe(expiresAt / 1000);
    const events = await kubectl(['get', 'events', '-n', CP_NS, '--field-selector', 'reason=AdminCredentialExpiring', '-o', 'jsonpath={.items[*].type}']);
    expect(events.stdout).toContain('Warning');
  });

  it('a Keystone blip keeps the recorded expiry and its gauge series (issue 46): KeystoneUnreachable while it lasts, the same expiry throughout', async () => {
    // A second ControlPlane of the same admin Secret whose Keystone goes through a proxy this test cuts.
    const cut = await startCutProxy(env.authUrl);
    const blip = { ...controlPlane(), metadata: { name: 'cp-blip', namespace: CP_NS }, spec: { ...(controlPlane().spec as Record<string, unknown>), services: { keystone: { external: { authURL: cut.url } } }, namespaceAssignments: [] } };
    const gauge = async () => (await metricsText(operator)).split('\n').find((l) => l.startsWith(`keystone_appcred_admin_credential_expiry_timestamp_seconds{namespace="${CP_NS}",name="cp-blip"}`));
    /** cp-blip once its AdminCredentialReady has `reason`. */
    const blipWith = (reason: string) =>
      eventually(async () => {
        const cp = await getJson<Order>('controlplanes.c5c3.io', 'cp-blip', { namespace: CP_NS });
        return condition(cp, 'AdminCredentialReady')?.reason === reason && cp;
      }, 60_000);
    const poke = () => kubectlOk(['annotate', 'controlplanes.c5c3.io', 'cp-blip', '-n', CP_NS, `example.com/poke=${Date.now()}`, '--overwrite']);
    try {
      await applyOk(blip, { fieldManager: 'kac-test' });
      const recorded = (await blipWith('AdminCredentialExpiring')).status?.adminCredentialExpiresAt as string;
      const series = await eventually(gauge, 30_000);
      cut.down = true;
      await poke(); // the pass that logs in now (a changed ControlPlane is logged in with at once)
      const down = await blipWith('KeystoneUnreachable');
      expect(down.status?.adminCredentialExpiresAt).toBe(recorded);
      expect(await gauge()).toBe(series);
      cut.down = false;
      await poke();
      const back = await blipWith('AdminCredentialExpiring');
      expect(back.status?.adminCredentialExpiresAt).toBe(recorded);
      expect(await gauge()).toBe(series);
      expect(cut.calls.some((c) => c.outcome === 'reset')).toBe(true);
    } finally {
      await kubectl(['delete', 'controlplanes.c5c3.io', 'cp-blip', '-n', CP_NS, '--wait=false']);
      await cut.close();
    }
  });

  it('users, projects and role assignments are made in Keystone with it', async () => {
    const [project, user] = fx.identityOrders();
    await applyOk([project, user, assignment('member', 'member')], { fieldManager: 'kac-test' });
    const ready = await eventually(async () => {
      const a = await fx.order('member', 'keystoneroleassignments');
      return condition(a, 'Ready')?.status === 'True' && a;
    }, 60_000);
    expect(ready.status).toMatchObject({ roleID: expect.any(String), userID: expect.any(String), projectID: expect.any(String) });
    const listed = (await admin.request({ method: 'GET', path: admin.transport.pathOf(`role_assignments?user.id=${String(ready.status?.userID)}&scope.project.id=${String(ready.status?.projectID)}`) })).body as { role_assignments: unknown[] };
    expect(listed.role_assignments).toHaveLength(1);
  });
});

describe('role subsets and access rules on an order', () => {
  it('a role not allowed in the namespace → RoleNotAllowed; one not assigned → RoleNotAssigned; each named, nothing in Keystone', async () => {
    await applyOk([credential('too-much', { roles: ['member', 'admin'] }), credential('not-assigned', { roles: ['observer'] })], { fieldManager: 'kac-test' });
    const notAllowed = await orderWhere('too-much', (o) => condition(o, 'CredentialReady')?.reason === 'RoleNotAllowed', 'RoleNotAllowed');
    expect(condition(notAllowed, 'CredentialReady')?.message).toBe(`spec.roles names role admin, not in the allowedRoles of namespace ${NS} (member, observer, reader)`);
    const notAssigned = await orderWhere('not-assigned', (o) => condition(o, 'CredentialReady')?.reason === 'RoleNotAssigned', 'RoleNotAssigned');
    expect(condition(notAssigned, 'CredentialReady')?.message).toBe(`spec.roles names role observer, which no KeystoneRoleAssignment in namespace ${NS} has assigned user svc on project proj (assigned: member)`);
    expect(await fx.userCredentials(fx.prefixOf('too-much'))).toEqual([]);
    expect(await fx.userCredentials(fx.prefixOf('not-assigned'))).toEqual([]);
    await kubectl(['delete', 'keystoneapplicationcredential', 'too-much', 'not-assigned', '-n', NS]);
  });

  it('an order with spec.roles carries exactly them (Keystone GET, a token from it); one without, every role', async () => {
    await applyOk([assignment('reader', 'reader'), credential('app', { roles: ['member'] }), credential('every')], { fieldManager: 'kac-test' });
    const app = await orderWhere('app', delivered(1), 'generation 1 delivered');
    const every = await orderWhere('every', delivered(1), 'generation 1 delivered');
    expect((await keystoneCredential(app.status?.credentialID as string))?.roles).toEqual(['member']);
    expect((await keystoneCredential(every.status?.credentialID as string))?.roles).toEqual(['member', 'reader']);
    const secret = (await fx.delivered('app')) as Record<string, string>;
    const token = await authenticateApplicationCredential({ authUrl: env.authUrl, id: secret.application_credential_id, secret: secret.application_credential_secret });
    expect(token.roles).toEqual(['member']);
    consumer = fx.probe('app');
  });

  it('a change of roles and access rules rotates with the grace period; the superseded credential works through it, then goes', async () => {
    const g1 = (await fx.delivered('app')) as Record<string, string>;
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { roles: ['reader'], accessRules: [GET_THINGS] } });
    const switched = await orderWhere('app', delivered(2), 'generation 2 delivered');
    expect(switched.status).toMatchObject({ previousCredentialGeneration: 1, previousCredentialID: g1.application_credential_id });
    expect(await keystoneCredential(switched.status?.credentialID as string)).toMatchObject({ roles: ['reader'], accessRules: [GET_THINGS] });
    expect(await fx.authenticates(g1.application_credential_id, g1.application_credential_secret)).toBe(true);

    // Changed again while generation 1's grace period runs: the order waits, and says so.
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { accessRules: [GET_THINGS, HEAD_THINGS] } });
    const waiting = await orderWhere('app', (o) => /differ from the spec's: a successor carrying the spec's is created when the grace period of generation 1 ends/.test(condition(o, 'CredentialReady')?.message ?? ''), 'waiting for the grace period');
    expect(waiting.status?.credentialGeneration).toBe(2);
    expect(condition(waiting, 'Ready')?.status).toBe('True');

    // At its end: generation 1 is deleted and generation 3 minted with the spec's rules.
    const g3 = await orderWhere('app', delivered(3), 'generation 3 delivered', 120_000);
    expect(await keystoneCredential(g1.application_credential_id)).toBeUndefined();
    expect(await keystoneCredential(g3.status?.credentialID as string)).toMatchObject({ roles: ['reader'], accessRules: [GET_THINGS, HEAD_THINGS] });
    expect(g3.status?.previousCredentialGeneration).toBe(2);
  }, 180_000);

  it('the consumer probe never failed', async () => {
    await consumer?.stop();
    process.stderr.write(`[least-privilege] consumer probe: ${consumer?.attempts} authentications, ${consumer?.failures.length} failed\n`);
    expect(consumer?.attempts).toBeGreaterThan(20);
    expect(consumer?.failures).toEqual([]);
    consumer = undefined;
  });
});

describe('rotating the admin application credential by hand', () => {
  it('a successor in the Secret: the ControlPlane logs in with it at once and records its expiry', async () => {
    const { credential: successor, cloudsYaml } = await adminApplicationCredential(90 * DAY);
    await applyOk(fx.adminSecret('keystone-admin', cloudsYaml), { fieldManager: 'kac-test' });
    const cp = await controlPlaneWhere((c) => condition(c, 'AdminCredentialReady')?.reason === 'AdminCredentialReady' && (condition(c, 'AdminCredentialReady')?.message ?? '').includes(successor.id), 'AdminCredentialReady with the successor');
    expect(Math.abs(Date.parse(cp.status?.adminCredentialExpiresAt as string) - (successor.expiresAt as Date).getTime())).toBeLessThan(1000);
    expect(adminUserId).toBe(successor.userId);
  });
});
