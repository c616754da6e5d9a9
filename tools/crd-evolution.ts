/**
 * Whether the CRDs of a release still accept what the previous release's accepted: the changes that break stored
 * objects or existing manifests, found by comparing the two releases' CustomResourceDefinitions (issue 41). What breaks:
 *
 * - a CRD, a served version, a kind, plural or scope gone or renamed;
 * - a field removed (a manifest that sets it is refused, or the field pruned from stored objects);
 * - a field of another type, or newly required without a default;
 * - an enum narrowed (or set where there was none), a limit narrowed (maxLength, maxItems, maxProperties, maximum
 *   lowered, or minLength, minItems, minProperties, minimum raised, or set where there was none), a pattern or format
 *   set or changed;
 * - a validation rule (CEL) added to or changed on a field that existed (on a new field, none of the old objects has it);
 * - unknown fields no longer preserved, `nullable` dropped, a list or map type changed.
 *
 * What is compatible and never reported: a new optional field (with its own rules), a new version, a widened limit or
 * enum, a rule removed, descriptions and printer columns. Each finding has a stable `id`
 * (`<plural>.<group> <version> <path>: <what>`), which docs/install/upgrading.md names when a release breaks on purpose
 * (test/integration/crd-evolution.test.ts fails on any finding it does not name).
 */

/** A JSON schema node as a CRD's openAPIV3Schema has it (the parts this check reads). */
export interface SchemaNode {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
  readonly additionalProperties?: SchemaNode | boolean;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly default?: unknown;
  readonly pattern?: string;
  readonly format?: string;
  readonly nullable?: boolean;
  readonly maxLength?: number;
  readonly minLength?: number;
  readonly maxItems?: number;
  readonly minItems?: number;
  readonly maxProperties?: number;
  readonly minProperties?: number;
  readonly maximum?: number;
  readonly minimum?: number;
  readonly 'x-kubernetes-validations'?: readonly { readonly rule: string }[];
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-list-type'?: string;
  readonly 'x-kubernetes-map-type'?: string;
  readonly 'x-kubernetes-int-or-string'?: boolean;
}

/** A CustomResourceDefinition, as far as this check reads it. */
export interface Crd {
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly group: string;
    readonly scope: string;
    readonly names: { readonly kind: string; readonly plural: string };
    readonly versions: readonly { readonly name: string; readonly served: boolean; readonly storage: boolean; readonly schema?: { readonly openAPIV3Schema?: SchemaNode } }[];
  };
}

/** One change that breaks stored objects or existing manifests. */
export interface Breaking {
  /** `<plural>.<group> <version> <path>: <what>`; what docs/install/upgrading.md names to accept it. */
  readonly id: string;
  readonly crd: string;
  readonly version?: string;
  readonly path: string;
  readonly what: string;
}

type Limit = 'maxLength' | 'maxItems' | 'maxProperties' | 'maximum' | 'minLength' | 'minItems' | 'minProperties' | 'minimum';
const UPPER: readonly Limit[] = ['maxLength', 'maxItems', 'maxProperties', 'maximum'];
const LOWER: readonly Limit[] = ['minLength', 'minItems', 'minProperties', 'minimum'];

const show = (v: unknown): string => JSON.stringify(v);

