/**
 * `KeystoneApplicationCredential`: a Keystone application credential of the user the connection authenticates as, on
 * the project it is scoped to, minted, rotated on schedule and swept by `pulumi up` through the same lifecycle engine as
 * the in-cluster reconciler. A rotation is an update: the resource id stays the same.
 */
import * as pulumi from '@pulumi/pulumi';
import type { DeletionPolicy } from '../api/deletion-policy';
import type { AccessRule } from '../api/privileges';
import type { SecretFormat } from '../api/secret-template';
import type { BackupSettings, ConnectionSettings } from './settings';
import { pulumiPrefix } from './prefix';
import { provider } from './provider';
import { SECRET_OUTPUTS, type AdoptSettings } from './state';

/** Every member of `T` as a Pulumi input. */
export type InputsOf<T> = { readonly [K in keyof T]: pulumi.Input<T[K]> };

/** The rotation schedule, as the CRD's `spec.rotation`. */
export interface RotationArgs {
  /**
   * The time between two scheduled rotations, Go format. `0s` turns the schedule off; any other value is at least `1m`
   * and at most `87600h`.
   * @default "720h"
   */
  readonly interval?: pulumi.Input<string>;
  /**
   * How long the superseded credential stays in Keystone after the switch. Not negative, and shorter than a non-zero
   * interval.
   * @default "24h"
   */
  readonly gracePeriod?: pulumi.Input<string>;
}

