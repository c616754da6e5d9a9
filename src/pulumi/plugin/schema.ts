/**
 * The Pulumi package schema of the `keystone-appcred` provider plugin: one resource,
 * `keystone-appcred:index:ApplicationCredential`, with the inputs and outputs of the dynamic resource
 * (`KeystoneApplicationCredential`, see docs/reference/pulumi.md), their defaults and rules in the descriptions, and the
 * credential's secret, its document and the connection's password marked secret so that every language's SDK and state
 * keep them encrypted. `pulumi package gen-sdk` generates the Python, Go, .NET and Node.js SDKs from it (`sdk/`).
 */
import { DEFAULT_CREDENTIAL_GENERATION, DEFAULT_GRACE_PERIOD, DEFAULT_INTERVAL } from '../../api/defaults';
import type { ConnectionSettings } from '../settings';
import { ACCESS_RULE_METHODS, type AccessRule } from '../../api/privileges';
import { DELETION_POLICIES } from '../../api/deletion-policy';
import { SECRET_FORMATS, TEMPLATE_FIELDS } from '../../api/secret-template';
import type { AdoptSettings, ProviderInputs, ProviderOutputs, RotationSettings } from '../state';
import type { BackupSettings } from '../settings';

/** The package name: the plugin is `pulumi-resource-keystone-appcred`. */
export const PACKAGE = 'keystone-appcred';
/** The resource type token. */
export const APPLICATION_CREDENTIAL = `${PACKAGE}:index:ApplicationCredential`;
const ROTATION = `${PACKAGE}:index:Rotation`;
const CONNECTION = `${PACKAGE}:index:Connection`;
const BACKUP = `${PACKAGE}:index:Backup`;
const ACCESS_RULE = `${PACKAGE}:index:AccessRule`;
const SECRET_TEMPLATE = `${PACKAGE}:index:SecretTemplate`;
const ADOPT = `${PACKAGE}:index:Adopt`;

/** The item type of an array property. */
export type ItemSpec = { readonly type: 'string' } | { readonly $ref: string };

/** A property of the schema (the subset this package uses). */
export interface PropertySpec {
  readonly type?: 'string' | 'integer' | 'boolean' | 'object' | 'array';
  readonly items?: ItemSpec;
  /** The value type of a map (`type: object`). */
  readonly additionalProperties?: ItemSpec;
  readonly $ref?: string;
  readonly description: string;
  readonly default?: string | number;
  readonly secret?: boolean;
  readonly replaceOnChanges?: boolean;
}

type Properties<K extends string> = Readonly<Record<K, PropertySpec>>;

const ref = (token: string): string => `#/types/${token}`;

/** `rotation`, as the CRD's `spec.rotation`. */
const rotationProperties: Properties<keyof RotationSettings> = {
  interval: {
    type: 'string',
    description:
      'The time between two scheduled rotations, a Go duration (`720h`, `90m`). `0s` turns the schedule off; any other value is at least `1m` and at most `87600h`.',
    default: DEFAULT_INTERVAL,
  },
  gracePeriod: {
    type: 'string',
    description:
      'How long the superseded credential stays in Keystone after the switch, a Go duration. Not negative, and shorter than a non-zero `interval`.',
    default: DEFAULT_GRACE_PERIOD,
  },
};

/** One access rule (issue 42), as Keystone's `access_rules[]`. */
const accessRuleProperties: Properties<keyof AccessRule> = {
  service: { type: 'string', description: 'The service type, as the catalog lists it (`compute`, `object-store`): letters, digits and hyphens, at most 64 characters.' },
  method: { type: 'string', description: `The HTTP method: ${ACCESS_RULE_METHODS.join(', ')}.` },
  path: {
    type: 'string',
    description: 'The request path, beginning with `/`, at most 225 characters: `*` matches one path segment, `**` any number of segments, `{name}` one segment.',
  },
};

