/**
 * An in-memory store of one kind's objects by key, with a namespace index, label matching and named custom indexes. It
 * is the informers' cache (and the in-memory cluster's storage): every read of a reconciler is served from here.
 */
import { keyOf, objectKey, type KubeObject, type ObjectKey } from './object';

/** An index function: the values under which an object is found (e.g. the key of the ControlPlane an order names). */
export type IndexFunction<T extends KubeObject = KubeObject> = (object: T) => readonly string[];

/** Which objects a list returns; every given criterion must hold. */
export interface ListOptions {
  /** Only this namespace. @default every namespace */
  readonly namespace?: string;
  /** Only objects carrying every one of these labels with these values. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Only objects the named index maps to `value` (see {@link Store.addIndex}). */
  readonly index?: { readonly name: string; readonly value: string };
  /**
   * Only objects whose field at each dotted path (e.g. `spec.userRef.name`) is this string, like a field selector. The
   * store indexes a path on its first use, so a steady reconciler reads only what it selects.
   */
  readonly fields?: Readonly<Record<string, string>>;
}

/** The string at a dotted path of an object, or undefined when there is none there. */
export function fieldOf(object: unknown, path: string): string | undefined {
  let value: unknown = object;
  for (const step of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return typeof value === 'string' ? value : undefined;
}

/** Whether the object's field at every path of `selector` is the given string. */
export function matchesFields(object: unknown, selector: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector).every(([path, value]) => fieldOf(object, path) === value);
}

/** What replacing the whole content changed. */
export interface ReplaceResult<T> {
  readonly added: readonly T[];
  readonly updated: readonly { readonly old: T; readonly current: T }[];
  readonly deleted: readonly T[];
}

