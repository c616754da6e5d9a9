/**
 * An in-memory ClusterPort that behaves like the API server where the drivers can tell: a deleted object with
 * finalizers gets a deletionTimestamp and goes away when the last finalizer is removed; createSecret never overwrites.
 */
import type { KeystoneClusterIdentity } from '../../../../src/api';
import { matchesFields } from '../../../../src/kube/store';
import type { ClusterPort, NamespaceObject, ObjectKey, ObjectKind, ObjectOf, SecretAccess, SecretManifest, SecretObject } from '../../../../src/plane';
import { T0 } from './objects';

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

  /** Copies the next reads return instead of the object (a cache behind the API server: a watch that replayed), once each. */
  private readonly behindCopies = new Map<string, Any>();

  /** The next read of the object returns `copy`, an older version of it, as a cache behind the API server would. */
  behind<K extends ObjectKind>(kind: K, key: ObjectKey, copy: ObjectOf<K>): void {
    this.behindCopies.set(this.k(kind, key), clone(copy) as unknown as Any);
  }

  async get<K extends ObjectKind>(kind: K, key: ObjectKey): Promise<ObjectOf<K> | undefined> {
    const behind = this.behindCopies.get(this.k(kind, key));
    this.behindCopies.delete(this.k(kind, key));
    return behind ? (behind as unknown as ObjectOf<K>) : this.object(kind, key);
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

  async writeStatus<K extends ObjectKind>(kind: K, key: ObjectKey, status: NonNullable<ObjectOf<K>['status']>, basis?: ObjectOf<K>): Promise<void> {
    const o = this.decidedFrom(kind, key, basis);
    this.write(`status:${kind}/${key.name}`);
    o.status = clone(status);
    o.metadata.resourceVersion = String(this.version++);
  }

  async addFinalizer<K extends ObjectKind>(kind: K, key: ObjectKey, finalizer: string, basis?: ObjectOf<K>): Promise<ObjectOf<K> | undefined> {
    const copy = ((basis as Any | undefined) ?? this.objects.get(this.k(kind, key))) as Any | undefined;
    if ((copy?.metadata.finalizers ?? []).includes(finalizer)) return clone(copy) as ObjectOf<K>; // no write: nothing to condition
    const o = this.decidedFrom(kind, key, basis);
    this.write(`finalizer+:${kind}/${key.name}`);
    o.metadata.finalizers = [...(o.metadata.finalizers ?? []), finalizer];
    o.metadata.resourceVersion = String(this.version++);
    return clone(o) as ObjectOf<K>;
  }

  /** The stored object, with the API server's resourceVersion precondition: a write decided from an older copy loses. */
  private decidedFrom(kind: ObjectKind, key: ObjectKey, basis: unknown): Any {
    const o = this.objects.get(this.k(kind, key));
    if (!o) throw new Error(`${kind} ${this.sk(key)} not found`);
    const decidedFrom = (basis as Any | undefined)?.metadata.resourceVersion;
    if (decidedFrom !== undefined && decidedFrom !== o.metadata.resourceVersion) throw new Error(`409 Conflict: ${kind} ${this.sk(key)} has changed (resourceVersion ${decidedFrom}, now ${String(o.metadata.resourceVersion)})`);
    return o;
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
