/**
 * The Pulumi resource's inputs and outputs as the provider sees them, and their mapping onto the lifecycle's order and
 * status. Output names follow the CRD's status (`credentialId` for `status.credentialID`).
 *
 * The state is the Pulumi face's store: it holds the live generation's secret (`credentialSecret`, a secret output)
 * and the delivered document (`cloudsYaml`), the resource's owner id (the mark of every credential it mints,
 * src/lifecycle/ownership.ts), and, after a failed `up` that left a successor unswitched, that successor's generation,
 * id and parked secret (`successorSecret`, a secret output), from which the next `up` continues without minting a
 * second one. Only what is true in the world is recorded: a failed run records its new inputs only when it switched
 * the delivered credential under them.
 */
import { createHash } from 'node:crypto';
import type { AccessRule, DeletionPolicy, KeystoneApplicationCredentialStatus, SecretFormat } from '../api';
import type { HeldPrivileges, Observations } from '../lifecycle';
import type { BackupSettings, ConnectionSettings } from './settings';

/** `secretTemplate` on the Pulumi resource (issue 49): the CRD's formats and free keys. */
export interface PulumiSecretTemplate {
  /** `CloudConf`, `Env`. @default none */
  readonly formats?: readonly SecretFormat[];
  /** Keys of your own, each value a template over the closed set of fields. @default none */
  readonly data?: Readonly<Record<string, string>>;
}

/** `adopt` on the Pulumi resource (issue 49): the credential and its secret, given as a secret input. */
export interface AdoptSettings {
  /** The Keystone id of the credential to adopt. */
  readonly credentialId: string;
  /** Its secret. Secret. */
  readonly credentialSecret: string;
}

/** The rotation settings, Go-format durations. */
export interface RotationSettings {
  readonly interval: string;
  readonly gracePeriod: string;
}

/** The inputs after `check`: defaults applied. */
export interface ProviderInputs {
  /** The per-resource prefix the deterministic credential names derive from. */
  readonly prefix: string;
  /** spec.credentialGeneration. */
  readonly credentialGeneration: number;
  readonly rotation: RotationSettings;
  /** The explicit connection. @default the standard OpenStack sources in the provider's environment */
  readonly connection?: ConnectionSettings;
  /** The OpenBao backup. @default none */
  readonly backup?: BackupSettings;
  /** The key under `clouds:` in the delivered document. @default "openstack" */
  readonly cloudName?: string;
  /** The roles the credential carries (issue 42). @default every role the user holds on the project */
  readonly roles?: readonly string[];
  /** The only requests a token from the credential may make (issue 42). @default none */
  readonly accessRules?: readonly AccessRule[];
  /** Output formats and keys of your own (issue 49); labels and annotations go on `CredentialSecret`. @default none */
  readonly secretTemplate?: PulumiSecretTemplate;
  /** What `pulumi destroy` does to the delivered credential (issue 49). @default "Delete" */
  readonly deletionPolicy?: DeletionPolicy;
  /** A revoke request (issue 49): a new value rotates and deletes the superseded credential in the same `up`. @default none */
  readonly revokePrevious?: string;
  /** An existing credential of the connection's user to adopt instead of minting the first one (issue 49). @default none */
  readonly adopt?: AdoptSettings;
  /**
   * The resource's owner id, not a user's input: `check` draws it for a create and keeps it ever after, so the engine
   * holds it in the checked inputs it records before it calls Create (a pending create in the state's
   * `pending_operations`), and a create killed after the mint leaves a credential whose owner the state names
   * (docs/concepts/ownership.md).
   */
  readonly owner?: string;
}

/** The status half of the outputs, named like the CRD's status. */
export interface StatusOutputs {
  readonly credentialId?: string;
  readonly credentialSecret?: string;
  readonly cloudsYaml?: string;
  readonly credentialGeneration?: number;
  readonly credentialExpiresAt?: string;
  readonly lastRotation?: string;
  readonly nextRotation?: string;
  readonly previousCredentialId?: string;
  readonly previousCredentialGeneration?: number;
  readonly previousCredentialDeleteAt?: string;
  /** The roles the delivered credential carries, as Keystone lists them (issue 42). */
  readonly credentialRoles?: readonly string[];
  /** The delivered credential as `cloud.conf` (issue 49, format `CloudConf`). Secret. */
  readonly cloudConf?: string;
  /** The delivered credential as the `OS_*` variables (issue 49, format `Env`). Secret. */
  readonly env?: Readonly<Record<string, string>>;
  /** The keys of your own, rendered (issue 49). Secret. */
  readonly data?: Readonly<Record<string, string>>;
  /** The revoke request the resource last acted on (issue 49). */
  readonly lastRevokeRequest?: string;
  /** While a revoke request is carried out, the generation it rotates to (issue 49). */
  readonly revokeGeneration?: number;
  /** The Keystone id of the credential the resource adopted, while it holds it (issue 49). */
  readonly adoptedCredentialId?: string;
}