/** Whether `labels` carries every entry of `selector`. */
export function matchesLabels(labels: Readonly<Record<string, string>> | undefined, selector: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** The equality-based label selector string of `labels` (`a=b,c=d`). */
export function labelSelector(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** What readers of a cache use: a {@link Store}, or a {@link MergedStore} of several. */
export interface StoreReader<T extends KubeObject = KubeObject> {
  /** The number of objects. */
  readonly size: number;
  get(namespace: string | undefined, name: string): T | undefined;
  /** The keys of the objects, in no particular order. */
  keys(): ObjectKey[];
  /** The objects matching `options`, sorted by key. */
  list(options?: ListOptions): T[];
}

export class Store<T extends KubeObject = KubeObject> implements StoreReader<T> {
  private readonly objects = new Map<ObjectKey, T>();
  private readonly byNamespace = new Map<string, Set<ObjectKey>>();
  /** Every `key=value` label pair to the objects carrying it, so a label selector reads only what it selects. */
  private readonly byLabel = new Map<string, Set<ObjectKey>>();
  private readonly indexes = new Map<string, { readonly fn: IndexFunction<T>; readonly values: Map<string, Set<ObjectKey>> }>();
  /** The index of each field path a list selected by, by path. */
  private readonly fieldIndexes = new Map<string, Map<string, Set<ObjectKey>>>();

  /** The number of objects. */
  get size(): number {
    return this.objects.size;
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.objects.get(objectKey(namespace, name));
  }

  getByKey(key: ObjectKey): T | undefined {
    return this.objects.get(key);
  }

  keys(): ObjectKey[] {
    return [...this.objects.keys()];
  }

  /** The objects matching `options`, sorted by key (so callers see a stable order). */
  list(options: ListOptions = {}): T[] {
    let keys: Iterable<ObjectKey>;
    const index = options.index ? this.indexes.get(options.index.name) : undefined;
    if (options.index && !index) throw new Error(`no index named ${options.index.name} (add it with addIndex before listing by it)`);
    const fields = options.fields && Object.keys(options.fields).length > 0 ? options.fields : undefined;
    if (fields) {
      // The smallest of the paths' sets; the loop below checks the other criteria.
      keys = Object.entries(fields)
        .map(([path, value]) => this.fieldIndex(path).get(value) ?? new Set<ObjectKey>())
        .reduce((a, b) => (b.size < a.size ? b : a));
    } else if (index && options.index) {
      keys = index.values.get(options.index.value) ?? [];
    } else if (options.labels && Object.keys(options.labels).length > 0) {
      // The smallest of the selector's label sets; the loop below checks the namespace and the other labels.
      keys = Object.entries(options.labels)
        .map(([k, v]) => this.byLabel.get(labelPair(k, v)) ?? new Set<ObjectKey>())
        .reduce((a, b) => (b.size < a.size ? b : a));
    } else if (options.namespace !== undefined) {
      keys = this.byNamespace.get(options.namespace) ?? [];
    } else {
      keys = this.objects.keys();
    }
    const out: T[] = [];
    for (const key of [...keys].sort()) {
      const object = this.objects.get(key);
      if (!object) continue;
      if (options.namespace !== undefined && (object.metadata.namespace ?? '') !== options.namespace) continue;
      if (options.labels && !matchesLabels(object.metadata.labels, options.labels)) continue;
      if (index && options.index && !index.fn(object).includes(options.index.value)) continue;
      if (fields && !matchesFields(object, fields)) continue;
      out.push(object);
    }
    return out;
  }

  /** Adds a named index over the current and future objects. Adding the same name twice with the same function is a no-op. */
  addIndex(name: string, fn: IndexFunction<T>): void {
    const existing = this.indexes.get(name);
    if (existing) {
      if (existing.fn !== fn) throw new Error(`index ${name} is already defined with another function`);
      return;
    }
    const values = new Map<string, Set<ObjectKey>>();
    this.indexes.set(name, { fn, values });
    for (const [key, object] of this.objects) add(values, fn(object), key);
  }

  /**
   * The index of a field path, built on first use over the current objects and kept up to date after. Building it is
   * synchronous (no await between creating the map and filling it), so concurrent passes never see it half-built: the
   * event loop runs one pass's synchronous code at a time, and informer updates apply between passes' steps.
   */
  private fieldIndex(path: string): Map<string, Set<ObjectKey>> {
    let values = this.fieldIndexes.get(path);
    if (!values) {
      values = new Map();
      this.fieldIndexes.set(path, values);
      for (const [key, object] of this.objects) add(values, fieldValues(object, path), key);
    }
    return values;
  }

  /** Inserts or replaces an object; returns the one it replaced. */
  upsert(object: T): T | undefined {
    const key = keyOf(object);
    const old = this.objects.get(key);
    if (old) this.unindex(key, old);
    this.objects.set(key, object);
    add(this.byNamespace, [object.metadata.namespace ?? ''], key);
    add(this.byLabel, labelPairs(object), key);
    for (const { fn, values } of this.indexes.values()) add(values, fn(object), key);
    for (const [path, values] of this.fieldIndexes) add(values, fieldValues(object, path), key);
    return old;
  }

  /** Removes an object by key; returns it. */
  remove(key: ObjectKey): T | undefined {
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.objects.delete(key);
    return old;
  }

  /** Replaces the whole content (a relist) and reports the difference; an object whose resourceVersion is unchanged is not "updated". */
  replace(items: readonly T[]): ReplaceResult<T> {
    const seen = new Set<ObjectKey>();
    const added: T[] = [];
    const updated: { old: T; current: T }[] = [];
    for (const item of items) {
      const key = keyOf(item);
      seen.add(key);
      const old = this.upsert(item);
      if (!old) added.push(item);
      else if (old.metadata.resourceVersion !== item.metadata.resourceVersion) updated.push({ old, current: item });
    }
    const deleted: T[] = [];
    for (const key of this.keys()) {
      if (seen.has(key)) continue;
      const old = this.remove(key);
      if (old) deleted.push(old);
    }
    return { added, updated, deleted };
  }

  private unindex(key: ObjectKey, object: T): void {
    remove(this.byNamespace, [object.metadata.namespace ?? ''], key);
    remove(this.byLabel, labelPairs(object), key);
    for (const { fn, values } of this.indexes.values()) remove(values, fn(object), key);
    for (const [path, values] of this.fieldIndexes) remove(values, fieldValues(object, path), key);
  }
}

const fieldValues = (object: KubeObject, path: string): string[] => {
  const value = fieldOf(object, path);
  return value === undefined ? [] : [value];
};

const labelPair = (key: string, value: string): string => `${key}=${value}`;
const labelPairs = (object: KubeObject): string[] => Object.entries(object.metadata.labels ?? {}).map(([k, v]) => labelPair(k, v));

function add(map: Map<string, Set<ObjectKey>>, values: readonly string[], key: ObjectKey): void {
  for (const value of values) {
    let set = map.get(value);
    if (!set) map.set(value, (set = new Set()));
    set.add(key);
  }
}

function remove(map: Map<string, Set<ObjectKey>>, values: readonly string[], key: ObjectKey): void {
  for (const value of values) {
    const set = map.get(value);
    if (!set) continue;
    set.delete(key);
    if (set.size === 0) map.delete(value);
  }
}

/** Which of two copies of one object is newer: resourceVersions are opaque, but the API server's are increasing integers. */
export function newerOf<T extends KubeObject>(a: T, b: T): T {
  const x = a.metadata.resourceVersion ?? '';
  const y = b.metadata.resourceVersion ?? '';
  if (a.metadata.uid !== b.metadata.uid || !/^\d+$/.test(x) || !/^\d+$/.test(y)) return a;
  return BigInt(y) > BigInt(x) ? b : a;
}

/**
 * One kind cached in parts (e.g. one informer per label selection), read as one store. The parts may overlap (an object
 * carrying two selected labels, or one moving from one part to another while its watches catch up): a key is one
 * object, the newest copy the parts hold.
 */
export class MergedStore<T extends KubeObject = KubeObject> implements StoreReader<T> {
  constructor(private readonly parts: readonly StoreReader<T>[]) {}

  get size(): number {
    return this.keys().length;
  }

  get(namespace: string | undefined, name: string): T | undefined {
    let found: T | undefined;
    for (const part of this.parts) {
      const object = part.get(namespace, name);
      if (object) found = found ? newerOf(found, object) : object;
    }
    return found;
  }

  keys(): ObjectKey[] {
    return [...new Set(this.parts.flatMap((part) => part.keys()))];
  }

  list(options: ListOptions = {}): T[] {
    const byKey = new Map<ObjectKey, T>();
    for (const part of this.parts) {
      for (const object of part.list(options)) {
        const key = keyOf(object);
        const seen = byKey.get(key);
        byKey.set(key, seen ? newerOf(seen, object) : object);
      }
    }
    return [...byKey.keys()].sort().map((key) => byKey.get(key) as T);
  }
}
