/**
 * The admin cloud a ControlPlane's (or a KeystoneClusterIdentity's) `clouds.yaml` holds: a password cloud, or, since
 * issue 42, an application credential (`auth_type: v3applicationcredential`, by id and secret, or by name, user and
 * secret), so that no admin password has to live in the cluster. Either one authenticates every call the identity plane
 * makes (users, projects, role assignments, passwords); the plane never creates an application credential or a trust
 * with it, which a restricted application credential may not.
 */
import type { KeystoneAuth, NamedRef } from './auth';
import { CloudsYamlError, cloudAuth, cloudEntry, cloudText, cloudUser, passwordAuthOf, passwordCloudOf, type PasswordCloud } from './password-cloud';

/** The `auth_type` of an application-credential cloud, as keystoneauth and openstacksdk name it. */
export const APPLICATION_CREDENTIAL_AUTH_TYPE = 'v3applicationcredential';

/** An application-credential cloud as read from `clouds.yaml`. */
export interface ApplicationCredentialCloud {
  /** `auth.auth_url`, when the document carries one. */
  readonly authUrl?: string;
  /** The credential by `application_credential_id`, or by `application_credential_name` with its user. */
  readonly credential: { readonly id: string } | { readonly name: string; readonly user: NamedRef };
  readonly secret: string;
  readonly regionName?: string;
}

/** A cloud the identity plane authenticates as its admin with. */
export type AdminCloud = PasswordCloud | ApplicationCredentialCloud;

/** Whether the cloud is an application credential's. */
export function isApplicationCredentialCloud(cloud: AdminCloud): cloud is ApplicationCredentialCloud {
  return 'credential' in cloud;
}

/**
 * Reads the admin cloud `cloudName` of a `clouds.yaml` document: a password cloud (`auth_type` absent, `password` or
 * `v3password`) or an application credential (`v3applicationcredential`). Throws {@link CloudsYamlError} naming the
 * cloud and what it lacks, for any other `auth_type` naming both that are accepted.
 */
export function parseAdminCloud(document: string, cloudName: string): AdminCloud {
  const cloud = cloudEntry(document, cloudName);
  const authType = cloudText(cloud.auth_type);
  if (authType === APPLICATION_CREDENTIAL_AUTH_TYPE) return applicationCredentialCloudOf(cloud, cloudName);
  if (authType !== undefined && authType !== 'password' && authType !== 'v3password') {
    throw new CloudsYamlError(`clouds.yaml cloud "${cloudName}" has auth_type ${authType}; it must be a password cloud (auth_type password) or an application credential (auth_type ${APPLICATION_CREDENTIAL_AUTH_TYPE})`);
  }
  return passwordCloudOf(cloud, cloudName);
}

function applicationCredentialCloudOf(c: Record<string, unknown>, cloudName: string): ApplicationCredentialCloud {
  const auth = cloudAuth(c);
  const id = cloudText(auth.application_credential_id);
  const name = cloudText(auth.application_credential_name);
  const secret = cloudText(auth.application_credential_secret);
  const user = cloudUser(auth);
  const missing = [
    secret ? undefined : 'auth.application_credential_secret',
    id || name ? undefined : 'auth.application_credential_id (or auth.application_credential_name with auth.username or auth.user_id)',
    id || !name || user ? undefined : 'auth.username (or auth.user_id): a credential named by auth.application_credential_name needs its user',
  ].filter((m): m is string => m !== undefined);
  if (missing.length > 0) throw new CloudsYamlError(`clouds.yaml cloud "${cloudName}" lacks ${missing.join(', ')}`);
  const authUrl = cloudText(auth.auth_url);
  const regionName = cloudText(c.region_name);
  return {
    credential: id ? { id } : { name: name as string, user: user as NamedRef },
    secret: secret as string,
    ...(authUrl ? { authUrl } : {}),
    ...(regionName ? { regionName } : {}),
  };
}

/** How a session authenticates with the cloud. */
export function adminAuthOf(cloud: AdminCloud): KeystoneAuth {
  if (!isApplicationCredentialCloud(cloud)) return passwordAuthOf(cloud);
  return { method: 'application-credential', secret: cloud.secret, ...cloud.credential };
}
