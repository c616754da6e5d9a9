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
  for (const path in selector) if (fieldOf(object, path) !== selector[path]) return false;
  return true;
}

/** What replacing the whole content changed. */
export interface ReplaceResult<T> {
  readonly added: readonly T[];
  readonly updated: readonly { readonly old: T; readonly current: T }[];
  readonly deleted: readonly T[];
}

/** Whether `labels` carries every entry of `selector`. */
export function matchesLabels(labels: Readonly<Record<string, string>> | undefined, selector: Readonly<Record<string, string>>): boolean {
  for (const k in selector) if (labels?.[k] !== selector[k]) return false;
  return true;
}

/** Whether a selector has any entry (without making the array of its keys). */
function hasEntries(selector: Readonly<Record<string, string>>): boolean {
  for (const _ in selector) return true;
  return false;
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
  private readonly byNamespace: Index = new Map();
  /** Every label key to each of its values to the objects carrying it, so a label selector reads only what it selects. */
  private readonly byLabel = new Map<string, Index>();
  private readonly indexes = new Map<string, { readonly fn: IndexFunction<T>; readonly values: Index }>();
  /** The index of each field path a list selected by, by path. */
  private readonly fieldIndexes = new Map<string, Index>();

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

  /** Every object, in no particular order (a resync hands each to its handlers; sorting 20,000 keys would be its own cost). */
  values(): T[] {
    return [...this.objects.values()];
  }

  /**
   * The objects matching `options`, sorted by key (so callers see a stable order). A resync lists an order's children
   * and role assignments on every pass, so a list allocates only its result: the candidates are one index value's keys
   * (kept sorted, see {@link add}), and the criteria are checked without copying the selectors.
   */
  list(options: ListOptions = {}): T[] {
    const index = options.index ? this.indexes.get(options.index.name) : undefined;
    if (options.index && !index) throw new Error(`no index named ${options.index.name} (add it with addIndex before listing by it)`);
    const fields = options.fields && hasEntries(options.fields) ? options.fields : undefined;
    const labels = options.labels && hasEntries(options.labels) ? options.labels : undefined;
    let candidates: Keys | undefined;
    if (fields) {
      // The smallest of the paths' sets; the checks below look at the other criteria.
      let first = true;
      for (const path in fields) {
        candidates = fewer(candidates, this.fieldIndex(path).get(fields[path]), first);
        first = false;
      }
    } else if (index && options.index) {
      candidates = index.values.get(options.index.value);
    } else if (labels) {
      // The smallest of the selector's label sets; the checks below look at the namespace and the other labels.
      let first = true;
      for (const k in labels) {
        candidates = fewer(candidates, this.byLabel.get(k)?.get(labels[k]), first);
        first = false;
      }
    } else if (options.namespace !== undefined) {
      candidates = this.byNamespace.get(options.namespace);
    } else {
      candidates = new Set(this.objects.keys());
    }
    const out: T[] = [];
    const take = (key: ObjectKey): void => {
      const object = this.objects.get(key);
      if (!object) return;
      if (options.namespace !== undefined && (object.metadata.namespace ?? '') !== options.namespace) return;
      if (labels && !matchesLabels(object.metadata.labels, labels)) return;
      if (index && options.index && !index.fn(object).includes(options.index.value)) return;
      if (fields && !matchesFields(object, fields)) return;
      out.push(object);
    };
    if (candidates === undefined) return out;
    if (typeof candidates === 'string') take(candidates);
    else if (Array.isArray(candidates)) for (const key of candidates as readonly ObjectKey[]) take(key);
    else for (const key of [...(candidates as Set<ObjectKey>)].sort()) take(key);
    return out;
  }

  /** Adds a named index over the current and future objects. Adding the same name twice with the same function is a no-op. */
  addIndex(name: string, fn: IndexFunction<T>): void {
    const existing = this.indexes.get(name);
    if (existing) {
      if (existing.fn !== fn) throw new Error(`index ${name} is already defined with another function`);
      return;
    }
    const values: Index = new Map();
    this.indexes.set(name, { fn, values });
    for (const [key, object] of this.objects) add(values, fn(object), key);
  }

  /**
   * The index of a field path, built on first use over the current objects and kept up to date after. Building it is
   * synchronous (no await between creating the map and filling it), so concurrent passes never see it half-built: the
   * event loop runs one pass's synchronous code at a time, and informer updates apply between passes' steps.
   */
  private fieldIndex(path: string): Index {
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
    for (const [k, v] of Object.entries(object.metadata.labels ?? {})) {
      let values = this.byLabel.get(k);
      if (!values) this.byLabel.set(k, (values = new Map()));
      add(values, [v], key);
    }
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
    for (const [k, v] of Object.entries(object.metadata.labels ?? {})) {
      const values = this.byLabel.get(k);
      if (!values) continue;
      remove(values, [v], key);
      if (values.size === 0) this.byLabel.delete(k);
    }
    for (const { fn, values } of this.indexes.values()) remove(values, fn(object), key);
    for (const [path, values] of this.fieldIndexes) remove(values, fieldValues(object, path), key);
  }
}

