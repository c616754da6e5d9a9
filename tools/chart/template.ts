/**
 * Helm templates from the constructs, by synthesis alone: no template is written by hand. The constructs are
 * synthesized for the chart's default values and again with every value changed, and the templates say what changed:
 *
 * - a **scalar** value (a string or number that only changes text: the image, a port, a quantity, the log level) is
 *   found in the leaves it changed, and those leaves become Helm expressions (`{{ $.Values.logLevel }}`, or a `printf`
 *   of the leaf's text with the value in its place: `{{ printf "%s:%s" ... }}`);
 * - a **switch** (a boolean, an enum, a factory's `method`, an optional string set or not) changes objects: each of its
 *   other settings is synthesized, compared with the defaults' objects (maps by key, lists by their longest common
 *   subsequence), and what it adds or removes is wrapped in `{{- if ... }}`;
 * - a **list** (`secretNamespaces`, `sourceSecrets`) adds objects for each item: they are synthesized for one probe item
 *   and repeated with `{{- range $item := ... }}`.
 *
 * The result renders, for any values, what the constructs synthesize for them (test/e2e/helm-chart.test.ts compares
 * `helm template` with the constructs for the default values and for every switch and list). A value the synthesis cannot
 * place (a leaf that two values change in a way this cannot tell apart) stops the generator with an error naming it.
 */
import { stringify } from 'yaml';
import { type Value, type Values } from './values';

/** A synthesis: the objects the constructs make for some values. */
export type Render = (values: Values) => readonly Json[];
export type Json = Value;

/** A value's place in the values, e.g. `openBao.auth.role`. */
export interface Setting {
  readonly path: readonly string[];
  /** scalar: text in leaves; switch: objects change; list: objects per item. */
  readonly kind: 'scalar' | 'switch' | 'list';
  /** A switch's other settings; a list's probe item. */
  readonly members?: readonly Value[];
  /** A scalar's probe: a valid value unlike any other (an optional string set: its own probe when set). */
  readonly probe?: Value;
  /** An optional string: a switch between unset ("") and set, a scalar when set. */
  readonly optional?: boolean;
}

/** A template node: literal JSON, a Helm expression, or a map or list whose entries may be conditional. */
type Node =
  | { readonly t: 'lit'; readonly v: Json }
  | { readonly t: 'expr'; readonly text: string; readonly type: 'string' | 'json' }
  | { readonly t: 'map'; readonly entries: Entry[] }
  | { readonly t: 'seq'; readonly items: Item[] }
  | { readonly t: 'choice'; readonly cond: string; readonly then: Node; readonly otherwise: Node };
interface Entry {
  readonly key: string;
  node: Node;
  when?: string;
}
interface Item {
  node: Node;
  when?: string;
  /** The index of the item in the defaults' list; undefined for an item a switch adds. */
  readonly base?: number;
}
/** A document of the chart: its tree, its condition, its repetition. */
export interface Doc {
  readonly key: string;
  readonly kind: string;
  readonly name: string;
  node: Node;
  when?: string;
  range?: { readonly over: string; readonly var: string; readonly when?: string };
}

export const isMap = (v: Json): v is { [key: string]: Json } => v !== null && typeof v === 'object' && !Array.isArray(v);
export const deepEqual = (a: Json, b: Json): boolean => JSON.stringify(a) === JSON.stringify(b);
export const get = (values: Values, path: readonly string[]): Value => path.reduce<Value>((v, k) => (isMap(v) ? v[k] : null), values);
export function set(values: Values, path: readonly string[], value: Value): Values {
  const copy = JSON.parse(JSON.stringify(values)) as Values;
  let at: { [key: string]: Value } = copy;
  for (const k of path.slice(0, -1)) at = at[k] as { [key: string]: Value };
  at[path[path.length - 1]] = value;
  return copy;
}
/** The Helm expression of a value, from anywhere in a template (`$` is the root inside a range too). */
export const valueRef = (path: readonly string[]): string => `$.Values.${path.join('.')}`;
const and = (a: string | undefined, b: string): string => (a === undefined ? b : `and (${a}) (${b})`);
const not = (cond: string): string => (cond.startsWith('not ') ? cond.slice(4) : `not ${cond.includes(' ') ? `(${cond})` : cond}`);