/** A successor a failed `up` minted (or parked) and did not switch to: what the next `up` continues from. */
export interface SuccessorOutputs {
  readonly successorGeneration?: number;
  /** Its Keystone id, once minted. */
  readonly successorCredentialId?: string;
  /** Its parked secret. Secret. */
  readonly successorSecret?: string;
}

/**
 * Everything the state holds: the inputs echoed (minus spec.credentialGeneration, whose name the status takes) and the
 * status. `roles` and `accessRules` echo what the delivered credential was minted with, not the inputs of the last run:
 * a change waiting for a grace period to end is still to be done (issue 42).
 */
export interface ProviderOutputs extends StatusOutputs, SuccessorOutputs {
  readonly prefix: string;
  /**
   * The resource's owner id, drawn at create (or at the first update of a state written before owner ids): every
   * credential the resource mints carries it, and its backup path names it (src/lifecycle/ownership.ts).
   */
  readonly owner?: string;
  readonly rotation: RotationSettings;
  readonly connection?: ConnectionSettings;
  readonly backup?: BackupSettings;
  readonly cloudName?: string;
  readonly roles?: readonly string[];
  readonly accessRules?: readonly AccessRule[];
  readonly secretTemplate?: PulumiSecretTemplate;
  readonly deletionPolicy?: DeletionPolicy;
  readonly revokePrevious?: string;
}

/** Separates the owner id's input from any other use of a secret's digest (the proof's: src/lifecycle/ownership.ts). */
const OWNER_CONTEXT = 'keystone-appcred pulumi owner of a state without one v1\n';

/**
 * The owner id of a state that names none (keystone-appcred 0.1.0 wrote it: owners came with 0.2.0), for the run that
 * gives it one: derived from the state itself, not drawn, so that every run over that state has the same owner until a
 * state naming it is saved. A run killed after it wrote something under the owner (the backup at the owner's path, a
 * successor marked with it) and before Pulumi saved its outputs leaves nothing the next run does not take for its own
 * (issue 46): the next run, from the same state, writes the same path and owns the same marks. It is a one-way digest
 * of the delivered generation's secret, which only this state holds, in the form of an RFC 9562 UUID (version 8), so
 * no other stack can arrive at it and it tells nothing of the secret. Undefined for a state without that secret (no
 * credential was delivered: nothing to migrate, and the run draws one).
 */
