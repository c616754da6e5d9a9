/**
 * The reconcilers' Kubernetes port (`ClusterPort`, src/plane/ports.ts) on the runtime's `Cluster`: reads come from the
 * informers' caches, writes go to the API server with the operator's field manager. Secret values are decoded here and
 * encoded here, so the reconcilers see plain strings.
 *
 * A reconcile that writes an order twice (a finalizer, then the status of the pass) must not trip over its own
 * first write because the cache has not caught up with it yet: the port keeps the order each status or finalizer write
 * returned and uses it while it is newer than the cached one. Secrets are read from the cache alone: a parked value is
 * created with a plain create (a lagging cache costs a 409 and a live read, never an overwrite), and re-applying a
 * delivered Secret the cache has not caught up with is idempotent.
 */
import type { KeystoneClusterIdentity } from '../api/cluster-identity';
import type { Condition } from '../api/conditions';
import type { Cluster } from '../kube/cluster';
import { isAlreadyExists, isNotFound } from '../kube/errors';
import { Kinds, type Secret } from '../kube/kinds';
import { objectKey, type KubeObject, type ResourceKind } from '../kube/object';
import type { ClusterPort, NamespaceObject, ObjectKey, ObjectKind, ObjectOf, SecretManifest, SecretObject } from '../plane/ports';
import type { EventRecorder } from './runtime/events';

