/**
 * The CRDs' reference, from the CRDs the constructs synthesize (`Crds`, constructs/crd.ts over the definitions in
 * constructs/definitions/), as `kubectl explain` reads them: every field of spec and status with its type, default,
 * bounds and description, every CEL rule with its message, and the printer columns.
 */
import { Testing } from 'cdk8s';
import { Crds } from '../../constructs';
import { code, codes, table } from './markdown';

/** An OpenAPI v3 schema node, as far as the reference reads it. */
interface Schema {
  readonly type?: string;
  readonly format?: string;
  readonly description?: string;
  readonly default?: unknown;
  readonly enum?: readonly unknown[];
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly items?: Schema;
  readonly 'x-kubernetes-list-type'?: string;
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-validations'?: readonly { readonly rule: string; readonly message?: string; readonly fieldPath?: string }[];
}

interface Crd {
  readonly spec: {
    readonly names: { readonly kind: string };
    readonly versions: readonly { readonly schema: { readonly openAPIV3Schema: Schema }; readonly additionalPrinterColumns?: readonly { name: string; type: string; jsonPath: string; priority?: number }[] }[];
  };
}

/** The CRDs as `Crds` synthesizes them, by kind. */
function crds(): Map<string, Crd> {
  const chart = Testing.chart();
  new Crds(chart, 'crds');
  const objects = Testing.synth(chart) as ({ kind: string } & Crd)[];
  return new Map(objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => [o.spec.names.kind, o]));
}

/** The kinds, in the order `Crds` emits them. */
export const crdKinds = (): string[] => [...crds().keys()];

/** A node's type as the reference shows it: `string`, `[]object`, `int64`. */
function typeOf(node: Schema): string {
  if (node.type === 'array') return `[]${node.items ? typeOf(node.items) : 'any'}`;
  if (node['x-kubernetes-int-or-string']) return 'int-or-string';
  return node.format ?? node.type ?? 'any';
}

/** A node's bounds: lengths, ranges, counts, enum, list type, pattern. */
function bounds(node: Schema): string {
  const parts: string[] = [];
  const range = (low?: number, high?: number, unit = '') => (low !== undefined && high !== undefined ? `${low}–${high}${unit}` : low !== undefined ? `at least ${low}${unit}` : high !== undefined ? `at most ${high}${unit}` : undefined);
  const length = range(node.minLength, node.maxLength, ' characters');
  const value = range(node.minimum, node.maximum);
  const items = range(node.minItems, node.maxItems, ' items');
  if (length) parts.push(length);
  if (value) parts.push(value);
  if (items) parts.push(items);
  if (node.enum) parts.push(`one of ${codes(node.enum.map(String))}`);
  if (node['x-kubernetes-list-type']) parts.push(`list type ${code(node['x-kubernetes-list-type'])}`);
  if (node.pattern) parts.push(`matches ${code(node.pattern)}`);
  return parts.join('; ');
}

/** Every field under `node`, depth first in the schema's (alphabetical) order, with its path. */
function fields(node: Schema, path: string, required: boolean): [string, Schema, boolean][] {
  const own: [string, Schema, boolean][] = path ? [[path, node, required]] : [];
  const children = node.properties ?? node.items?.properties;
  const childRequired = new Set(node.required ?? node.items?.required ?? []);
  const prefix = node.type === 'array' ? `${path}[]` : path;
  return [...own, ...Object.entries(children ?? {}).flatMap(([name, child]) => fields(child, prefix ? `${prefix}.${name}` : name, childRequired.has(name)))];
}

/** Every CEL rule under `node`, with the path of the node it hangs on. */
function rules(node: Schema, path: string): [string, string, string][] {
  const own = (node['x-kubernetes-validations'] ?? []).map((v): [string, string, string] => [`${path || '(the object)'}${v.fieldPath ? ` (${v.fieldPath})` : ''}`, v.rule, v.message ?? '']);
  const prefix = node.type === 'array' ? `${path}[]` : path;
  const children = node.properties ?? node.items?.properties ?? {};
  return [...own, ...(node.items?.['x-kubernetes-validations'] ? rules({ ...node.items, properties: undefined }, prefix) : []), ...Object.entries(children).flatMap(([name, child]) => rules(child, prefix ? `${prefix}.${name}` : name))];
}

/** A kind's reference: its fields (spec and status), its rules and its printer columns. */
export function crdReference(kind: string): string {
  const crd = crds().get(kind);
  if (!crd) throw new Error(`Crds emits no CRD of the kind ${kind}`);
  const version = crd.spec.versions[0];
  const root = version.schema.openAPIV3Schema;
  const tree = Object.entries(root.properties ?? {}).filter(([name]) => name === 'spec' || name === 'status');
  const rows = tree.flatMap(([name, node]) => fields(node, name, (root.required ?? []).includes(name)));
  return [
    table(
      ['field', 'type', 'default', 'bounds', 'description'],
      rows.map(([path, node, required]) => [code(path), `${typeOf(node)}${required ? ', required' : ''}`, node.default === undefined ? '' : code(JSON.stringify(node.default)), bounds(node), node.description ?? '']),
    ),
    '',
    `Rules (CEL, checked by the API server at admission; the constructs and the Pulumi resource check their TypeScript twins):`,
    '',
    table(['on', 'rule', 'message'], rules(root, '').map(([on, rule, message]) => [on.startsWith('(') ? on : code(on), code(rule), message])),
    '',
    'Printer columns (`kubectl get`):',
    '',
    table(['column', 'type', 'JSONPath'], (version.additionalPrinterColumns ?? []).map((c) => [`${c.name}${c.priority ? ' (wide)' : ''}`, c.type, code(c.jsonPath)])),
  ].join('\n');
}
