/**
 * A Kubernetes label selector (`metav1.LabelSelector`) as `KeystoneClusterIdentity.spec.allowedNamespaces.selector`
 * carries it (terraformclusteridentity.md, Allowed namespaces), the syntax of label keys and values the CRD checks, and
 * the matching Kubernetes applies (`metav1.LabelSelectorAsSelector`), in TypeScript for the operator's check.
 */

/** The operators of a `matchExpressions` entry. */
export const LABEL_SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
/** An operator of a `matchExpressions` entry. */
export type LabelSelectorOperator = (typeof LABEL_SELECTOR_OPERATORS)[number];

/** One `matchExpressions` entry (`metav1.LabelSelectorRequirement`). */
export interface LabelSelectorRequirement {
  /** The label key: a qualified name, optionally prefixed by a DNS subdomain and `/`. */
  readonly key: string;
  /** `In`, `NotIn`, `Exists` or `DoesNotExist`. */
  readonly operator: LabelSelectorOperator;
  /** Label values: non-empty for `In` and `NotIn`, empty or left out for `Exists` and `DoesNotExist`. @default none */
  readonly values?: readonly string[];
}

/**
 * `metav1.LabelSelector`: every `matchLabels` pair and every `matchExpressions` entry must hold (AND). An empty selector
 * (`{}`, or both fields empty) matches everything.
 */
export interface LabelSelector {
  /** Labels that must be present with exactly these values. @default none */
  readonly matchLabels?: Readonly<Record<string, string>>;
  /** Requirements that must all hold. @default none */
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** Bounds of a selector in the CRD: they keep the CEL cost estimate of the rules over it within the API server's budget. */
export const LabelSelectorLimits = {
  /** A label key: a 253-character prefix, `/`, and a 63-character name. */
  keyMaxLength: 317,
  /** The prefix of a label key: a DNS subdomain. */
  keyPrefixMaxLength: 253,
  /** A label value. */
  valueMaxLength: 63,
  /** Entries of `matchLabels`. */
  matchLabelsMaxProperties: 64,
  /** Entries of `matchExpressions`. */
  matchExpressionsMaxItems: 64,
  /** Values of one `matchExpressions` entry. */
  valuesMaxItems: 64,
} as const;

/**
 * A label key (Kubernetes' qualified name): an optional DNS-subdomain prefix and `/`, then a name of at most 63 letters,
 * digits, `-`, `_` or `.`, beginning and ending with a letter or digit. The prefix's 253-character bound is checked
 * apart ({@link isLabelKey}), as the position of the `/`.
 */
export const LABEL_KEY_PATTERN = '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$';
/** A label value: empty, or at most 63 letters, digits, `-`, `_` or `.`, beginning and ending with a letter or digit. */
export const LABEL_VALUE_PATTERN = '^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$';

/** The label-key rule in words, as the CRD's messages say it. */
export const LABEL_KEY_RULE = `an optional DNS subdomain prefix of at most ${LabelSelectorLimits.keyPrefixMaxLength} characters and a slash, then a name of at most 63 letters, digits, hyphens, underscores or dots, beginning and ending with a letter or digit`;
/** The label-value rule in words, as the CRD's messages say it. */
export const LABEL_VALUE_RULE = 'empty, or at most 63 letters, digits, hyphens, underscores or dots, beginning and ending with a letter or digit';

/** A pattern as a CEL string literal: CEL has no `\.` escape, so each backslash is escaped. */
export const celString = (pattern: string): string => `'${pattern.replace(/\\/g, '\\\\')}'`;
/** The label-key check as CEL over a string expression `s`: the pattern, and a `/` (if any) at most 253 characters in. */
export const celLabelKey = (s: string): string => `${s}.matches(${celString(LABEL_KEY_PATTERN)}) && ${s}.indexOf('/') <= ${LabelSelectorLimits.keyPrefixMaxLength}`;
/** The label-value check as CEL over a string expression `s`. */
export const celLabelValue = (s: string): string => `${s}.matches(${celString(LABEL_VALUE_PATTERN)})`;

const LABEL_KEY = new RegExp(LABEL_KEY_PATTERN);
const LABEL_VALUE = new RegExp(LABEL_VALUE_PATTERN);

/** True for a valid label key (the CRD's rule: the pattern, and a `/` at most 253 characters in). */
export function isLabelKey(key: unknown): boolean {
  return typeof key === 'string' && LABEL_KEY.test(key) && key.indexOf('/') <= LabelSelectorLimits.keyPrefixMaxLength;
}

/** True for a valid label value. */
export function isLabelValue(value: unknown): boolean {
  return typeof value === 'string' && LABEL_VALUE.test(value);
}

/** True when a `matchExpressions` entry's values fit its operator: some for `In`/`NotIn`, none for `Exists`/`DoesNotExist`. */
export function valuesFitOperator(requirement: { readonly operator?: unknown; readonly values?: unknown }): boolean {
  const count = Array.isArray(requirement.values) ? requirement.values.length : 0;
  return requirement.operator === 'In' || requirement.operator === 'NotIn' ? count > 0 : count === 0;
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * True when `selector` is a valid label selector: keys, values and operators as the CRD requires them. Kubernetes refuses
 * to convert an invalid selector; {@link labelSelectorMatches} treats one as matching nothing.
 */
export function isValidLabelSelector(selector: unknown): selector is LabelSelector {
  if (!isRecord(selector)) return false;
  const { matchLabels, matchExpressions } = selector;
  if (matchLabels !== undefined && !(isRecord(matchLabels) && Object.entries(matchLabels).every(([k, v]) => isLabelKey(k) && isLabelValue(v)))) return false;
  if (matchExpressions === undefined) return true;
  return (
    Array.isArray(matchExpressions) &&
    matchExpressions.every(
      (r: unknown) =>
        isRecord(r) &&
        isLabelKey(r.key) &&
        (LABEL_SELECTOR_OPERATORS as readonly unknown[]).includes(r.operator) &&
        (r.values === undefined || (Array.isArray(r.values) && r.values.every(isLabelValue))) &&
        valuesFitOperator(r),
    )
  );
}

/**
 * Whether `labels` satisfy `selector`, as Kubernetes matches a `metav1.LabelSelector`: every `matchLabels` pair is present
 * with its value, and every requirement holds (`In`: present with one of the values; `NotIn`: absent, or present with
 * none of them; `Exists`: present; `DoesNotExist`: absent). `{}` matches every set of labels. An invalid selector
 * ({@link isValidLabelSelector}) matches nothing, as Kubernetes refuses to convert one.
 */
export function labelSelectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  if (!isValidLabelSelector(selector)) return false;
  const has = (key: string): boolean => Object.prototype.hasOwnProperty.call(labels, key);
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (!has(key) || labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const present = has(key);
    const holds =
      operator === 'In' ? present && values.includes(labels[key]) : operator === 'NotIn' ? !present || !values.includes(labels[key]) : operator === 'Exists' ? present : !present;
    if (!holds) return false;
  }
  return true;
}
