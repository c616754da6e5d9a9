/**
 * The admin's Keystone in memory: users, projects, roles and grants, with the admin password checked on `verify` and
 * faults on demand.
 */
import { KeystoneError, type KeystoneErrorKind } from '../../../../src/keystone';
import type { AdminConnection, KeystoneAdmin, KeystoneAdmins, KeystoneRecord, RoleGrant } from '../../../../src/plane';
import { ADMIN_PASSWORD } from './objects';

const clone = <T>(v: T): T => structuredClone(v);

/** An in-memory Keystone, seen as the admin. */
export class FakeKeystone implements KeystoneAdmins, KeystoneAdmin {
  readonly users = new Map<string, KeystoneRecord & { domainId: string; password: string }>();
  readonly projects = new Map<string, KeystoneRecord & { domainId: string }>();
  readonly roles = new Map<string, string>([
    ['member', 'role-member'],
    ['reader', 'role-reader'],
    ['admin', 'role-admin'],
  ]);
  readonly grants = new Set<string>();
  readonly domains = new Map<string, string>([['Default', 'default']]);
  /** Every call, in order (method names). */
  readonly calls: string[] = [];
  /** The admin password Keystone accepts. */
  adminPassword = ADMIN_PASSWORD;
  /** The admin application credential Keystone accepts (its secret is `adminPassword`), when the admin is one. */
  adminCredential?: { id: string; name: string; expiresAt?: Date };
  /** Throw a transport error from every call. */
  unreachable = false;
  /** Faults by method: thrown once, before (or after, with `after`) the call takes effect. */
  private readonly faults = new Map<string, { error: Error; after: boolean }>();
  private ids = 1;
  connection?: AdminConnection;

  connect(connection: AdminConnection): KeystoneAdmin {
    this.connection = connection;
    return this;
  }

  /** The next call of `method` fails with `error`; with `after`, it takes effect first (a crash after Keystone acted). */
  failNext(method: keyof KeystoneAdmin, error: Error = keystoneError('server'), after = false): void {
    this.faults.set(method, { error, after });
  }

  private async call<T>(method: keyof KeystoneAdmin, body: () => T): Promise<T> {
    this.calls.push(method);
    if (this.unreachable) throw keystoneError('transport');
    const fault = this.faults.get(method);
    if (fault) this.faults.delete(method);
    if (fault && !fault.after) throw fault.error;
    const out = body();
    if (fault) throw fault.error;
    return out;
  }

  verify() {
    return this.call('verify', () => {
      const cloud = this.connection?.cloud;
      const credential = cloud && 'credential' in cloud ? cloud.credential : undefined;
      const secret = cloud && ('password' in cloud ? cloud.password : cloud.secret);
      const known = this.adminCredential;
      const matches = credential === undefined ? known === undefined : known !== undefined && ('id' in credential ? credential.id === known.id : credential.name === known.name);
      if (secret !== this.adminPassword || !matches) throw keystoneError('unauthorized', 401, 'The request you have made requires authentication.');
      return { version: 'v3.14', ...(known && credential ? { applicationCredential: { ...known } } : {}) };
    });
  }
  domainId(name: string) {
    return this.call('domainId', () => this.domains.get(name));
  }
  findProject(name: string, domainId: string) {
    return this.call('findProject', () => {
      const p = [...this.projects.values()].find((x) => x.name === name && x.domainId === domainId);
      return p && clone(p);
    });
  }
  createProject(input: { name: string; domainId: string; description: string; tags: readonly string[] }) {
    return this.call('createProject', () => {
      if ([...this.projects.values()].some((x) => x.name === input.name && x.domainId === input.domainId)) throw keystoneError('conflict', 409);
      const p = { id: `project-${this.ids++}`, name: input.name, domainId: input.domainId, description: input.description, tags: [...input.tags] };
      this.projects.set(p.id, p);
      return clone(p);
    });
  }
  deleteProject(id: string) {
    return this.call('deleteProject', () => {
      this.projects.delete(id);
    });
  }
  findUser(name: string, domainId: string) {
    return this.call('findUser', () => {
      const u = [...this.users.values()].find((x) => x.name === name && x.domainId === domainId);
      return u && { id: u.id, name: u.name, ...(u.description ? { description: u.description } : {}) };
    });
  }
  createUser(input: { name: string; domainId: string; password: string; description: string }) {
    return this.call('createUser', () => {
      if ([...this.users.values()].some((x) => x.name === input.name && x.domainId === input.domainId)) throw keystoneError('conflict', 409);
      const u = { id: `user-${this.ids++}`, name: input.name, domainId: input.domainId, description: input.description, password: input.password };
      this.users.set(u.id, u);
      return { id: u.id, name: u.name, description: u.description };
    });
  }
  setPassword(userId: string, password: string) {
    return this.call('setPassword', () => {
      const u = this.users.get(userId);
      if (!u) throw keystoneError('not-found', 404);
      u.password = password;
    });
  }
  deleteUser(id: string) {
    return this.call('deleteUser', () => {
      this.users.delete(id);
      for (const g of [...this.grants]) if (g.startsWith(`${id}/`)) this.grants.delete(g);
    });
  }
  findRole(name: string) {
    return this.call('findRole', () => {
      const id = this.roles.get(name);
      return id ? { id, name } : undefined;
    });
  }
  hasRole(grant: RoleGrant) {
    return this.call('hasRole', () => this.grants.has(grantKey(grant)));
  }
  grantRole(grant: RoleGrant) {
    return this.call('grantRole', () => {
      if (!this.users.has(grant.userId) || !this.projects.has(grant.projectId)) throw keystoneError('not-found', 404);
      this.grants.add(grantKey(grant));
    });
  }
  revokeRole(grant: RoleGrant) {
    return this.call('revokeRole', () => {
      this.grants.delete(grantKey(grant));
    });
  }
}

const grantKey = (g: RoleGrant): string => `${g.userId}/${g.projectId}/${g.roleId}`;

export function keystoneError(kind: KeystoneErrorKind, status?: number, detail?: string): KeystoneError {
  return new KeystoneError({ kind, method: 'GET', path: '/v3/x', ...(status ? { status } : {}), ...(detail ? { detail } : {}) });
}
