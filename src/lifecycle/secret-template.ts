/**
 * The delivered Secret as the order's `spec.secretTemplate` shapes it (issue 49), pure: the keys each output format
 * writes, the free keys' substitution over the closed set of fields, the labels and annotations, and whether a Secret
 * carries all of it. Every face renders with these functions (the operator's Secret, the Pulumi outputs), so a
 * `cloud.conf` reads the same wherever it comes from.
 *
 * The operator owns exactly what it writes (server-side apply): a key, label or annotation the template no longer has
 * leaves the Secret at the next write. For the next write to come, the Secret carries a digest of the template it was
 * written with ({@link TEMPLATE_ANNOTATION}): a Secret written under another template is not intact, and is rewritten
 * whole. A rotation rewrites every key in one write, so no Secret ever carries keys of two generations.
 */
import { createHash } from 'node:crypto';
import {
  CLOUD_CONF_KEY,
  ENV_KEYS,
  OPERATOR_PREFIX,
  PLACEHOLDER,
  SecretFormat,
  placeholdersValid,
  type SecretTemplate,
  type TemplateField,
  type TemplateFields,
} from '../api';

/** The annotation that records the digest of the template the Secret was written with (absent without a template). */
export const TEMPLATE_ANNOTATION = `${OPERATOR_PREFIX}template`;

/** A template that cannot be rendered with the fields a face knows; the message names the field, never a value. */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

/** What the delivered Secret carries beyond its data: labels and annotations. */
export interface SecretMetadata {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** The Secret as a pass observed it. */
export interface ObservedSecret {
  readonly data: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

const empty = (template: SecretTemplate | undefined): boolean =>
  template === undefined ||
  (Object.keys(template.labels ?? {}).length === 0 &&
    Object.keys(template.annotations ?? {}).length === 0 &&
    (template.formats ?? []).length === 0 &&
    Object.keys(template.data ?? {}).length === 0);

/** The digest of a template: base64url of sha256 over its canonical JSON (keys sorted, formats as a set); none when empty. */
export function templateDigest(template: SecretTemplate | undefined): string | undefined {
  if (template === undefined || empty(template)) return undefined;
  const sorted = (record: Readonly<Record<string, string>> | undefined) => Object.fromEntries(Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const canonical = JSON.stringify({
    labels: sorted(template.labels),
    annotations: sorted(template.annotations),
    formats: [...new Set(template.formats ?? [])].sort(),
    data: sorted(template.data),
  });
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
}

/** The labels and annotations the template adds, with the digest annotation when it adds anything. */
export function templateMetadata(template: SecretTemplate | undefined): SecretMetadata {
  const digest = templateDigest(template);
  return { labels: { ...template?.labels }, annotations: { ...template?.annotations, ...(digest !== undefined ? { [TEMPLATE_ANNOTATION]: digest } : {}) } };
}

/** A lone surrogate: text that is no UTF-8 when written out. */
const MALFORMED = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A value as gcfg reads it (the parser of the cloud controller manager and Cinder CSI): always quoted, so `#`, `;`,
 * blanks at either end and `=` are data; `\` and `"` escaped, a newline `\n`, a tab `\t`. gcfg strips every carriage
 * return and refuses a NUL byte, so a value holding either cannot be carried: refused, naming the field.
 */
export function gcfgValue(field: string, value: string): string {
  if (/[\r\0]/.test(value) || MALFORMED.test(value)) throw new TemplateError(`${CLOUD_CONF_KEY} cannot carry the ${field}: it holds a carriage return, a NUL byte or malformed text`);
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;
}

/**
 * `cloud.conf`'s `[Global]` section (kubernetes/cloud-provider-openstack, `client.AuthOpts`): `auth-url`,
 * `application-credential-id`, `application-credential-secret`, and `region` and `os-endpoint-type` where known.
 */
export function cloudConf(fields: TemplateFields): string {
  const lines: [string, TemplateField][] = [
    ['auth-url', 'authURL'],
    ['application-credential-id', 'applicationCredentialID'],
    ['application-credential-secret', 'applicationCredentialSecret'],
    ['region', 'region'],
    ['os-endpoint-type', 'interface'],
  ];
  const body = lines.flatMap(([key, field]) => (fields[field] === undefined ? [] : [`${key} = ${gcfgValue(field, fields[field])}`]));
  return `[Global]\n${body.join('\n')}\n`;
}

/** The `OS_*` keys of the `Env` format: openstackclient's, Terraform's and an openrc's names; region and interface where known. */
export function envKeys(fields: TemplateFields): Record<string, string> {
  const values: Record<(typeof ENV_KEYS)[number], string | undefined> = {
    OS_AUTH_TYPE: 'v3applicationcredential',
    OS_AUTH_URL: fields.authURL,
    OS_APPLICATION_CREDENTIAL_ID: fields.applicationCredentialID,
    OS_APPLICATION_CREDENTIAL_SECRET: fields.applicationCredentialSecret,
    OS_REGION_NAME: fields.region,
    OS_INTERFACE: fields.interface,
    OS_IDENTITY_API_VERSION: '3',
  };
  return Object.fromEntries(ENV_KEYS.flatMap((key) => (values[key] === undefined ? [] : [[key, values[key]]])));
}

/**
 * One free key's value: each `{{ field }}` replaced by the field's value. A value whose `{{` opens anything but a field
 * of the closed set (the CRD refuses it; a Pulumi program's preview too), or that names a field this face does not
 * know, is refused naming the key and the field.
 */
export function substitute(key: string, template: string, fields: TemplateFields): string {
  if (!placeholdersValid(template)) throw new TemplateError(`secretTemplate.data.${key}: {{ opens a placeholder of an unknown field`);
  return template.replace(PLACEHOLDER, (_match, name: string) => {
    const value = fields[name as TemplateField];
    if (value === undefined) throw new TemplateError(`secretTemplate.data.${key} names {{ ${name} }}, which is not known here`);
    return value;
  });
}

/** The keys the template adds to the reference's three: the formats' keys, then the free keys. */
export function templateData(template: SecretTemplate | undefined, fields: TemplateFields): Record<string, string> {
  const formats = new Set(template?.formats ?? []);
  return {
    ...(formats.has(SecretFormat.CloudConf) ? { [CLOUD_CONF_KEY]: cloudConf(fields) } : {}),
    ...(formats.has(SecretFormat.Env) ? envKeys(fields) : {}),
    ...Object.fromEntries(Object.entries(template?.data ?? {}).map(([key, value]) => [key, substitute(key, value, fields)])),
  };
}

/**
 * Whether `found` carries the document: every expected key with its value, every expected label and annotation with
 * its value (the digest annotation among them, so a Secret written under another template is not intact), and no
 * digest annotation when none is expected. Keys, labels and annotations another writer added are none of its business.
 */
export function carriesDocument(found: ObservedSecret, data: Readonly<Record<string, string>>, metadata: SecretMetadata): boolean {
  const has = (actual: Readonly<Record<string, string>> | undefined, wanted: Readonly<Record<string, string>>) => Object.entries(wanted).every(([k, v]) => actual?.[k] === v);
  if (!has(found.data, data) || !has(found.labels, metadata.labels) || !has(found.annotations, metadata.annotations)) return false;
  return metadata.annotations[TEMPLATE_ANNOTATION] !== undefined || found.annotations?.[TEMPLATE_ANNOTATION] === undefined;
}
