// @needs keystone
/**
 * The KeystoneProject, KeystoneUser and KeystoneRoleAssignment drivers against a real Keystone, with the Kubernetes side
 * in memory: what the orders ask for exists in Keystone as ordered (checked with the Keystone API, not the status), the
 * delivered clouds.yaml authenticates, a crash between "created in Keystone" and "status written" converges with no
 * duplicate, a foreign user is never adopted, a frozen order changes nothing, and teardown leaves nothing behind.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { API_VERSION, type ControlPlane, type KeystoneUser } from '../../src/api';
import { KeystoneSession, Projects, Roles, Users, isKeystoneError } from '../../src/keystone';
import {
  keystoneAdmins,
  ownerMarker,
  reconcileAssignment,
  reconcileControlPlane,
  reconcileProject,
  reconcileUser,
  type ClosableKeystoneAdmins,
  type KeystoneAdmin,
  type KeystoneAdmins,
  type PlaneDeps,
} from '../../src/plane';
import { adminSession, keystoneTestEnv, uniqueName } from '../support/keystone-fixtures';
import { FakeCluster, assignment, condition, project, user } from '../unit/plane/fakes';

const env = keystoneTestEnv();
const NS = 'tenant-a';
const CP = { namespace: 'cp-system', name: 'cp' };

function cloudsYaml(): string {
  return `clouds:\n  admin:\n    auth:\n      auth_url: ${env.authUrl}\n      username: ${env.adminUser}\n      password: "${env.adminPassword}"\n      project_name: ${env.adminProject}\n      user_domain_name: ${env.domain}\n      project_domain_name: ${env.domain}\n`;
}

function controlPlane(allowedRoles = ['member', 'reader']): ControlPlane {
  return {
    apiVersion: API_VERSION,
    kind: 'ControlPlane',
    metadata: { ...CP },
    spec: {
      services: { keystone: { external: { authURL: env.authUrl } } },
      adminCredential: { cloudCredentialsRef: { secretName: 'admin-cloud' } },
      namespaceAssignments: [{ namespace: NS, allowedRoles }],
    },
  };
}

/** Admins whose first call of `method` reaches Keystone and then dies, as a process killed right after the call. */
function crashingOnce(inner: KeystoneAdmins, method: 'createUser' | 'createProject' | 'grantRole'): KeystoneAdmins {
  let armed = true;
  return {
    connect(connection) {
      const admin = inner.connect(connection);
      return new Proxy(admin, {
        get(target, property: keyof KeystoneAdmin) {
          if (property !== method || !armed) return target[property];
          return async (...args: unknown[]) => {
            await (target[method] as (...a: unknown[]) => Promise<unknown>)(...args);
            armed = false;
            throw new Error('kill -9 between "created in Keystone" and "status written"');
          };
        },
      });
    },
  };
}

interface World {
  readonly cluster: FakeCluster;
  readonly deps: PlaneDeps;
  readonly userName: string;
  readonly projectName: string;
  /** Runs every driver until nothing is left to do (or throws after 5 rounds). */
  converge(deps?: PlaneDeps): Promise<void>;
}

