/**
 * The KeystoneClusterIdentity's CRD rules, written once as in `identity-plane-rules.ts`: each entry is the CEL the CRD
 * carries, the message the API server answers with, and the TypeScript twin `validateClusterIdentity` runs for callers
 * with no API server in front (the cdk8s construct at synth time). terraformclusteridentity.md, Validation, lists them;
 * every field is mutable, so there is no transition rule.
 *
 * Who may create an identity (the author must be allowed to `get` its Secret) and when it may be deleted (not while
 * `status.namespaces` lists a namespace) are not CRD rules: the ValidatingAdmissionPolicy of
 * `constructs/cluster-identity-admission.ts` checks them, as CRD rules can neither ask the authorizer nor see a delete.
 */
import { ClusterIdentityLimits as L } from './cluster-identity';
import { DNS_SUBDOMAIN_PATTERN } from './naming';
import { dnsLabelRule } from './rules';
import { validateAgainst, type PlaneRule, type RuleTable } from './identity-plane-rules';
import type { FieldBound, Violation } from './field-rules';
import {
  celLabelKey,
  celLabelValue,
  celString,
  isLabelKey,
  isLabelValue,
  LABEL_KEY_RULE,
  LABEL_SELECTOR_OPERATORS,
  LABEL_VALUE_RULE,
  LabelSelectorLimits,
  valuesFitOperator,
} from './label-selector';

const DNS_SUBDOMAIN = new RegExp(DNS_SUBDOMAIN_PATTERN);

const SELECTOR = 'spec.allowedNamespaces.selector';
const EXPRESSIONS = `${SELECTOR}.matchExpressions[]`;

const entriesOf = (self: unknown): [string, unknown][] => (self !== null && typeof self === 'object' && !Array.isArray(self) ? Object.entries(self) : []);