/** The two privilege inputs (issue 42), echoed as outputs. */
const privilegeProperties = {
  roles: {
    type: 'array',
    items: { type: 'string' },
    description:
      "The names of the roles the credential carries, a subset of the user's roles on the project (at least one, each at most 255 characters, no comma, no duplicate). Default: every role the user holds there. A change rotates: a successor carrying the new roles is minted and switched to, and the superseded credential keeps its roles through the grace period. A role the user does not hold fails `pulumi up` (RoleNotAssigned), before anything is created.",
  },
  accessRules: {
    type: 'array',
    items: { $ref: `#/types/${ACCESS_RULE}` },
    description:
      "The only requests a token from the credential may make, where the service's keystonemiddleware enforces access rules (its `service_type` set). Default: none, every request the roles allow. A change rotates, as for `roles`.",
  },
} as const satisfies Properties<'roles' | 'accessRules'>;

/** Issue 49's inputs: the template (formats and keys of your own), the deletion policy, revoke now, an adoption. */
const deliveryInputProperties = {
  secretTemplate: {
    $ref: ref(SECRET_TEMPLATE),
    description:
      'Output formats and keys of your own beside `cloudsYaml`, each a secret output (`cloudConf`, `env`, `data`). Labels and annotations go on the Kubernetes Secret a `CredentialSecret` writes. Default: none.',
  },
  deletionPolicy: {
    type: 'string',
    description: `What \`pulumi destroy\` does to the delivered credential: ${DELETION_POLICIES.join(' or ')}. Retain keeps it in Keystone and its backup in OpenBao, deletes what is superseded, and prints what it left and the commands that remove it. Pulumi's \`retainOnDelete\` keeps everything instead (the provider is not called). Default: Delete.`,
  },
  revokePrevious: {
    type: 'string',
    description:
      'Revoke now: a new value (a date, a ticket) makes the next `pulumi up` rotate at once and delete the superseded credential in the same up, as soon as its successor is delivered (and backed up), skipping the grace period. `lastRevokeRequest` records the value acted on.',
  },
  adopt: {
    $ref: ref(ADOPT),
    description:
      "An existing application credential of the connection's user on its project to adopt instead of minting the first one, proven by its secret (Keystone must authenticate it; it must be restricted). Read only while the resource holds no credential; the next rotation supersedes and sweeps it. Stored as a secret.",
    secret: true,
  },
} as const satisfies Properties<'secretTemplate' | 'deletionPolicy' | 'revokePrevious' | 'adopt'>;

/** `secretTemplate` on the provider's resource: the CRD's formats and free keys. */
const secretTemplateProperties: Properties<'formats' | 'data'> = {
  formats: { type: 'array', items: { type: 'string' }, description: `Output formats: ${SECRET_FORMATS.join(', ')} (\`cloudConf\`, \`env\`).` },
  data: {
    type: 'object',
    additionalProperties: { type: 'string' },
    description: `Keys of your own, each value a template over {{ field }} with a field of ${TEMPLATE_FIELDS.filter((f) => f !== 'interface').join(', ')} ({{ region }} only when the connection sets a region).`,
  },
};

/** `adopt`: the credential to adopt and its secret. */
const adoptProperties: Properties<keyof AdoptSettings> = {
  credentialId: { type: 'string', description: 'The Keystone id of the application credential to adopt (32 hexadecimal digits).' },
  credentialSecret: { type: 'string', description: 'Its secret.', secret: true },
};

