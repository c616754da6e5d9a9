/**
 * What a KeystoneApplicationCredential resource is given beyond the order's spec: the ordered user's Keystone
 * connection and the OpenBao backup (the inputs `connection` and `backup`), each field defaulting from the provider's
 * environment. The types only: resolving a connection is connection.ts's, the fields' rules input-rules.ts's, and the
 * state that records them state.ts's; all three build on this file.
 */

/**
 * The ordered user's Keystone connection as explicit values. Every value may also come from the environment; an
 * explicit value wins field by field only when `cloud` is not set.
 */
export interface ConnectionSettings {
  /**
   * A cloud of `clouds.yaml` to read every other field from, instead of `OS_CLOUD`.
   * @default the `OS_CLOUD` variable, else the `OS_*` variables
   */
  readonly cloud?: string;
  /** The identity endpoint ending in `/v3`. @default `OS_AUTH_URL` */
  readonly authUrl?: string;
  /** The user's name (with a domain). @default `OS_USERNAME` */
  readonly userName?: string;
  /** The user's id, instead of its name. @default `OS_USER_ID` */
  readonly userId?: string;
  /** The user's domain by name. @default `OS_USER_DOMAIN_NAME`, else "Default" */
  readonly userDomainName?: string;
  /** The user's domain by id. @default `OS_USER_DOMAIN_ID` */
  readonly userDomainId?: string;
  /** The user's password. @default `OS_PASSWORD` */
  readonly password?: string;
  /** The project's name (with a domain). @default `OS_PROJECT_NAME` (or `OS_TENANT_NAME`) */
  readonly projectName?: string;
  /** The project's id, instead of its name. @default `OS_PROJECT_ID` (or `OS_TENANT_ID`) */
  readonly projectId?: string;
  /** The project's domain by name. @default `OS_PROJECT_DOMAIN_NAME`, else "Default" */
  readonly projectDomainName?: string;
  /** The project's domain by id. @default `OS_PROJECT_DOMAIN_ID` */
  readonly projectDomainId?: string;
  /** PEM certificates to trust for the endpoint. @default the file `OS_CACERT` names, else the system's trust store */
  readonly caBundle?: string;
  /** The region written into the delivered `clouds.yaml`. @default `OS_REGION_NAME`, else none */
  readonly regionName?: string;
}

/** The OpenBao backup as inputs; every field may come from the provider's environment. */
export interface BackupSettings {
  /** @default `BAO_ADDR`, else `VAULT_ADDR` */
  readonly address?: string;
  /** @default `BAO_TOKEN`, else `VAULT_TOKEN` */
  readonly token?: string;
  /** @default "openstack" */
  readonly mount?: string;
  /** @default `keystone/pulumi/<prefix>/service-accounts/application-credential` */
  readonly path?: string;
  /** @default `BAO_NAMESPACE`, else none */
  readonly namespace?: string;
}