/** The inputs of {@link KeystoneApplicationCredential}. */
export interface KeystoneApplicationCredentialArgs {
  /**
   * The rotation schedule.
   * @default { interval: "720h", gracePeriod: "24h" }
   */
  readonly rotation?: pulumi.Input<RotationArgs>;
  /**
   * The lowest credential generation the resource must hold (minimum 1). Raising it above the output
   * `credentialGeneration` rotates at once. It may only increase.
   * @default 1
   */
  readonly credentialGeneration?: pulumi.Input<number>;
  /**
   * The ordered user's Keystone connection. The resource stores it as a secret. Prefer the default: the provider reads
   * `OS_CLOUD` (with a `clouds.yaml`) or the `OS_*` variables from its environment, and nothing lands in the state.
   * @default the standard OpenStack sources in the environment of the `pulumi` process
   */
  readonly connection?: pulumi.Input<InputsOf<ConnectionSettings>>;
  /**
   * Back the delivered document up to OpenBao (KV v2) before each switch, as the spec's delivery does. `{}` takes every
   * field from the environment (`BAO_ADDR`, `BAO_TOKEN`). Stored as a secret.
   * @default from the stack config `keystone-appcred:openbaoAddress` (with `openbaoToken`, `openbaoMount`) if set, else no backup
   */
  readonly backup?: pulumi.Input<InputsOf<BackupSettings>>;
  /**
   * The key under `clouds:` in the `cloudsYaml` output (`--os-cloud NAME`).
   * @default "openstack"
   */
  readonly cloudName?: pulumi.Input<string>;
  /**
   * The names of the roles the credential carries, a subset of the user's roles on the project (issue 42). Keystone
   * keeps a credential's roles immutable, so a change rotates: a successor carrying the new roles is minted and switched
   * to on the next `pulumi up` with no grace period running, and the superseded credential keeps its roles through the
   * grace period. `pulumi preview` checks the names (at least one, each at most 255 characters, no comma, no
   * duplicate) without Keystone; whether the user holds each is known only to Keystone, so `pulumi up` checks it before
   * anything is created and fails naming the role (RoleNotAssigned).
   * @default every role the user holds on the project
   */
  readonly roles?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * The only requests a token from the credential may make (Keystone's access rules), enforced by keystonemiddleware's
   * `auth_token` in each service that has its `service_type` set. A change rotates, as for `roles`. `pulumi preview`
   * checks each rule (a service type of letters, digits and hyphens; GET, HEAD, POST, PUT, PATCH or DELETE; a path
   * beginning with `/`, `*` one segment, `**` any) without Keystone.
   * @default none: every request the roles allow
   */
  readonly accessRules?: pulumi.Input<pulumi.Input<InputsOf<AccessRule>>[]>;
  /**
   * Output formats and keys of your own beside `cloudsYaml` (issue 49), each a secret output: `formats: ['CloudConf']`
   * fills `cloudConf` (the `[Global]` section of the OpenStack cloud controller manager and Cinder CSI), `['Env']` fills
   * `env` (the `OS_*` variables openstackclient and Terraform read), and `data` fills `data` with each value a template
   * over `{{ authURL }}`, `{{ region }}` (when the connection sets one), `{{ applicationCredentialID }}`,
   * `{{ applicationCredentialSecret }}`, `{{ userID }}`, `{{ projectID }}`, `{{ projectName }}`,
   * `{{ projectDomainName }}`. `pulumi preview` refuses a key or field the CRD refuses, and `{{ interface }}` (a
   * connection names no endpoint interface). Labels and annotations go on a `CredentialSecret`, which writes these
   * outputs into a Kubernetes Secret.
   * @default none
   */
  readonly secretTemplate?: pulumi.Input<InputsOf<{ formats?: SecretFormat[]; data?: Record<string, string> }>>;
  /**
   * What `pulumi destroy` does to the delivered credential (issue 49): `Delete`, or `Retain`: the delivered credential
   * stays in Keystone and its backup in OpenBao, what is superseded is deleted, and `destroy` prints what it left and
   * the commands that remove it. Pulumi's own `retainOnDelete` option keeps everything instead (the provider is not
   * called: the superseded credential too, until its Keystone expiry): docs/pulumi.md.
   * @default "Delete"
   */
  readonly deletionPolicy?: pulumi.Input<DeletionPolicy>;
  /**
   * Revoke now (issue 49): set it to a new value (a date, a ticket) and run `pulumi up`: the credential is rotated at
   * once and the superseded one deleted in the same `up`, as soon as its successor is delivered (and backed up),
   * skipping the grace period; the up warns that it did. The output `lastRevokeRequest` records the value acted on.
   * @default none
   */
  readonly revokePrevious?: pulumi.Input<string>;
  /**
   * Adopt an existing application credential of the connection's user on its project instead of minting the first one
   * (issue 49), proven by its secret: Keystone must authenticate the id with it, and it must be restricted. Read only
   * while the resource holds no credential; the next rotation supersedes it and sweeps it after the grace period.
   * Stored as a secret.
   * @default none: the first credential is minted
   */
  readonly adopt?: pulumi.Input<InputsOf<AdoptSettings>>;
}

/** The Pulumi type token's module and type. */
export const TYPE_MODULE = 'keystone-appcred';
export const TYPE_NAME = 'KeystoneApplicationCredential';

/**
 * The per-resource prefix of the deterministic credential names: unique per project, stack and resource name, so two
 * stacks of one project never touch each other's credentials in Keystone.
 */
export function resourcePrefix(name: string, project: string = pulumi.getProject(), stack: string = pulumi.getStack()): string {
  return pulumiPrefix({ project, stack, name });
}

function backupFromConfig(): InputsOf<BackupSettings> | undefined {
  const config = new pulumi.Config('keystone-appcred');
  const address = config.get('openbaoAddress');
  if (address === undefined) return undefined;
  const token = config.getSecret('openbaoToken');
  const mount = config.get('openbaoMount');
  return { address, ...(token !== undefined ? { token } : {}), ...(mount !== undefined ? { mount } : {}) };
}

/**
 * An application credential minted, rotated and swept on `pulumi up`. See docs/configure/pulumi.md.
 *
 * ```ts
 * const cred = new KeystoneApplicationCredential('ci', { rotation: { interval: '168h', gracePeriod: '24h' } });
 * export const cloudsYaml = cred.cloudsYaml; // secret
 * ```
 */
export class KeystoneApplicationCredential extends pulumi.dynamic.Resource {
  /** The Keystone id of the delivered credential (the CRD's `status.credentialID`). */
  declare readonly credentialId: pulumi.Output<string>;
  /** The delivered credential's secret. Secret. */
  declare readonly credentialSecret: pulumi.Output<string>;
  /** A `v3applicationcredential` clouds.yaml with the auth URL, the id and the secret. Secret. */
  declare readonly cloudsYaml: pulumi.Output<string>;
  /** The generation of the delivered credential (the status, not the input). */
  declare readonly credentialGeneration: pulumi.Output<number>;
  /**
   * When the delivered credential expires in Keystone (RFC 3339); absent for one created with the schedule off.
   * Like every output typed `| undefined`, export it as a stack output only with a default
   * (`.apply((v) => v ?? 'none')`): an absent stack output makes each `pulumi up` warn "Undefined value".
   */
  declare readonly credentialExpiresAt: pulumi.Output<string | undefined>;
  /** When the delivered credential became the delivered one. */
  declare readonly lastRotation: pulumi.Output<string>;
  /** When the schedule rotates next: the first `pulumi up` at or after it rotates. Absent with the schedule off. */
  declare readonly nextRotation: pulumi.Output<string | undefined>;
  /** The superseded credential, during its grace period only. */
  declare readonly previousCredentialId: pulumi.Output<string | undefined>;
  declare readonly previousCredentialGeneration: pulumi.Output<number | undefined>;
  /** When the first `pulumi up` at or after it deletes the superseded credential. */
  declare readonly previousCredentialDeleteAt: pulumi.Output<string | undefined>;
  /** The roles the delivered credential carries, as Keystone lists them. */
  declare readonly credentialRoles: pulumi.Output<string[]>;
  /** The role subset the delivered credential was minted with; absent: every role of the user. */
  declare readonly roles: pulumi.Output<string[] | undefined>;
  /** The access rules the delivered credential was minted with; absent: none. */
  declare readonly accessRules: pulumi.Output<AccessRule[] | undefined>;
  /** The delivered credential as `cloud.conf` (format `CloudConf`); absent without it. Secret. */
  declare readonly cloudConf: pulumi.Output<string | undefined>;
  /** The delivered credential as the `OS_*` variables (format `Env`); absent without it. Secret. */
  declare readonly env: pulumi.Output<Record<string, string> | undefined>;
  /** The keys of your own (`secretTemplate.data`), rendered; absent without them. Secret. */
  declare readonly data: pulumi.Output<Record<string, string> | undefined>;
  /** The `revokePrevious` value the resource last acted on. */
  declare readonly lastRevokeRequest: pulumi.Output<string | undefined>;
  /** While a revoke request is carried out (an `up` that failed half-way), the generation it rotates to. */
  declare readonly revokeGeneration: pulumi.Output<number | undefined>;
  /** The credential the resource adopted (`adopt`), while it holds it. */
  declare readonly adoptedCredentialId: pulumi.Output<string | undefined>;
  /** The prefix of the credential names in Keystone: `<name>-<8 hex>-applicationcredential`. */
  declare readonly prefix: pulumi.Output<string>;
  /**
   * The resource's owner id: the description of every credential it mints in Keystone carries `owner=<id>`, which tells
   * its credentials from those of another stack that orders the same names for the same user (docs/concepts/ownership.md).
   */
  declare readonly owner: pulumi.Output<string>;

