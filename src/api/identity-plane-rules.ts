/**
 * The CRD rules of the four neighbour kinds, written once as in `rules.ts`: each entry is the CEL the CRD carries, the
 * message the API server answers with, and the TypeScript twin `validatePlane` runs for callers with no API server in
 * front (the cdk8s constructs at synth time).
 */
import { checkBound, parentPresent, valuesAt, violation, type FieldBound, type Rule, type Violation } from './field-rules';
import { PlaneDefaults, PlaneLimits, type PlaneKind } from './identity-plane';
import { CONTROL_PLANE_REF_RULES, dnsLabelRule } from './rules';

/**
 * A rule of a neighbour kind: the shape of {@link Rule}, with the path free. A path is dotted from the object root;
 * `[]` after a segment steps into every item of that array (`spec.namespaceAssignments[].allowedRoles`).
 */
export interface PlaneRule extends Omit<Rule, 'path'> {
  /** The schema node the rule is attached to, dotted from the object root (`''` is the root). */
  readonly path: string;
}

const equalJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const noComma = (self: unknown): boolean => typeof self !== 'string' || !self.includes(',');
/** An http(s) URL with a host and no query or fragment, ending in /v3 (CEL `matches` uses RE2, as does this). */
const AUTH_URL = '^https?://[^/?#\\s]+(/[^?#\\s]*)?/v3$';
const authUrl = (self: unknown): boolean => typeof self === 'string' && new RegExp(AUTH_URL).test(self);
/** The same pattern as a CEL string literal: CEL has no `\s` escape, so each backslash is escaped. */
const AUTH_URL_CEL = `'${AUTH_URL.replace(/\\/g, '\\\\')}'`;

interface Meta {
  metadata?: { name?: unknown };
  spec?: Record<string, unknown>;
}
const asMeta = (value: unknown): Meta => (value ?? {}) as Meta;

/** The name a spec field defaults to at reconcile time: the field, or else `metadata.name`. */
function effectiveName(field: string): (self: unknown) => unknown {
  return (self) => {
    const object = asMeta(self);
    return object.spec?.[field] ?? object.metadata?.name;
  };
}

function immutableName(field: string): PlaneRule {
  const name = effectiveName(field);
  return {
    path: '',
    cel: `(has(self.spec.${field}) ? self.spec.${field} : self.metadata.name) == (has(oldSelf.spec.${field}) ? oldSelf.spec.${field} : oldSelf.metadata.name)`,
    message: `${field} is immutable`,
    transition: true,
    field: `spec.${field}`,
    holds: (self, old) => name(self) === name(old),
  };
}

/**
 * `controlPlaneRef`: the KeystoneApplicationCredential's rules, written once in `rules.ts` (both halves immutable, the
 * namespace optional and a DNS label).
 */
const CONTROL_PLANE_REF: readonly PlaneRule[] = CONTROL_PLANE_REF_RULES;

/** An order's name is carried by label values and `<name>-credentials`: at most 63 bytes. */
const NAME_LENGTH: PlaneRule = {
  path: '',
  cel: `size(self.metadata.name) <= ${PlaneLimits.nameMaxBytes}`,
  message: `metadata.name must be at most ${PlaneLimits.nameMaxBytes} bytes`,
  transition: false,
  field: 'metadata.name',
  holds: (self) => {
    const name = asMeta(self).metadata?.name;
    return typeof name !== 'string' || Buffer.byteLength(name, 'utf8') <= PlaneLimits.nameMaxBytes;
  },
};

const assignmentKey = (a: unknown): string => {
  const entry = (a ?? {}) as { namespace?: unknown; targetClusterRef?: { name?: unknown } };
  return `${String(entry.targetClusterRef?.name ?? '')}/${String(entry.namespace)}`;
};

