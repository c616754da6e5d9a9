/**
 * What every kind's validation is made of, below the kinds' own rules: a CRD rule with its TypeScript twin
 * ({@link Rule}), a schema bound ({@link FieldBound}), a broken one ({@link Violation}, in the one message shape of
 * `src/api`), and the walk along a field path both are checked over. The KeystoneApplicationCredential's rules
 * (`rules.ts`, `privileges.ts`), the neighbour kinds' (`identity-plane-rules.ts`, `cluster-identity-rules.ts`) and
 * `validate` build on it; it builds on nothing.
 */
/**
 * Where a rule sits in the CRD's schema: a dotted path from the object root (`''` is the root); `[]` after a segment
 * steps into every item of that list.
 */
export type RulePath =
  | ''
  | 'spec'
  | 'spec.userRef'
  | 'spec.projectRef'
  | 'spec.controlPlaneRef'
  | 'spec.controlPlaneRef.name'
  | 'spec.controlPlaneRef.namespace'
  | 'spec.credentialGeneration'
  | 'spec.rotation'
  | 'spec.rotation.interval'
  | 'spec.rotation.gracePeriod'
  | 'spec.roles'
  | 'spec.accessRules'
  | 'spec.accessRules[].service'
  | 'spec.accessRules[].path'
  | 'spec.secretTemplate.labels'
  | 'spec.secretTemplate.annotations'
  | 'spec.secretTemplate.data'
  | 'spec.adopt.credentialID'
  | 'spec.adopt.secretRef.name'
  | 'spec.adopt.secretRef.key';

/** One `x-kubernetes-validations` entry with its TypeScript twin. */
export interface Rule {
  /** The schema node the rule is attached to. */
  readonly path: RulePath;
  /** The CEL expression, over `self` (and `oldSelf` for a transition rule). */
  readonly cel: string;
  /** The spec's message. */
  readonly message: string;
  /** A transition rule: it compares with the stored object and runs on update only. */
  readonly transition: boolean;
  /**
   * The field a violation names, for a rule that sits on an object (or the root) but is about one field below it:
   * the CRD's `fieldPath`, and the field and value `validate` reports. @default the path
   */
  readonly field?: string;
  /** The TypeScript check: true when the rule holds for `self` (and `oldSelf`). */
  holds(self: unknown, oldSelf?: unknown): boolean;
}

/** One broken rule. */
export interface Violation {
  /** The field, as a path from the object root: `spec.rotation.interval`. */
  readonly field: string;
  /** The offending value as written. */
  readonly value: unknown;
  /** The rule, in the spec's words. */
  readonly rule: string;
  /** `field (value): rule`, ready to show a user; see {@link violation}. */
  readonly message: string;
}

/**
 * One violation, and its message in the one shape every validation message of `src/api` has (`validate` for the
 * KeystoneApplicationCredential, `validatePlane` for the neighbour kinds): `<field> (<value>): <rule>`, e.g.
 * `spec.rotation.interval ("30s"): rotation.interval is 0s or at least 1m`. The value the user wrote is shown as JSON
 * (a string in double quotes, a number, list or object as JSON) in parentheses right after the field that holds it, and
 * parentheses hold nothing else; an absent value shows none: `spec.userRef.name: is required`. The rule names bounds and
 * allowed values bare, in the spec's words (`0s`, `1m`, `External`).
 */
export function violation(field: string, value: unknown, rule: string): Violation {
  const shown = value === undefined ? '' : ` (${JSON.stringify(value)})`;
  return { field, value, rule, message: `${field}${shown}: ${rule}` };
}

/**
 * A schema bound the validator checks before the rules (the CRD states the same bound in its openAPIV3Schema). A `map`
 * is an object of string values (`additionalProperties`), such as a label selector's `matchLabels`.
 */
export interface FieldBound {
  /** The field, dotted from the object root, `[]` stepping into every item. */
  readonly path: string;
  /** Must be present whenever its parent is. @default false */
  readonly required?: boolean;
  /** The JSON type; `object`: any object (its fields have bounds of their own). */
  readonly type: 'string' | 'integer' | 'array' | 'map' | 'object';
  /** Of a string (@default 1), and of each value of a map (@default 0). */
  readonly minLength?: number;
  /** Of a string, and of each value of a map. @default none */
  readonly maxLength?: number;
  /** Of an integer. @default none */
  readonly minimum?: number;
  /** Of a string. @default none */
  readonly enum?: readonly string[];
  /** Of an array. @default none */
  readonly minItems?: number;
  /** Of an array. @default none */
  readonly maxItems?: number;
  /** An array whose items are unique (`x-kubernetes-list-type: set`). @default false */
  readonly unique?: boolean;
  /** Entries of a map. @default none */
  readonly maxProperties?: number;
}

