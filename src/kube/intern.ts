/**
 * One copy of each short string the caches hold. A list or a watch event is parsed into fresh strings, so every cached
 * object carried its own copy of what thousands of them share: the namespace, the kind and apiVersion, the finalizer,
 * the label keys' values, the conditions' types, reasons and messages, the delivered Secret's key names, timestamps of
 * one second. V8 keeps one copy of every string used as a property name (its string table, which forgets a string no
 * one holds any more), so a value read back as a property name is that shared copy. Measured in a bare script on
 * 10,000 copies of a converged order and its two Secrets as the API server returns them: 3,881 bytes of heap per order,
 * 2,000 to 2,109 interned (about 35 MiB less at 20,000 orders), for 17 to 21 µs more CPU per order when its objects
 * enter the cache (a list, a watch event), never on a resync.
 */

/** Longer strings (a Secret's data, a certificate) are rarely equal between objects: kept as they are. */
const LONGEST_INTERNED = 64;

/** A string that is an array index as a property name is not kept in the string table: kept as it is. */
const INDEX = /^\d+$/;

/** The shared copy of `value` (equal to it), or `value` itself when it is long or an index. */
export function internString(value: string): string {
  if (value.length > LONGEST_INTERNED || INDEX.test(value)) return value;
  for (const key in { [value]: 0 }) return key;
  return value;
}

/**
 * A JSON value (a Kubernetes object as parsed) with its short strings shared ({@link internString}): in place, each
 * string replaced by an equal one, so that an object keeps the compact layout the parser gave it (a copy built property
 * by property spilled its properties into a second array: 0.8 MiB more at 2,000 orders, a heap snapshot); no reader can
 * tell. A frozen object or array (the in-memory cluster's) is copied instead; anything but plain objects and arrays is
 * kept as it is.
 */
export function interned<T>(value: T): T {
  if (typeof value === 'string') return internString(value) as T;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    if (Object.isFrozen(value)) return value.map((item: unknown) => interned(item)) as T;
    for (let i = 0; i < value.length; i++) value[i] = interned(value[i] as unknown);
    return value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const record = value as Record<string, unknown>;
  if (!Object.isFrozen(record)) {
    for (const key of Object.keys(record)) {
      const item = record[key];
      const shared = interned(item);
      // A string is always written back: an equal string is `===`, yet it may be another copy.
      if (typeof item === 'string' || shared !== item) {
        // A Secret's data may have a key `__proto__`: an assignment would set the prototype instead.
        if (key === '__proto__') Object.defineProperty(record, key, { value: shared, enumerable: true, writable: true, configurable: true });
        else record[key] = shared;
      }
    }
    return value;
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    const item = interned(record[key]);
    if (key === '__proto__') Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy as T;
}
