/**
 * In-memory fakes of the identity plane's ports, and builders of the four kinds and of a credential order.
 *
 * FakeCluster behaves like the API server where the drivers can tell: a deleted object with finalizers gets a
 * deletionTimestamp and goes away when the last finalizer is removed; createSecret never overwrites. FakeKeystone is the
 * admin's Keystone: users, projects, roles and grants, with the admin password checked on `verify` and faults on demand.
 */
import { API_VERSION, type ControlPlane, type KeystoneClusterIdentity, type KeystoneApplicationCredential, type KeystoneProject, type KeystoneRoleAssignment, type KeystoneUser } from '../../../src/api';
import { KeystoneError, type KeystoneErrorKind } from '../../../src/keystone';
import { matchesFields } from '../../../src/kube/store';
import type {
  AdminConnection,
  ClusterPort,
  KeystoneAdmin,
  KeystoneAdmins,
  KeystoneRecord,
  NamespaceObject,
  ObjectKey,
  ObjectKind,
  ObjectOf,
  PlaneDeps,
  RoleGrant,
  SecretAccess,
  SecretManifest,
  SecretObject,
} from '../../../src/plane';

export const T0 = new Date('2026-12-01T00:00:00Z');
export const NS = 'tenant-a';
export const CP_NS = 'cp-system';
export const ADMIN_PASSWORD = 'admin-pw';
export const AUTH_URL = 'https://keystone.example.com/v3';

type Any = { metadata: { name: string; namespace?: string; uid?: string; finalizers?: readonly string[]; deletionTimestamp?: string; resourceVersion?: string; generation?: number }; status?: unknown };
const clone = <T>(v: T): T => structuredClone(v);

/** An in-memory ClusterPort. */
export class FakeCluster implements ClusterPort {
  private readonly objects = new Map<string, Any>();
  readonly secrets = new Map<string, SecretObject>();
  /** Every write, in order: `status:<kind>/<name>`, `apply:<ns>/<name>`, `create:…`, `delete:…`, `finalizer+:…`, `finalizer-:…`. */
  readonly writes: string[] = [];
  private version = 1;
  private uids = 1;
  /** Called before each write; throw from it to inject a failure. */
  beforeWrite?: (write: string) => void;

  private k(kind: string, key: ObjectKey): string {
    return `${kind}/${key.namespace}/${key.name}`;
  }

  private sk(key: ObjectKey): string {
    return `${key.namespace}/${key.name}`;
  }

  private write(what: string): void {
    this.beforeWrite?.(what);
    this.writes.push(what);
  }

  /** Creates or replaces an object (the test acting as a user); assigns uid, generation, resourceVersion. */
  put<K extends ObjectKind>(kind: K, object: ObjectOf<K>): ObjectOf<K> {
    const o = clone(object) as unknown as Any & { metadata: { creationTimestamp?: string } };
    const existing = this.objects.get(this.k(kind, { namespace: o.metadata.namespace ?? '', name: o.metadata.name }));
    o.metadata.uid ??= existing?.metadata.uid ?? `uid-${kind.toLowerCase()}-${o.metadata.name}-${this.uids++}`;
    o.metadata.generation = (existing?.metadata.generation ?? 0) + 1;
    o.metadata.resourceVersion = String(this.version++);
    o.metadata.creationTimestamp ??= new Date(T0.getTime() + this.uids * 1000).toISOString();
    if (existing && o.status === undefined) o.status = existing.status;
    if (existing && o.metadata.finalizers === undefined) o.metadata.finalizers = existing.metadata.finalizers;
    this.objects.set(this.k(kind, { namespace: o.metadata.namespace ?? '', name: o.metadata.name }), o);
    return clone(o) as unknown as ObjectOf<K>;
  }

  /** Deletes an object as a user would: with finalizers it only gets a deletionTimestamp. */
  remove(kind: ObjectKind, key: ObjectKey): void {
    const o = this.objects.get(this.k(kind, key));
    if (!o) return;
    if ((o.metadata.finalizers ?? []).length > 0) {
      o.metadata.deletionTimestamp ??= T0.toISOString();
      o.metadata.resourceVersion = String(this.version++);
    } else this.objects.delete(this.k(kind, key));
  }

  object<K extends ObjectKind>(kind: K, key: ObjectKey): ObjectOf<K> | undefined {
    const o = this.objects.get(this.k(kind, key));
    return o ? (clone(o) as unknown as ObjectOf<K>) : undefined;
  }

  putSecret(secret: Omit<SecretObject, 'metadata'> & { metadata: Partial<SecretObject['metadata']> & { name: string; namespace: string } }): void {
    this.secrets.set(this.sk(secret.metadata), { ...clone(secret), metadata: { uid: `uid-secret-${this.uids++}`, resourceVersion: String(this.version++), ...clone(secret.metadata) } });
  }