/** `connection`: the ordered user's Keystone connection. Every field defaults to the provider process's environment. */
const connectionProperties: Properties<keyof ConnectionSettings> = {
  cloud: { type: 'string', description: 'A cloud of `clouds.yaml` to read every other field from, instead of `OS_CLOUD`. Default: the `OS_CLOUD` variable, else the `OS_*` variables.' },
  authUrl: { type: 'string', description: 'The identity endpoint, ending in `/v3`. Default: `OS_AUTH_URL`.' },
  userName: { type: 'string', description: "The user's name (with a domain). Default: `OS_USERNAME`." },
  userId: { type: 'string', description: "The user's id, instead of its name. Default: `OS_USER_ID`." },
  userDomainName: { type: 'string', description: "The user's domain by name. Default: `OS_USER_DOMAIN_NAME`, else `Default`." },
  userDomainId: { type: 'string', description: "The user's domain by id. Default: `OS_USER_DOMAIN_ID`." },
  password: { type: 'string', description: "The user's password. Default: `OS_PASSWORD`.", secret: true },
  projectName: { type: 'string', description: "The project's name (with a domain). Default: `OS_PROJECT_NAME` (or `OS_TENANT_NAME`)." },
  projectId: { type: 'string', description: "The project's id, instead of its name. Default: `OS_PROJECT_ID` (or `OS_TENANT_ID`)." },
  projectDomainName: { type: 'string', description: "The project's domain by name. Default: `OS_PROJECT_DOMAIN_NAME`, else `Default`." },
  projectDomainId: { type: 'string', description: "The project's domain by id. Default: `OS_PROJECT_DOMAIN_ID`." },
  caBundle: { type: 'string', description: "PEM certificates to trust for the endpoint. Default: the file `OS_CACERT` names, else the system's trust store." },
  regionName: { type: 'string', description: 'The region written into the delivered `clouds.yaml`. Default: `OS_REGION_NAME`, else none.' },
};

/** `backup`: the OpenBao KV v2 backup of the delivered document. */
const backupProperties: Properties<keyof BackupSettings> = {
  address: { type: 'string', description: "OpenBao's address. Default: `BAO_ADDR`, else `VAULT_ADDR`." },
  token: { type: 'string', description: 'The token to write with. Default: `BAO_TOKEN`, else `VAULT_TOKEN`.', secret: true },
  mount: { type: 'string', description: 'The KV v2 mount.', default: 'openstack' },
  path: { type: 'string', description: 'The path under the mount. Default: `keystone/pulumi/<prefix>/service-accounts/application-credential`.' },
  namespace: { type: 'string', description: 'The OpenBao namespace. Default: `BAO_NAMESPACE`, else none.' },
};

/** The inputs, as the dynamic resource's `KeystoneApplicationCredentialArgs` (the prefix and the owner are the provider's). */
const inputProperties: Properties<Exclude<keyof ProviderInputs, 'prefix' | 'owner'>> = {
  rotation: { $ref: ref(ROTATION), description: `The rotation schedule. Default: \`{ interval: "${DEFAULT_INTERVAL}", gracePeriod: "${DEFAULT_GRACE_PERIOD}" }\`.` },
  credentialGeneration: {
    type: 'integer',
    description:
      'The lowest credential generation the resource must hold (at least 1). Raising it above the output `credentialGeneration` rotates at once. It may only increase.',
    default: DEFAULT_CREDENTIAL_GENERATION,
  },
  connection: {
    $ref: ref(CONNECTION),
    description:
      "The ordered user's Keystone connection, stored as a secret. Prefer the default: the provider reads `OS_CLOUD` (with a `clouds.yaml`) or the `OS_*` variables from the environment of `pulumi`, and nothing of it lands in the state.",
    secret: true,
  },
  backup: {
    $ref: ref(BACKUP),
    description:
      'Back the delivered document up to OpenBao (KV v2) before each switch. `{}` takes every field from the environment (`BAO_ADDR`, `BAO_TOKEN`). Stored as a secret. Default: no backup.',
    secret: true,
  },
  cloudName: { type: 'string', description: 'The key under `clouds:` in the `cloudsYaml` output (`--os-cloud NAME`).', default: 'openstack' },
  ...privilegeProperties,
  ...deliveryInputProperties,
};

/**
 * State the provider keeps for itself and the SDKs do not show: the owner id (in every credential's description in
 * Keystone as well) and an unfinished rotation's successor (src/pulumi/state.ts).
 */
