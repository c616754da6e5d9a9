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
 *
 * Which Secrets are read whole is ./secret-cache.ts: the operator's own from the whole cache, the ones a ControlPlane
 * or an identity references read by name and kept while their cached metadata is unchanged, and every other Secret as
 * its metadata only (`data` empty): a foreign Secret at an order's delivered name is seen, and refused, unread.
 */
import type { KeystoneClusterIdentity } from '../api/cluster-identity';
import type { Condition } from '../api/conditions';
import type { Cluster } from '../kube/cluster';
import { isAlreadyExists, isNotFound } from '../kube/errors';
import { Kinds, MetadataKinds, type Secret } from '../kube/kinds';
import { objectKey, parseKey, type KubeObject, type ResourceKind } from '../kube/object';
import { ReadThrough } from '../kube/read-through';
import { newerOf } from '../kube/store';
import type { ClusterPort, NamespaceObject, ObjectKey, ObjectKind, ObjectOf, SecretManifest, SecretObject } from '../plane/ports';
import { GRANTED } from '../plane/secret-access';
import type { SecretAccess } from '../plane/ports';
import type { EventRecorder } from './runtime/events';
import { readsWhole } from './secret-cache';

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
  const object = { metadata: metadataOf(secret, true) };
  // An own, enumerable accessor: spreads, JSON and deep equality see `data` as a plain property.
  return Object.defineProperty(object, 'data', { enumerable: true, get: () => (data ??= decode(secret.data)) }) as typeof object & Pick<SecretObject, 'data'>;
}

/** A Secret the operator does not read whole, as its metadata: `data` is empty. */
function metadataSecretObject(secret: KubeObject): SecretObject {
  return { metadata: metadataOf(secret, false), data: {} };
}

/**
 * The metadata a reconciler sees of a cached Secret (its annotations with `annotations`), the fields that are set one by
 * one: a resync makes it for every Secret of every order, and a spread per field was an object each.
 */
function metadataOf(secret: KubeObject, annotations: boolean): SecretObject['metadata'] {
  const m = secret.metadata;
  const metadata: { -readonly [K in keyof SecretObject['metadata']]: SecretObject['metadata'][K] } = { name: m.name, namespace: m.namespace ?? '' };
  if (m.uid) metadata.uid = m.uid;
  if (m.resourceVersion) metadata.resourceVersion = m.resourceVersion;
  if (m.labels) metadata.labels = m.labels;
  if (annotations && m.annotations) metadata.annotations = m.annotations;
  if (m.ownerReferences) metadata.ownerReferences = m.ownerReferences;
  return metadata;
}

/**
 * Which of two copies of an object is newer (a new object of that name: the cache's, `a`); the API server's
 * resourceVersions are increasing integers.
 */
function newer<T extends KubeObject>(a: T | undefined, b: T | undefined): T | undefined {
  return a && b ? newerOf(a, b) : (a ?? b);
}

/** How often the copies of Secrets read by name are checked for ones no longer referenced. */
const SWEEP_MS = 60_000;

/** A {@link ClusterPort} on a {@link Cluster}. */
export class PlaneCluster implements ClusterPort {
  /** The object each of this port's writes returned, by kind and key. */
  private readonly written = new Map<string, KubeObject>();
  /** The Secrets cached as metadata that the reconcilers read whole (see ./secret-cache.ts). */
  private readonly copies: ReadThrough<Secret>;
  private swept = Date.now();

  /**
   * `events`: records an Event per condition transition a status write makes (steady objects write none).
   * `options.references`: whether the cluster holds the ControlPlanes and identities that reference Secrets (the
   * management cluster; false for a target cluster). @default true
   */
  constructor(
    private readonly cluster: Cluster,
    private readonly events?: EventRecorder,
    private readonly options: {
      readonly references?: boolean;
      /** What the caches know of Secrets in a namespace (the namespaced mode). @default every namespace granted */
      readonly access?: (namespace: string) => SecretAccess;
    } = {},
  ) {
    this.copies = new ReadThrough(cluster, Kinds.Secret);
  }

  secretAccess(namespace: string): SecretAccess {
    return this.options.access ? this.options.access(namespace) : GRANTED;
  }

  async get<K extends ObjectKind>(kind: K, key: ObjectKey): Promise<ObjectOf<K> | undefined> {
    return this.latest(Kinds[kind] as unknown as ResourceKind<ObjectOf<K> & KubeObject>, key) as ObjectOf<K> | undefined;
  }

  /** The newer of the cached order and the one this port's last write returned; undefined once the cache lost it. */
  private latest<T extends KubeObject>(kind: ResourceKind<T>, key: { readonly namespace?: string; readonly name: string }): T | undefined {
    const cached = this.cluster.get(kind, key.namespace, key.name);
    // Nothing written waits for the cache (a resync's case): the cached copy, without making the write's id.
    if (this.written.size === 0) return cached;
    const id = this.id(kind, key);
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
    const namespace = this.cluster.get(MetadataKinds.Namespace, undefined, name);
    if (!namespace) return undefined;
    const { resourceVersion, labels } = namespace.metadata;
    return { metadata: { name, ...(resourceVersion ? { resourceVersion } : {}), ...(labels ? { labels } : {}) } };
  }

