/**
 * An in-memory {@link Cluster} for unit tests of reconcilers: objects in stores, resourceVersions, generations,
 * optimistic concurrency (409 on a stale object, an apply's resourceVersion precondition included), finalizers and deletionTimestamp, server-side apply with field
 * ownership (a field another manager set fails without `force`), owner-reference garbage collection, Events. Every write
 * is recorded in `writes`, so a test can assert that a steady pass writes nothing.
 *
 * Approximations: apply ownership is per leaf field (lists are atomic), there is no admission or schema validation, and
 * garbage collection is immediate and in the background.
 */
import { randomUUID } from 'node:crypto';
import type { ApplyOptions, Cluster, DeleteOptions, EventSpec, WithStatus } from './cluster';
import { KubeApiError } from './errors';
import { applyMergePatch, jsonEqual, normalize } from './json';
import { Kinds, type Event } from './kinds';
import { apiVersionOf, keyOf, objectKey, type ApplyConfiguration, type KubeObject, type ResourceKind } from './object';
import { Store, type IndexFunction, type ListOptions } from './store';

/** One recorded write. */
export interface MemoryWrite {
  readonly verb: 'create' | 'apply' | 'patchStatus' | 'addFinalizer' | 'removeFinalizer' | 'delete' | 'event';
  readonly kind: string;
  readonly key: string;
}

/** A change, as an informer would report it. */
export interface MemoryChange {
  readonly kind: ResourceKind;
  readonly type: 'added' | 'updated' | 'deleted';
  readonly object: KubeObject;
  readonly old?: KubeObject;
}

type Mutable = Record<string, unknown> & { metadata: Record<string, unknown> };

const MANAGER_USER = 'user';
const MANAGER_OPERATOR = 'operator';
/** Joins the segments of a field path; not `.`, which Secret keys such as `clouds.yaml` contain. */
const SEP = '\u0000';
const IDENTITY_PATHS = new Set(['apiVersion', 'kind', `metadata${SEP}name`, `metadata${SEP}namespace`]);

export class MemoryCluster implements Cluster {
  /** Every write, in order (`clear()` it after the arrange phase of a test). */
  readonly writes: MemoryWrite[] = [];
  /** Every Event recorded through {@link event}. */
  readonly events: Event[] = [];
  private readonly stores = new Map<string, Store>();
  private readonly kinds = new Map<string, ResourceKind>();
  /** Leaf path → manager, per object. */
  private readonly owners = new Map<string, Map<string, string>>();
  private readonly failures: { verb: MemoryWrite['verb']; error: Error }[] = [];
  private readonly listeners: ((change: MemoryChange) => void)[] = [];
  private version = 0;

  constructor(private readonly now: () => Date = () => new Date()) {}

  // --- test helpers ---------------------------------------------------------------------------------------------

  /** Creates or replaces an object as a user would (`kubectl apply`): bumps resourceVersion, and generation on a spec change. */
  put<T extends KubeObject>(kind: ResourceKind<T>, object: T): T {
    const stored = this.store(kind).get(object.metadata.namespace, object.metadata.name);
    const next = this.stamp(kind, normalize(object) as Mutable, stored);
    this.own(kind, next, MANAGER_USER, true);
    return this.save(kind, next, stored) as T;
  }

  /** Removes an object at once, ignoring finalizers (as if it never existed). */
  drop(kind: ResourceKind<KubeObject>, namespace: string | undefined, name: string): void {
    const old = this.store(kind).remove(objectKey(namespace, name));
    if (old) this.emit({ kind, type: 'deleted', object: old });
  }

  /** Makes the next write of `verb` fail with `error` (e.g. a KubeApiError 409 or 500). */
  failNext(verb: MemoryWrite['verb'], error: Error): void {
    this.failures.push({ verb, error });
  }

  /** Adds a named index to a kind's store (the runtime's watches add theirs the same way). */
  index<T extends KubeObject>(kind: ResourceKind<T>, name: string, fn: IndexFunction<T>): void {
    this.store(kind).addIndex(name, fn as IndexFunction);
  }

  /** Calls `listener` on every change (to drive a controller from this cluster). */
  onChange(listener: (change: MemoryChange) => void): void {
    this.listeners.push(listener);
  }