function compareNode(path: string, before: SchemaNode, after: SchemaNode, report: (path: string, what: string) => void): void {
  if ((before.type ?? '') !== (after.type ?? '') && !(before['x-kubernetes-int-or-string'] && after['x-kubernetes-int-or-string'])) report(path, `type ${before.type ?? 'any'} → ${after.type ?? 'any'}`);
  for (const limit of UPPER) {
    const b = before[limit];
    const a = after[limit];
    if (a !== undefined && (b === undefined || a < b)) report(path, `${limit} ${b ?? 'none'} → ${a}`);
  }
  for (const limit of LOWER) {
    const b = before[limit];
    const a = after[limit];
    if (a !== undefined && a > (b ?? (limit === 'minimum' ? -Infinity : 0))) report(path, `${limit} ${b ?? 'none'} → ${a}`);
  }
  if (after.enum !== undefined) {
    const gone = before.enum === undefined ? ['(any value)'] : before.enum.filter((v) => !after.enum?.some((w) => show(w) === show(v))).map(show);
    if (gone.length > 0) report(path, `enum narrowed: ${gone.join(', ')} no longer allowed`);
  }
  for (const key of ['pattern', 'format'] as const) {
    if (after[key] !== undefined && after[key] !== before[key]) report(path, `${key} ${before[key] === undefined ? 'none' : show(before[key])} → ${show(after[key])}`);
  }
  if (before.nullable && !after.nullable) report(path, 'no longer nullable');
  if (before['x-kubernetes-preserve-unknown-fields'] && !after['x-kubernetes-preserve-unknown-fields']) report(path, 'unknown fields no longer preserved');
  for (const key of ['x-kubernetes-list-type', 'x-kubernetes-map-type'] as const) {
    if (before[key] !== after[key]) report(path, `${key} ${before[key] ?? 'none'} → ${after[key] ?? 'none'}`);
  }
  const rules = new Set((before['x-kubernetes-validations'] ?? []).map((r) => r.rule));
  for (const rule of after['x-kubernetes-validations'] ?? []) if (!rules.has(rule.rule)) report(path, `new validation rule ${show(rule.rule)}`);
  // Fields: removed ones, newly required ones, and the ones both have, recursively.
  const bp = before.properties ?? {};
  const ap = after.properties ?? {};
  for (const name of Object.keys(bp)) if (!(name in ap) && !after['x-kubernetes-preserve-unknown-fields']) report(`${path}.${name}`, 'removed');
  const required = new Set(before.required ?? []);
  for (const name of after.required ?? []) if (!required.has(name) && ap[name]?.default === undefined) report(`${path}.${name}`, 'newly required');
  for (const [name, node] of Object.entries(bp)) if (ap[name]) compareNode(`${path}.${name}`, node, ap[name], report);
  if (before.items && after.items) compareNode(`${path}[]`, before.items, after.items, report);
  const bAdd = before.additionalProperties;
  const aAdd = after.additionalProperties;
  if (typeof bAdd === 'object' && typeof aAdd === 'object') compareNode(`${path}{}`, bAdd, aAdd, report);
  else if (bAdd !== undefined && aAdd === undefined && Object.keys(ap).length === 0 && !after['x-kubernetes-preserve-unknown-fields']) report(`${path}{}`, 'arbitrary keys no longer allowed');
}

/** The breaking changes from the CRDs `before` to the CRDs `after` (any other objects are ignored). */
export function breakingChanges(before: readonly { readonly kind: string }[], after: readonly { readonly kind: string }[]): Breaking[] {
  const crds = (list: readonly { readonly kind: string }[]) => new Map((list.filter((o) => o.kind === 'CustomResourceDefinition') as Crd[]).map((c) => [c.metadata.name, c]));
  const old = crds(before);
  const now = crds(after);
  const out: Breaking[] = [];
  const push = (crd: string, version: string | undefined, path: string, what: string) => out.push({ id: `${crd}${version ? ` ${version}` : ''} ${path}: ${what}`, crd, ...(version ? { version } : {}), path, what });
  for (const [name, b] of old) {
    const a = now.get(name);
    if (!a) {
      push(name, undefined, '(the CRD)', 'removed');
      continue;
    }
    if (a.spec.scope !== b.spec.scope) push(name, undefined, 'spec.scope', `${b.spec.scope} → ${a.spec.scope}`);
    if (a.spec.names.kind !== b.spec.names.kind) push(name, undefined, 'spec.names.kind', `${b.spec.names.kind} → ${a.spec.names.kind}`);
    for (const v of b.spec.versions.filter((x) => x.served)) {
      const w = a.spec.versions.find((x) => x.name === v.name);
      if (!w || !w.served) {
        push(name, v.name, '(the version)', 'no longer served');
        continue;
      }
      const bs = v.schema?.openAPIV3Schema;
      const as = w.schema?.openAPIV3Schema;
      if (bs && as) compareNode('', bs, as, (path, what) => push(name, v.name, path === '' ? '(the schema)' : path.replace(/^\./, ''), what));
    }
  }
  return out;
}