export const INTERNAL_OUTPUTS = ['owner', 'successorGeneration', 'successorCredentialId', 'successorSecret'] as const;
type InternalOutputs = (typeof INTERNAL_OUTPUTS)[number];

/** The outputs, named like the CRD's status, plus the inputs the state echoes. */
const outputProperties: Properties<Exclude<keyof ProviderOutputs, InternalOutputs>> = {
  credentialId: {
    type: 'string',
    description: 'The Keystone id of the delivered credential (the status `credentialID`). Absent after a `pulumi refresh` found it deleted, until the next `pulumi up` mints again.',
  },
  credentialSecret: { type: 'string', description: "The delivered credential's secret.", secret: true },
  cloudsYaml: { type: 'string', description: 'A `v3applicationcredential` clouds.yaml with the auth URL, the id and the secret.', secret: true },
  credentialGeneration: { type: 'integer', description: 'The generation of the delivered credential (the status; the input is the minimum asked for).' },
  credentialExpiresAt: {
    type: 'string',
    description: 'When the delivered credential expires in Keystone (RFC 3339): creation + interval + grace period. Absent with the schedule off.',
  },
  lastRotation: { type: 'string', description: 'When the delivered credential became the delivered one (RFC 3339).' },
  nextRotation: {
    type: 'string',
    description:
      'When the schedule rotates next (RFC 3339): the first `pulumi up` at or after it rotates. The earlier of `lastRotation + interval` and `credentialExpiresAt - gracePeriod`; absent with the schedule off.',
  },
  previousCredentialId: { type: 'string', description: 'The Keystone id of the superseded credential, during its grace period only.' },
  previousCredentialGeneration: { type: 'integer', description: 'The generation of the superseded credential, during its grace period only.' },
  previousCredentialDeleteAt: { type: 'string', description: 'When the first `pulumi up` at or after it deletes the superseded credential (RFC 3339).' },
  prefix: { type: 'string', description: 'The prefix of the credential names in Keystone, `<name>-<8 hex>-applicationcredential`; generation N is `<prefix>-credential-v<N>`.' },
  rotation: { $ref: ref(ROTATION), description: 'The rotation schedule in force, defaults applied.' },
  connection: { $ref: ref(CONNECTION), description: 'The explicit connection, if one was given.', secret: true },
  backup: { $ref: ref(BACKUP), description: 'The OpenBao backup, if one was asked for.', secret: true },
  cloudName: { type: 'string', description: 'The key under `clouds:` in `cloudsYaml`.' },
  roles: { type: 'array', items: { type: 'string' }, description: 'The role subset the delivered credential was minted with; absent: every role of the user (or a change waits for a grace period to end).' },
  accessRules: { type: 'array', items: { $ref: `#/types/${ACCESS_RULE}` }, description: 'The access rules the delivered credential was minted with; absent: none.' },
  credentialRoles: { type: 'array', items: { type: 'string' }, description: 'The roles the delivered credential carries, as Keystone lists them.' },
  secretTemplate: { $ref: ref(SECRET_TEMPLATE), description: 'The template in force.' },
  deletionPolicy: { type: 'string', description: 'The deletion policy in force.' },
  revokePrevious: { type: 'string', description: 'The revokePrevious input.' },
  cloudConf: { type: 'string', description: 'The delivered credential as `cloud.conf` (format CloudConf): a `[Global]` section with auth-url, application-credential-id, application-credential-secret and region.', secret: true },
  env: { type: 'object', additionalProperties: { type: 'string' }, description: 'The delivered credential as the `OS_*` variables (format Env).', secret: true },
  data: { type: 'object', additionalProperties: { type: 'string' }, description: 'The keys of your own (`secretTemplate.data`), rendered.', secret: true },
  lastRevokeRequest: { type: 'string', description: 'The `revokePrevious` value the resource last acted on.' },
  revokeGeneration: { type: 'integer', description: 'While a revoke request is carried out (an up failed half-way), the generation it rotates to.' },
  adoptedCredentialId: { type: 'string', description: 'The Keystone id of the credential the resource adopted, while it holds it.' },
};