describe('the identity plane against a real Keystone', () => {
  let admins: ClosableKeystoneAdmins;
  let admin: KeystoneSession;
  let users: Users;
  let projects: Projects;
  let roles: Roles;
  const created: { users: string[]; projects: string[] } = { users: [], projects: [] };

  beforeAll(() => {
    admins = keystoneAdmins();
    admin = adminSession();
    users = new Users(admin);
    projects = new Projects(admin);
    roles = new Roles(admin);
  });

  afterAll(async () => {
    // Whatever a failed test left behind.
    for (const name of created.users) {
      const u = await users.findByName(name);
      if (u) await users.delete(u.id);
    }
    for (const name of created.projects) {
      const p = await projects.findByName(name);
      if (p) await projects.delete(p.id);
    }
    await admins.close();
  });

  async function world(): Promise<World> {
    const cluster = new FakeCluster();
    cluster.put('ControlPlane', controlPlane());
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP.namespace }, data: { 'clouds.yaml': cloudsYaml() } });
    const deps: PlaneDeps = { cluster, keystone: admins };
    await reconcileControlPlane(CP, deps);
    const userName = uniqueName('kac-plane-user');
    const projectName = uniqueName('kac-plane-project');
    created.users.push(userName);
    created.projects.push(projectName);
    cluster.put('KeystoneUser', user('alice', { userName }));
    cluster.put('KeystoneProject', project('proj', { projectName }));
    cluster.put('KeystoneRoleAssignment', assignment());
    const converge = async (with_ = deps) => {
      for (let round = 0; round < 5; round++) {
        const actions: string[] = [];
        for (const [kind, run] of [
          ['KeystoneUser', reconcileUser],
          ['KeystoneProject', reconcileProject],
          ['KeystoneRoleAssignment', reconcileAssignment],
        ] as const) {
          for (const o of await cluster.list(kind, NS)) actions.push(...(await run({ namespace: NS, name: o.metadata.name }, with_)).actions);
        }
        if (actions.length === 0) return;
      }
      throw new Error('the plane did not converge in 5 rounds');
    };
    return { cluster, deps, userName, projectName, converge };
  }

  const delivered = (w: World) => {
    const secret = w.cluster.secret({ namespace: NS, name: 'alice-credentials' });
    if (!secret) throw new Error('nothing delivered');
    return { password: secret.data.password, cloud: parse(secret.data['clouds.yaml']).clouds.openstack as { auth: Record<string, string> } };
  };

  /** A password login of the ordered user scoped to the ordered project, as the delivered document says. */
  async function loginAs(w: World, password: string): Promise<{ roles: readonly string[]; projectId: string } | string> {
    const { cloud } = delivered(w);
    const session = new KeystoneSession({
      authUrl: cloud.auth.auth_url,
      auth: { method: 'password', user: { name: cloud.auth.username, domainName: cloud.auth.user_domain_name }, password, project: { name: w.projectName, domainName: 'Default' } },
    });
    try {
      const token = await session.token();
      return { roles: token.roles, projectId: token.projectId };
    } catch (error) {
      return isKeystoneError(error) ? error.kind : String(error);
    } finally {
      await session.close();
    }
  }

  test('project, user and assignment exist in Keystone as ordered, owned by their orders', async () => {
    const w = await world();
    await w.converge();
    const u = w.cluster.object('KeystoneUser', { namespace: NS, name: 'alice' }) as KeystoneUser;
    const p = w.cluster.object('KeystoneProject', { namespace: NS, name: 'proj' });
    const a = w.cluster.object('KeystoneRoleAssignment', { namespace: NS, name: 'alice-member' });
    for (const [o, type] of [[u, 'UserReady'], [p, 'ProjectReady'], [a, 'AssignmentReady'], [u, 'DeliveryReady']] as const) expect(condition(o, type)).toMatchObject({ status: 'True' });

    const kUser = await users.findByName(w.userName);
    expect(kUser).toMatchObject({ id: u.status?.userID, domainId: 'default', enabled: true });
    expect(kUser?.description).toContain(ownerMarker(u.metadata.uid as string));
    const kProject = await projects.get(p?.status?.projectID as string);
    expect(kProject).toMatchObject({ name: w.projectName, domainId: 'default', tags: [ownerMarker(p?.metadata.uid as string)] });
    const member = await roles.findByName('member');
    expect(a?.status?.roleID).toBe(member?.id);
    expect(await roles.hasOnProject({ userId: kUser?.id as string, projectId: kProject?.id as string, roleId: member?.id as string })).toBe(true);
  });

  test('the delivered clouds.yaml authenticates: our client scoped to the project, and the openstack CLI', async () => {
    const w = await world();
    await w.converge();
    const { password, cloud } = delivered(w);
    expect(cloud.auth.password).toBe(password);
    const login = await loginAs(w, password);
    expect(login).toMatchObject({ roles: expect.arrayContaining(['member']) });

    const home = mkdtempSync(join(tmpdir(), 'kac-plane-osc-'));
    try {
      const file = join(home, 'clouds.yaml');
      writeFileSync(file, w.cluster.secret({ namespace: NS, name: 'alice-credentials' })?.data['clouds.yaml'] as string, { mode: 0o600 });
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile('/usr/bin/openstack', ['--os-cloud', 'openstack', 'token', 'issue', '-f', 'json'], { env: { PATH: '/usr/bin:/bin', HOME: home, OS_CLIENT_CONFIG_FILE: file }, timeout: 60_000 }, (error, out, err) =>
          error ? reject(new Error(`openstack failed: ${error.message}\n${err}`)) : resolve(out),
        );
      });
      expect((JSON.parse(stdout) as { user_id: string }).user_id).toBe(w.cluster.object('KeystoneUser', { namespace: NS, name: 'alice' })?.status?.userID);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test('a raised passwordGeneration rotates the password: the new one works, the old one no longer does', async () => {
    const w = await world();
    await w.converge();
    const before = delivered(w).password;
    const u = w.cluster.object('KeystoneUser', { namespace: NS, name: 'alice' }) as KeystoneUser;
    w.cluster.put('KeystoneUser', { ...u, spec: { ...u.spec, passwordGeneration: 2 } });
    await w.converge();
    const after = delivered(w).password;
    expect(after).not.toBe(before);
    expect(await loginAs(w, after)).toMatchObject({ roles: expect.arrayContaining(['member']) });
    expect(await loginAs(w, before)).toBe('unauthorized');
    expect(w.cluster.object('KeystoneUser', { namespace: NS, name: 'alice' })?.status?.passwordGeneration).toBe(2);
  });

  test.each(['createUser', 'createProject', 'grantRole'] as const)('a crash right after %s reached Keystone converges with no duplicate and no orphan', async (method) => {
    const w = await world();
    const crashing = { ...w.deps, keystone: crashingOnce(admins, method) };
    await expect(w.converge(crashing)).rejects.toThrow('kill -9');
    await w.converge();
    const listed = async (path: string, key: string, name: string) => {
      const reply = await admin.request({ method: 'GET', path: admin.transport.pathOf(`${path}?name=${encodeURIComponent(name)}`) });
      return (reply.body as Record<string, unknown[]>)[key].length;
    };
    expect(await listed('users', 'users', w.userName)).toBe(1);
    expect(await listed('projects', 'projects', w.projectName)).toBe(1);
    const u = w.cluster.object('KeystoneUser', { namespace: NS, name: 'alice' });
    expect(await loginAs(w, delivered(w).password)).toMatchObject({ roles: expect.arrayContaining(['member']) });
    expect(condition(u, 'Ready')).toMatchObject({ status: 'True' });
    // and its teardown removes it: what the crashed pass created is recognised as the order's own
    for (const [kind, name] of [['KeystoneRoleAssignment', 'alice-member'], ['KeystoneUser', 'alice'], ['KeystoneProject', 'proj']] as const) w.cluster.remove(kind, { namespace: NS, name });
    await w.converge();
    expect(await users.findByName(w.userName)).toBeUndefined();
    expect(await projects.findByName(w.projectName)).toBeUndefined();
  });

  test('UserCollision: a user of that name that no order created is never adopted, never deleted', async () => {
    const w = await world();
    const theirs = await users.create({ name: w.userName, password: 'their-own-password-1', description: 'made by hand' });
    await w.converge();
    const u = w.cluster.object('KeystoneUser', { namespace: NS, name: 'alice' });
    expect(condition(u, 'UserReady')).toMatchObject({ status: 'False', reason: 'UserCollision', message: expect.stringContaining(theirs.id) });
    expect(condition(w.cluster.object('KeystoneRoleAssignment', { namespace: NS, name: 'alice-member' }), 'AssignmentReady')).toMatchObject({ reason: 'WaitingForUser' });
    for (const [kind, name] of [['KeystoneRoleAssignment', 'alice-member'], ['KeystoneUser', 'alice'], ['KeystoneProject', 'proj']] as const) w.cluster.remove(kind, { namespace: NS, name });
    await w.converge();
    expect(await users.get(theirs.id)).toMatchObject({ id: theirs.id, description: 'made by hand' });
    await users.delete(theirs.id);
  });

  test('RoleNotAllowed: a role outside allowedRoles is never granted', async () => {
    const w = await world();
    w.cluster.put('KeystoneRoleAssignment', assignment('alice-admin', { role: 'admin' }));
    await w.converge();
    expect(condition(w.cluster.object('KeystoneRoleAssignment', { namespace: NS, name: 'alice-admin' }), 'AssignmentReady')).toMatchObject({ reason: 'RoleNotAllowed' });
    const adminRole = await roles.findByName('admin');
    const ids = { userId: w.cluster.object('KeystoneUser', { namespace: NS, name: 'alice' })?.status?.userID as string, projectId: w.cluster.object('KeystoneProject', { namespace: NS, name: 'proj' })?.status?.projectID as string };
    expect(await roles.hasOnProject({ ...ids, roleId: adminRole?.id as string })).toBe(false);
  });

  test('removing the namespace assignment freezes every order: nothing in Keystone changes', async () => {
    const w = await world();
    await w.converge();
    const password = delivered(w).password;
    w.cluster.put('ControlPlane', { ...controlPlane(), spec: { ...controlPlane().spec, namespaceAssignments: [] }, status: w.cluster.object('ControlPlane', CP)?.status });
    const u = w.cluster.object('KeystoneUser', { namespace: NS, name: 'alice' }) as KeystoneUser;
    w.cluster.put('KeystoneUser', { ...u, spec: { ...u.spec, passwordGeneration: 5 } });
    w.cluster.put('KeystoneProject', project('other', { projectName: uniqueName('kac-plane-frozen') }));
    await w.converge();
    expect(await loginAs(w, password)).toMatchObject({ roles: expect.arrayContaining(['member']) });
    for (const kind of ['KeystoneUser', 'KeystoneProject', 'KeystoneRoleAssignment'] as const) {
      for (const o of await w.cluster.list(kind, NS)) expect(condition(o, 'Ready')).toMatchObject({ status: 'False', reason: 'NamespaceNotAssigned' });
    }
    expect(await projects.findByName(w.cluster.object('KeystoneProject', { namespace: NS, name: 'other' })?.spec.projectName as string)).toBeUndefined();
  });

  test('deleting a user an assignment holds waits with ReferencedByRoleAssignments; deleting everything leaves nothing in Keystone', async () => {
    const w = await world();
    await w.converge();
    const userID = w.cluster.object('KeystoneUser', { namespace: NS, name: 'alice' })?.status?.userID as string;
    w.cluster.remove('KeystoneUser', { namespace: NS, name: 'alice' });
    await w.converge();
    expect(condition(w.cluster.object('KeystoneUser', { namespace: NS, name: 'alice' }), 'Ready')).toMatchObject({ status: 'False', reason: 'ReferencedByRoleAssignments' });
    expect(await users.get(userID)).toBeDefined();
    w.cluster.remove('KeystoneRoleAssignment', { namespace: NS, name: 'alice-member' });
    w.cluster.remove('KeystoneProject', { namespace: NS, name: 'proj' });
    await w.converge();
    expect(await users.findByName(w.userName)).toBeUndefined();
    expect(await projects.findByName(w.projectName)).toBeUndefined();
    expect(await w.cluster.list('KeystoneUser', NS)).toEqual([]);
    expect([...w.cluster.secrets.keys()]).toEqual(['cp-system/admin-cloud']);
  });
});
