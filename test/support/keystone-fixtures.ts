/**
 * Test fixtures on the shared test Keystone (started by test/support/keystone.ts): an admin session, and throwaway
 * service users that each get their own project, so tests running in parallel never see each other's credentials.
 */
import { randomBytes } from 'node:crypto';
import { KeystoneSession, Projects, Roles, Users, type PasswordAuth } from '../../src/keystone';

/** How to reach the test Keystone, from the variables the starter exported. */
export interface KeystoneTestEnv {
  readonly authUrl: string;
  readonly adminUser: string;
  readonly adminPassword: string;
  readonly adminProject: string;
  /** Domain name of the admin user and project. */
  readonly domain: string;
  readonly bcryptRounds: number;
}

/** Reads the test Keystone's variables; throws naming the `@needs keystone` line when they are missing. */
export function keystoneTestEnv(): KeystoneTestEnv {
  const env = process.env;
  const authUrl = env.KAC_KEYSTONE_URL;
  if (!authUrl || !env.KAC_KEYSTONE_ADMIN_PASSWORD) {
    throw new Error('KAC_KEYSTONE_URL is not set: start the test file with a `// @needs keystone` line');
  }
  return {
    authUrl,
    adminUser: env.KAC_KEYSTONE_ADMIN_USER ?? 'admin',
    adminPassword: env.KAC_KEYSTONE_ADMIN_PASSWORD,
    adminProject: env.KAC_KEYSTONE_ADMIN_PROJECT ?? 'admin',
    domain: env.KAC_KEYSTONE_DOMAIN ?? 'Default',
    bcryptRounds: Number(env.KAC_KEYSTONE_BCRYPT_ROUNDS ?? '4'),
  };
}

/** A session of the bootstrap admin, scoped to the admin project. */
export function adminSession(env: KeystoneTestEnv = keystoneTestEnv()): KeystoneSession {
  return new KeystoneSession({
    authUrl: env.authUrl,
    auth: {
      method: 'password',
      user: { name: env.adminUser, domainName: env.domain },
      password: env.adminPassword,
      project: { name: env.adminProject, domainName: env.domain },
    },
  });
}

/** A unique, readable name: `<prefix>-<random hex>`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** A throwaway user with a role on its own throwaway project. */
export interface ServiceUser {
  readonly authUrl: string;
  readonly userId: string;
  readonly userName: string;
  /** Random; never log it. */
  readonly password: string;
  readonly projectId: string;
  readonly projectName: string;
  /** Domain id of the user and the project. */
  readonly domainId: string;
  /** Password auth scoped to the project, for a {@link KeystoneSession}. */
  readonly auth: PasswordAuth;
  /** A new session of this user, scoped to the project. */
  session(): KeystoneSession;
  /** Deletes the user (with its application credentials) and the project; safe to call twice. */
  cleanup(): Promise<void>;
}

/** Options of {@link createServiceUser}. */
export interface ServiceUserOptions {
  /** Roles granted on the project. @default ["member"] (which implies reader) */
  readonly roles?: readonly string[];
}

/**
 * As admin, creates a project tagged `kac-test` and a user with a random password holding `member` on it, both named
 * `<prefix>-<random>`. Call `cleanup()` in `afterAll`.
 */
export async function createServiceUser(prefix: string, options: ServiceUserOptions = {}): Promise<ServiceUser> {
  const env = keystoneTestEnv();
  const admin = adminSession(env);
  const name = uniqueName(prefix);
  const password = randomBytes(18).toString('base64url');
  const projects = new Projects(admin);
  const users = new Users(admin);
  const roles = new Roles(admin);
  const project = await projects.create({ name, description: `test project for ${prefix}`, tags: ['kac-test'] });
  const user = await users.create({ name, password, defaultProjectId: project.id });
  for (const roleName of options.roles ?? ['member']) {
    const role = await roles.findByName(roleName);
    if (!role) throw new Error(`role ${roleName} does not exist in the test Keystone`);
    await roles.grantOnProject({ userId: user.id, projectId: project.id, roleId: role.id });
  }
  const auth: PasswordAuth = { method: 'password', user: { id: user.id }, password, project: { id: project.id } };
  let cleaned = false;
  return {
    authUrl: env.authUrl,
    userId: user.id,
    userName: user.name,
    password,
    projectId: project.id,
    projectName: project.name,
    domainId: user.domainId,
    auth,
    session: () => new KeystoneSession({ authUrl: env.authUrl, auth }),
    cleanup: async () => {
      if (cleaned) return;
      cleaned = true;
      await users.delete(user.id);
      await projects.delete(project.id);
    },
  };
}
