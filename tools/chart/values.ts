/**
 * The Helm chart's values, read from the construct library's API of record (the jsii assembly
 * `docs/api/keystone-appcred-cdk8s.jsii`): every prop of `OperatorProps` is a value of the same name and shape, with
 * its docs and its type, plus `monitoring` (the `manifests --monitoring` constructs). Nothing here names a prop: a prop
 * added to the construct (and to the assembly by `npm run jsii:baseline`) becomes a value, in `values.yaml` and
 * `values.schema.json`, and reaches the construct through {@link manifestsOptionsOf} without an edit.
 *
 * How a jsii type becomes a value: a string, number or boolean is itself; an enum is a string among its members'
 * values; a struct is an object of its fields; a list is an array; a map is an object; a class built by static
 * factories that each take one options struct (`OpenBaoAuth.kubernetes({ role })`, `OpenBaoAuth.token({ secretName })`)
 * is an object `{ method, ...the fields of every factory's options }`, `method` naming the factory.
 *
 * The defaults are the construct's own (its `resolve()` fills them in), except the chart's conventions:
 * `namespace` is the release's namespace (`helm install -n`) and `tag` the chart's appVersion when left empty.
 */
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { Chart, Testing } from 'cdk8s';
import * as library from '../../constructs';
import { resolve as resolveOperatorProps } from '../../constructs/operator/props';
import { DEFAULT_OPENBAO_ADDRESS, DEFAULT_OPENBAO_ROLE, type ManifestsOptions } from '../../src/cli/manifests';

/** A value of the chart: JSON. */
export type Value = null | boolean | number | string | Value[] | { [key: string]: Value };
/** The chart's values: an object. */
export type Values = { [key: string]: Value };

/** A JSON Schema (draft 7, what Helm validates `values.schema.json` with), as far as the chart uses it. */
export interface Schema {
  readonly type?: 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean';
  readonly description?: string;
  readonly enum?: readonly string[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly additionalProperties?: boolean | Schema;
  readonly required?: readonly string[];
  readonly items?: Schema;
  readonly uniqueItems?: boolean;
  readonly minLength?: number;
  readonly allOf?: readonly { readonly if: Schema; readonly then: Schema }[];
  readonly const?: string;
  readonly default?: Value;
  readonly $schema?: string;
  readonly $comment?: string;
  readonly title?: string;
}

interface JsiiType {
  readonly fqn?: string;
  readonly primitive?: 'string' | 'number' | 'boolean' | 'any' | 'json' | 'date';
  readonly collection?: { readonly kind: 'array' | 'map'; readonly elementtype: JsiiType };
}
interface JsiiDocs {
  readonly summary?: string;
  readonly remarks?: string;
  readonly default?: string;
}
interface JsiiProperty {
  readonly name: string;
  readonly type: JsiiType;
  readonly optional?: boolean;
  readonly docs?: JsiiDocs;
}
interface JsiiTypeDef {
  readonly kind: 'class' | 'interface' | 'enum';
  readonly name: string;
  readonly datatype?: boolean;
  readonly properties?: readonly JsiiProperty[];
  readonly methods?: readonly { readonly name: string; readonly static?: boolean; readonly parameters?: readonly { readonly type: JsiiType }[] }[];
  readonly members?: readonly { readonly name: string }[];
  readonly docs?: JsiiDocs;
}

const ASSEMBLY = resolvePath(__dirname, '..', '..', 'docs', 'api', 'keystone-appcred-cdk8s.jsii');
/** The discriminator of a class built by factories. */
export const METHOD = 'method';

let types: Readonly<Record<string, JsiiTypeDef>> | undefined;
function assembly(): Readonly<Record<string, JsiiTypeDef>> {
  types ??= (JSON.parse(readFileSync(ASSEMBLY, 'utf8')) as { types: Record<string, JsiiTypeDef> }).types;
  return types;
}

function typeDef(fqn: string): JsiiTypeDef {
  const def = assembly()[fqn];
  if (!def) throw new Error(`tools/chart: ${fqn} is not in ${ASSEMBLY}; run npm run jsii:baseline`);
  return def;
}

/** The runtime values of a construct library enum (the assembly holds only the members' names). */
export function enumValues(fqn: string): string[] {
  const def = typeDef(fqn);
  const runtime = (library as unknown as Record<string, Record<string, string> | undefined>)[def.name];
  if (!runtime) throw new Error(`tools/chart: the enum ${def.name} is not exported by constructs/index.ts`);
  return (def.members ?? []).map((m) => runtime[m.name]);
}

/** The static factories of a class that each take one options struct, by name, or undefined for another class. */
export function factories(fqn: string): Map<string, string> | undefined {
  const def = typeDef(fqn);
  if (def.kind !== 'class') return undefined;
  const out = new Map<string, string>();
  for (const m of def.methods ?? []) {
    const param = m.parameters?.[0]?.type.fqn;
    if (m.static && m.parameters?.length === 1 && param && typeDef(param).datatype) out.set(m.name, param);
  }
  return out.size > 0 ? out : undefined;
}

function describe(docs: JsiiDocs | undefined): string | undefined {
  const text = [docs?.summary, docs?.remarks].filter((s): s is string => Boolean(s)).join(' ').replace(/\s+/g, ' ').trim();
  return text === '' ? undefined : text;
}

/** The schema of a jsii type. */
function schemaOf(type: JsiiType, docs: JsiiDocs | undefined): Schema {
  // A prop without docs of its own (`/** @default LogLevel.INFO */`) is described by its type's.
  const description = describe(docs) ?? (docs && type.fqn ? describe(typeDef(type.fqn).docs) : undefined);
  const withDoc = (s: Schema): Schema => (description ? { ...s, description } : s);
  if (type.primitive === 'string') return withDoc({ type: 'string' });
  if (type.primitive === 'number') return withDoc({ type: 'number' });
  if (type.primitive === 'boolean') return withDoc({ type: 'boolean' });
  if (type.collection?.kind === 'array') return withDoc({ type: 'array', items: schemaOf(type.collection.elementtype, undefined), uniqueItems: true });
  if (type.collection?.kind === 'map') return withDoc({ type: 'object', additionalProperties: schemaOf(type.collection.elementtype, undefined) });
  if (type.fqn) {
    const def = typeDef(type.fqn);
    if (def.kind === 'enum') return withDoc({ type: 'string', enum: enumValues(type.fqn) });
    if (def.datatype) return withDoc(structSchema(def.properties ?? []));
    const made = factories(type.fqn);
    if (made) {
      const properties: Record<string, Schema> = { [METHOD]: { type: 'string', enum: [...made.keys()], description: `How ${def.name} is made: ${[...made.keys()].map((m) => `\`${m}\``).join(' or ')}, each with its fields below.` } };
      const allOf: { if: Schema; then: Schema }[] = [];
      for (const [method, options] of made) {
        const fields = typeDef(options).properties ?? [];
        for (const p of fields) {
          const doc = describe(p.docs);
          properties[p.name] = { ...schemaOf(p.type, undefined), description: `With \`${METHOD}: ${method}\`${p.optional ? '' : ' (required)'}: ${doc ?? p.name}` };
        }
        // A factory's required fields must be given (not left empty) when it is the method.
        const required = fields.filter((p) => !p.optional).map((p) => p.name);
        if (required.length > 0) allOf.push({ if: { properties: { [METHOD]: { const: method } } }, then: { required, properties: Object.fromEntries(required.map((r) => [r, { minLength: 1 }])) } });
      }
      return withDoc({ type: 'object', properties, required: [METHOD], additionalProperties: false, ...(allOf.length > 0 ? { allOf } : {}) });
    }
  }
  throw new Error(`tools/chart: the type ${JSON.stringify(type)} has no value form; say in tools/chart/values.ts how the chart offers it`);
}