/** The key that identifies an object across syntheses: its group, kind, namespace and name. */
export function keyOf(o: Json): string {
  const m = isMap(o) ? o : {};
  const meta = isMap(m.metadata ?? null) ? (m.metadata as { [key: string]: Json }) : {};
  return `${String(m.apiVersion).split('/').length > 1 ? String(m.apiVersion).split('/')[0] : ''}/${String(m.kind)}/${String(meta.namespace ?? '')}/${String(meta.name)}`;
}

/** Probe values: distinct from every default and from each other, and valid for the construct. */
export const PRIMES = [7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97];
export function probe(dflt: Value, i: number): Value {
  if (typeof dflt === 'number') return dflt + PRIMES[i % PRIMES.length];
  const text = String(dflt);
  if (/^https?:\/\//.test(text)) return `https://kac-p${i}-probe.example:8200`;
  const quantity = /^([0-9]+)(m|k|M|G|Ki|Mi|Gi)?$/.exec(text);
  if (quantity) return `${Number(quantity[1]) + PRIMES[i % PRIMES.length]}${quantity[2] ?? ''}`;
  return `kac-p${i}-probe`;
}
/** A probe compared as a whole leaf (a number or quantity could occur inside unrelated text), or found inside text. */
const wholeLeaf = (p: Value): boolean => typeof p !== 'string' || /^[0-9]/.test(p) || !p.startsWith('kac-p') && !p.startsWith('https://kac-p');

/** A context's scalar probes: the values to set and how each leaf that changes is expressed. */
interface Probe {
  readonly path: readonly string[];
  readonly ref: string;
  readonly dflt: Value;
  readonly value: Value;
}

/**
 * The template tree of objects `d` (synthesized for `values`) given `p` (synthesized with every probe set): each leaf
 * that differs becomes an expression of the probes found in it.
 */
function build(d: Json, p: Json, probes: readonly Probe[], where: string): Node {
  if (isMap(d) && isMap(p)) {
    if (!deepEqual(Object.keys(d), Object.keys(p))) throw new Error(`tools/chart: ${where}: the probes changed the keys (${Object.keys(d).join(',')} → ${Object.keys(p).join(',')})`);
    return { t: 'map', entries: Object.keys(d).map((key) => ({ key, node: build(d[key], p[key], probes, `${where}.${key}`) })) };
  }
  if (Array.isArray(d) && Array.isArray(p)) {
    if (d.length !== p.length) throw new Error(`tools/chart: ${where}: the probes changed the list's length`);
    return { t: 'seq', items: d.map((v, i) => ({ node: build(v, p[i], probes, `${where}[${i}]`), base: i })) };
  }
  if (deepEqual(d, p)) return { t: 'lit', v: d };
  const whole = probes.find((pr) => wholeLeaf(pr.value) && String(pr.value) === String(p) && String(pr.dflt) === String(d));
  if (whole) return typeof p === 'string' ? { t: 'expr', type: 'string', text: `include "keystone-appcred.string" ${whole.ref}` } : { t: 'expr', type: 'json', text: `toJson ${whole.ref}` };
  if (typeof p === 'string' && typeof d === 'string') {
    const found = probes.filter((pr) => !wholeLeaf(pr.value) && p.includes(String(pr.value)));
    const parts = found.reduce<string[]>((texts, pr) => texts.flatMap((t) => t.split(String(pr.value)).flatMap((piece, i) => (i === 0 ? [piece] : [`\u0000${probes.indexOf(pr)}`, piece]))), [p]);
    const rebuilt = parts.map((t) => (t.startsWith('\u0000') ? String(probes[Number(t.slice(1))].dflt) : t)).join('');
    if (found.length > 0 && rebuilt === d) {
      const args = parts.filter((t) => t.startsWith('\u0000')).map((t) => probes[Number(t.slice(1))].ref);
      const format = parts.map((t) => (t.startsWith('\u0000') ? '%s' : t.replace(/%/g, '%%'))).join('');
      return { t: 'expr', type: 'string', text: format === '%s' ? `include "keystone-appcred.string" ${args[0]}` : `include "keystone-appcred.string" (printf ${JSON.stringify(format)} ${args.join(' ')})` };
    }
  }
  throw new Error(`tools/chart: ${where}: ${JSON.stringify(d)} became ${JSON.stringify(p)}, which no value's probe explains`);
}

/** What makes two list items the same item: a map's `name` (a container, an env variable, a port), else all of it. */
const identity = (v: Json): string => (isMap(v) && typeof v.name === 'string' ? `name:${v.name}` : JSON.stringify(v));

/** Longest common subsequence of two lists, by {@link identity}: pairs of indexes. */
function lcs(a: readonly Json[], b: readonly Json[]): [number, number][] {
  const ka = a.map(identity);
  const kb = b.map(identity);
  const n = a.length;
  const m = b.length;
  const len: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) len[i][j] = ka[i] === kb[j] ? len[i + 1][j + 1] + 1 : Math.max(len[i + 1][j], len[i][j + 1]);
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (ka[i] === kb[j]) pairs.push([i++, j++]);
    else if (len[i + 1][j] >= len[i][j + 1]) i++;
    else j++;
  }
  return pairs;
}

