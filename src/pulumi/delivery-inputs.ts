/**
 * Issue 49's inputs of the Pulumi resource, in one place: `secretTemplate` (the CRD's output formats and keys of your
 * own; labels and annotations belong to the Kubernetes Secret a `CredentialSecret` writes), `deletionPolicy`,
 * `revokePrevious` (a trigger: a new value rotates and deletes the superseded credential in the same `up`) and `adopt`
 * (an existing credential and its secret). `check` refuses what cannot work with no Keystone call (`pulumi preview`);
 * `fieldsOf` gives the template the fields it may name; `shapesOf` reads the outputs per format back from the document.
 *
 * The fields a template may name are the CRD's. A Pulumi resource knows the auth URL and the region of its connection
 * (`region` only where the connection sets one), and the user, the project and its domain from its token at `up`; it
 * knows no endpoint interface (a connection has none): a template naming `{{ interface }}`, or `{{ region }}` without a
 * region, is refused at preview, naming the key.
 */
import {
  CLOUD_CONF_KEY,
  ENV_KEYS,
  PLACEHOLDER,
  isKeystoneId,
  type TemplateField,
  type TemplateFields,
} from '../api';
import type { Action, CredentialScope, SecretData } from '../lifecycle';
import type { ResolvedConnection } from './connection';
import type { ProviderInputs, PulumiSecretTemplate, StatusOutputs } from './state';

const record = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** The fields of `secretTemplate` on the Pulumi resource. */
const TEMPLATE_INPUT_FIELDS = ['formats', 'data'];
/** The fields of `adopt`. */
const ADOPT_FIELDS = ['credentialId', 'credentialSecret'];
/** Fields the token names, known at `up`. */
const SCOPE_FIELDS: readonly TemplateField[] = ['userID', 'projectID', 'projectName', 'projectDomainName'];

/**
 * What is wrong with issue 49's inputs beyond the CRD's rules (which `check` applies too): a field `secretTemplate` or
 * `adopt` does not have, a field a template names that this resource cannot know, an adoption's id or secret. A secret
 * is shown by its length only. `region`: the connection's region, when it can be resolved now.
 */
export function deliveryInputProblems(news: Readonly<Record<string, unknown>>, region: string | undefined, known: (value: unknown) => boolean): string[] {
  const problems: string[] = [];
  const template = record(news.secretTemplate);
  for (const key of Object.keys(template ?? {})) {
    if (TEMPLATE_INPUT_FIELDS.includes(key)) continue;
    const hint = key === 'labels' || key === 'annotations' ? `; ${key} go on the Kubernetes Secret a CredentialSecret writes` : '';
    problems.push(`secretTemplate.${key}: is not a field of secretTemplate on the Pulumi resource (its fields: ${TEMPLATE_INPUT_FIELDS.join(', ')})${hint}`);
  }
  for (const [key, value] of Object.entries(record(template?.data) ?? {})) {
    if (typeof value !== 'string' || !known(value)) continue;
    for (const [, name] of value.matchAll(PLACEHOLDER)) {
      if (name === 'interface') problems.push(`secretTemplate.data.${key} names {{ interface }}, which the Pulumi resource does not know (a connection names no endpoint interface)`);
      if (name === 'region' && region === undefined) problems.push(`secretTemplate.data.${key} names {{ region }}, and the connection sets no region (connection.regionName, OS_REGION_NAME or the cloud's region_name)`);
    }
  }
  if (news.revokePrevious !== undefined && news.revokePrevious !== null && known(news.revokePrevious) && typeof news.revokePrevious !== 'string') {
    problems.push(`revokePrevious (${JSON.stringify(news.revokePrevious)}): must be a string (any new value, e.g. a date or a ticket, rotates and revokes once)`);
  }
  const adopt = news.adopt;
  if (adopt === undefined || adopt === null || !known(adopt)) return problems;
  const given = record(adopt);
  if (given === undefined) return [...problems, `adopt: must be an object with the fields ${ADOPT_FIELDS.join(', ')}`];
  for (const key of Object.keys(given)) if (!ADOPT_FIELDS.includes(key)) problems.push(`adopt.${key}: is not a field of adopt (its fields: ${ADOPT_FIELDS.join(', ')})`);
  const id = given.credentialId;
  if (typeof id !== 'string' || !isKeystoneId(id)) problems.push(`adopt.credentialId (${JSON.stringify(id)}): must be a Keystone application credential id: 32 lowercase hexadecimal digits`);
  const secret = given.credentialSecret;
  if (typeof secret !== 'string' || secret.length === 0) problems.push(`adopt.credentialSecret (${typeof secret === 'string' ? '0 characters' : typeof secret}): must be the credential's secret, not empty`);
  return problems;
}