  /** The operator's own Secret from the cache; a referenced one as its current copy; any other as its metadata. */
  async getSecret(key: ObjectKey): Promise<SecretObject | undefined> {
    const secret = this.cluster.get(Kinds.Secret, key.namespace, key.name);
    if (secret) return secretObject(secret);
    const metadata = this.cluster.get(MetadataKinds.Secret, key.namespace, key.name);
    return metadata ? this.fromMetadata(metadata) : undefined;
  }

  /** The Secret as the API server holds it now: its metadata first, and the whole Secret only when the operator reads it whole. */
  async readSecret(key: ObjectKey): Promise<SecretObject | undefined> {
    const metadata = await this.cluster.read(MetadataKinds.Secret, key.namespace, key.name);
    if (!metadata) return undefined;
    if (!readsWhole(this.cluster, metadata, this.options.references ?? true)) return metadataSecretObject(metadata);
    const secret = await this.cluster.read(Kinds.Secret, key.namespace, key.name);
    return secret ? secretObject(secret) : undefined;
  }

  async listSecrets(namespace: string, labels: Readonly<Record<string, string>>): Promise<readonly SecretObject[]> {
    const own = this.cluster.list(Kinds.Secret, { namespace, labels });
    // Selected by one of the operator's labels (every list it makes), the metadata cache holds none of them.
    const others = this.cluster.list(MetadataKinds.Secret, { namespace, labels }).filter((m) => !this.cluster.get(Kinds.Secret, namespace, m.metadata.name));
    if (others.length === 0) return own.map(secretObject);
    const read = await Promise.all(others.map((m) => this.fromMetadata(m)));
    return [...own.map(secretObject), ...read.filter((s): s is SecretObject => s !== undefined)].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  }

  /** A Secret the cache holds as metadata: read whole (a current copy, or from the API server) when the operator reads it so. */
  private async fromMetadata(metadata: KubeObject): Promise<SecretObject | undefined> {
    this.sweep();
    const copy = this.copies.current(metadata);
    if (copy) return secretObject(copy);
    if (!readsWhole(this.cluster, metadata, this.options.references ?? true)) return metadataSecretObject(metadata);
    const secret = await this.copies.get(metadata);
    return secret ? secretObject(secret) : undefined;
  }

  /** Now and then: drops the copies of Secrets gone from the metadata cache or no longer read whole. */
  private sweep(): void {
    if (Date.now() - this.swept < SWEEP_MS) return;
    this.swept = Date.now();
    this.copies.retain((key) => {
      const { namespace, name } = parseKey(key);
      const metadata = this.cluster.get(MetadataKinds.Secret, namespace, name);
      return metadata !== undefined && readsWhole(this.cluster, metadata, this.options.references ?? true);
    });
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
      // The cache lags behind a create: an earlier one of this order (a child's name is its order's own, and one order is
      // never in two passes at once: one key, one worker), or another writer's. The stored value wins, never the one
      // generated now (a foreign Secret of that name is read as its metadata: it holds no value of ours).
      const stored = await this.readSecret(manifest);
      if (!stored) throw error;
      return stored;
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

  async writeStatus<K extends ObjectKind>(kind: K, key: ObjectKey, status: NonNullable<ObjectOf<K>['status']>, basis?: ObjectOf<K>): Promise<void> {
    const resource = Kinds[kind] as unknown as ResourceKind<KubeObject & { status?: unknown }>;
    const latest = this.latest(resource, key);
    if (!latest) return; // gone: nothing to record on
    // The patch's resourceVersion precondition and its difference are the decided-from copy's (ClusterPort.writeStatus).
    const object = (basis as (KubeObject & { status?: unknown }) | undefined) ?? latest;
    const written = await this.cluster.patchStatus(resource, object, status);
    this.remember(resource, written);
    const conditions = (s: unknown) => (s as { conditions?: readonly Condition[] } | undefined)?.conditions;
    await this.events?.conditionsChanged(written, conditions(object.status), conditions(status));
  }

  async addFinalizer<K extends ObjectKind>(kind: K, key: ObjectKey, finalizer: string, basis?: ObjectOf<K>): Promise<ObjectOf<K> | undefined> {
    const resource = Kinds[kind] as unknown as ResourceKind<KubeObject>;
    const latest = this.latest(resource, key);
    if (!latest) return undefined;
    // The patch's resourceVersion precondition is the decided-from copy's (ClusterPort.addFinalizer).
    const written = await this.cluster.addFinalizer(resource, (basis as KubeObject | undefined) ?? latest, finalizer);
    this.remember(resource, newer(latest, written) ?? written);
    return written as ObjectOf<K>;
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