/** Every neighbour kind's rules. */
export const PLANE_RULES: Readonly<Record<PlaneKind, readonly PlaneRule[]>> = {
  ControlPlane: [
    {
      path: 'spec.services.keystone.mode',
      cel: `self == '${PlaneDefaults.mode}'`,
      message: 'services.keystone.mode must be External: only an existing Keystone is supported',
      transition: false,
      holds: (self) => self === PlaneDefaults.mode,
    },
    {
      path: 'spec.services.keystone.external.authURL',
      cel: `self.matches(${AUTH_URL_CEL})`,
      message: 'services.keystone.external.authURL must be an http or https URL ending in /v3',
      transition: false,
      holds: authUrl,
    },
    {
      path: 'spec.services.keystone.publicEndpoint',
      cel: `self.matches(${AUTH_URL_CEL})`,
      message: 'services.keystone.publicEndpoint must be an http or https URL ending in /v3',
      transition: false,
      holds: authUrl,
    },
    {
      // issue 11: the admin credential is the ControlPlane's own Secret or a KeystoneClusterIdentity, never both.
      path: 'spec.adminCredential',
      cel: 'has(self.cloudCredentialsRef) != has(self.identityRef)',
      message: 'adminCredential must set exactly one of cloudCredentialsRef (a Secret in the ControlPlane\'s namespace) and identityRef (a KeystoneClusterIdentity)',
      transition: false,
      holds: (self) => {
        const credential = (self ?? {}) as { cloudCredentialsRef?: unknown; identityRef?: unknown };
        return (credential.cloudCredentialsRef != null) !== (credential.identityRef != null);
      },
    },
    {
      path: 'spec.namespaceAssignments',
      // `namespace` is a CEL reserved word: the API server exposes the field as `__namespace__`. Written as `a.namespace`
      // it compiles to an untyped lookup whose estimated cost is unbounded, and the CRD is refused.
      cel: "self.all(a, self.exists_one(b, b.__namespace__ == a.__namespace__ && (has(b.targetClusterRef) ? b.targetClusterRef.name : '') == (has(a.targetClusterRef) ? a.targetClusterRef.name : '')))",
      message: 'namespaceAssignments must not assign the same namespace on the same cluster twice',
      transition: false,
      holds: (self) => {
        const keys = Array.isArray(self) ? self.map(assignmentKey) : [];
        return new Set(keys).size === keys.length;
      },
    },
    dnsLabelRule('spec.namespaceAssignments[].namespace', 'namespaceAssignments[].namespace'),
    {
      path: 'spec.namespaceAssignments[].allowedRoles',
      cel: "self.all(r, !r.contains(','))",
      message: 'allowedRoles entries must not contain a comma',
      transition: false,
      holds: (self) => !Array.isArray(self) || self.every(noComma),
    },
  ],
  KeystoneProject: [
    ...CONTROL_PLANE_REF,
    immutableName('projectName'),
    // identity-plane.md: "no comma", as for userName and role (Keystone's lists are comma-separated).
    { path: 'spec.projectName', cel: "!self.contains(',')", message: 'projectName must not contain a comma', transition: false, holds: noComma },
    NAME_LENGTH,
  ],
  KeystoneUser: [
    ...CONTROL_PLANE_REF,
    immutableName('userName'),
    { path: 'spec.userName', cel: "!self.contains(',')", message: 'userName must not contain a comma', transition: false, holds: noComma },
    {
      path: 'spec.passwordGeneration',
      cel: 'self >= oldSelf',
      message: 'passwordGeneration may only increase',
      transition: true,
      holds: (self, old) => typeof self !== 'number' || typeof old !== 'number' || self >= old,
    },
    NAME_LENGTH,
  ],
  KeystoneRoleAssignment: [
    ...CONTROL_PLANE_REF,
    { path: 'spec.userRef', cel: 'self == oldSelf', message: 'userRef is immutable', transition: true, holds: equalJson },
    { path: 'spec.projectRef', cel: 'self == oldSelf', message: 'projectRef is immutable', transition: true, holds: equalJson },
    { path: 'spec.role', cel: 'self == oldSelf', message: 'role is immutable', transition: true, holds: equalJson },
    { path: 'spec.role', cel: "!self.contains(',')", message: 'role must not contain a comma', transition: false, holds: noComma },
    NAME_LENGTH,
  ],
};

const refBounds = (prefix: string): FieldBound[] => [
  { path: `${prefix}.name`, required: true, type: 'string', maxLength: PlaneLimits.refNameMaxLength },
];
const CONTROL_PLANE_REF_BOUNDS: readonly FieldBound[] = [
  ...refBounds('spec.controlPlaneRef'),
  // Optional: left out, it means the order's own namespace (identity-plane.md, References).
  { path: 'spec.controlPlaneRef.namespace', type: 'string', maxLength: PlaneLimits.refNameMaxLength },
];
const K = PlaneLimits.keystoneNameMaxLength;