const encode = (data: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));
const decode = (data: Readonly<Record<string, string>> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

/**
 * A Secret as the reconcilers see it. Its values are decoded on first read, not here: a steady pass fingerprints
 * Secrets by resourceVersion and never looks at their values, and decoding every Secret of every order made up much
 * of a resync's CPU.
 */
function secretObject(secret: Secret): SecretObject {
  let data: Record<string, string> | undefined;
  const object = {
    metadata: {
      name: secret.metadata.name,
      namespace: secret.metadata.namespace ?? '',
      ...(secret.metadata.uid ? { uid: secret.metadata.uid } : {}),
      ...(secret.metadata.resourceVersion ? { resourceVersion: secret.metadata.resourceVersion } : {}),
      ...(secret.metadata.labels ? { labels: secret.metadata.labels } : {}),
      ...(secret.metadata.annotations ? { annotations: secret.metadata.annotations } : {}),
      ...(secret.metadata.ownerReferences ? { ownerReferences: secret.metadata.ownerReferences } : {}),
    },
  };
  // An own, enumerable accessor: spreads, JSON and deep equality see `data` as a plain property.
  return Object.defineProperty(object, 'data', { enumerable: true, get: () => (data ??= decode(secret.data)) }) as typeof object & Pick<SecretObject, 'data'>;
}

/** Which of two copies of an object is newer: resourceVersions are opaque, but the API server's are increasing integers. */
function newer<T extends KubeObject>(a: T | undefined, b: T | undefined): T | undefined {
  if (!a || !b) return a ?? b;
  if (a.metadata.uid !== b.metadata.uid) return a; // a new object of that name: the cache's is the one
  const rv = (o: T) => (/^\d+$/.test(o.metadata.resourceVersion ?? '') ? BigInt(o.metadata.resourceVersion as string) : undefined);
  const x = rv(a);
  const y = rv(b);
  return x !== undefined && y !== undefined && y > x ? b : a;
}

/** A {@link ClusterPort} on a {@link Cluster}. */
export class PlaneCluster implements ClusterPort {
  /** The object each of this port's writes returned, by kind and key. */
  private readonly written = new Map<string, KubeObject>();

  /** `events`: records an Event per condition transition a status write makes (steady objects write none). */
  constructor(
    private readonly cluster: Cluster,
    private readonly events?: EventRecorder,
  ) {}

  async get<K extends ObjectKind>(kind: K, key: ObjectKey): Promise<ObjectOf<K> | undefined> {
    return this.latest(Kinds[kind] as unknown as ResourceKind<ObjectOf<K> & KubeObject>, key) as ObjectOf<K> | undefined;
  }

  /** The newer of the cached order and the one this port's last write returned; undefined once the cache lost it. */
  private latest<T extends KubeObject>(kind: ResourceKind<T>, key: { readonly namespace?: string; readonly name: string }): T | undefined {
    const id = this.id(kind, key);
    const cached = this.cluster.get(kind, key.namespace, key.name);
    const own = this.written.get(id) as T | undefined;
    const latest = newer(cached, cached ? own : undefined);
    if (latest === cached) this.written.delete(id);
    return latest;
  }

  async list<K extends ObjectKind>(kind: K, namespace: string, fields?: Readonly<Record<string, string>>): Promise<readonly ObjectOf<K>[]> {
    const resource = Kinds[kind] as unknown as ResourceKind<ObjectOf<K> & KubeObject>;
    const cached = this.cluster.list(resource, { namespace, ...(fields ? { fields } : {}) });
    return this.written.size === 0 ? cached : cached.map((o) => newer(o, this.written.get(this.id(resource, o.metadata))) as ObjectOf<K>);
  }

  async getClusterIdentity(name: string): Promise<KeystoneClusterIdentity | undefined> {
    return this.cluster.get(Kinds.KeystoneClusterIdentity, undefined, name);
  }

  async getNamespace(name: string): Promise<NamespaceObject | undefined> {
    const namespace = this.cluster.get(Kinds.Namespace, undefined, name);
    if (!namespace) return undefined;
    const { resourceVersion, labels } = namespace.metadata;
    return { metadata: { name, ...(resourceVersion ? { resourceVersion } : {}), ...(labels ? { labels } : {}) } };
  }

  async getSecret(key: ObjectKey): Promise<SecretObject | undefined> {
    const secret = this.cluster.get(Kinds.Secret, key.namespace, key.name);
    return secret ? secretObject(secret) : undefined;
  }

  async readSecret(key: ObjectKey): Promise<SecretObject | undefined> {
    const secret = await this.cluster.read(Kinds.Secret, key.namespace, key.name);
    return secret ? secretObject(secret) : undefined;
  }

  async listSecrets(namespace: string, labels: Readonly<Record<string, string>>): Promise<readonly SecretObject[]> {
    return this.cluster.list(Kinds.Secret, { namespace, labels }).map(secretObject);
  }

  async createSecret(manifest: SecretManifest): Promise<SecretObject> {
    const cached = this.cluster.get(Kinds.Secret, manifest.namespace, manifest.name);
    if (cached) return secretObject(cached);
    try {
      const created = await this.cluster.create(Kinds.Secret, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: manifest.name, namespace: manifest.namespace, labels: { ...manifest.labels }, ...(manifest.ownerReferences ? { ownerReferences: [...manifest.ownerReferences] } : {}) },
        type: 'Opaque',
        data: encode(manifest.data),
      });
      return secretObject(created);
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      // The cache lags behind a create (ours or another's): the stored value wins, never the one generated now.
      const stored = await this.cluster.read(Kinds.Secret, manifest.namespace, manifest.name);
      if (!stored) throw error;
      return secretObject(stored);
    }
  }

  async applySecret(manifest: SecretManifest, options: { readonly force?: boolean } = {}): Promise<void> {
    await this.cluster.apply<Secret>(
      Kinds.Secret,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: manifest.name,
          namespace: manifest.namespace,
          labels: { ...manifest.labels },
          ...(manifest.annotations ? { annotations: { ...manifest.annotations } } : {}),
          ...(manifest.ownerReferences ? { ownerReferences: [...manifest.ownerReferences] } : {}),
        },
        data: encode(manifest.data),
      },
      { force: options.force ?? true },
    );
  }

  async deleteSecret(key: ObjectKey, precondition?: { readonly uid: string }): Promise<void> {
    try {
      await this.cluster.delete(Kinds.Secret, key.namespace, key.name, precondition ? { uid: precondition.uid } : {});
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async writeStatus<K extends ObjectKind>(kind: K, key: ObjectKey, status: NonNullable<ObjectOf<K>['status']>): Promise<void> {
    const resource = Kinds[kind] as unknown as ResourceKind<KubeObject & { status?: unknown }>;
    const object = this.latest(resource, key);
    if (!object) return; // gone: nothing to record on
    const written = await this.cluster.patchStatus(resource, object, status);
    this.remember(resource, written);
    const conditions = (s: unknown) => (s as { conditions?: readonly Condition[] } | undefined)?.conditions;
    await this.events?.conditionsChanged(written, conditions(object.status), conditions(status));
  }

  async addFinalizer(kind: ObjectKind, key: ObjectKey, finalizer: string): Promise<void> {
    const resource = Kinds[kind] as unknown as ResourceKind<KubeObject>;
    const object = this.latest(resource, key);
    if (!object) return;
    this.remember(resource, await this.cluster.addFinalizer(resource, object, finalizer));
  }

  async removeFinalizer(kind: ObjectKind, key: ObjectKey, finalizer: string): Promise<void> {
    const resource = Kinds[kind] as unknown as ResourceKind<KubeObject>;
    const object = this.latest(resource, key);
    if (!object) return;
    const left = await this.cluster.removeFinalizer(resource, object, finalizer);
    if (left) this.remember(resource, left);
    else this.written.delete(this.id(resource, key));
  }

  private id(kind: ResourceKind<KubeObject>, key: { readonly namespace?: string; readonly name: string }): string {
    return `${kind.group}/${kind.plural}/${objectKey(key.namespace, key.name)}`;
  }

  private remember(kind: ResourceKind<KubeObject>, object: KubeObject): void {
    this.written.set(this.id(kind, object.metadata), object);
  }
}