/** Merges what a switch's setting (`dsw`, its tree `tsw`) changes against the defaults (`d0`) into `t0`, under `cond`. */
function merge(t0: Node, d0: Json, tsw: Node, dsw: Json, cond: string, where: string): void {
  if (deepEqual(d0, dsw)) return;
  if (isMap(d0) && isMap(dsw) && t0.t === 'map' && tsw.t === 'map') {
    let at = 0; // where the next added key goes: after the entry of the previous key of the switch's map
    for (const key of Object.keys(dsw)) {
      const index = t0.entries.findIndex((e) => e.key === key);
      const added = tsw.entries.find((e) => e.key === key) as Entry;
      if (index < 0 || !(key in d0)) {
        t0.entries.splice(at, 0, { key, node: added.node, when: cond });
        at += 1;
      } else {
        merge(t0.entries[index].node, d0[key], added.node, dsw[key], cond, `${where}.${key}`);
        at = index + 1;
      }
    }
    for (const e of t0.entries) if (e.key in d0 && !(e.key in dsw)) e.when = and(e.when, not(cond));
    return;
  }
  if (Array.isArray(d0) && Array.isArray(dsw) && t0.t === 'seq' && tsw.t === 'seq') {
    const pairs = lcs(d0, dsw);
    const kept = new Set(pairs.map(([i]) => i));
    t0.items.forEach((item) => {
      if (item.base !== undefined && !kept.has(item.base)) item.when = and(item.when, not(cond));
    });
    for (const [i, j] of pairs) {
      const item = t0.items.find((it) => it.base === i) as Item;
      merge(item.node, d0[i], tsw.items[j].node, dsw[j], cond, `${where}[${i}]`);
    }
    const baseOf = new Map(pairs.map(([i, j]) => [j, i]));
    let after = -1; // the defaults' index the next added item follows
    dsw.forEach((_, j) => {
      const base = baseOf.get(j);
      if (base !== undefined) {
        after = base;
        return;
      }
      // After the base item `after` and whatever was added after it before.
      let index = after < 0 ? 0 : t0.items.findIndex((it) => it.base === after) + 1;
      while (index < t0.items.length && t0.items[index].base === undefined) index++;
      t0.items.splice(index, 0, { node: tsw.items[j].node, when: cond });
    });
    return;
  }
  if (!isMap(d0) && !Array.isArray(d0) && !isMap(dsw) && !Array.isArray(dsw)) {
    // A scalar the switch changes: the leaf chooses (its node replaced in place: `t0` is its parent's reference).
    Object.assign(t0, { t: 'choice', cond, then: tsw, otherwise: { ...t0 } });
    return;
  }
  throw new Error(`tools/chart: ${where}: ${JSON.stringify(d0)} differs under ${cond} (${JSON.stringify(dsw)}), and only maps, lists and scalars can`);
}

/** The condition under which a switch's value is `member` (an optional string: set at all). */
function condition(s: Setting, member: Value): string {
  if (member === true || s.optional) return valueRef(s.path);
  if (member === false) return `not ${valueRef(s.path)}`;
  return `eq (toString ${valueRef(s.path)}) ${JSON.stringify(String(member))}`;
}

/** The value an optional string takes in a synthesis that needs it set (a factory's required field). */
export const SET = 'kac-set-value';

/**
 * `values` with `path` set to `member`, and, when the construct refuses that alone, the optional strings beside it set
 * too (`openBao.auth.method: token` needs `openBao.auth.secretName`).
 */