const fieldValues = (object: KubeObject, path: string): string[] => {
  const value = fieldOf(object, path);
  return value === undefined ? [] : [value];
};

/**
 * The keys of the objects under one index value: the key itself while there is one, an array of a few, a Set of many.
 * Most values of a cache of orders and their Secrets name one order's objects (one to three keys: an order's name
 * label); a Set each cost about 380 bytes an order in the Secrets' label index alone, 7 MiB at 20,000 orders
 * (docs/benchmarks-operator.md). The arrays are made anew at each change, so each is exactly as long as it needs.
 */
type Keys = ObjectKey | readonly ObjectKey[] | Set<ObjectKey>;

/** An index: each value to the keys of the objects under it. The value strings are the objects' own (none made). */
type Index = Map<string, Keys>;

/** Above this many keys under one value, a Set (an array's `includes` and removal cost its length). */
const ARRAY_MAX = 8;

function add(map: Index, values: readonly string[], key: ObjectKey): void {
  for (const value of values) {
    const keys = map.get(value);
    if (keys === undefined) map.set(value, key);
    else if (typeof keys === 'string') {
      if (keys !== key) map.set(value, keys < key ? [keys, key] : [key, keys]);
    } else if (Array.isArray(keys)) {
      const few = keys as readonly ObjectKey[];
      if (few.includes(key)) continue;
      if (few.length >= ARRAY_MAX) map.set(value, new Set([...few, key]));
      else {
        // Sorted as it is made, so that a list reads it in key order without sorting a copy.
        const at = few.findIndex((k) => k > key);
        map.set(value, at < 0 ? [...few, key] : [...few.slice(0, at), key, ...few.slice(at)]);
      }
    } else (keys as Set<ObjectKey>).add(key);
  }
}

function remove(map: Index, values: readonly string[], key: ObjectKey): void {
  for (const value of values) {
    const keys = map.get(value);
    if (keys === undefined) continue;
    if (typeof keys === 'string') {
      if (keys === key) map.delete(value);
    } else if (Array.isArray(keys)) {
      const rest = (keys as readonly ObjectKey[]).filter((k) => k !== key);
      if (rest.length === 0) map.delete(value);
      else map.set(value, rest.length === 1 ? rest[0] : rest);
    } else {
      const set = keys as Set<ObjectKey>;
      set.delete(key);
      if (set.size === 0) map.delete(value);
    }
  }
}

const sizeOf = (keys: Keys | undefined): number => (keys === undefined ? 0 : typeof keys === 'string' ? 1 : Array.isArray(keys) ? keys.length : (keys as Set<ObjectKey>).size);

/**
 * The fewer of two criteria's keys (`first`: `b` is the first criterion's, taken as it is): every criterion must hold,
 * and the checks of a list look at the others.
 */
function fewer(a: Keys | undefined, b: Keys | undefined, first: boolean): Keys | undefined {
  return first || sizeOf(b) < sizeOf(a) ? b : a;
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
    // Most lists find their objects in one part (an order's Secrets are all its own): that part's list is the answer.
    let first: T[] | undefined;
    let found: T[][] | undefined;
    for (const part of this.parts) {
      const list = part.list(options);
      if (list.length === 0) continue;
      if (!first) first = list;
      else (found ??= [first]).push(list);
    }
    if (!found) return first ?? [];
    const byKey = new Map<ObjectKey, T>();
    for (const list of found) {
      for (const object of list) {
        const key = keyOf(object);
        const seen = byKey.get(key);
        byKey.set(key, seen ? newerOf(seen, object) : object);
      }
    }
    return [...byKey.keys()].sort().map((key) => byKey.get(key) as T);
  }
}
