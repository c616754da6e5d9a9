/**
 * `spec.secretTemplate` (issue 49, not the reference's): the delivered Secret in the shapes its consumers read. Labels
 * and annotations to add (Velero selectors, Reflector, policies that require labels), output formats beside the
 * reference's three keys (`cloud.conf` for the OpenStack cloud controller manager and Cinder CSI, the `OS_*` variables
 * for `envFrom`), and free keys whose value is a template over a closed set of fields.
 *
 * A template is data, never code. Its one construct is `{{ field }}`, replaced by the value of a field of
 * {@link TEMPLATE_FIELDS}; nothing in it can name another Secret, a file, the environment or anything but those fields,
 * and `{{` always opens a placeholder (a value holds no literal `{{`). No template library is used on purpose: the
 * logic-less ones (Mustache and its kin) still reach past the given fields (`{{secret.length}}` reads a property of a
 * string), HTML-escape by default (a secret with `&` or `/` would be delivered escaped) and bring sections and partials
 * that a closed set of strings does not need; a substitution whose pattern the CRD's CEL checks with the very same
 * regular expression leaves nothing to interpret.
 *
 * The reference's three keys stay, always; the keys, labels and annotations the template adds never replace them or the
 * operator's own labels (the `c5c3.io/keystoneapplicationcredential-` prefix is the operator's).
 */
import { Labels } from './naming';
import { isLabelKey, isLabelValue, LABEL_KEY_RULE, LABEL_VALUE_RULE, celLabelKey, celLabelValue, celString } from './label-selector';
import type { FieldBound, Rule } from './field-rules';

/** The output formats a template may add, each under fixed keys. */
export const SecretFormat = {
  /**
   * `cloud.conf`: the INI file of the OpenStack cloud controller manager and Cinder CSI, a `[Global]` section with
   * `auth-url`, `application-credential-id`, `application-credential-secret`, `region` (and `os-endpoint-type`), every
   * value quoted as their gcfg parser reads it.
   */
  CloudConf: 'CloudConf',
  /**
   * The `OS_*` variables openstackclient, Terraform and an `openrc` read, one key each, for a container's `envFrom`:
   * `OS_AUTH_TYPE=v3applicationcredential`, `OS_AUTH_URL`, `OS_APPLICATION_CREDENTIAL_ID`,
   * `OS_APPLICATION_CREDENTIAL_SECRET`, `OS_REGION_NAME`, `OS_INTERFACE`, `OS_IDENTITY_API_VERSION=3`.
   */
  Env: 'Env',
} as const;
export type SecretFormat = (typeof SecretFormat)[keyof typeof SecretFormat];
/** The formats, in the order their keys are written. */
export const SECRET_FORMATS: readonly SecretFormat[] = [SecretFormat.CloudConf, SecretFormat.Env];

/** The key of the `CloudConf` format. */
export const CLOUD_CONF_KEY = 'cloud.conf';
/** The keys of the `Env` format. */
export const ENV_KEYS = [
  'OS_AUTH_TYPE',
  'OS_AUTH_URL',
  'OS_APPLICATION_CREDENTIAL_ID',
  'OS_APPLICATION_CREDENTIAL_SECRET',
  'OS_REGION_NAME',
  'OS_INTERFACE',
  'OS_IDENTITY_API_VERSION',
] as const;

/**
 * The closed set of fields a template value may name, each `{{ name }}`:
 * - `authURL`: the identity endpoint the delivered `clouds.yaml` names (the one published for the order's cluster);
 * - `region`: the region (the ControlPlane's, the connection's on Pulumi);
 * - `interface`: the endpoint interface (`public`, `internal`);
 * - `applicationCredentialID`, `applicationCredentialSecret`: the delivered credential's id and secret;
 * - `userID`: the Keystone user the credential belongs to;
 * - `projectID`, `projectName`, `projectDomainName`: the project it is scoped to, and that project's domain.
 */
