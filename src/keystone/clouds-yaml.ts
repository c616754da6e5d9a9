/**
 * The `clouds.yaml` document the delivered Secret carries (spec: Delivered Secret): a `v3applicationcredential` cloud
 * with the auth URL, the credential id and its secret. A token issued with it is scoped to the credential's project.
 * It carries no CA bundle, as the spec requires; consumers trust the endpoint through their own configuration.
 */
import { stringify } from 'yaml';

/** What {@link renderCloudsYaml} needs. */
export interface CloudsYamlInput {
  /** Key of the cloud under `clouds:`, used as `--os-cloud NAME`. @default "openstack" */
  readonly cloudName?: string;
  /** Identity endpoint ending in `/v3`. */
  readonly authUrl: string;
  readonly applicationCredentialId: string;
  readonly applicationCredentialSecret: string;
  /** @default omitted */
  readonly regionName?: string;
  /** Endpoint interface (`public`, `internal`, `admin`). @default omitted */
  readonly interface?: string;
}

/**
 * Renders the document:
 * ```yaml
 * clouds:
 *   openstack:
 *     auth_type: v3applicationcredential
 *     auth:
 *       auth_url: https://keystone.example.com/v3
 *       application_credential_id: …
 *       application_credential_secret: …
 *     identity_api_version: 3
 * ```
 * Values are quoted by the YAML library wherever needed, so any secret round-trips.
 */
export function renderCloudsYaml(input: CloudsYamlInput): string {
  const cloudName = input.cloudName ?? 'openstack';
  for (const [field, value] of [
    ['cloudName', cloudName],
    ['authUrl', input.authUrl],
    ['applicationCredentialId', input.applicationCredentialId],
    ['applicationCredentialSecret', input.applicationCredentialSecret],
  ] as const) {
    if (value.length === 0) throw new Error(`${field} must not be empty`);
  }
  const cloud: Record<string, unknown> = {
    auth_type: 'v3applicationcredential',
    auth: {
      auth_url: input.authUrl,
      application_credential_id: input.applicationCredentialId,
      application_credential_secret: input.applicationCredentialSecret,
    },
  };
  if (input.regionName !== undefined) cloud.region_name = input.regionName;
  if (input.interface !== undefined) cloud.interface = input.interface;
  cloud.identity_api_version = 3;
  return stringify({ clouds: { [cloudName]: cloud } });
}
