/**
 * Password clouds in `clouds.yaml`: reading the admin cloud a ControlPlane's Secret holds, and rendering the password
 * cloud a KeystoneUser's delivered Secret carries (no project, no CA bundle; identity-plane.md, KeystoneUser).
 */
import { parse, stringify } from 'yaml';
import type { NamedRef, PasswordAuth } from './auth';

/** A `clouds.yaml` document that cannot be used, with a message naming the cloud and the field. */
export class CloudsYamlError extends Error {
  override readonly name = 'CloudsYamlError';
}

/** A password cloud as read from `clouds.yaml`. */
export interface PasswordCloud {
  /** `auth.auth_url`, when the document carries one. */
  readonly authUrl?: string;
  /** The user, by id or by name within a domain. */
  readonly user: NamedRef;
  readonly password: string;
  /** The project the token is scoped to, by id or by name within a domain. */
  readonly project: NamedRef;
  readonly regionName?: string;
}

/** A text field of a cloud: a non-empty string, or a number as text. */
export function cloudText(value: unknown): string | undefined {
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}
const text = cloudText;

function refOf(id: string | undefined, name: string | undefined, domainId: string | undefined, domainName: string | undefined): NamedRef | undefined {
  if (id !== undefined) return { id };
  if (name === undefined) return undefined;
  if (domainId !== undefined) return { name, domainId };
  return { name, domainName: domainName ?? 'Default' };
}

/**
 * The cloud `cloudName` of a `clouds.yaml` document, as written. Throws {@link CloudsYamlError} when the document is not
 * YAML, has no `clouds` map, or no such cloud.
 */
export function cloudEntry(document: string, cloudName: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parse(document);
  } catch (error) {
    throw new CloudsYamlError(`clouds.yaml is not YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const clouds = (doc as { clouds?: unknown } | null)?.clouds;
  if (clouds === null || typeof clouds !== 'object') throw new CloudsYamlError('clouds.yaml has no "clouds" map');
  const cloud = (clouds as Record<string, unknown>)[cloudName];
  if (cloud === null || typeof cloud !== 'object') {
    const names = Object.keys(clouds as object);
    throw new CloudsYamlError(`clouds.yaml defines no cloud "${cloudName}" (it defines ${names.length > 0 ? names.map((n) => `"${n}"`).join(', ') : 'none'})`);
  }
  return cloud as Record<string, unknown>;
}

/** The `auth` map of a cloud entry (empty when absent or not a map). */
export function cloudAuth(cloud: Record<string, unknown>): Record<string, unknown> {
  return (cloud.auth !== null && typeof cloud.auth === 'object' ? cloud.auth : {}) as Record<string, unknown>;
}

/** The user of a cloud's `auth`: `user_id`, or `username` (`user_name`) within `user_domain_id`/`user_domain_name`. */
export function cloudUser(auth: Record<string, unknown>): NamedRef | undefined {
  return refOf(text(auth.user_id), text(auth.username) ?? text(auth.user_name), text(auth.user_domain_id) ?? text(auth.domain_id), text(auth.user_domain_name) ?? text(auth.domain_name));
}

/**
 * Reads the password cloud `cloudName` of a `clouds.yaml` document. Throws {@link CloudsYamlError} when the document is
 * not YAML, has no such cloud, is not a password cloud, or lacks the user, the password or the project scope.
 */
export function parsePasswordCloud(document: string, cloudName: string): PasswordCloud {
  const cloud = cloudEntry(document, cloudName);
  const authType = text(cloud.auth_type);
  if (authType !== undefined && authType !== 'password' && authType !== 'v3password') {
    throw new CloudsYamlError(`clouds.yaml cloud "${cloudName}" has auth_type ${authType}; it must be a password cloud`);
  }
  return passwordCloudOf(cloud, cloudName);
}

/** The password cloud of a cloud entry whose `auth_type` is a password's; throws naming what it lacks. */
export function passwordCloudOf(c: Record<string, unknown>, cloudName: string): PasswordCloud {
  const auth = cloudAuth(c);
  const password = text(auth.password);
  const user = cloudUser(auth);
  const project = refOf(
    text(auth.project_id) ?? text(auth.tenant_id),
    text(auth.project_name) ?? text(auth.tenant_name),
    text(auth.project_domain_id) ?? text(auth.domain_id),
    text(auth.project_domain_name) ?? text(auth.domain_name),
  );
  const missing = [user ? undefined : 'auth.username (or auth.user_id)', password ? undefined : 'auth.password', project ? undefined : 'auth.project_name (or auth.project_id)'].filter(
    (m): m is string => m !== undefined,
  );
  if (missing.length > 0) throw new CloudsYamlError(`clouds.yaml cloud "${cloudName}" lacks ${missing.join(', ')}`);
  const authUrl = text(auth.auth_url);
  const regionName = text(c.region_name);
  return { user: user as NamedRef, password: password as string, project: project as NamedRef, ...(authUrl ? { authUrl } : {}), ...(regionName ? { regionName } : {}) };
}

/** The password authentication of a cloud. */
export function passwordAuthOf(cloud: PasswordCloud): PasswordAuth {
  return { method: 'password', user: cloud.user, password: cloud.password, project: cloud.project };
}

/** What {@link renderPasswordCloudsYaml} needs. */
export interface PasswordCloudsYamlInput {
  /** Key of the cloud under `clouds:`. @default "openstack" */
  readonly cloudName?: string;
  /** Identity endpoint ending in `/v3`. */
  readonly authUrl: string;
  readonly username: string;
  readonly password: string;
  /** The user's domain, by name. */
  readonly userDomainName: string;
  /** @default omitted */
  readonly regionName?: string;
  /** Endpoint interface (`public`, `internal`). @default omitted */
  readonly interface?: string;
}

/**
 * Renders a password cloud without a project (a token from it is unscoped until the consumer names a project) and
 * without a CA bundle:
 * ```yaml
 * clouds:
 *   openstack:
 *     auth_type: password
 *     auth: { auth_url: …, username: …, password: …, user_domain_name: … }
 *     identity_api_version: 3
 * ```
 */
export function renderPasswordCloudsYaml(input: PasswordCloudsYamlInput): string {
  const cloudName = input.cloudName ?? 'openstack';
  for (const [field, value] of [
    ['cloudName', cloudName],
    ['authUrl', input.authUrl],
    ['username', input.username],
    ['password', input.password],
    ['userDomainName', input.userDomainName],
  ] as const) {
    if (value.length === 0) throw new Error(`${field} must not be empty`);
  }
  const cloud: Record<string, unknown> = {
    auth_type: 'password',
    auth: { auth_url: input.authUrl, username: input.username, password: input.password, user_domain_name: input.userDomainName },
  };
  if (input.regionName !== undefined) cloud.region_name = input.regionName;
  if (input.interface !== undefined) cloud.interface = input.interface;
  cloud.identity_api_version = 3;
  return stringify({ clouds: { [cloudName]: cloud } });
}