/** A struct: its fields, the required ones required and, for strings, not empty. */
function structSchema(props: readonly JsiiProperty[], mayBeEmpty: ReadonlySet<string> = new Set()): Schema {
  const properties: Record<string, Schema> = {};
  for (const p of props) {
    const own = schemaOf(p.type, p.docs);
    properties[p.name] = !p.optional && own.type === 'string' && !mayBeEmpty.has(p.name) ? { ...own, minLength: 1 } : own;
  }
  const required = props.filter((p) => !p.optional).map((p) => p.name);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

/** The props of `OperatorProps`, as the assembly records them. */
export function operatorProps(): readonly JsiiProperty[] {
  return typeDef('keystone-appcred-cdk8s.OperatorProps').properties ?? [];
}

/** The value that is not an operator prop: the monitoring constructs. */
const MONITORING: Schema = {
  type: 'boolean',
  description:
    "Add the operator's observability for prometheus-operator and Grafana's dashboard sidecar: a ServiceMonitor, the alerts as a PrometheusRule, the dashboard as a ConfigMap (the OperatorMonitor, AlertRules and Dashboard constructs), in the operator's namespace. Needs prometheus-operator's CRDs on the cluster.",
};

/** The chart's conventions over the construct's defaults. */
const CHART_DESCRIPTIONS: Readonly<Record<string, string>> = {
  namespace: "The namespace the operator runs in; empty: the release's namespace (`helm install --namespace`).",
  tag: "The image tag; empty: the chart's appVersion.",
};

/** `values.schema.json`: every value, its type, its docs; no value the chart does not know (additionalProperties). */
export function valuesSchema(): Schema {
  const struct = structSchema(operatorProps(), new Set(Object.keys(CHART_DESCRIPTIONS)));
  const properties: Record<string, Schema> = { ...struct.properties };
  for (const [name, description] of Object.entries(CHART_DESCRIPTIONS)) properties[name] = { ...properties[name], description };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'keystone-appcred',
    type: 'object',
    properties: { ...properties, monitoring: MONITORING },
    ...(struct.required ? { required: struct.required } : {}),
    additionalProperties: false,
  };
}