/** Each value at `path` with its concrete field path (`[]` expanded to `[i]`); absent leaves are reported as undefined. */
export function valuesAt(root: unknown, path: string): { field: string; value: unknown }[] {
  let nodes: { field: string; value: unknown }[] = [{ field: '', value: root }];
  if (path === '') return nodes;
  for (const segment of path.split('.')) {
    const each = segment.endsWith('[]');
    const key = each ? segment.slice(0, -2) : segment;
    const next: { field: string; value: unknown }[] = [];
    for (const node of nodes) {
      const value = node.value !== null && typeof node.value === 'object' ? (node.value as Record<string, unknown>)[key] : undefined;
      const field = node.field === '' ? key : `${node.field}.${key}`;
      if (!each) next.push({ field, value });
      else if (Array.isArray(value)) value.forEach((item: unknown, i) => next.push({ field: `${field}[${i}]`, value: item }));
    }
    nodes = next;
  }
  return nodes;
}

/** Whether the parent of `path` is present somewhere in `root` (a required field is missing only under a present parent). */
export function parentPresent(root: unknown, path: string): boolean {
  const dot = path.lastIndexOf('.');
  if (dot < 0) return true;
  return valuesAt(root, path.slice(0, dot)).some((n) => n.value !== undefined && n.value !== null);
}

/** Every violation of `bound` by the values its path reaches in `root`, into `out`. */
export function checkBound(out: Violation[], root: unknown, bound: FieldBound): void {
  for (const { field, value } of valuesAt(root, bound.path)) {
    if (value === undefined || value === null) {
      if (bound.required && parentPresent(root, bound.path)) out.push(violation(field, value, 'is required'));
    } else if (bound.type === 'string') {
      const minLength = bound.minLength ?? 1;
      if (typeof value !== 'string') out.push(violation(field, value, 'must be a string'));
      else if (value.length < minLength) out.push(violation(field, value, `must be at least ${minLength} character${minLength === 1 ? '' : 's'} long`));
      else if (bound.maxLength !== undefined && value.length > bound.maxLength) out.push(violation(field, value, `must be at most ${bound.maxLength} characters long`));
      else if (bound.enum && !bound.enum.includes(value)) out.push(violation(field, value, `must be one of ${bound.enum.join(', ')}`));
    } else if (bound.type === 'integer') {
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) out.push(violation(field, value, 'must be an integer'));
      else if (bound.minimum !== undefined && value < bound.minimum) out.push(violation(field, value, `must be at least ${bound.minimum}`));
    } else if (bound.type === 'map') checkMap(out, field, value, bound);
    else if (bound.type === 'object') {
      if (typeof value !== 'object' || Array.isArray(value)) out.push(violation(field, value, 'must be an object'));
    }
    else if (!Array.isArray(value)) out.push(violation(field, value, 'must be a list'));
    else if (bound.minItems !== undefined && value.length < bound.minItems) out.push(violation(field, value, `must have at least ${bound.minItems} item${bound.minItems === 1 ? '' : 's'}`));
    else if (bound.maxItems !== undefined && value.length > bound.maxItems) out.push(violation(field, value, `must have at most ${bound.maxItems} items`));
    else if (bound.unique && new Set(value.map((item) => JSON.stringify(item))).size !== value.length) out.push(violation(field, value, 'must not contain duplicates'));
  }
}

function checkMap(out: Violation[], field: string, value: unknown, bound: FieldBound): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    out.push(violation(field, value, 'must be an object of strings'));
    return;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (bound.maxProperties !== undefined && entries.length > bound.maxProperties) out.push(violation(field, value, `must have at most ${bound.maxProperties} entries`));
  for (const [key, item] of entries) {
    if (typeof item !== 'string') out.push(violation(`${field}.${key}`, item, 'must be a string'));
    else if (bound.minLength !== undefined && item.length < bound.minLength) out.push(violation(`${field}.${key}`, item, `must be at least ${bound.minLength} character${bound.minLength === 1 ? '' : 's'} long`));
    else if (bound.maxLength !== undefined && item.length > bound.maxLength) out.push(violation(`${field}.${key}`, item, `must be at most ${bound.maxLength} characters long`));
  }
}
