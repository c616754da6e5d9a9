/**
 * The Keystone side of the plane's ports on src/keystone: one admin session per connection (auth URL, admin cloud and
 * CA bundle), reused across passes and orders, so a steady plane logs in once per token lifetime.
 */
import { ApplicationCredentials, Domains, KeystoneSessions, Projects, Roles, Users, adminAuthOf, identityVersion, isKeystoneError, type FetchLike, type KeystoneSession } from '../keystone';
import type { KeystoneAdmin, KeystoneAdmins, KeystoneRecord } from './ports';

/** Options of {@link keystoneAdmins}. */
export interface KeystoneAdminsOptions {
  /**
   * The sessions to log in through, shared with the ordered users' (one token per connection and token lifetime).
   * @default sessions of its own, with the options below
   */
  readonly sessions?: KeystoneSessions;
  /** Per-request timeout (sessions of its own only). @default the client's (30 s) */
  readonly timeoutMs?: number;
  /** Replaces the global fetch (tests; sessions of its own only). */
  readonly fetch?: FetchLike;
  /** Sessions kept (sessions of its own only); the least recently used is closed beyond it. @default 64 */
  readonly maxSessions?: number;
}

/** {@link KeystoneAdmins} that can release its sessions. */
export interface ClosableKeystoneAdmins extends KeystoneAdmins {
  /** Closes every session (connection pools of custom CA bundles). */
  close(): Promise<void>;
}

/** The admin port of one session. */
export function keystoneAdmin(session: KeystoneSession): KeystoneAdmin {
  const users = new Users(session);
  const projects = new Projects(session);
  const roles = new Roles(session);
  const domains = new Domains(session);
  const userRecord = (u: { id: string; name: string; description?: string }): KeystoneRecord => ({ id: u.id, name: u.name, ...(u.description ? { description: u.description } : {}) });
  return {
    async verify() {
      session.invalidate();
      const token = await session.token();
      const version = await identityVersion(session.transport);
      const used = token.applicationCredential;
      if (!used) return { version };
      // An application credential's expiry is not in its token (whose own expiry Keystone caps at it): Keystone shows it
      // to the credential's user, the admin itself, restricted or not.
      const credential = await new ApplicationCredentials(session).get(used.id);
      const expiresAt = credential?.expiresAt;
      return { version, applicationCredential: { id: used.id, name: used.name, ...(expiresAt ? { expiresAt } : {}) } };
    },
    async domainId(name) {
      return (await domains.findByName(name))?.id;
    },
    async findProject(name, domainId) {
      const p = await projects.findByName(name, domainId);
      return p && { id: p.id, name: p.name, tags: p.tags, ...(p.description ? { description: p.description } : {}) };
    },
    async createProject(input) {
      const p = await projects.create({ name: input.name, domainId: input.domainId, description: input.description, tags: input.tags });
      return { id: p.id, name: p.name, tags: p.tags, ...(p.description ? { description: p.description } : {}) };
    },
    async deleteProject(id) {
      await projects.delete(id);
    },
    async findUser(name, domainId) {
      const u = await users.findByName(name, domainId);
      return u && userRecord(u);
    },
    async createUser(input) {
      return userRecord(await users.create({ name: input.name, domainId: input.domainId, password: input.password, description: input.description }));
    },
    async setPassword(userId, password) {
      await users.updatePassword(userId, password);
    },
    async deleteUser(id) {
      await users.delete(id);
    },
    async findRole(name) {
      return roles.findByName(name);
    },
    async hasRole(grant) {
      return roles.hasOnProject(grant);
    },
    async grantRole(grant) {
      await roles.grantOnProject(grant);
    },
    async revokeRole(grant) {
      await roles.revokeOnProject(grant);
    },
  };
}

/**
 * Admin sessions keyed by connection (src/keystone/sessions.ts): a steady plane logs in once per token lifetime, and a
 * changed Secret is a new connection, so the old session is not reused.
 */
export function keystoneAdmins(options: KeystoneAdminsOptions = {}): ClosableKeystoneAdmins {
  const own = options.sessions === undefined;
  const sessions =
    options.sessions ??
    new KeystoneSessions({
      maxSessions: options.maxSessions ?? 64,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  const admins = new WeakMap<KeystoneSession, KeystoneAdmin>();
  return {
    connect(connection) {
      const session = sessions.session({
        authUrl: connection.authUrl,
        auth: adminAuthOf(connection.cloud),
        ...(connection.caBundle !== undefined ? { caBundle: connection.caBundle } : {}),
      });
      let admin = admins.get(session);
      if (!admin) {
        admin = keystoneAdmin(session);
        admins.set(session, admin);
      }
      return admin;
    },
    async close() {
      if (own) await sessions.close();
    },
  };
}

/** The Keystone error kind of a failure, or `other`. */
export function failureKind(error: unknown): string {
  return isKeystoneError(error) ? error.kind : 'other';
}
