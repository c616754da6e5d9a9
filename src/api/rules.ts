/**
 * Every rule of the spec's "Defaulting and Validation Summary", written once: as the CEL the CRD carries and as the
 * TypeScript check `validate` runs for callers with no API server in front (the Pulumi provider, the cdk8s constructs).
 * The message is the spec's quoted message, so a user sees the same words from `kubectl apply`, `cdk8s synth` and
 * `pulumi preview`.
 */
import { ADOPTION_RULES } from './adoption';
import { Duration } from './duration';
import type { Rule } from './field-rules';
import { PRIVILEGE_RULES } from './privileges';
import { SECRET_TEMPLATE_RULES } from './secret-template';

/** Lengths and bounds of the schema (spec, Spec). */
export const Limits = {
  /** `userRef.name`, `projectRef.name`, `controlPlaneRef.*`: 1 to 63 characters. */
  refNameMaxLength: 63,
  /** `metadata.name`: at most 63 bytes, so `<name>-credentials` and the child names stay label-safe. */
  nameMaxBytes: 63,
  credentialGenerationMinimum: 1,
  intervalMinimum: '1m',
  intervalMaximum: '87600h',
  /** `rotation.interval`, `rotation.gracePeriod`: the longest duration string; Go's longest canonical form is 24 characters. */
  durationMaxLength: 64,
} as const;

function durationOf(value: unknown): Duration | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return Duration.parse(value);
  } catch {
    return undefined;
  }
}

const equalJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * A DNS label (RFC 1123), what Kubernetes requires of a namespace's name: lowercase letters, digits and hyphens,
 * beginning and ending with a letter or digit. The 63-character bound is the schema's `maxLength`.
 */
export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const DNS_LABEL = new RegExp(DNS_LABEL_PATTERN);

/** The rule every namespace field carries, at `path`, naming the field `name` in its message. */
export function dnsLabelRule<P extends string>(path: P, name: string): Omit<Rule, 'path'> & { readonly path: P } {
  return {
    path,
    cel: `self.matches('${DNS_LABEL_PATTERN}')`,
    message: `${name} must be a DNS label: at most ${Limits.refNameMaxLength} lowercase letters, digits or hyphens, beginning and ending with a letter or digit`,
    transition: false,
    holds: (self) => typeof self !== 'string' || DNS_LABEL.test(self),
  };
}

/** `controlPlaneRef.namespace` as written, or undefined when it is left out. */
const refNamespace = (ref: unknown): unknown => (ref !== null && typeof ref === 'object' ? (ref as { namespace?: unknown }).namespace : undefined);

/**
 * The `controlPlaneRef` rules, the same on every order kind (spec: "controlPlaneRef: as for a KeystoneUser";
 * identity-plane.md, References): both halves immutable, and the namespace, which may be left out to mean the order's
 * own namespace, a DNS label.
 *
 * The namespace rule sits on `controlPlaneRef`, not on `namespace`, so it also sees the namespace appear or disappear: a
 * rule on a field runs only when the field is in both objects. CRD rules cannot read `metadata.namespace` (the API
 * server gives them only `metadata.name` and `generateName`), so they cannot tell that a written-out namespace equals
 * the one it defaulted to: writing it out or leaving it out later is refused as a change, whatever its value.
 * `namespace` is a CEL reserved word; the API server exposes the field as `__namespace__`.
 */
export const CONTROL_PLANE_REF_RULES: readonly Rule[] = [
  {
    path: 'spec.controlPlaneRef.name',
    cel: 'self == oldSelf',
    message: 'controlPlaneRef.name is immutable',
    transition: true,
    holds: equalJson,
  },
  {
    path: 'spec.controlPlaneRef',
    field: 'spec.controlPlaneRef.namespace',
    cel: "(has(self.__namespace__) ? self.__namespace__ : '') == (has(oldSelf.__namespace__) ? oldSelf.__namespace__ : '')",
    message: 'controlPlaneRef.namespace is immutable',
    transition: true,
    holds: (self, old) => refNamespace(self) === refNamespace(old),
  },
  dnsLabelRule('spec.controlPlaneRef.namespace', 'controlPlaneRef.namespace'),
];

const ONE_MINUTE = Duration.parse(Limits.intervalMinimum);
const MAX_INTERVAL = Duration.parse(Limits.intervalMaximum);

/** The rules, in the order of the spec's Validation Summary. */
export const RULES: readonly Rule[] = [
  { path: 'spec.userRef', cel: 'self == oldSelf', message: 'userRef is immutable', transition: true, holds: equalJson },
  { path: 'spec.projectRef', cel: 'self == oldSelf', message: 'projectRef is immutable', transition: true, holds: equalJson },
  {
    path: 'spec.credentialGeneration',
    cel: 'self >= oldSelf',
    message: 'credentialGeneration may only increase',
    transition: true,
    holds: (self, old) => typeof self !== 'number' || typeof old !== 'number' || self >= old,
  },
  {
    path: 'spec.rotation.interval',
    cel: "duration(self) == duration('0s') || duration(self) >= duration('1m')",
    message: 'rotation.interval is 0s or at least 1m',
    transition: false,
    holds: (self) => {
      const d = durationOf(self);
      return d !== undefined && (d.isZero() || d.compare(ONE_MINUTE) >= 0);
    },
  },
  {
    path: 'spec.rotation.interval',
    cel: "duration(self) <= duration('87600h')",
    message: 'rotation.interval is at most 87600h',
    transition: false,
    holds: (self) => {
      const d = durationOf(self);
      return d !== undefined && d.compare(MAX_INTERVAL) <= 0;
    },
  },
  {
    path: 'spec.rotation.gracePeriod',
    cel: "duration(self) >= duration('0s')",
    message: 'rotation.gracePeriod is not negative',
    transition: false,
    holds: (self) => {
      const d = durationOf(self);
      return d !== undefined && !d.isNegative();
    },
  },
  {
    // has() guards: the API server validates the `{}` default of `rotation` before the field defaults fill it in.
    path: 'spec.rotation',
    cel: "!has(self.interval) || !has(self.gracePeriod) || duration(self.interval) == duration('0s') || duration(self.gracePeriod) < duration(self.interval)",
    message: 'rotation.gracePeriod must be shorter than rotation.interval',
    transition: false,
    holds: (self) => {
      const rotation = (self ?? {}) as { interval?: unknown; gracePeriod?: unknown };
      const interval = durationOf(rotation.interval);
      const grace = durationOf(rotation.gracePeriod);
      return interval === undefined || grace === undefined || interval.isZero() || grace.compare(interval) < 0;
    },
  },
  ...CONTROL_PLANE_REF_RULES,
  // Not the reference's (issue 42): the credential's roles and access rules (privileges.ts).
  ...PRIVILEGE_RULES,
  // Not the reference's (issue 49): the delivered Secret's template and the adoption of an existing credential.
  ...SECRET_TEMPLATE_RULES,
  ...ADOPTION_RULES,
  {
    path: '',
    field: 'metadata.name',
    cel: 'size(self.metadata.name) <= 63',
    message: 'metadata.name must be at most 63 bytes',
    transition: false,
    holds: (self) => {
      const name = (self as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
      return typeof name !== 'string' || Buffer.byteLength(name, 'utf8') <= Limits.nameMaxBytes;
    },
  },
];
