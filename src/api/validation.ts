/**
 * The CRD's validation, for callers with no API server in front of them (the Pulumi provider, the cdk8s constructs at
 * synth time). It applies the schema defaults the API server would, then the schema's bounds and every rule of
 * {@link RULES}, and returns every violation, each naming the field, the value and the rule.
 */
import { DEFAULT_CREDENTIAL_GENERATION, DEFAULT_GRACE_PERIOD, DEFAULT_INTERVAL } from './defaults';
import { Duration, DurationError } from './duration';
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

function at(root: unknown, path: string): unknown {
  if (path === '') return root;
  let node: unknown = root;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
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
  return out;
}

function inScope(rule: Rule, scope: ValidationScope): boolean {
  return scope === 'order' || rule.path.startsWith('spec.rotation') || rule.path === 'spec.credentialGeneration';
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
    const self = at(next, rule.path);
    const field = rule.field ?? rule.path;
    if (self === undefined || malformed.has(rule.path) || malformed.has(field)) continue;
    if (rule.path === 'spec.rotation' && (malformed.has('spec.rotation.interval') || malformed.has('spec.rotation.gracePeriod'))) continue;
    if (rule.transition) {
      const oldSelf = previous ? at(previous, rule.path) : undefined;
      if (oldSelf === undefined || rule.holds(self, oldSelf)) continue;
    } else if (rule.holds(self)) continue;
    out.push(violation(field, at(next, field), rule.message));
  }
  return out;
}

/** Throws a {@link ValidationError} listing every violation, if there is any. */
export function assertValid(order: OrderInput, old?: OrderInput, scope: ValidationScope = 'order'): void {
  const violations = validate(order, old, scope);
  if (violations.length > 0) throw new ValidationError(violations);
}