export const TEMPLATE_FIELDS = [
  'authURL',
  'region',
  'interface',
  'applicationCredentialID',
  'applicationCredentialSecret',
  'userID',
  'projectID',
  'projectName',
  'projectDomainName',
] as const;
export type TemplateField = (typeof TEMPLATE_FIELDS)[number];
/** The values of the fields, as a face knows them; a field it does not know is absent. */
export type TemplateFields = Readonly<Partial<Record<TemplateField, string>>>;

/**
 * A template value: text in which `{{` opens a placeholder `{{ field }}` (blanks around the name allowed) naming one of
 * {@link TEMPLATE_FIELDS}, and nothing else. The CRD's CEL and {@link placeholdersValid} match this same expression.
 */
export const TEMPLATE_VALUE_PATTERN = `^(?:[^{]|\\{(?:[^{]|$)|\\{\\{ *(?:${TEMPLATE_FIELDS.join('|')}) *\\}\\})*$`;
/** One placeholder, for the substitution (the value matched {@link TEMPLATE_VALUE_PATTERN} first). */
export const PLACEHOLDER = /\{\{ *([A-Za-z]+) *\}\}/g;

/** A data key of a Secret (Kubernetes: letters, digits, `-`, `_`, `.`). */
export const DATA_KEY_PATTERN = '^[-._a-zA-Z0-9]+$';

/** The prefix of the labels and annotations the operator writes itself: a template cannot set them. */
export const OPERATOR_PREFIX = Labels.name.slice(0, Labels.name.lastIndexOf('-') + 1);

/** Keys a template's `data` may not name: the reference's three and the formats' keys, which the operator writes. */
export const RESERVED_DATA_KEYS: readonly string[] = ['clouds.yaml', 'application_credential_id', 'application_credential_secret', CLOUD_CONF_KEY, ...ENV_KEYS];

/** `spec.secretTemplate`. */
export interface SecretTemplate {
  /**
   * Labels the delivered Secret carries besides the operator's own two (which a template cannot set).
   * @default none
   */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Annotations the delivered Secret carries (no `c5c3.io/keystoneapplicationcredential-` key).
   * @default none
   */
  readonly annotations?: Readonly<Record<string, string>>;
  /**
   * Output formats written beside the reference's three keys: `CloudConf` (key `cloud.conf`), `Env` (the `OS_*` keys).
   * @default none
   */
  readonly formats?: readonly SecretFormat[];
  /**
   * Keys of your own, each value a template over {@link TEMPLATE_FIELDS}: `{{ applicationCredentialID }}`. A key may not
   * be one the operator writes itself ({@link RESERVED_DATA_KEYS}).
   * @default none
   */
  readonly data?: Readonly<Record<string, string>>;
}

/** Bounds of the template (they keep the CEL cost estimate of its rules within the API server's budget). */
export const SecretTemplateLimits = {
  /** Entries of `labels`. */
  labelsMaxProperties: 32,
  /** Entries of `annotations`. */
  annotationsMaxProperties: 32,
  /** An annotation's value. */
  annotationValueMaxLength: 4096,
  /** Entries of `data`. */
  dataMaxProperties: 16,
  /** A data key (Kubernetes' limit for a Secret's key). */
  dataKeyMaxLength: 253,
  /** A template value. */
  dataValueMaxLength: 4096,
} as const;

const TEMPLATE_VALUE = new RegExp(TEMPLATE_VALUE_PATTERN);
const DATA_KEY = new RegExp(DATA_KEY_PATTERN);
const entriesOf = (self: unknown): [string, unknown][] => (self !== null && typeof self === 'object' && !Array.isArray(self) ? Object.entries(self) : []);
const celList = (values: readonly string[]): string => `[${values.map((v) => `'${v}'`).join(', ')}]`;

/** Whether every `{{` of a template value opens a placeholder of a field of {@link TEMPLATE_FIELDS}. */
export function placeholdersValid(value: string): boolean {
  return TEMPLATE_VALUE.test(value);
}