export function variantValues(render: Render, values: Values, path: readonly string[], member: Value, optional: readonly (readonly string[])[]): Values {
  const changed = set(values, path, member);
  try {
    render(changed);
    return changed;
  } catch (error) {
    const siblings = optional.filter((o) => o.length === path.length && o.slice(0, -1).join('.') === path.slice(0, -1).join('.') && get(changed, o) === '');
    if (siblings.length === 0) throw error;
    return siblings.reduce((v, o) => set(v, o, SET), changed);
  }
}

/** The chart's documents: the defaults' objects as trees, each switch's and list's changes merged in. */
export function documents(render: Render, defaults: Values, settings: readonly Setting[], refs: Readonly<Record<string, string>>): Doc[] {
  // The scalars, and the optional strings where a synthesis sets them.
  const probesFor = (values: Values, extra: readonly Probe[] = []): Probe[] => [
    ...settings
      .filter((s) => s.kind === 'scalar' || (s.optional && get(values, s.path) !== ''))
      .map((s) => ({ path: s.path, ref: refs[s.path.join('.')] ?? valueRef(s.path), dflt: get(values, s.path), value: s.probe as Value })),
    ...extra,
  ];
  const optional = settings.filter((s) => s.optional).map((s) => s.path);
  const withProbes = (values: Values, probes: readonly Probe[]): Values => probes.reduce((v, pr) => (pr.path.length > 0 ? set(v, pr.path, pr.value) : v), values);
  const treesOf = (values: Values, extra: readonly Probe[] = []): { objects: readonly Json[]; trees: Map<string, Node> } => {
    const objects = render(values);
    const probes = probesFor(values, extra);
    const probed = render(withProbes(values, probes));
    if (probed.length !== objects.length) throw new Error('tools/chart: the probes changed the objects synthesized');
    return { objects, trees: new Map(objects.map((o, i) => [keyOf(o), build(o, probed[i], probes, keyOf(o))])) };
  };

  const base = treesOf(defaults);
  const docs: Doc[] = base.objects.map((o) => {
    const m = o as { kind: string; metadata: { name: string } };
    return { key: keyOf(o), kind: m.kind, name: m.metadata.name, node: base.trees.get(keyOf(o)) as Node };
  });
  const contexts: { values: Values; cond?: string }[] = [{ values: defaults }];
  for (const s of settings.filter((x) => x.kind === 'switch')) {
    for (const member of s.members ?? []) {
      const values = variantValues(render, defaults, s.path, member, optional);
      const cond = condition(s, member);
      const variant = treesOf(values);
      const byKey = new Map(base.objects.map((o) => [keyOf(o), o]));
      for (const o of variant.objects) {
        const k = keyOf(o);
        const doc = docs.find((d) => d.key === k && d.range === undefined);
        const before = byKey.get(k);
        if (doc && before !== undefined) merge(doc.node, before, variant.trees.get(k) as Node, o, cond, k);
        else {
          const m = o as { kind: string; metadata: { name: string } };
          docs.push({ key: k, kind: m.kind, name: m.metadata.name, node: variant.trees.get(k) as Node, when: cond });
        }
      }
      const variantKeys = new Set(variant.objects.map(keyOf));
      for (const d of docs) if (byKey.has(d.key) && d.range === undefined && !variantKeys.has(d.key)) d.when = and(d.when, not(cond));
      contexts.push({ values, cond });
    }
  }
  for (const s of settings.filter((x) => x.kind === 'list')) {
    const item = (s.members ?? [])[0];
    const fields = isMap(item) ? Object.keys(item) : [''];
    const context = contexts.find((c) => {
      try {
        render(set(c.values, s.path, [item]));
        return true;
      } catch {
        return false;
      }
    });
    if (!context) throw new Error(`tools/chart: ${s.path.join('.')}: no setting of the switches accepts a probe item ${JSON.stringify(item)}`);
    const itemProbes: Probe[] = fields.map((f, i) => {
      const dflt = f === '' ? item : (item as { [key: string]: Value })[f];
      return { path: [], ref: f === '' ? '$item' : `$item.${f}`, dflt, value: `kac-p${90 + i}-probe` };
    });
    // The probe item's fields are probed like scalars, through the list: one item each time.
    const itemValue = (pick: 'dflt' | 'value'): Value => (fields[0] === '' ? itemProbes[0][pick] : Object.fromEntries(fields.map((f, i) => [f, itemProbes[i][pick]])));
    const without = new Set(render(context.values).map(keyOf));
    const values = set(context.values, s.path, [itemValue('dflt')]);
    const objects = render(values);
    const probes = probesFor(values, itemProbes);
    const probed = render(set(withProbes(values, probes), s.path, [itemValue('value')]));
    // An item the constructs leave out when another list holds one of its fields (a source Secret in a namespace
    // already granted): each string list tried with the field's value, and the item's objects skipped where they vanish.
    const skips = settings
      .filter((other) => other.kind === 'list' && other !== s && typeof (other.members ?? [])[0] === 'string')
      .flatMap((other) =>
        fields.flatMap((f, i) => {
          const shared = itemProbes[i].dflt;
          const alone = set(context.values, other.path, [shared]);
          const both = set(alone, s.path, [itemValue('dflt')]);
          try {
            const vanished = render(both).length === render(alone).length;
            return vanished ? [`not (has ${f === '' ? '$item' : `$item.${f}`} ${valueRef(other.path)})`] : [];
          } catch {
            return [];
          }
        }),
      );
    objects.forEach((o, i) => {
      if (without.has(keyOf(o))) return;
      const m = o as { kind: string; metadata: { name: string } };
      const range = { over: valueRef(s.path), var: '$item', ...(skips.length > 0 ? { when: skips.reduce<string | undefined>((a, b) => and(a, b), undefined) } : {}) };
      docs.push({ key: keyOf(o), kind: m.kind, name: m.metadata.name, node: build(o, probed[i], probes, keyOf(o)), ...(context.cond ? { when: context.cond } : {}), range });
    });
  }
  return docs;
}

