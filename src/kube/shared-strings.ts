/**
 * One copy of the strings that thousands of cached objects repeat. A list or a watch event is parsed into fresh
 * strings, so each cached order and each of its Secrets carried its own copy of its namespace, its kind and apiVersion,
 * its finalizer, its owner's apiVersion and kind, its labels' values, its conditions' types, reasons and messages and
 * their timestamps (about 800 bytes an order at 20,000 orders, docs/benchmarks-operator.md).
 *
 * Only those fields are shared, in a copy of the containers on their paths (the object as listed or watched is never
 * changed: the in-memory cluster's are frozen), so an object that enters the cache costs a few map lookups and a
 * resync, which reads the cached objects and copies none, costs nothing more. (An earlier try shared every short string
 * of the object in place, through V8's string table, and measured 41 % more CPU per resync: docs/benchmarks-operator.md.)
 *
 * The pool is bounded: two generations of {@link POOL_GENERATION} strings, the former read through (a hit moves to the
 * current one), so the values in use stay shared and the ones no object holds any more fall out with the former
 * generation. No library keeps a bounded pool of equal strings; a Map is all it takes.
 */
import type { KubeObject, OwnerReference } from './object';

/** Strings longer than this (a message naming much, a certificate) are kept as they are. */
const LONGEST_SHARED = 160;
const POOL_GENERATION = 16_384;

let current = new Map<string, string>();
let former = new Map<string, string>();

/** The pool's copy of `value` (equal to it), or `value` itself, now pooled, or too long to be. */
export function sharedString(value: string): string {
  if (value.length > LONGEST_SHARED) return value;
  let found = current.get(value);
  if (found !== undefined) return found;
  found = former.get(value) ?? value;
  if (current.size >= POOL_GENERATION) [former, current] = [current, new Map()];
  current.set(found, found);
  return found;
}

/** A string field, shared; anything else (absent, not a string) as it is. */
const share = <V>(value: V): V => (typeof value === 'string' ? (sharedString(value) as V) : value);

/** A condition as the status conditions of every kind here carry it. */
interface ConditionLike {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly reason?: unknown;
  readonly message?: unknown;
  readonly lastTransitionTime?: unknown;
}

/**
 * An equal copy of `object` whose repeated strings are the pool's: kind, apiVersion, namespace, finalizers, label
 * values, owner references' apiVersion and kind, creationTimestamp, the status conditions' strings and the status's
 * lists of strings. Every other field is the object's own (the same value, not a copy); a Secret's data is never
 * touched.
 */
export function withSharedStrings<T extends KubeObject>(object: T): T {
  const meta = object.metadata;
  const labels = meta.labels;
  const owners = meta.ownerReferences;
  const metadata = {
    ...meta,
    ...(meta.namespace !== undefined ? { namespace: sharedString(meta.namespace) } : {}),
    ...(meta.creationTimestamp !== undefined ? { creationTimestamp: sharedString(meta.creationTimestamp) } : {}),
    ...(meta.finalizers ? { finalizers: meta.finalizers.map(sharedString) } : {}),
    ...(labels ? { labels: sharedValues(labels) } : {}),
    ...(owners ? { ownerReferences: owners.map((o): OwnerReference => ({ ...o, apiVersion: sharedString(o.apiVersion), kind: sharedString(o.kind) })) } : {}),
  };
  const status = (object as { readonly status?: Readonly<Record<string, unknown>> }).status;
  return {
    ...object,
    apiVersion: share(object.apiVersion),
    kind: share(object.kind),
    metadata,
    ...(status && typeof status === 'object' ? { status: sharedStatus(status) } : {}),
  };
}

/**
 * A status with its conditions' strings and its lists of strings (e.g. an order's `secretKeys`) shared; its other
 * fields as they are.
 */
function sharedStatus(status: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...status };
  for (const [field, value] of Object.entries(status)) {
    if (!Array.isArray(value)) continue;
    if (field === 'conditions')
      copy[field] = (value as readonly ConditionLike[]).map((c) =>
        typeof c !== 'object' || c === null
          ? c
          : {
              ...c,
              ...(c.type !== undefined ? { type: share(c.type) } : {}),
              ...(c.status !== undefined ? { status: share(c.status) } : {}),
              ...(c.reason !== undefined ? { reason: share(c.reason) } : {}),
              ...(c.message !== undefined ? { message: share(c.message) } : {}),
              ...(c.lastTransitionTime !== undefined ? { lastTransitionTime: share(c.lastTransitionTime) } : {}),
            },
      );
    else if (value.every((v) => typeof v === 'string')) copy[field] = (value as readonly string[]).map(sharedString);
  }
  return copy;
}

/**
 * A copy of a string map with its values shared (the keys, property names, are shared by V8 already). Spread, then
 * overwritten: the copy has the original's shape (a copy built key by key spills past four keys into a second array).
 */
function sharedValues(values: Readonly<Record<string, string>>): Record<string, string> {
  const copy: Record<string, string> = { ...values };
  for (const key of Object.keys(values)) {
    // A label key `__proto__` is a key, not the prototype: defined, never assigned.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: share(values[key]), enumerable: true, writable: true, configurable: true });
    else copy[key] = share(values[key]);
  }
  return copy;
}