  secret(key: ObjectKey): SecretObject | undefined {
    return this.secrets.get(this.sk(key));
  }

  async get<K extends ObjectKind>(kind: K, key: ObjectKey): Promise<ObjectOf<K> | undefined> {
    return this.object(kind, key);
  }

  async list<K extends ObjectKind>(kind: K, namespace: string, fields: Readonly<Record<string, string>> = {}): Promise<readonly ObjectOf<K>[]> {
    return [...this.objects.entries()]
      .filter(([k, o]) => k.startsWith(`${kind}/`) && o.metadata.namespace === namespace && matchesFields(o, fields))
      .map(([, o]) => clone(o) as unknown as ObjectOf<K>);
  }

  /** KeystoneClusterIdentities by name (cluster-scoped). */
  readonly identities = new Map<string, KeystoneClusterIdentity>();
  /** Namespaces by name: their labels. */
  readonly namespaces = new Map<string, Record<string, string>>();

  async getClusterIdentity(name: string): Promise<KeystoneClusterIdentity | undefined> {
    const identity = this.identities.get(name);
    return identity && clone(identity);
  }

  async getNamespace(name: string): Promise<NamespaceObject | undefined> {
    const labels = this.namespaces.get(name);
    return labels ? { metadata: { name, labels: clone(labels) } } : undefined;
  }

  /** What the operator's caches know of Secrets by namespace (the namespaced mode); a namespace not here is granted. */
  readonly access = new Map<string, SecretAccess>();

  secretAccess(namespace: string): SecretAccess {
    return this.access.get(namespace) ?? { state: 'granted' };
  }

  /** The fake has no cache: the same as getSecret. */
  async readSecret(key: ObjectKey): Promise<SecretObject | undefined> {
    return this.getSecret(key);
  }

  async getSecret(key: ObjectKey): Promise<SecretObject | undefined> {
    const s = this.secrets.get(this.sk(key));
    return s && clone(s);
  }

  async listSecrets(namespace: string, labels: Readonly<Record<string, string>>): Promise<readonly SecretObject[]> {
    return [...this.secrets.values()].filter((s) => s.metadata.namespace === namespace && Object.entries(labels).every(([k, v]) => s.metadata.labels?.[k] === v)).map(clone);
  }

  async createSecret(secret: SecretManifest): Promise<SecretObject> {
    const existing = this.secrets.get(this.sk(secret));
    if (existing) return clone(existing);
    this.write(`create:${secret.namespace}/${secret.name}`);
    const stored: SecretObject = {
      metadata: { name: secret.name, namespace: secret.namespace, uid: `uid-secret-${this.uids++}`, resourceVersion: String(this.version++), labels: { ...secret.labels }, ...(secret.ownerReferences ? { ownerReferences: clone(secret.ownerReferences) } : {}) },
      data: { ...secret.data },
    };
    this.secrets.set(this.sk(secret), stored);
    return clone(stored);
  }

  /** Server-side apply: the given labels, owners and keys are set; keys somebody else added stay. */
  async applySecret(secret: SecretManifest): Promise<void> {
    this.write(`apply:${secret.namespace}/${secret.name}`);
    const existing = this.secrets.get(this.sk(secret));
    this.secrets.set(this.sk(secret), {
      metadata: {
        name: secret.name,
        namespace: secret.namespace,
        uid: existing?.metadata.uid ?? `uid-secret-${this.uids++}`,
        resourceVersion: String(this.version++),
        labels: { ...existing?.metadata.labels, ...secret.labels },
        ...(secret.annotations || existing?.metadata.annotations ? { annotations: { ...existing?.metadata.annotations, ...secret.annotations } } : {}),
        ownerReferences: clone(secret.ownerReferences ?? existing?.metadata.ownerReferences ?? []),
      },
      data: { ...existing?.data, ...secret.data },
    });
  }

  async deleteSecret(key: ObjectKey, precondition?: { uid: string }): Promise<void> {
    const existing = this.secrets.get(this.sk(key));
    if (!existing) return;
    if (precondition && existing.metadata.uid !== precondition.uid) throw new Error(`precondition failed: uid of ${this.sk(key)}`);
    this.write(`delete:${key.namespace}/${key.name}`);
    this.secrets.delete(this.sk(key));
  }

  async writeStatus<K extends ObjectKind>(kind: K, key: ObjectKey, status: NonNullable<ObjectOf<K>['status']>): Promise<void> {
    const o = this.objects.get(this.k(kind, key));
    if (!o) throw new Error(`${kind} ${this.sk(key)} not found`);
    this.write(`status:${kind}/${key.name}`);
    o.status = clone(status);
    o.metadata.resourceVersion = String(this.version++);
  }

