/**
 * The Keystone side of the plane's ports on src/keystone: one admin session per connection (auth URL, admin cloud and
 * CA bundle), reused across passes and orders, so a steady plane logs in once per token lifetime.
 */
import { createHash } from 'node:crypto';
import { Domains, KeystoneSession, Projects, Roles, Users, identityVersion, isKeystoneError, passwordAuthOf, type FetchLike } from '../keystone';
import type { AdminConnection, KeystoneAdmin, KeystoneAdmins, KeystoneRecord } from './ports';

/** Options of {@link keystoneAdmins}. */
export interface KeystoneAdminsOptions {
  /** Per-request timeout. @default the client's (30 s) */
  readonly timeoutMs?: number;
  /** Replaces the global fetch (tests). */
  readonly fetch?: FetchLike;
  /** Sessions kept; the least recently used is closed beyond it. @default 64 */
  readonly maxSessions?: number;
}

/** {@link KeystoneAdmins} that can release its sessions. */
export interface ClosableKeystoneAdmins extends KeystoneAdmins {
  /** Closes every session (connection pools of custom CA bundles). */
  close(): Promise<void>;
}

function fingerprint(connection: AdminConnection): string {
  return createHash('sha256').update(JSON.stringify([connection.authUrl, connection.cloud, connection.caBundle ?? ''])).digest('hex');
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
      await session.token();
      return { version: await identityVersion(session.transport) };
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

/** Admin sessions keyed by connection; a changed Secret is a new connection, so the old session is not reused. */
export function keystoneAdmins(options: KeystoneAdminsOptions = {}): ClosableKeystoneAdmins {
  const max = options.maxSessions ?? 64;
  const sessions = new Map<string, { session: KeystoneSession; admin: KeystoneAdmin }>();
  return {
    connect(connection) {
      const key = fingerprint(connection);
      let entry = sessions.get(key);
      if (entry) sessions.delete(key);
      else {
        const session = new KeystoneSession({
          authUrl: connection.authUrl,
          auth: passwordAuthOf(connection.cloud),
          ...(connection.caBundle !== undefined ? { caBundle: connection.caBundle } : {}),
          ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
          ...(options.fetch ? { fetch: options.fetch } : {}),
        });
        entry = { session, admin: keystoneAdmin(session) };
      }
      sessions.set(key, entry);
      while (sessions.size > max) {
        const [oldest, value] = sessions.entries().next().value as [string, { session: KeystoneSession }];
        sessions.delete(oldest);
        void value.session.close();
      }
      return entry.admin;
    },
    async close() {
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(all.map((e) => e.session.close()));
    },
  };
}

/** The Keystone error kind of a failure, or `other`. */
export function failureKind(error: unknown): string {
  return isKeystoneError(error) ? error.kind : 'other';
}