/** The KeystoneClusterIdentity's rules. */
export const CLUSTER_IDENTITY_RULES: readonly PlaneRule[] = [
  {
    path: 'spec.secretRef.name',
    cel: `self.matches(${celString(DNS_SUBDOMAIN_PATTERN)})`,
    message: `secretRef.name must be a DNS subdomain: at most ${L.secretNameMaxLength} lowercase letters, digits, hyphens or dots, each dot-separated part beginning and ending with a letter or digit`,
    transition: false,
    holds: (self) => typeof self !== 'string' || DNS_SUBDOMAIN.test(self),
  },
  dnsLabelRule('spec.secretRef.namespace', 'secretRef.namespace'),
  {
    // terraformclusteridentity.md: the most permissive value must not look like the least, so `{}` is refused.
    path: 'spec.allowedNamespaces',
    cel: 'has(self.list) || has(self.selector)',
    message: 'allowedNamespaces must set list, selector or both: write selector: {} to allow every namespace, or leave allowedNamespaces out to allow none',
    transition: false,
    holds: (self) => {
      const allowed = (self ?? {}) as { list?: unknown; selector?: unknown };
      return allowed.list != null || allowed.selector != null;
    },
  },
  dnsLabelRule('spec.allowedNamespaces.list[]', 'allowedNamespaces.list[]'),
  {
    path: `${SELECTOR}.matchLabels`,
    cel: `self.all(k, ${celLabelKey('k')})`,
    message: `selector.matchLabels keys must be label keys: ${LABEL_KEY_RULE}`,
    transition: false,
    holds: (self) => entriesOf(self).every(([key]) => isLabelKey(key)),
  },
  {
    path: `${SELECTOR}.matchLabels`,
    cel: `self.all(k, ${celLabelValue('self[k]')})`,
    message: `selector.matchLabels values must be label values: ${LABEL_VALUE_RULE}`,
    transition: false,
    holds: (self) => entriesOf(self).every(([, value]) => typeof value !== 'string' || isLabelValue(value)),
  },
  {
    path: `${EXPRESSIONS}.key`,
    cel: celLabelKey('self'),
    message: `selector.matchExpressions[].key must be a label key: ${LABEL_KEY_RULE}`,
    transition: false,
    holds: (self) => typeof self !== 'string' || isLabelKey(self),
  },
  {
    path: EXPRESSIONS,
    // An unknown operator is the schema's enum to refuse, not this rule's.
    cel: "self.operator == 'In' || self.operator == 'NotIn' ? has(self.values) && size(self.values) > 0 : self.operator != 'Exists' && self.operator != 'DoesNotExist' || !has(self.values) || size(self.values) == 0",
    message: 'selector.matchExpressions[].values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist',
    transition: false,
    holds: (self) => {
      const requirement = (self ?? {}) as { operator?: unknown; values?: unknown };
      return !(LABEL_SELECTOR_OPERATORS as readonly unknown[]).includes(requirement.operator) || valuesFitOperator(requirement);
    },
  },
  {
    path: `${EXPRESSIONS}.values[]`,
    cel: celLabelValue('self'),
    message: `selector.matchExpressions[].values entries must be label values: ${LABEL_VALUE_RULE}`,
    transition: false,
    holds: (self) => typeof self !== 'string' || isLabelValue(self),
  },
  {
    path: '',
    field: 'metadata.name',
    cel: `size(self.metadata.name) <= ${L.nameMaxBytes}`,
    message: `metadata.name must be at most ${L.nameMaxBytes} bytes`,
    transition: false,
    holds: (self) => {
      const name = (self as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
      return typeof name !== 'string' || Buffer.byteLength(name, 'utf8') <= L.nameMaxBytes;
    },
  },
];

/** The schema bounds of the kind (strings at least 1 character long unless told). */
export const CLUSTER_IDENTITY_BOUNDS: readonly FieldBound[] = [
  { path: 'spec.secretRef.name', required: true, type: 'string', maxLength: L.secretNameMaxLength },
  { path: 'spec.secretRef.namespace', required: true, type: 'string', maxLength: L.namespaceMaxLength },
  { path: 'spec.cloudName', type: 'string', maxLength: L.cloudNameMaxLength },
  { path: 'spec.allowedNamespaces.list', type: 'array', minItems: L.listMinItems, maxItems: L.listMaxItems, unique: true },
  { path: 'spec.allowedNamespaces.list[]', type: 'string', maxLength: L.namespaceMaxLength },
  {
    path: `${SELECTOR}.matchLabels`,
    type: 'map',
    maxProperties: LabelSelectorLimits.matchLabelsMaxProperties,
    maxLength: LabelSelectorLimits.valueMaxLength,
  },
  { path: `${SELECTOR}.matchExpressions`, type: 'array', maxItems: LabelSelectorLimits.matchExpressionsMaxItems },
  { path: `${EXPRESSIONS}.key`, required: true, type: 'string', maxLength: LabelSelectorLimits.keyMaxLength },
  { path: `${EXPRESSIONS}.operator`, required: true, type: 'string', enum: LABEL_SELECTOR_OPERATORS },
  { path: `${EXPRESSIONS}.values`, type: 'array', maxItems: LabelSelectorLimits.valuesMaxItems },
  { path: `${EXPRESSIONS}.values[]`, type: 'string', minLength: 0, maxLength: LabelSelectorLimits.valueMaxLength },
];

const TABLE: RuleTable = { rules: CLUSTER_IDENTITY_RULES, bounds: CLUSTER_IDENTITY_BOUNDS, requiredBlocks: ['spec', 'spec.secretRef'] };

/**
 * Every violation of the KeystoneClusterIdentity's schema bounds and CRD rules by `object` (`old` is accepted for the
 * shape of `validatePlane`; the kind has no transition rule). Messages have the one shape of `violation()`:
 * `field (value): rule`. The admission policy's two checks (the author may `get` the Secret; no delete while mirrored)
 * need the API server and are not here.
 */
export function validateClusterIdentity(object: unknown, old?: unknown): Violation[] {
  return validateAgainst(TABLE, object, old);
}