export function ownerOfLegacyState(state: Pick<Partial<ProviderOutputs>, 'owner' | 'credentialSecret'>): string | undefined {
  if (state.owner !== undefined || state.credentialSecret === undefined) return undefined;
  const bytes = createHash('sha256').update(OWNER_CONTEXT).update(state.credentialSecret).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x80;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Outputs Pulumi must store encrypted. */
export const SECRET_OUTPUTS = ['credentialSecret', 'cloudsYaml', 'connection', 'backup', 'successorSecret', 'cloudConf', 'env', 'data'] as const;

/** The status fields of the outputs, in the order a user reads them. */
export const STATUS_OUTPUTS = [
  'credentialId',
  'credentialSecret',
  'cloudsYaml',
  'credentialGeneration',
  'credentialExpiresAt',
  'lastRotation',
  'nextRotation',
  'previousCredentialId',
  'previousCredentialGeneration',
  'previousCredentialDeleteAt',
  'credentialRoles',
  'cloudConf',
  'env',
  'data',
  'lastRevokeRequest',
  'revokeGeneration',
  'adoptedCredentialId',
] as const satisfies readonly (keyof StatusOutputs)[];

/** Drops `undefined` members, recursively (Pulumi cannot carry them in outputs). */
export function stripUndefined<T>(value: T): T {
  if (Array.isArray(value)) return value.map(stripUndefined) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = stripUndefined(v);
  return out as T;
}

/** The lifecycle status the outputs record. */
export function statusOf(outputs: Partial<StatusOutputs>): KeystoneApplicationCredentialStatus {
  return stripUndefined({
    credentialID: outputs.credentialId,
    credentialGeneration: outputs.credentialGeneration,
    credentialExpiresAt: outputs.credentialExpiresAt,
    lastRotation: outputs.lastRotation,
    nextRotation: outputs.nextRotation,
    previousCredentialID: outputs.previousCredentialId,
    previousCredentialGeneration: outputs.previousCredentialGeneration,
    previousCredentialDeleteAt: outputs.previousCredentialDeleteAt,
    lastRevokeRequest: outputs.lastRevokeRequest,
    revokeGeneration: outputs.revokeGeneration,
    adoptedCredentialID: outputs.adoptedCredentialId,
  });
}

/**
 * The outputs of a status and the delivered document (and the owner and a pending successor, when there are).
 * `privileges`: what the delivered credential carries, as Keystone shows it; absent when unknown, the inputs' then.
 */
export function outputsOf(
  inputs: ProviderInputs,
  status: KeystoneApplicationCredentialStatus,
  delivered: { readonly credentialSecret?: string; readonly cloudsYaml?: string; readonly privileges?: HeldPrivileges; readonly shapes?: Pick<StatusOutputs, 'cloudConf' | 'env' | 'data'> },
  extra: { readonly owner?: string } & SuccessorOutputs = {},
): ProviderOutputs {
  const privileges = delivered.privileges;
  const roles = privileges ? (privileges.subset ? privileges.roles : undefined) : inputs.roles;
  const accessRules = privileges ? (privileges.accessRules.length > 0 ? privileges.accessRules : undefined) : inputs.accessRules;
  return stripUndefined({
    prefix: inputs.prefix,
    owner: extra.owner,
    successorGeneration: extra.successorGeneration,
    successorCredentialId: extra.successorCredentialId,
    successorSecret: extra.successorSecret,
    rotation: inputs.rotation,
    connection: inputs.connection,
    backup: inputs.backup,
    cloudName: inputs.cloudName,
    secretTemplate: inputs.secretTemplate,
    deletionPolicy: inputs.deletionPolicy,
    revokePrevious: inputs.revokePrevious,
    roles: roles === undefined ? undefined : [...roles],
    accessRules: accessRules?.map((r) => ({ service: r.service, method: r.method, path: r.path })),
    credentialId: status.credentialID,
    credentialSecret: delivered.credentialSecret,
    cloudsYaml: delivered.cloudsYaml,
    credentialGeneration: status.credentialGeneration,
    credentialExpiresAt: status.credentialExpiresAt,
    lastRotation: status.lastRotation,
    nextRotation: status.nextRotation,
    previousCredentialId: status.previousCredentialID,
    previousCredentialGeneration: status.previousCredentialGeneration,
    previousCredentialDeleteAt: status.previousCredentialDeleteAt,
    credentialRoles: privileges?.roles === undefined ? undefined : [...privileges.roles],
    ...delivered.shapes,
    lastRevokeRequest: status.lastRevokeRequest,
    revokeGeneration: status.revokeGeneration,
    adoptedCredentialId: status.adoptedCredentialID,
  });
}

/**
 * What the delivered credential carries, as the state records it: the roles and access rules it was minted with
 * (`roles` recorded only for a chosen subset) and the roles Keystone listed for it. Unknown for a state written before
 * issue 42 (nothing recorded): taken as minted with every role and no access rule, as every credential was then.
 */
export function privilegesOf(state: Pick<Partial<ProviderOutputs>, 'roles' | 'accessRules' | 'credentialRoles'>): HeldPrivileges {
  const roles = state.credentialRoles ?? state.roles;
  return { ...(roles !== undefined ? { roles } : {}), subset: state.roles !== undefined, accessRules: state.accessRules ?? [] };
}

/**
 * The world as the state says it is: the live generation parked and in Keystone, the superseded one in Keystone, and a
 * successor a failed `up` left unswitched (parked, and in Keystone once minted).
 */
export function worldOf(state: Partial<ProviderOutputs>, backup: boolean): Observations {
  const generations: Observations['generations'][number][] = [];
  if (state.credentialGeneration !== undefined) {
    generations.push({
      generation: state.credentialGeneration,
      parked: state.credentialSecret !== undefined,
      ...(state.credentialId !== undefined
        ? { credential: { id: state.credentialId, ...(state.credentialExpiresAt ? { expiresAt: new Date(state.credentialExpiresAt) } : {}), privileges: privilegesOf(state) } }
        : {}),
    });
  }
  if (state.previousCredentialGeneration !== undefined && state.previousCredentialId !== undefined) {
    generations.push({ generation: state.previousCredentialGeneration, parked: false, credential: { id: state.previousCredentialId } });
  }
  const successor = state.successorGeneration;
  if (successor !== undefined && successor !== state.credentialGeneration && successor !== state.previousCredentialGeneration) {
    generations.push({
      generation: successor,
      parked: state.successorSecret !== undefined,
      ...(state.successorCredentialId !== undefined ? { credential: { id: state.successorCredentialId } } : {}),
    });
  }
  generations.sort((a, b) => a.generation - b.generation);
  return {
    generations,
    delivery:
      state.credentialId !== undefined && state.credentialSecret !== undefined && state.cloudsYaml !== undefined
        ? { state: 'delivered', credentialId: state.credentialId, intact: true }
        : { state: 'absent' },
    ...(backup ? { backup: state.credentialId !== undefined ? { credentialId: state.credentialId } : {} } : {}),
  };
}
