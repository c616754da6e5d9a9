/**
 * A small, typed way to write a CRD's openAPIV3Schema, and to hang the CEL rules of `src/api` on it by path, so a rule is
 * written once (in `src/api`) and the schema only says where it sits.
 */

/** A JSON value, as a schema default carries it. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** One CEL rule as the CRD carries it. */
export interface CelRule {
  /** The CEL expression. */
  readonly rule: string;
  /** The message the API server answers with when the rule does not hold. */
  readonly message: string;
  /** The field the API server names in its answer, as a JSONPath from the node (`.spec.projectName`). @default the node */
  readonly fieldPath?: string;
}

/**
 * A schema node: the subset of `JSONSchemaProps` a structural CRD schema uses, in TypeScript's names (`listType`).
 */
export interface Schema {
  /** `object`, `string`, `integer`, `array` or `boolean`. */
  readonly type: 'object' | 'string' | 'integer' | 'array' | 'boolean';
  /** Shown by `kubectl explain`. @default none */
  readonly description?: string;
  /** Children of an object. @default none */
  readonly properties?: Readonly<Record<string, Schema>>;
  /** Required children of an object. @default none */
  readonly required?: readonly string[];
  /** The item schema of an array. @default none */
  readonly items?: Schema;
  /** The schema default the API server fills in. @default none */
  readonly default?: JsonValue;
  /** @default none */
  readonly minLength?: number;
  /** @default none */
  readonly maxLength?: number;
  /** @default none */
  readonly minimum?: number;
  /** @default none */
  readonly maximum?: number;
  /** @default none */
  readonly minItems?: number;
  /** @default none */
  readonly maxItems?: number;
  /** The value schema of a map (an object with free keys). @default none */
  readonly additionalProperties?: Schema;
  /** Entries of a map. @default none */
  readonly maxProperties?: number;
  /** @default none */
  readonly pattern?: string;
  /** @default none */
  readonly enum?: readonly string[];
  /** `int64`, `date-time`. @default none */
  readonly format?: string;
  /** `atomic`, `set` or `map`. @default none */
  readonly listType?: 'atomic' | 'set' | 'map';
  /** The keys of a `map` list. @default none */
  readonly listMapKeys?: readonly string[];
  /** Keep unknown fields (the root's `metadata` only). @default false */
  readonly preserveUnknownFields?: boolean;
  /** CEL rules on this node. @default none */
  readonly validations?: readonly CelRule[];
}

/** The members of a node that TypeScript and the wire name alike and that hold no node. */
type WireAlike = 'type' | 'description' | 'required' | 'default' | 'minLength' | 'maxLength' | 'minimum' | 'maximum' | 'minItems' | 'maxItems' | 'maxProperties' | 'pattern' | 'enum' | 'format';

/** `apiextensions.k8s.io/v1` JSONSchemaProps as the CRD carries it: a {@link Schema} node in its wire names. */
export interface JsonSchemaProps extends Pick<Schema, WireAlike> {
  readonly properties?: Readonly<Record<string, JsonSchemaProps>>;
  readonly items?: JsonSchemaProps;
  readonly additionalProperties?: JsonSchemaProps;
  readonly 'x-kubernetes-list-type'?: string;
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-validations'?: readonly CelRule[];
}

/** The wire form of a node, as the CRD carries it (`x-kubernetes-list-type`, ...); absent fields stay absent. */
export function toJsonSchemaProps(node: Schema): JsonSchemaProps {
  const { properties, items, additionalProperties, listType, listMapKeys, preserveUnknownFields, validations, ...alike } = node;
  return {
    ...alike,
    properties: properties && Object.fromEntries(Object.entries(properties).map(([key, child]) => [key, toJsonSchemaProps(child)])),
    items: items && toJsonSchemaProps(items),
    additionalProperties: additionalProperties && toJsonSchemaProps(additionalProperties),
    'x-kubernetes-list-type': listType,
    'x-kubernetes-list-map-keys': listMapKeys,
    'x-kubernetes-preserve-unknown-fields': preserveUnknownFields,
    'x-kubernetes-validations': validations,
  };
}

/** Options of a string field. */
export interface StringOptions {
  /** @default none */
  readonly description?: string;
  /** @default 1 */
  readonly minLength?: number;
  /** Always set: the CEL cost estimate of a rule over the field depends on it. */
  readonly maxLength: number;
  /** @default none */
  readonly default?: string;
  /** @default none */
  readonly pattern?: string;
  /** @default none */
  readonly enum?: readonly string[];
  /** @default none */
  readonly format?: string;
}