/** Whether a template names a field only the token shows (so `up` reads the port's scope). */
export function namesScope(template: PulumiSecretTemplate | undefined): boolean {
  return Object.values(template?.data ?? {}).some((value) => [...value.matchAll(PLACEHOLDER)].some(([, name]) => SCOPE_FIELDS.includes(name as TemplateField)));
}

/** The fields a template may name, as the Pulumi resource knows them, but the credential's id and secret. */
export function fieldsOf(connection: Pick<ResolvedConnection, 'authUrl' | 'regionName'>, scope: CredentialScope | undefined): TemplateFields {
  return {
    authURL: connection.authUrl,
    ...(connection.regionName ? { region: connection.regionName } : {}),
    ...(scope ? { userID: scope.userId, projectID: scope.projectId } : {}),
    ...(scope?.projectName !== undefined ? { projectName: scope.projectName } : {}),
    ...(scope?.projectDomainName !== undefined ? { projectDomainName: scope.projectDomainName } : {}),
  };
}

/** The outputs per format of a delivered document: `cloudConf`, `env`, `data` (absent when the template has none). */
export function shapesOf(document: SecretData, template: PulumiSecretTemplate | undefined): Pick<StatusOutputs, 'cloudConf' | 'env' | 'data'> {
  const pick = (keys: readonly string[]) => Object.fromEntries(keys.flatMap((k) => (document[k] === undefined ? [] : [[k, document[k]]])));
  const env = pick(ENV_KEYS);
  const data = pick(Object.keys(template?.data ?? {}));
  return {
    ...(document[CLOUD_CONF_KEY] !== undefined ? { cloudConf: document[CLOUD_CONF_KEY] } : {}),
    ...(Object.keys(env).length > 0 ? { env } : {}),
    ...(Object.keys(data).length > 0 ? { data } : {}),
  };
}

/** The delivered document the state holds: the three keys, and the template's keys from the outputs per format. */
export function documentOf(state: Pick<StatusOutputs, 'credentialId' | 'credentialSecret' | 'cloudsYaml' | 'cloudConf' | 'env' | 'data'>): SecretData | undefined {
  if (state.credentialId === undefined || state.credentialSecret === undefined || state.cloudsYaml === undefined) return undefined;
  return {
    'clouds.yaml': state.cloudsYaml,
    application_credential_id: state.credentialId,
    application_credential_secret: state.credentialSecret,
    ...(state.cloudConf !== undefined ? { [CLOUD_CONF_KEY]: state.cloudConf } : {}),
    ...state.env,
    ...state.data,
  };
}

/**
 * What a run tells the user of issue 49's actions: what `deletionPolicy: Retain` left at `pulumi destroy` and the
 * commands that remove it, and a grace period a revoke request skipped. Ids and paths only, never a secret.
 */
export function deliveryNotice(action: Action, inputs: Pick<ProviderInputs, 'rotation'>, backup: { readonly mount: string; readonly path: string } | undefined): string[] {
  if (action.type === 'retain') {
    const kept = action.backup && backup ? ` and its backup at ${backup.mount}/${backup.path}` : '';
    const commands = [`openstack application credential delete ${action.id} (as the connection's user)`, ...(kept ? [`bao kv metadata delete -mount=${backup?.mount} ${backup?.path}`] : [])];
    return [`destroyed with deletionPolicy Retain: left application credential ${action.id} (generation ${action.generation}) in Keystone${kept}; remove them later with: ${commands.join('; ')}`];
  }
  if (action.type === 'delete' && action.why.startsWith('revoke requested')) {
    return [`deleted generation ${action.generation} (application credential ${action.id}) at once, its grace period of ${inputs.rotation.gracePeriod} skipped: ${action.why.replace(/: grace period skipped$/, '')} by revokePrevious; the new credential was delivered (and backed up) first`];
  }
  return [];
}
