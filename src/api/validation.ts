/**
 * The CRD's validation, for callers with no API server in front of them (the Pulumi provider, the cdk8s constructs at
 * synth time). It applies the schema defaults the API server would, then the schema's bounds and every rule of
 * {@link RULES}, and returns every violation, each naming the field, the value and the rule.
 */
import { DEFAULT_CREDENTIAL_GENERATION, DEFAULT_GRACE_PERIOD, DEFAULT_INTERVAL } from './defaults';
import { Duration, DurationError } from './duration';
import { ADOPTION_BOUNDS } from './adoption';
import { DELETION_POLICY_BOUNDS } from './deletion-policy';
import { PRIVILEGE_BOUNDS } from './privileges';
import { SECRET_TEMPLATE_BOUNDS } from './secret-template';
import { Limits, RULES, type Rule } from './rules';
import type { KeystoneApplicationCredentialSpec } from './types';

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

/** Thrown by {@link assertValid}; carries every violation. */
export class ValidationError extends Error {
  constructor(readonly violations: readonly Violation[]) {
    super(violations.map((v) => v.message).join('; '));
    this.name = 'ValidationError';
  }
}

/** What validation reads of an order: the name and a spec that may still lack defaulted fields. */
export interface OrderInput {
  readonly metadata?: { readonly name?: string };
  readonly spec?: Partial<KeystoneApplicationCredentialSpec>;
}

/** Which fields to check: the whole order, or only the settings a Pulumi resource carries. */
export type ValidationScope = 'order' | 'settings';

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

/** The order as the API server would store it: the schema defaults filled in, without touching the input. */
export function withSchemaDefaults(order: OrderInput): OrderInput {
  const spec = order.spec ?? {};
  return {
    ...order,
    spec: {
      ...spec,
      credentialGeneration: spec.credentialGeneration ?? DEFAULT_CREDENTIAL_GENERATION,
      rotation: {
        interval: spec.rotation?.interval ?? DEFAULT_INTERVAL,
        gracePeriod: spec.rotation?.gracePeriod ?? DEFAULT_GRACE_PERIOD,
      },
    },
  };
}

/** The value at a path without `[]` (the first node `valuesAt` reaches). */
function at(root: unknown, path: string): unknown {
  return valuesAt(root, path)[0]?.value;
}

function checkName(out: Violation[], field: string, value: unknown, maxLength: number, required = true): void {
  if (value === undefined || value === null) {
    if (required) out.push(violation(field, value, 'is required'));
  } else if (typeof value !== 'string') out.push(violation(field, value, 'must be a string'));
  else if (value.length < 1) out.push(violation(field, value, 'must be at least 1 character long'));
  else if (value.length > maxLength) out.push(violation(field, value, `must be at most ${maxLength} characters long`));
}

function checkSchema(order: OrderInput, scope: ValidationScope): Violation[] {
  const out: Violation[] = [];
  const spec = order.spec ?? {};
  if (scope === 'order') {
    checkName(out, 'metadata.name', order.metadata?.name, Number.MAX_SAFE_INTEGER);
    checkName(out, 'spec.controlPlaneRef.name', spec.controlPlaneRef?.name, Limits.refNameMaxLength);
    // Optional: left out, it means the order's own namespace (identity-plane.md, References).
    checkName(out, 'spec.controlPlaneRef.namespace', spec.controlPlaneRef?.namespace, Limits.refNameMaxLength, false);
    checkName(out, 'spec.userRef.name', spec.userRef?.name, Limits.refNameMaxLength);
    checkName(out, 'spec.projectRef.name', spec.projectRef?.name, Limits.refNameMaxLength);
  }
  const generation: unknown = spec.credentialGeneration;
  if (typeof generation !== 'number' || !Number.isSafeInteger(generation)) {
    out.push(violation('spec.credentialGeneration', generation, 'must be an integer'));
  } else if (generation < Limits.credentialGenerationMinimum) {
    out.push(violation('spec.credentialGeneration', generation, `must be at least ${Limits.credentialGenerationMinimum}`));
  }
  for (const key of ['interval', 'gracePeriod'] as const) {
    const field = `spec.rotation.${key}`;
    const value: unknown = spec.rotation?.[key];
    if (typeof value !== 'string') {
      out.push(violation(field, value, 'must be a Go duration string like 720h'));
      continue;
    }
    if (value.length > Limits.durationMaxLength) {
      // The CRD's maxLength: the API server refuses a longer string before any rule runs.
      out.push(violation(field, value, `must be at most ${Limits.durationMaxLength} characters long`));
      continue;
    }
    try {
      Duration.parse(value, field);
    } catch (error) {
      out.push(violation(field, value, error instanceof DurationError ? error.rule : String(error)));
    }
  }
  // Not the reference's (issue 42): the credential's roles and access rules, the same in both scopes.
  for (const bound of PRIVILEGE_BOUNDS) checkBound(out, order, bound);
  // Not the reference's (issue 49): the template and the deletion policy in both scopes, the adoption on an order.
  for (const bound of [...SECRET_TEMPLATE_BOUNDS, ...DELETION_POLICY_BOUNDS, ...(scope === 'order' ? ADOPTION_BOUNDS : [])]) checkBound(out, order, bound);
  return out;
}

/** The settings a Pulumi resource carries: the rotation, the generation, the roles, the access rules, the template and the deletion policy. */
const SETTINGS = ['spec.rotation', 'spec.credentialGeneration', 'spec.roles', 'spec.accessRules', 'spec.secretTemplate', 'spec.deletionPolicy'];

function inScope(rule: Rule, scope: ValidationScope): boolean {
  return scope === 'order' || SETTINGS.some((prefix) => rule.path === prefix || rule.path.startsWith(`${prefix}.`) || rule.path.startsWith(`${prefix}[]`));
}

/**
 * Every violation of the CRD's schema and rules by `order` (after schema defaults), and of the transition rules against
 * `old` when given. A field whose value is malformed is reported once, by the schema check, not again by its rules.
 */
export function validate(order: OrderInput, old?: OrderInput, scope: ValidationScope = 'order'): Violation[] {
  const next = withSchemaDefaults(order);
  const previous = old ? withSchemaDefaults(old) : undefined;
  const out = checkSchema(next, scope);
  const malformed = new Set(out.map((v) => v.field));
  for (const rule of RULES) {
    if (!inScope(rule, scope)) continue;
    if (rule.path === 'spec.rotation' && (malformed.has('spec.rotation.interval') || malformed.has('spec.rotation.gracePeriod'))) continue;
    const olds = rule.transition && previous ? valuesAt(previous, rule.path) : [];
    valuesAt(next, rule.path).forEach(({ field: node, value: self }, i) => {
      const field = rule.field ?? node;
      if (self === undefined || malformed.has(node) || malformed.has(field) || [...malformed].some((m) => m.startsWith(`${node}[`))) return;
      if (rule.transition) {
        const oldSelf = olds[i]?.value;
        if (oldSelf === undefined || rule.holds(self, oldSelf)) return;
      } else if (rule.holds(self)) return;
      out.push(violation(field, rule.field ? at(next, field) : self, rule.message));
    });
  }
  return out;
}

/** Throws a {@link ValidationError} listing every violation, if there is any. */
export function assertValid(order: OrderInput, old?: OrderInput, scope: ValidationScope = 'order'): void {
  const violations = validate(order, old, scope);
  if (violations.length > 0) throw new ValidationError(violations);
}