/** A string field, at least one character long unless told otherwise. */
export function string(options: StringOptions): Schema {
  return { type: 'string', minLength: options.minLength ?? 1, ...options };
}

/** An RFC 3339 time, as `metav1.Time` serializes. */
export function time(description: string): Schema {
  return { type: 'string', format: 'date-time', description };
}

/** An int64 field. */
export function int64(description: string, extra: Partial<Pick<Schema, 'minimum' | 'maximum' | 'default'>> = {}): Schema {
  return { type: 'integer', format: 'int64', description, ...extra };
}

/** An object field; `required` lists the children that must be given. */
export function object(description: string, properties: Record<string, Schema>, required: readonly string[] = [], extra: Partial<Schema> = {}): Schema {
  return { type: 'object', description, properties, ...(required.length > 0 ? { required } : {}), ...extra };
}

/** An array field. */
export function array(description: string, items: Schema, extra: Partial<Schema> = {}): Schema {
  return { type: 'array', description, items, ...extra };
}

/** `{name}`: a reference to an order in the same namespace. */
export function localRef(description: string, maxLength: number): Schema {
  return object(description, { name: string({ description: 'The name of the referenced order.', maxLength }) }, ['name']);
}

/** `[]metav1.Condition`, a list-map keyed by `type`, with the upstream bounds of each field; at most `maxItems` (default 16). */
export function conditions(description: string, maxItems = 16): Schema {
  return array(
    description,
    object(
      'One observation of one aspect of the object (metav1.Condition).',
      {
        type: string({ description: 'The condition type, in CamelCase.', maxLength: 316, pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$' }),
        status: string({ description: 'True, False or Unknown.', maxLength: 7, enum: ['True', 'False', 'Unknown'] }),
        reason: string({ description: 'A CamelCase reason.', maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
        message: string({ description: 'A human-readable message.', minLength: 0, maxLength: 32768 }),
        lastTransitionTime: time('When the status last changed.'),
        observedGeneration: int64('The metadata.generation the condition was set for.', { minimum: 0 }),
      },
      ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
    ),
    { listType: 'map', listMapKeys: ['type'], maxItems },
  );
}

/** A rule to hang on the schema: a dotted path from the object root (`''` is the root, `[]` steps into a list's items). */
export interface PlacedRule {
  /** The path of the node the rule is attached to. */
  readonly path: string;
  /** The CEL expression. */
  readonly cel: string;
  /** The message. */
  readonly message: string;
  /**
   * The dotted field a violation names (`spec.projectName` for a rule on the root, `spec.controlPlaneRef.namespace` for
   * one on `spec.controlPlaneRef`); a field under `spec` below the node becomes the rule's `fieldPath`, relative to the
   * node. @default the node
   */
  readonly field?: string;
}

/** Returns `root` with each rule appended to the `validations` of the node its path names; throws for a path with no node. */
export function withRules(root: Schema, rules: readonly PlacedRule[]): Schema {
  let out = root;
  for (const rule of rules) {
    const node = rule.path === '' ? '' : `${rule.path}.`;
    const fieldPath = rule.field?.startsWith('spec.') && rule.field.startsWith(node) ? `.${rule.field.slice(node.length)}` : undefined;
    out = attach(out, rule.path === '' ? [] : rule.path.split('.'), { rule: rule.cel, message: rule.message, ...(fieldPath ? { fieldPath } : {}) }, rule.path);
  }
  return out;
}

function attach(node: Schema, segments: readonly string[], rule: CelRule, path: string): Schema {
  if (segments.length === 0) return { ...node, validations: [...(node.validations ?? []), rule] };
  const [head, ...rest] = segments;
  const each = head.endsWith('[]');
  const key = each ? head.slice(0, -2) : head;
  const child = node.properties?.[key];
  if (!child || (each && !child.items)) throw new Error(`rule path ${JSON.stringify(path)}: the schema has no node ${JSON.stringify(head)}`);
  const updated = each ? { ...child, items: attach(child.items as Schema, rest, rule, path) } : attach(child, rest, rule, path);
  return { ...node, properties: { ...node.properties, [key]: updated } };
}