/** Text Helm prints as it is: a `{{` of the objects (the alerts' own templates, `{{ $labels.namespace }}`) escaped. */
const literal = (text: string): string => text.replace(/\{\{/g, '{{ "{{" }}');

/** The text of a document as a Helm template: the construct's YAML, with expressions and conditions in place. */
export function templateText(doc: Doc): string {
  const exprs: string[] = [];
  const conds: string[] = [];
  const inline = (node: Node): string => {
    if (node.t === 'lit') return literal(stringify(node.v, { lineWidth: 0 }).trimEnd());
    if (node.t === 'expr') return `{{ ${node.text} }}`;
    if (node.t === 'choice') return `{{ if ${node.cond} }}${inline(node.then)}{{ else }}${inline(node.otherwise)}{{ end }}`;
    throw new Error('tools/chart: a map or list cannot be chosen inline');
  };
  const emit = (node: Node): Json => {
    if (node.t === 'lit') return node.v;
    if (node.t === 'expr' || node.t === 'choice') return `kacE${exprs.push(inline(node)) - 1}x`;
    if (node.t === 'map') {
      const out: { [key: string]: Json } = {};
      for (const e of node.entries) {
        if (e.when !== undefined) out[`kacIF${conds.push(e.when) - 1}x`] = null;
        out[e.key] = emit(e.node);
        if (e.when !== undefined) out[`kacEND${conds.length - 1}x`] = null;
      }
      return out;
    }
    return node.items.flatMap((it) => (it.when === undefined ? [emit(it.node)] : [`kacIF${conds.push(it.when) - 1}x`, emit(it.node), `kacEND${conds.length - 1}x`]));
  };
  const text = literal(stringify(emit(doc.node), { lineWidth: 0 }))
    .replace(/^ *(?:- )?kacIF(\d+)x(?:: null)?$/gm, (_, i: string) => `{{- if ${conds[Number(i)]} }}`)
    .replace(/^ *(?:- )?kacEND(\d+)x(?:: null)?$/gm, '{{- end }}')
    .replace(/kacE(\d+)x/g, (_, i: string) => exprs[Number(i)]);
  const open = [
    doc.when !== undefined ? `{{- if ${doc.when} }}\n` : '',
    doc.range ? `{{- range ${doc.range.var} := ${doc.range.over} }}\n` : '',
    doc.range?.when !== undefined ? `{{- if ${doc.range.when} }}\n` : '',
  ].join('');
  const close = [doc.range?.when !== undefined ? '{{- end }}\n' : '', doc.range ? '{{- end }}\n' : '', doc.when !== undefined ? '{{- end }}\n' : ''].join('');
  return `${open}---\n${text}${close}`;
}
