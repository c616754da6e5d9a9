/**
 * JSON value helpers: equality as the API server would see it (undefined fields are absent), and the JSON merge patch
 * (RFC 7386) that turns one value into another.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An own property's value (never an inherited one such as `__proto__`). */
const own = (o: Record<string, unknown>, key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined);

/** Sets an own property, also for a key such as `__proto__` that plain assignment would not create. */
function set(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The value as JSON would carry it: undefined fields dropped. */
export function normalize(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as Json);
}

/** Deep equality of two JSON values; object key order and undefined fields do not matter. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      if (!jsonEqual(own(a, k), own(b, k))) return false;
    }
    return true;
  }
  return false;
}

/**
 * The JSON merge patch that turns `from` into `to`: changed fields set, removed fields null, arrays replaced whole.
 * Undefined when they are equal.
 */
export function mergePatch(from: unknown, to: unknown): unknown {
  if (jsonEqual(from, to)) return undefined;
  if (!isPlainObject(from) || !isPlainObject(to)) return to === undefined ? null : normalize(to);
  const patch: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(from), ...Object.keys(to)])) {
    if (own(to, key) === undefined) {
      if (own(from, key) !== undefined) set(patch, key, null);
      continue;
    }
    const sub = mergePatch(own(from, key), own(to, key));
    if (sub !== undefined) set(patch, key, sub);
  }
  return patch;
}

/** Applies a JSON merge patch (RFC 7386) to a value. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return normalize(patch);
  const out: Record<string, unknown> = {};
  if (isPlainObject(target)) for (const [key, value] of Object.entries(target)) set(out, key, value);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else set(out, key, applyMergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value));
  }
  return out;
}