/** Outputs every successful `pulumi up` leaves in the state. */
const REQUIRED_OUTPUTS: readonly (keyof ProviderOutputs)[] = ['prefix', 'rotation', 'credentialSecret', 'cloudsYaml', 'credentialGeneration', 'lastRotation'];

const objectType = (description: string, properties: Properties<string>) => ({ type: 'object' as const, description, properties });

/** The package schema of `version`. */
export function packageSchema(version: string) {
  return {
    name: PACKAGE,
    displayName: 'Keystone application credentials',
    version,
    description:
      'OpenStack Keystone application credentials minted, rotated on schedule with a grace period, and swept on `pulumi up`, by the lifecycle engine of keystone-appcred.',
    keywords: ['pulumi', 'openstack', 'keystone', 'application-credentials', 'category/cloud', 'kind/native'],
    license: 'Apache-2.0',
    publisher: 'keystone-appcred',
    meta: { moduleFormat: '(.*)' },
    config: {},
    provider: {
      description:
        'The keystone-appcred provider. It has no configuration: the Keystone connection comes from the resource\'s `connection` input or from the environment of `pulumi` (`OS_CLOUD`, `OS_*`), and the OpenBao backup\'s defaults from `BAO_ADDR`/`BAO_TOKEN`.',
    },
    types: {
      [ROTATION]: objectType('The rotation schedule, as the CRD\'s `spec.rotation`.', rotationProperties),
      [CONNECTION]: objectType(
        "The ordered user's Keystone connection as explicit values. With `cloud` set, every other field comes from that cloud of `clouds.yaml`; otherwise an explicit field wins over the environment.",
        connectionProperties,
      ),
      [BACKUP]: objectType('An OpenBao KV v2 backup of the delivered document, written before each switch and removed on destroy.', backupProperties),
      [ACCESS_RULE]: { ...objectType("One access rule, as Keystone's: a service type, an HTTP method and a path.", accessRuleProperties), required: ['service', 'method', 'path'] },
      [SECRET_TEMPLATE]: objectType('Output formats and keys of your own, as the CRD\'s `spec.secretTemplate` (without labels and annotations).', secretTemplateProperties),
      [ADOPT]: { ...objectType('An existing application credential and its secret, to adopt instead of minting the first one.', adoptProperties), required: ['credentialId', 'credentialSecret'] },
    },
    resources: {
      [APPLICATION_CREDENTIAL]: {
        description:
          "A Keystone application credential of the user the connection authenticates as, on the project it is scoped to: minted on the first `pulumi up`, rotated when `nextRotation` has passed or `credentialGeneration` is raised (an update: the id stays), the superseded one kept for the grace period and deleted by the first `pulumi up` after it. Restricted, with the user's roles on the project or the subset `roles` names, and the `accessRules` given. `pulumi preview` checks every input against the CRD's rules without calling Keystone; a `pulumi up` with nothing due calls Keystone not at all.",
        inputProperties,
        properties: outputProperties,
        required: REQUIRED_OUTPUTS,
      },
    },
    language: {
      csharp: { packageReferences: { Pulumi: '3.*' }, respectSchemaVersion: true },
      go: { importBasePath: 'keystone-appcred/sdk/go/keystoneappcred', generateResourceContainerTypes: true, respectSchemaVersion: true },
      nodejs: { packageName: 'keystone-appcred-sdk', dependencies: { '@pulumi/pulumi': '^3.0.0' }, respectSchemaVersion: true },
      python: { packageName: 'pulumi_keystone_appcred', pyproject: { enabled: true }, respectSchemaVersion: true },
    },
  };
}

/** The schema's type. */
export type PackageSchema = ReturnType<typeof packageSchema>;