  constructor(name: string, args: KeystoneApplicationCredentialArgs = {}, opts: pulumi.CustomResourceOptions = {}) {
    const backup = args.backup ?? backupFromConfig();
    const props = {
      prefix: resourcePrefix(name),
      credentialGeneration: args.credentialGeneration,
      rotation: args.rotation,
      connection: args.connection === undefined ? undefined : pulumi.secret(args.connection),
      backup: backup === undefined ? undefined : pulumi.secret(backup),
      cloudName: args.cloudName,
      roles: args.roles,
      accessRules: args.accessRules,
      secretTemplate: args.secretTemplate,
      deletionPolicy: args.deletionPolicy,
      revokePrevious: args.revokePrevious,
      adopt: args.adopt === undefined ? undefined : pulumi.secret(args.adopt),
      credentialRoles: undefined,
      cloudConf: undefined,
      env: undefined,
      data: undefined,
      lastRevokeRequest: undefined,
      revokeGeneration: undefined,
      adoptedCredentialId: undefined,
      credentialId: undefined,
      credentialSecret: undefined,
      cloudsYaml: undefined,
      credentialExpiresAt: undefined,
      lastRotation: undefined,
      nextRotation: undefined,
      previousCredentialId: undefined,
      previousCredentialGeneration: undefined,
      previousCredentialDeleteAt: undefined,
      owner: undefined,
      successorGeneration: undefined,
      successorCredentialId: undefined,
      successorSecret: undefined,
    };
    const options = { ...opts, additionalSecretOutputs: [...(opts.additionalSecretOutputs ?? []), ...SECRET_OUTPUTS] };
    // Pulumi's SDK records an eager stack trace, formatted through source-map-support, for four promises per property
    // of every resource it constructs, used only by its promise-leak diagnostics. With this resource's two dozen
    // properties that was most of what an up with nothing due cost beyond a trivial program's (docs/benchmarks.md,
    // `pulumi up`). The traces are left empty while the SDK constructs this resource, synchronously, and the limit is
    // restored at once: the resource's source position does not depend on it (the SDK reads it with a limit of its
    // own), and with PULUMI_DEBUG_PROMISE_LEAKS set the traces are kept.
    const stackTraceLimit = Error.stackTraceLimit;
    if (!process.env.PULUMI_DEBUG_PROMISE_LEAKS) Error.stackTraceLimit = 0;
    try {
      super(provider, name, props, options, TYPE_MODULE, TYPE_NAME);
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
  }
}