/** The bounds of each kind's schema (strings are at least 1 character long wherever they are given). */
const BOUNDS: Readonly<Record<PlaneKind, readonly FieldBound[]>> = {
  ControlPlane: [
    { path: 'spec.region', type: 'string', maxLength: K },
    { path: 'spec.services.keystone.mode', type: 'string', maxLength: 32 },
    { path: 'spec.services.keystone.external.authURL', required: true, type: 'string', maxLength: PlaneLimits.urlMaxLength },
    { path: 'spec.services.keystone.external.endpointType', type: 'string', enum: ['public', 'internal'] },
    { path: 'spec.services.keystone.external.caBundleSecretRef.name', type: 'string', maxLength: PlaneLimits.secretNameMaxLength },
    { path: 'spec.services.keystone.external.caBundleSecretRef.key', type: 'string', maxLength: PlaneLimits.secretNameMaxLength },
    { path: 'spec.services.keystone.publicEndpoint', type: 'string', maxLength: PlaneLimits.urlMaxLength },
    { path: 'spec.adminCredential.cloudCredentialsRef.secretName', required: true, type: 'string', maxLength: PlaneLimits.secretNameMaxLength },
    { path: 'spec.adminCredential.cloudCredentialsRef.cloudName', type: 'string', maxLength: K },
    { path: 'spec.adminCredential.identityRef.name', required: true, type: 'string', maxLength: PlaneLimits.refNameMaxLength },
    { path: 'spec.adminCredential.domainName', type: 'string', maxLength: K },
    { path: 'spec.namespaceAssignments', type: 'array', maxItems: PlaneLimits.namespaceAssignmentsMaxItems },
    { path: 'spec.namespaceAssignments[].namespace', required: true, type: 'string', maxLength: PlaneLimits.refNameMaxLength },
    { path: 'spec.namespaceAssignments[].targetClusterRef.name', type: 'string', maxLength: PlaneLimits.refNameMaxLength },
    { path: 'spec.namespaceAssignments[].allowedRoles', type: 'array', maxItems: PlaneLimits.allowedRolesMaxItems },
    { path: 'spec.namespaceAssignments[].allowedRoles[]', type: 'string', maxLength: K },
  ],
  KeystoneProject: [...CONTROL_PLANE_REF_BOUNDS, { path: 'spec.projectName', type: 'string', maxLength: PlaneLimits.projectNameMaxLength }],
  KeystoneUser: [
    ...CONTROL_PLANE_REF_BOUNDS,
    { path: 'spec.userName', type: 'string', maxLength: K },
    { path: 'spec.passwordGeneration', type: 'integer', minimum: PlaneLimits.passwordGenerationMinimum },
  ],
  KeystoneRoleAssignment: [
    ...CONTROL_PLANE_REF_BOUNDS,
    ...refBounds('spec.userRef'),
    ...refBounds('spec.projectRef'),
    { path: 'spec.role', required: true, type: 'string', maxLength: K },
  ],
};

/** The top-level required blocks of each kind: their absence is reported once, not as every missing leaf. */
const REQUIRED_BLOCKS: Readonly<Record<PlaneKind, readonly string[]>> = {
  // adminCredential holds cloudCredentialsRef or identityRef: exactly one, a rule (issue 11).
  ControlPlane: ['spec.services', 'spec.services.keystone', 'spec.services.keystone.external', 'spec.adminCredential'],
  KeystoneProject: ['spec.controlPlaneRef'],
  KeystoneUser: ['spec.controlPlaneRef'],
  KeystoneRoleAssignment: ['spec.controlPlaneRef', 'spec.userRef', 'spec.projectRef', 'spec.role'],
};

/** What {@link validateAgainst} checks a kind with: its rules, its schema bounds and its required top-level blocks. */
export interface RuleTable {
  /** The CRD rules, each with its TypeScript twin. */
  readonly rules: readonly PlaneRule[];
  /** The schema bounds. */
  readonly bounds: readonly FieldBound[];
  /** Objects that must be present whenever their parent is; their absence is reported once, not as every missing leaf. */
  readonly requiredBlocks: readonly string[];
}

/**
 * Every violation of a neighbour kind's schema bounds and rules by `object`, and of its transition rules against `old`
 * when given; messages have the shape of `validate`'s, from the same {@link violation}: `field (value): rule`. Schema
 * defaults are not needed: every defaulted field is optional and every rule on one holds for its default.
 */
export function validatePlane(kind: PlaneKind, object: unknown, old?: unknown): Violation[] {
  return validateAgainst({ rules: PLANE_RULES[kind], bounds: BOUNDS[kind], requiredBlocks: REQUIRED_BLOCKS[kind] }, object, old);
}

/**
 * {@link validatePlane} over any kind's {@link RuleTable}: `metadata.name` present, the required blocks, the bounds,
 * then each rule on every value its path reaches (a field a bound already refused is not checked again by its rules).
 */
export function validateAgainst(table: RuleTable, object: unknown, old?: unknown): Violation[] {
  const out: Violation[] = [];
  const name = asMeta(object).metadata?.name;
  if (typeof name !== 'string' || name.length === 0) out.push(violation('metadata.name', name, 'is required'));
  for (const block of table.requiredBlocks) {
    const [node] = valuesAt(object, block);
    if ((node?.value === undefined || node.value === null) && parentPresent(object, block)) out.push(violation(block, node?.value, 'is required'));
  }
  for (const bound of table.bounds) checkBound(out, object, bound);
  const malformed = new Set(out.map((v) => v.field));
  for (const rule of table.rules) {
    const olds = rule.transition && old !== undefined ? valuesAt(old, rule.path) : [];
    valuesAt(object, rule.path).forEach(({ field, value }, i) => {
      if (value === undefined || malformed.has(field) || (rule.field !== undefined && malformed.has(rule.field))) return;
      if (rule.transition) {
        const previous = olds[i]?.value;
        if (previous === undefined || rule.holds(rule.path === '' ? object : value, rule.path === '' ? old : previous)) return;
      } else if (rule.holds(value)) return;
      const shown = rule.field ?? field;
      out.push(violation(shown, rule.field ? valuesAt(object, rule.field)[0]?.value : value, rule.message));
    });
  }
  return out;
}