  /** Forgets the recorded writes and events. */
  clear(): void {
    this.writes.length = 0;
    this.events.length = 0;
  }

  // --- Cluster --------------------------------------------------------------------------------------------------

  /** The stored object; for a {@link metadataOf} kind, its metadata only, as the API server's metadata view. */
  get<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, name: string): T | undefined {
    const object = this.store(kind).get(namespace, name);
    return (object && kind.metadataOnly ? metadataView(object) : object) as T | undefined;
  }

  list<T extends KubeObject>(kind: ResourceKind<T>, options?: ListOptions): T[] {
    const objects = this.store(kind).list(options);
    return (kind.metadataOnly ? objects.map(metadataView) : objects) as T[];
  }

  async read<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, name: string): Promise<T | undefined> {
    return this.get(kind, namespace, name);
  }

  async create<T extends KubeObject>(kind: ResourceKind<T>, object: T): Promise<T> {
    const key = keyOf(object);
    this.record('create', kind, key);
    if (this.store(kind).getByKey(key)) {
      throw new KubeApiError(409, 'AlreadyExists', `${kind.plural} "${object.metadata.name}" already exists`, `POST ${kind.plural}`);
    }
    const next = this.stamp(kind, normalize(object) as Mutable, undefined);
    this.own(kind, next, MANAGER_OPERATOR, true);
    return this.save(kind, next, undefined) as T;
  }

  async apply<T extends KubeObject>(kind: ResourceKind<T>, object: ApplyConfiguration, options: ApplyOptions = {}): Promise<T> {
    const key = objectKey(object.metadata.namespace, object.metadata.name);
    this.record('apply', kind, key);
    if (object.apiVersion !== apiVersionOf(kind) || object.kind !== kind.kind) {
      throw new KubeApiError(400, 'BadRequest', `apply of ${object.apiVersion} ${object.kind} to ${kind.plural}`, `PATCH ${kind.plural}/${key}`);
    }
    const stored = this.store(kind).getByKey(key);
    const config = normalize(object) as Mutable;
    const precondition = config.metadata.resourceVersion;
    if (precondition !== undefined && precondition !== stored?.metadata.resourceVersion) {
      throw new KubeApiError(409, 'Conflict', `Operation cannot be fulfilled on ${kind.plural} "${object.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`, `PATCH ${kind.plural}/${key}`);
    }
    delete config.metadata.resourceVersion;
    if (stored) {
      const owners = this.owners.get(this.ownerKey(kind, key)) ?? new Map<string, string>();
      const conflicts = leaves(config).filter(([path, value]) => {
        const owner = owners.get(path);
        return owner !== undefined && owner !== MANAGER_OPERATOR && !jsonEqual(valueAt(stored, path), value);
      });
      if (conflicts.length > 0 && !options.force) {
        const fields = conflicts.map(([path]) => `.${path.split(SEP).join('.')}`).join(', ');
        throw new KubeApiError(409, 'Conflict', `Apply failed with ${conflicts.length} conflict(s): conflict with "${MANAGER_USER}": ${fields}`, `PATCH ${kind.plural}/${key}`);
      }
      let base = normalize(stored) as Mutable;
      for (const [path, owner] of owners) {
        if (owner === MANAGER_OPERATOR && valueAt(config, path) === undefined) base = withoutPath(base, path);
      }
      const merged = applyMergePatch(base, config) as Mutable;
      const next = this.stamp(kind, merged, stored);
      this.own(kind, config, MANAGER_OPERATOR, false);
      return this.save(kind, next, stored) as T;
    }
    const next = this.stamp(kind, config, undefined);
    this.own(kind, config, MANAGER_OPERATOR, true);
    return this.save(kind, next, undefined) as T;
  }

  async patchStatus<T extends WithStatus>(kind: ResourceKind<T>, object: T, status: NonNullable<T['status']>): Promise<T> {
    const stored = this.current(kind, object, 'patchStatus');
    const next = normalize(stored) as Mutable;
    next.status = normalize(status);
    return this.save(kind, this.bump(next), stored) as T;
  }

  async addFinalizer<T extends KubeObject>(kind: ResourceKind<T>, object: T, finalizer: string): Promise<T> {
    if (object.metadata.finalizers?.includes(finalizer)) return object;
    const stored = this.current(kind, object, 'addFinalizer');
    const next = normalize(stored) as Mutable;
    next.metadata.finalizers = [...(stored.metadata.finalizers ?? []), finalizer];
    return this.save(kind, this.bump(next), stored) as T;
  }

  async removeFinalizer<T extends KubeObject>(kind: ResourceKind<T>, object: T, finalizer: string): Promise<T | undefined> {
    if (!object.metadata.finalizers?.includes(finalizer)) return object;
    if (!this.store(kind).getByKey(keyOf(object))) return undefined;
    const stored = this.current(kind, object, 'removeFinalizer');
    const next = normalize(stored) as Mutable;
    next.metadata.finalizers = (stored.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    if (stored.metadata.deletionTimestamp && (next.metadata.finalizers as string[]).length === 0) {
      this.erase(kind, keyOf(object));
      return undefined;
    }
    return this.save(kind, this.bump(next), stored) as T;
  }

  async delete(kind: ResourceKind<KubeObject>, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<boolean> {
    const key = objectKey(namespace, name);
    this.record('delete', kind, key);
    const stored = this.store(kind).getByKey(key);
    if (!stored) return false;
    if ((options.uid && options.uid !== stored.metadata.uid) || (options.resourceVersion && options.resourceVersion !== stored.metadata.resourceVersion)) {
      throw new KubeApiError(409, 'Conflict', 'Precondition failed: UID or ResourceVersion in precondition does not match', `DELETE ${kind.plural}/${key}`);
    }
    if ((stored.metadata.finalizers ?? []).length > 0) {
      if (!stored.metadata.deletionTimestamp) {
        const next = normalize(stored) as Mutable;
        next.metadata.deletionTimestamp = this.timestamp();
        this.save(kind, this.bump(next), stored);
      }
      return true;
    }
    this.erase(kind, key);
    return true;
  }

  async event(regarding: KubeObject, event: EventSpec): Promise<void> {
    const namespace = regarding.metadata.namespace ?? 'default';
    const name = `${regarding.metadata.name}.${(++this.version).toString(16)}`;
    this.record('event', Kinds.Event, objectKey(namespace, name));
    const stored: Event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name, namespace, uid: randomUUID(), resourceVersion: String(this.version) },
      eventTime: this.now().toISOString(),
      reportingController: 'memory',
      reportingInstance: 'memory',
      regarding: { apiVersion: regarding.apiVersion, kind: regarding.kind, name: regarding.metadata.name, namespace: regarding.metadata.namespace, uid: regarding.metadata.uid },
      ...event,
    };
    this.events.push(stored);
    this.store(Kinds.Event).upsert(stored);
  }

  // --- internals ------------------------------------------------------------------------------------------------

  private store(kind: ResourceKind<KubeObject>): Store {
    const id = `${kind.group}/${kind.plural}`;
    let store = this.stores.get(id);
    if (!store) this.stores.set(id, (store = new Store()));
    if (!kind.metadataOnly && !this.kinds.has(id)) this.kinds.set(id, kind);
    return store;
  }

  private ownerKey(kind: ResourceKind<KubeObject>, key: string): string {
    return `${kind.group}/${kind.plural}/${key}`;
  }

  private record(verb: MemoryWrite['verb'], kind: ResourceKind<KubeObject>, key: string): void {
    this.writes.push({ verb, kind: kind.kind, key });
    const index = this.failures.findIndex((f) => f.verb === verb);
    if (index >= 0) throw this.failures.splice(index, 1)[0].error;
  }

  /** The stored object a guarded write applies to: 404 when gone, 409 when `object` is stale. */
  private current(kind: ResourceKind<KubeObject>, object: KubeObject, verb: MemoryWrite['verb']): KubeObject {
    const key = keyOf(object);
    this.record(verb, kind, key);
    const stored = this.store(kind).getByKey(key);
    const request = `PATCH ${kind.plural}/${key}`;
    if (!stored) throw new KubeApiError(404, 'NotFound', `${kind.plural} "${object.metadata.name}" not found`, request);
    if (object.metadata.resourceVersion !== stored.metadata.resourceVersion) {
      throw new KubeApiError(409, 'Conflict', `Operation cannot be fulfilled on ${kind.plural} "${object.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`, request);
    }
    return stored;
  }

  private timestamp(): string {
    return this.now().toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  private bump(next: Mutable): Mutable {
    next.metadata.resourceVersion = String(++this.version);
    return next;
  }

  /** Fills in server-set metadata and bumps resourceVersion, and generation when anything but metadata and status changed. */
  private stamp(kind: ResourceKind<KubeObject>, next: Mutable, stored: KubeObject | undefined): Mutable {
    if (kind.namespaced && !next.metadata.namespace) throw new Error(`${kind.kind} ${String(next.metadata.name)} needs a namespace`);
    next.apiVersion = apiVersionOf(kind);
    next.kind = kind.kind;
    const old = stored as unknown as Mutable | undefined;
    next.metadata.uid = old?.metadata.uid ?? randomUUID();
    next.metadata.creationTimestamp = old?.metadata.creationTimestamp ?? this.timestamp();
    if (old?.metadata.deletionTimestamp) next.metadata.deletionTimestamp = old.metadata.deletionTimestamp;
    const body = (o: Mutable | undefined) => Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => k !== 'metadata' && k !== 'status' && k !== 'apiVersion' && k !== 'kind'));
    const generation = (old?.metadata.generation as number | undefined) ?? 0;
    next.metadata.generation = !old || !jsonEqual(body(old), body(next)) ? generation + 1 : generation;
    if (old && !('status' in next) && 'status' in old) next.status = old.status;
    return this.bump(next);
  }

  private own(kind: ResourceKind<KubeObject>, object: Mutable, manager: string, reset: boolean): void {
    const key = this.ownerKey(kind, keyOf(object as unknown as KubeObject));
    const owners = reset ? new Map<string, string>() : (this.owners.get(key) ?? new Map<string, string>());
    for (const [path] of leaves(object)) owners.set(path, manager);
    this.owners.set(key, owners);
  }

  private save(kind: ResourceKind<KubeObject>, next: Mutable, old: KubeObject | undefined): KubeObject {
    const object = deepFreeze(next) as unknown as KubeObject;
    this.store(kind).upsert(object);
    this.emit({ kind, type: old ? 'updated' : 'added', object, ...(old ? { old } : {}) });
    return object;
  }

  private erase(kind: ResourceKind<KubeObject>, key: string): void {
    const old = this.store(kind).remove(key);
    this.owners.delete(this.ownerKey(kind, key));
    if (!old) return;
    this.emit({ kind, type: 'deleted', object: old });
    // Background garbage collection of dependents.
    for (const [id, store] of this.stores) {
      for (const dependent of store.list()) {
        const refs = dependent.metadata.ownerReferences ?? [];
        if (refs.length > 0 && refs.some((r) => r.uid === old.metadata.uid)) {
          const depKind = this.kinds.get(id) as ResourceKind;
          void this.delete(depKind, dependent.metadata.namespace, dependent.metadata.name).catch(() => undefined);
        }
      }
    }
  }

  private emit(change: MemoryChange): void {
    for (const listener of this.listeners) listener(change);
  }
}

/** An object as the metadata-only view serves it. */
const metadataView = (object: KubeObject): KubeObject => ({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: object.metadata });

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Leaf paths (`spec.a.b`) and values of an object; lists are atomic leaves; identity fields are skipped. */
function leaves(value: unknown, prefix = ''): [string, unknown][] {
  if (!isPlainObject(value) || (prefix && Object.keys(value).length === 0)) return prefix && !IDENTITY_PATHS.has(prefix) ? [[prefix, value]] : [];
  return Object.entries(value).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}${SEP}${k}` : k));
}

function valueAt(object: unknown, path: string): unknown {
  let v: unknown = object;
  for (const part of path.split(SEP)) v = isPlainObject(v) ? v[part] : undefined;
  return v;
}

function withoutPath(object: Mutable, path: string): Mutable {
  const patch: Record<string, unknown> = {};
  let cursor = patch;
  const parts = path.split(SEP);
  parts.forEach((part, i) => {
    cursor[part] = i === parts.length - 1 ? null : {};
    cursor = cursor[part] as Record<string, unknown>;
  });
  return applyMergePatch(object, patch) as Mutable;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