/** The schema bounds of the template (the CRD states the same in its openAPIV3Schema). */
export const SECRET_TEMPLATE_BOUNDS: readonly FieldBound[] = [
  { path: 'spec.secretTemplate.labels', type: 'map', maxProperties: SecretTemplateLimits.labelsMaxProperties, maxLength: 63 },
  { path: 'spec.secretTemplate.annotations', type: 'map', maxProperties: SecretTemplateLimits.annotationsMaxProperties, maxLength: SecretTemplateLimits.annotationValueMaxLength },
  { path: 'spec.secretTemplate.formats', type: 'array', maxItems: SECRET_FORMATS.length, unique: true },
  { path: 'spec.secretTemplate.formats[]', type: 'string', enum: SECRET_FORMATS },
  { path: 'spec.secretTemplate.data', type: 'map', maxProperties: SecretTemplateLimits.dataMaxProperties, minLength: 1, maxLength: SecretTemplateLimits.dataValueMaxLength },
];

/** The CRD rules of the template, each with its TypeScript twin (see `rules.ts`). */
export const SECRET_TEMPLATE_RULES: readonly Rule[] = [
  {
    path: 'spec.secretTemplate.labels',
    cel: `self.all(k, ${celLabelKey('k')})`,
    message: `secretTemplate.labels keys must be label keys: ${LABEL_KEY_RULE}`,
    transition: false,
    holds: (self) => entriesOf(self).every(([key]) => isLabelKey(key)),
  },
  {
    path: 'spec.secretTemplate.labels',
    cel: `self.all(k, ${celLabelValue('self[k]')})`,
    message: `secretTemplate.labels values must be label values: ${LABEL_VALUE_RULE}`,
    transition: false,
    holds: (self) => entriesOf(self).every(([, value]) => typeof value !== 'string' || isLabelValue(value)),
  },
  {
    path: 'spec.secretTemplate.labels',
    cel: `self.all(k, !k.startsWith('${OPERATOR_PREFIX}'))`,
    message: `secretTemplate.labels must not set a label of the operator's (${OPERATOR_PREFIX}*)`,
    transition: false,
    holds: (self) => entriesOf(self).every(([key]) => !key.startsWith(OPERATOR_PREFIX)),
  },
  {
    path: 'spec.secretTemplate.annotations',
    cel: `self.all(k, ${celLabelKey('k')})`,
    message: `secretTemplate.annotations keys must be annotation keys: ${LABEL_KEY_RULE}`,
    transition: false,
    holds: (self) => entriesOf(self).every(([key]) => isLabelKey(key)),
  },
  {
    path: 'spec.secretTemplate.annotations',
    cel: `self.all(k, !k.startsWith('${OPERATOR_PREFIX}'))`,
    message: `secretTemplate.annotations must not set an annotation of the operator's (${OPERATOR_PREFIX}*)`,
    transition: false,
    holds: (self) => entriesOf(self).every(([key]) => !key.startsWith(OPERATOR_PREFIX)),
  },
  {
    path: 'spec.secretTemplate.data',
    cel: `self.all(k, k.matches(${celString(DATA_KEY_PATTERN)}) && size(k) <= ${SecretTemplateLimits.dataKeyMaxLength})`,
    message: `secretTemplate.data keys must be Secret keys: at most ${SecretTemplateLimits.dataKeyMaxLength} letters, digits, hyphens, underscores or dots`,
    transition: false,
    holds: (self) => entriesOf(self).every(([key]) => DATA_KEY.test(key) && key.length <= SecretTemplateLimits.dataKeyMaxLength),
  },
  {
    path: 'spec.secretTemplate.data',
    cel: `self.all(k, !(k in ${celList(RESERVED_DATA_KEYS)}))`,
    message: `secretTemplate.data must not name a key the operator writes itself (${RESERVED_DATA_KEYS.join(', ')})`,
    transition: false,
    holds: (self) => entriesOf(self).every(([key]) => !RESERVED_DATA_KEYS.includes(key)),
  },
  {
    path: 'spec.secretTemplate.data',
    cel: `self.all(k, self[k].matches(${celString(TEMPLATE_VALUE_PATTERN)}))`,
    message: `secretTemplate.data values may hold {{ field }} only with a field of ${TEMPLATE_FIELDS.join(', ')} ({{ always opens one)`,
    transition: false,
    holds: (self) => entriesOf(self).every(([, value]) => typeof value !== 'string' || placeholdersValid(value)),
  },
];
