/**
 * Server-side apply's field ownership, for the fake API server (./fake-api-server.ts), as the API server keeps it in
 * `managedFields`: every write makes its field manager the owner of the leaves it set (lists are atomic leaves); an
 * apply fails with 409 on a leaf another manager owns whose value it would change, unless forced (then it takes the
 * leaf over); and an apply removes the leaves its manager owned and no longer applies, when no other manager owns them.
 */
import { jsonEqual } from '../../../src/kube/json';

type Json = Record<string, unknown>;

/** Joins a leaf's path segments: not `.`, which Secret keys such as `clouds.yaml` contain. */
const SEP = '\u0000';
/** The fields that name the object, owned by nobody. */
const IDENTITY = new Set(['apiVersion', 'kind', `metadata${SEP}name`, `metadata${SEP}namespace`]);
/** The fields the server sets, owned by nobody. */
const SERVER_SET = new Set(['status', ...['resourceVersion', 'uid', 'generation', 'creationTimestamp', 'deletionTimestamp', 'managedFields'].map((f) => `metadata${SEP}${f}`)]);
const serverSet = (path: string): boolean => [...SERVER_SET].some((p) => path === p || path.startsWith(`${p}${SEP}`));

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The leaves of an object: `path → value`, lists as leaves (an empty object sets nothing, and owns nothing). */
export function leavesOf(value: unknown, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!isObject(value)) {
    if (prefix !== '' && !IDENTITY.has(prefix) && !serverSet(prefix)) out.set(prefix, value);
    return out;
  }
  for (const [k, v] of Object.entries(value)) for (const [path, leaf] of leavesOf(v, prefix ? `${prefix}${SEP}${k}` : k)) out.set(path, leaf);
  return out;
}

export function valueAt(object: unknown, path: string): unknown {
  let v: unknown = object;
  for (const part of path.split(SEP)) v = isObject(v) ? v[part] : undefined;
  return v;
}

/** `object` without the leaf at `path` (and without objects it leaves empty). */
export function without(object: Json, path: string): Json {
  const [head, ...rest] = path.split(SEP);
  const copy = { ...object };
  if (rest.length === 0) delete copy[head];
  else if (isObject(copy[head])) {
    const inner = without(copy[head], rest.join(SEP));
    if (Object.keys(inner).length === 0) delete copy[head];
    else copy[head] = inner;
  }
  return copy;
}

/** A path as the API server names a field in a conflict: `.data.clouds.yaml`. */
export const fieldName = (path: string): string => `.${path.split(SEP).join('.')}`;

export class FieldOwners {
  /** Object key → leaf path → manager. */
  private readonly owners = new Map<string, Map<string, string>>();

  /** A write by `manager` (a create, an update, a merge patch): it owns the leaves `written` holds (paths as keys, when `flat`). */
  wrote(key: string, written: unknown, manager: string, flat = false): void {
    const owners = this.owners.get(key) ?? new Map<string, string>();
    for (const path of flat ? Object.keys(written as Json) : leavesOf(written).keys()) owners.set(path, manager);
    this.owners.set(key, owners);
  }

  /** The leaves an apply of `config` by `manager` would change that another manager owns, by that manager. */
  conflicts(key: string, stored: unknown, config: unknown, manager: string): { readonly path: string; readonly owner: string }[] {
    const owners = this.owners.get(key) ?? new Map<string, string>();
    return [...leavesOf(config)].flatMap(([path, value]) => {
      const owner = owners.get(path);
      return owner !== undefined && owner !== manager && !jsonEqual(valueAt(stored, path), value) ? [{ path, owner }] : [];
    });
  }

  /** An apply of `config` by `manager` is done: the leaves it owned and no longer sets, to remove, and its new leaves. */
  applied(key: string, config: unknown, manager: string): string[] {
    const owners = this.owners.get(key) ?? new Map<string, string>();
    const now = leavesOf(config);
    const dropped = [...owners].filter(([path, owner]) => owner === manager && !now.has(path)).map(([path]) => path);
    for (const path of dropped) owners.delete(path);
    for (const path of now.keys()) owners.set(path, manager);
    this.owners.set(key, owners);
    return dropped;
  }

  /** The object is gone. */
  forget(key: string): void {
    this.owners.delete(key);
  }
}