  async addFinalizer(kind: ObjectKind, key: ObjectKey, finalizer: string): Promise<void> {
    const o = this.objects.get(this.k(kind, key));
    if (!o) throw new Error(`${kind} ${this.sk(key)} not found`);
    if ((o.metadata.finalizers ?? []).includes(finalizer)) return;
    this.write(`finalizer+:${kind}/${key.name}`);
    o.metadata.finalizers = [...(o.metadata.finalizers ?? []), finalizer];
    o.metadata.resourceVersion = String(this.version++);
  }

  async removeFinalizer(kind: ObjectKind, key: ObjectKey, finalizer: string): Promise<void> {
    const o = this.objects.get(this.k(kind, key));
    if (!o) return;
    this.write(`finalizer-:${kind}/${key.name}`);
    o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    o.metadata.resourceVersion = String(this.version++);
    if (o.metadata.deletionTimestamp && o.metadata.finalizers.length === 0) this.objects.delete(this.k(kind, key));
  }
}

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
      if (this.connection?.cloud.password !== this.adminPassword) throw keystoneError('unauthorized', 401, 'The request you have made requires authentication.');
      return { version: 'v3.14' };
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

/** The admin clouds.yaml. */
export function adminCloudsYaml(password = ADMIN_PASSWORD, cloudName = 'admin'): string {
  return `clouds:\n  ${cloudName}:\n    auth:\n      auth_url: ${AUTH_URL}\n      username: admin\n      password: ${password}\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n`;
}

/** A ControlPlane in CP_NS assigning NS on the management cluster, allowed roles member and reader. */
export function controlPlane(patch: { spec?: Partial<ControlPlane['spec']>; name?: string } = {}): ControlPlane {
  return {
    apiVersion: API_VERSION,
    kind: 'ControlPlane',
    metadata: { name: patch.name ?? 'cp', namespace: CP_NS },
    spec: {
      services: { keystone: { external: { authURL: AUTH_URL } } },
      adminCredential: { cloudCredentialsRef: { secretName: 'admin-cloud' } },
      namespaceAssignments: [{ namespace: NS, allowedRoles: ['member', 'reader'] }],
      ...patch.spec,
    },
  };
}

/** A ControlPlane status with AdminCredentialReady True. */
export const adminReady = (reason = 'AdminCredentialReady', status: 'True' | 'False' = 'True'): ControlPlane['status'] => ({
  conditions: [{ type: 'AdminCredentialReady', status, reason, message: 'm', lastTransitionTime: T0.toISOString() }],
});

const ref = { name: 'cp', namespace: CP_NS };

export function project(name = 'proj', spec: Partial<KeystoneProject['spec']> = {}): KeystoneProject {
  return { apiVersion: API_VERSION, kind: 'KeystoneProject', metadata: { name, namespace: NS }, spec: { controlPlaneRef: ref, ...spec } };
}

export function user(name = 'alice', spec: Partial<KeystoneUser['spec']> = {}): KeystoneUser {
  return { apiVersion: API_VERSION, kind: 'KeystoneUser', metadata: { name, namespace: NS }, spec: { controlPlaneRef: ref, ...spec } };
}

export function assignment(name = 'alice-member', spec: Partial<KeystoneRoleAssignment['spec']> = {}): KeystoneRoleAssignment {
  return {
    apiVersion: API_VERSION,
    kind: 'KeystoneRoleAssignment',
    metadata: { name, namespace: NS },
    spec: { controlPlaneRef: ref, userRef: { name: 'alice' }, projectRef: { name: 'proj' }, role: 'member', ...spec },
  };
}

export function credential(name = 'app', spec: Partial<KeystoneApplicationCredential['spec']> = {}): KeystoneApplicationCredential {
  return {
    apiVersion: API_VERSION,
    kind: 'KeystoneApplicationCredential',
    metadata: { name, namespace: NS, uid: `uid-kac-${name}` },
    spec: { controlPlaneRef: ref, userRef: { name: 'alice' }, projectRef: { name: 'proj' }, ...spec },
  };
}

/** A world: a fake cluster with a ControlPlane (admin ready) and its admin Secret, and a fake Keystone. */
export function plane(options: { cp?: ControlPlane; ready?: boolean } = {}) {
  const cluster = new FakeCluster();
  const keystone = new FakeKeystone();
  cluster.put('ControlPlane', { ...(options.cp ?? controlPlane()), ...(options.ready === false ? {} : { status: adminReady() }) });
  cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': adminCloudsYaml() } });
  let n = 0;
  const deps: PlaneDeps = { cluster, keystone, clock: () => T0, newPassword: () => `pw-${++n}` };
  return { cluster, keystone, deps };
}

/** The condition of a type. */
export function condition(object: { status?: { conditions?: readonly { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[] } } | undefined, type: string) {
  return object?.status?.conditions?.find((c) => c.type === type);
}