/** A JSON `@default` of the assembly (`"kubernetes"`, `8`), or undefined for prose (`the system trust store`). */
function documentedDefault(docs: JsiiDocs | undefined): Value | undefined {
  try {
    return docs?.default === undefined ? undefined : (JSON.parse(docs.default) as Value);
  } catch {
    return undefined;
  }
}

/** The defaults of a struct or factory-made class's fields: documented JSON defaults, and "" for the others. */
function fieldDefaults(type: JsiiType, given: Values): Values {
  const fqn = type.fqn as string;
  const made = factories(fqn);
  const props = made ? [...made.values()].flatMap((o) => typeDef(o).properties ?? []) : (typeDef(fqn).properties ?? []);
  const out: Values = made ? { [METHOD]: given[METHOD] ?? [...made.keys()][0] } : {};
  for (const p of props) {
    const nested = p.type.fqn && (typeDef(p.type.fqn).datatype || factories(p.type.fqn));
    const own = given[p.name];
    out[p.name] = nested ? fieldDefaults(p.type, own !== null && typeof own === 'object' && !Array.isArray(own) ? own : {}) : (own ?? documentedDefault(p.docs) ?? '');
  }
  return out;
}

/**
 * The construct's defaults as values, as `keystone-appcred manifests` and `deploy/install.yaml` use them: what the chart
 * renders with its default values (the release's namespace taken as the construct's default namespace).
 */
export function constructDefaults(version: string): Values {
  const chart = new Chart(Testing.app(), 'defaults');
  const given = { image: 'keystone-appcred', tag: 'default', openBao: { address: DEFAULT_OPENBAO_ADDRESS, auth: library.OpenBaoAuth.kubernetes({ role: DEFAULT_OPENBAO_ROLE }) } };
  const resolved = resolveOperatorProps(chart, given) as unknown as Record<string, unknown>;
  const values: Values = {};
  for (const p of operatorProps()) {
    const own = JSON.parse(JSON.stringify(resolved[p.name] ?? null)) as Value;
    const nested = p.type.fqn && (typeDef(p.type.fqn).datatype || factories(p.type.fqn));
    values[p.name] = nested ? fieldDefaults(p.type, own as Values) : own;
  }
  // The engine's mode and the construct's enum share their strings (constructs/secret-access.ts).
  return { ...values, tag: version, monitoring: false };
}

/** `values.yaml`: the construct's defaults with the chart's conventions (empty `namespace` and `tag`). */
export function defaultValues(version: string): Values {
  return { ...constructDefaults(version), namespace: '', tag: '' };
}

/** Drops empty optional values ("" and null), as the construct reads an absent prop. */
function present(value: Value): Value | undefined {
  if (value === '' || value === null) return undefined;
  if (Array.isArray(value)) return value.map((v) => present(v) ?? null);
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (present(v) === undefined ? [] : [[k, present(v) as Value]])));
  }
  return value;
}

/** A prop's construct value from its chart value: a factory-made class through its factory, the rest as it is. */
function propOf(type: JsiiType, value: Value): unknown {
  const made = type.fqn ? factories(type.fqn) : undefined;
  if (made && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const method = String(value[METHOD]);
    const options = made.get(method);
    if (!options) throw new Error(`${METHOD} (${JSON.stringify(method)}) must be one of ${[...made.keys()].join(', ')}`);
    const fields = Object.fromEntries((typeDef(options).properties ?? []).flatMap((p) => (value[p.name] === undefined ? [] : [[p.name, value[p.name]]])));
    const owner = library as unknown as Record<string, Record<string, (options: unknown) => unknown>>;
    return owner[typeDef(type.fqn as string).name][method](fields);
  }
  if (type.fqn && typeDef(type.fqn).datatype && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const props = typeDef(type.fqn).properties ?? [];
    return Object.fromEntries(props.flatMap((p) => (value[p.name] === undefined ? [] : [[p.name, propOf(p.type, value[p.name])]])));
  }
  return value;
}

/** The one mapping of the chart's values to the construct: what `renderManifests` synthesizes for them. */
export function manifestsOptionsOf(values: Values, version: string): ManifestsOptions {
  const given = (present(values) ?? {}) as Values;
  const operator: Record<string, unknown> = {};
  for (const p of operatorProps()) {
    if (given[p.name] !== undefined && p.name !== 'image' && p.name !== 'tag') operator[p.name] = propOf(p.type, given[p.name]);
  }
  const namespace = typeof given.namespace === 'string' ? given.namespace : undefined;
  return {
    image: String(given.image),
    tag: typeof given.tag === 'string' ? given.tag : version,
    monitoring: given.monitoring === true,
    ...(namespace ? { namespace } : {}),
    operator: operator as ManifestsOptions['operator'],
  };
}
