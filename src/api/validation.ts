/**
 * The CRD's validation, for callers with no API server in front of them (the Pulumi provider, the cdk8s constructs at
 * synth time). It applies the schema defaults the API server would, then the schema's bounds and every rule of
 * {@link RULES}, and returns every violation, each naming the field, the value and the rule.
 */
import { DEFAULT_CREDENTIAL_GENERATION, DEFAULT_GRACE_PERIOD, DEFAULT_INTERVAL } from './defaults';
import { Duration, DurationError } from './duration';
import { ADOPTION_BOUNDS } from './adoption';
import { DELETION_POLICY_BOUNDS } from './deletion-policy';
import { checkBound, valuesAt, violation, type Rule, type Violation } from './field-rules';
import { PRIVILEGE_BOUNDS } from './privileges';
import { Limits, RULES } from './rules';
import { SECRET_TEMPLATE_BOUNDS } from './secret-template';
import type { KeystoneApplicationCredentialSpec } from './types';

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
