/**
 * A JSON Patch (RFC 6902) from one manifest object to another, for the kustomize components of the install artifacts
 * (tools/release.ts). Written here rather than taken from a library because the patches must compose: each component
 * is diffed against the base alone, and a user may apply several. Generic diff libraries replace array elements by index
 * when an array grows or shrinks (`replace /env/5`), which breaks as soon as another component changed the same array.
 * This diff appends what a variant adds at the end of an array (`add …/-`, which every other component's additions
 * leave valid), removes what it drops with a `test` of the exact element before each `remove` (so a base that moved
 * under it fails loudly instead of removing the wrong rule), and replaces an array whole only when neither holds.
 */

/** One operation of a JSON Patch. */
export type PatchOperation =
  | { readonly op: 'add'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string }
  | { readonly op: 'replace'; readonly path: string; readonly value: unknown }
  | { readonly op: 'test'; readonly path: string; readonly value: unknown };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
const pointer = (path: string, key: string | number): string => `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (isObject(value)) return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k])]));
  return value;
}

/** Indices of `small`'s elements in `large`, in order, if `small` is a subsequence of `large`. */
function subsequence(small: readonly unknown[], large: readonly unknown[]): number[] | undefined {
  const at: number[] = [];
  let j = 0;
  for (const element of small) {
    while (j < large.length && !same(element, large[j])) j++;
    if (j === large.length) return undefined;
    at.push(j++);
  }
  return at;
}

/** The `name` of each element, when every element is an object with one (containers, env, ports, volumes). */
const names = (list: readonly unknown[]): string[] | undefined => (list.every((e) => isObject(e) && typeof e.name === 'string') ? list.map((e) => (e as { name: string }).name) : undefined);

function diffArray(path: string, from: readonly unknown[], to: readonly unknown[], ops: PatchOperation[]): void {
  // The same named elements in the same order (a container whose env grew): diffed element by element.
  const fromNames = names(from);
  if (fromNames && from.length === to.length && JSON.stringify(fromNames) === JSON.stringify(names(to))) {
    from.forEach((element, i) => diffValue(pointer(path, i), element, to[i], ops));
    return;
  }
  const kept = subsequence(from, to);
  // Only additions: inserted where the variant has them (after the base's last element: appended with `-`, which
  // composes with other components' additions).
  if (kept) {
    const last = kept.length > 0 ? kept[kept.length - 1] : -1;
    to.forEach((element, i) => {
      if (!kept.includes(i)) ops.push({ op: 'add', path: i > last ? `${path}/-` : pointer(path, i), value: element });
    });
    return;
  }
  const left = subsequence(to, from);
  if (left) {
    const gone = from.map((_, i) => i).filter((i) => !left.includes(i)).reverse();
    for (const i of gone) ops.push({ op: 'test', path: pointer(path, i), value: from[i] }, { op: 'remove', path: pointer(path, i) });
    return;
  }
  ops.push({ op: 'test', path, value: from }, { op: 'replace', path, value: to });
}

function diffValue(path: string, from: unknown, to: unknown, ops: PatchOperation[]): void {
  if (same(from, to)) return;
  if (Array.isArray(from) && Array.isArray(to)) return diffArray(path, from, to, ops);
  if (isObject(from) && isObject(to)) {
    for (const key of Object.keys(from)) if (!(key in to)) ops.push({ op: 'remove', path: pointer(path, key) });
    for (const [key, value] of Object.entries(to)) {
      if (!(key in from)) ops.push({ op: 'add', path: pointer(path, key), value });
      else diffValue(pointer(path, key), from[key], value, ops);
    }
    return;
  }
  ops.push({ op: 'replace', path, value: to });
}

/** The JSON Patch that turns `from` into `to` (empty when they are equal). */
export function jsonPatch(from: unknown, to: unknown): PatchOperation[] {
  const ops: PatchOperation[] = [];
  diffValue('', from, to, ops);
  return ops;
}
