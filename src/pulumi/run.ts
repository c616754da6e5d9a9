/**
 * A create, update or delete: the lifecycle engine (`src/lifecycle`) run against Keystone (and OpenBao) from the state,
 * and the outputs it leaves, including what a failed run records. No rotation rule lives here.
 */
import { randomUUID } from 'node:crypto';
import { ConditionType, CredentialReason, WARNING_REASONS, backingPath, resolveSpec, revokeRequestOf, type KeystoneApplicationCredentialStatus } from '../api';
import { OpenBaoBackup } from '../backup/openbao';
import { deliveredData, isTerminalCreateError } from '../keystone/credential-port';
import { foreignNote, reconcile, rolesNotHeld, type CredentialScope, type ForeignCredential, type Gate, type HeldPrivileges, type LifecycleOrder, type Ports, type SecretData } from '../lifecycle';
import { templateData } from '../lifecycle/secret-template';
import { MemoryDelivery, MemorySecretStore } from '../local/memory';
import type { Environment } from './check';
import { resolveConnection, type ResolvedConnection } from './connection';
import { halt } from './halt';
import { foreignHolder, sharedPathMessage, type OwnedBackup } from './backup-path';
import type { OpenKeystone } from './keystone';
import { leftoverNote } from './leftover';
import { deliveryNotice, documentOf, fieldsOf, namesScope, shapesOf } from './delivery-inputs';
import { outputsOf, ownerOfLegacyState, privilegesOf, statusOf, stripUndefined, type AdoptSettings, type ProviderInputs, type ProviderOutputs } from './state';
import type { BackupSettings } from './settings';

/** What a run needs of the provider's surroundings. */
export interface RunContext {
  readonly clock: () => Date;
  readonly env: Environment;
  readonly openKeystone: OpenKeystone;
  /** Builds the backup port; `owner` is the resource's owner id its metadata names. @default {@link OpenBaoBackup} */
  readonly backup?: (settings: BackupTarget) => OwnedBackup | undefined;
  readonly warn: (message: string) => Promise<void>;
}

/** Where a resource's backup lives, every field resolved (inputs, then the environment, then the defaults). */
export type BackupTarget = Required<Pick<BackupSettings, 'address' | 'token' | 'mount' | 'path'>> & BackupSettings & { readonly owner?: string };

/** The backup port of `inputs.backup` (none without), at its path: the explicit one, else the default naming the owner. */
export function backupOf(ctx: Pick<RunContext, 'env' | 'backup'>, inputs: Pick<ProviderInputs, 'backup' | 'prefix'>, owner: string | undefined): { port: OwnedBackup; target: BackupTarget } | undefined {
  if (inputs.backup === undefined) return undefined;
  const e = ctx.env;
  const address = inputs.backup.address ?? e.BAO_ADDR ?? e.VAULT_ADDR;
  const token = inputs.backup.token ?? e.BAO_TOKEN ?? e.VAULT_TOKEN;
  if (!address) throw new Error('backup.address is not set and neither is BAO_ADDR (or VAULT_ADDR)');
  if (!token) throw new Error('backup.token is not set and neither is BAO_TOKEN (or VAULT_TOKEN)');
  const target: BackupTarget = {
    ...inputs.backup,
    address,
    token,
    mount: inputs.backup.mount ?? 'openstack',
    path: inputs.backup.path ?? backingPath('pulumi', inputs.prefix, owner).split('/').slice(1).join('/'),
    ...(inputs.backup.namespace ?? e.BAO_NAMESPACE ? { namespace: inputs.backup.namespace ?? e.BAO_NAMESPACE } : {}),
    ...(owner !== undefined ? { owner } : {}),
  };
  const port = ctx.backup ? ctx.backup(target) : new OpenBaoBackup(target);
  return port ? { port, target } : undefined;
}

/**
 * The backup port a run hands the lifecycle, when `backup.path` is explicit (the default path names the owner): refused
 * up front when the document there belongs to another owner (backup-path.ts) — a create or an update fails before
 * anything happens, a destroy leaves that document alone and says so — and every read of it checks the owner again,
 * so a document another resource wrote since is never taken for this one's record. A write another resource's claim
 * refused (two creates that both found the path empty: src/backup/openbao.ts) fails saying whose the path is now.
 */
async function guardedBackup(ctx: RunContext, backup: { port: OwnedBackup; target: BackupTarget }, owner: string | undefined, recorded: ReadonlySet<string>, deleting: boolean): Promise<OwnedBackup | undefined> {
  const { port, target } = backup;
  if (owner === undefined) return port; // a state written before owners: nothing to judge by
  const holder = await foreignHolder(port, owner, recorded);
  if (holder !== undefined) {
    const message = sharedPathMessage(target, holder, owner);
    if (!deleting) throw new Error(message);
    await ctx.warn(`destroyed; the backup was left alone: ${message}`);
    return undefined;
  }
  return {
    read: async () => {
      const now = await port.readOwner?.();
      if (now !== undefined && now !== owner) throw new Error(sharedPathMessage(target, { owner: now }, owner));
      return port.read();
    },
    write: async (data) => {
      try {
        await port.write(data);
      } catch (error) {
        const now = await port.readOwner?.().catch(() => undefined);
        if (now !== undefined && now !== owner) throw new Error(sharedPathMessage(target, { owner: now }, owner));
        throw error;
      }
    },
    remove: () => port.remove(),
  };
}

export function orderOf(
  inputs: Pick<ProviderInputs, 'prefix' | 'credentialGeneration' | 'rotation' | 'roles' | 'accessRules' | 'deletionPolicy' | 'adopt' | 'revokePrevious'>,
  status: KeystoneApplicationCredentialStatus,
  owner?: string,
  deleting = false,
): LifecycleOrder {
  const revokeRequest = revokeRequestOf(inputs.revokePrevious);
  return {
    prefix: inputs.prefix,
    ...(owner !== undefined ? { owner } : {}),
    spec: resolveSpec({
      credentialGeneration: inputs.credentialGeneration,
      rotation: inputs.rotation,
      ...(inputs.roles !== undefined ? { roles: inputs.roles } : {}),
      ...(inputs.accessRules !== undefined ? { accessRules: inputs.accessRules } : {}),
      ...(inputs.deletionPolicy !== undefined ? { deletionPolicy: inputs.deletionPolicy } : {}),
      ...(inputs.adopt !== undefined ? { adopt: { credentialID: inputs.adopt.credentialId } } : {}),
    }),
    status,
    ...(revokeRequest !== undefined ? { revokeRequest } : {}),
    ...(deleting ? { deleting } : {}),
  };
}

/** The inputs a state echoes: what the previous state recorded (for a failed run that did not switch). */
function echoedInputs(olds: Partial<ProviderOutputs>, fallback: ProviderInputs): ProviderInputs {
  if (olds.prefix === undefined || olds.rotation === undefined) return fallback;
  return stripUndefined({
    prefix: olds.prefix,
    credentialGeneration: olds.credentialGeneration ?? fallback.credentialGeneration,
    rotation: olds.rotation,
    connection: olds.connection,
    backup: olds.backup,
    cloudName: olds.cloudName,
    roles: olds.roles,
    accessRules: olds.accessRules,
    secretTemplate: olds.secretTemplate,
    deletionPolicy: olds.deletionPolicy,
    revokePrevious: olds.revokePrevious,
  });
}

/**
 * The role subset's gate (issue 42): every role `roles` names must be one the user holds on the project, as Keystone
 * shows them in the user's project-scoped token (implied roles included), read when the run observes Keystone, before
 * anything is created. Keystone would refuse the create with 400, and a role that does not exist with 404, half-way.
 */
function rolesGate(inputs: Pick<ProviderInputs, 'roles'>, port: Ports['keystone'], connection: ResolvedConnection): (() => Promise<Gate | undefined>) | undefined {
  const asked = inputs.roles;
  if (asked === undefined || port.roles === undefined) return undefined;
  const held = port.roles.bind(port);
  return async () => {
    const roles = [...(await held())].sort();
    const missing = rolesNotHeld(asked, roles);
    if (missing.length === 0) return undefined;
    const list = roles.length > 0 ? roles.join(', ') : 'none';
    return {
      reason: CredentialReason.RoleNotAssigned,
      message: `roles names ${missing.length === 1 ? 'role' : 'roles'} ${missing.join(', ')}, which the connection's user (${connection.source}) does not hold on its project (it holds: ${list})`,
    };
  };
}

/**
 * Runs the engine against Keystone from the state `olds` (empty on create) and returns the new outputs.
 *
 * A failed run follows Pulumi's contract for a failed update: the state keeps what is true in the world. When the run
 * changed nothing in Keystone or the backup, the error is thrown as it is and the engine keeps the previous state
 * whole (a wrong password, an empty value, Keystone down: `refresh` and `destroy` work on at once with the previous
 * connection). When it did change something, the error carries the outputs of what is true now (a switched
 * generation, a swept one, a successor minted and not switched, with its parked secret), which the engine stores as
 * the resource's partial state; the new inputs are recorded only when the run switched the delivered credential under
 * them (a create records its inputs: nothing came before).
 */
export async function run(ctx: RunContext, verb: 'create' | 'update' | 'delete', id: string, olds: Partial<ProviderOutputs>, inputs: ProviderInputs): Promise<ProviderOutputs> {
  const deleting = verb === 'delete';
  // The state's owner; a create's was drawn by check (recorded by the engine before this call); a state written before
  // owners existed (0.1.0) gets one at its first update, derived from the state, so that a killed run's writes under
  // it are the next run's own (state.ts).
  const owner = olds.owner ?? inputs.owner ?? ownerOfLegacyState(olds) ?? (deleting ? undefined : randomUUID());
  const connection = resolveConnection(inputs.connection, ctx.env);
  // The backup first: an explicit path another owner's document holds is refused before anything happens.
  const recorded = new Set([olds.credentialId, olds.previousCredentialId, olds.successorCredentialId].filter((id): id is string => id !== undefined));
  const target = backupOf(ctx, inputs, owner);
  const backup = target === undefined ? undefined : inputs.backup?.path !== undefined ? await guardedBackup(ctx, target, owner, recorded, deleting) : target.port;
  const keystone = ctx.openKeystone(connection, inputs.prefix);
  const live = olds.credentialGeneration;
  const parked: [number, string][] = [];
  if (live !== undefined && olds.credentialSecret !== undefined) parked.push([live, olds.credentialSecret]);
  if (olds.successorGeneration !== undefined && olds.successorSecret !== undefined && olds.successorGeneration !== live) parked.push([olds.successorGeneration, olds.successorSecret]);
  const secrets = new MemorySecretStore(parked);
  // An adopted credential still delivered (issue 49): its parked record names it, as the operator's does.
  if (live !== undefined && olds.credentialSecret !== undefined && olds.adoptedCredentialId !== undefined && olds.adoptedCredentialId === olds.credentialId) {
    await secrets.adopt(live, olds.credentialSecret, olds.adoptedCredentialId);
  }
  const render = (credentialId: string, secret: string): SecretData =>
    deliveredData(
      { authUrl: connection.authUrl, ...(connection.regionName ? { regionName: connection.regionName } : {}), ...(inputs.cloudName ? { cloudName: inputs.cloudName } : {}) },
      credentialId,
      secret,
    );
  const delivery = new MemoryDelivery();
  const previous: SecretData | undefined = documentOf(olds);
  if (previous) delivery.data = { ...previous };
  let status = statusOf(olds);
  /** Whether the run changed Keystone or the backup: then a failure records what is true now. */
  let changed = false;
  /** What issue 49's actions did, for the user: a Retain teardown's leftovers, a skipped grace period. */
  const notices: string[] = [];
  /** The successor's credential, as this run's own mint created it. */
  const minted = new Map<number, string>();
  if (olds.successorGeneration !== undefined && olds.successorCredentialId !== undefined) minted.set(olds.successorGeneration, olds.successorCredentialId);
  // A state keystone-appcred 0.1.0 wrote has no owner id, and its backup is at the default path without one: this run
  // writes the owner's path and removes the 0.1.0 document once it is proven this resource's (src/lifecycle/migration.ts);
  // a destroy removes both (the owner's path may hold what a killed run wrote).
  const migrating = olds.owner === undefined && olds.credentialId !== undefined && inputs.backup !== undefined && inputs.backup.path === undefined;
  const gate = deleting ? undefined : rolesGate(inputs, keystone.port, connection);
  /** What each generation's credential carries, as this run observed or minted it (issue 42). */
  const privileges = new Map<number, HeldPrivileges>();
  if (live !== undefined) privileges.set(live, privilegesOf(olds));
  const ports: Ports = {
    keystone: keystone.port,
    secrets,
    delivery,
    ...(backup !== undefined ? { backup } : {}),
    ...(migrating ? { formerBackup: backupOf(ctx, inputs, undefined)?.port } : {}),
    ...(gate ? { gate } : {}),
    render,
    // Issue 49: the template's keys (outputs per format), an adoption's secret (delivery-inputs.ts).
    ...(inputs.secretTemplate !== undefined && !deleting ? { template: (document: SecretData) => templateData(inputs.secretTemplate, { ...fieldsOf(connection, scope), applicationCredentialID: document.application_credential_id, applicationCredentialSecret: document.application_credential_secret }) } : {}),
    ...(inputs.adopt !== undefined ? { adoption: async () => ({ secret: (inputs.adopt as AdoptSettings).credentialSecret }) } : {}),
    writeStatus: async (next) => {
      status = next;
    },
    release: async () => undefined,
    isTerminal: isTerminalCreateError,
  };
  /**
   * The outputs of what is true now, under `recorded` inputs; `document`: the delivered document as the state held it
   * (a run that did not switch records the previous inputs, and the document rendered under them).
   */
  const current = async (recorded: ProviderInputs, document?: SecretData): Promise<ProviderOutputs> => {
    const generation = status.credentialGeneration;
    const secret = generation === undefined ? undefined : await secrets.read(generation);
    const data = document ?? delivery.data;
    const carries = data !== undefined && data.application_credential_id === status.credentialID && data.application_credential_secret === secret;
    const above = (await secrets.list()).filter((p) => p.parked && p.generation > (generation ?? 0)).sort((a, b) => b.generation - a.generation)[0];
    const successorSecret = above === undefined ? undefined : await secrets.read(above.generation);
    const held = generation === undefined ? undefined : privileges.get(generation);
    const shapes = carries ? shapesOf(data, recorded.secretTemplate) : {};
    return outputsOf(recorded, status, { credentialSecret: secret, ...(carries ? { cloudsYaml: data['clouds.yaml'], shapes } : {}), ...(held ? { privileges: held } : {}) }, {
      owner,
      ...(above !== undefined && successorSecret !== undefined
        ? { successorGeneration: above.generation, successorSecret, ...(minted.has(above.generation) ? { successorCredentialId: minted.get(above.generation) } : {}) }
        : {}),
    });
  };
  /** The user and project the template may name, from the token, when it names any (issue 49). */
  let scope: CredentialScope | undefined;
  try {
    if (namesScope(inputs.secretTemplate) && !deleting) scope = await keystone.port.scope?.();
    halt(ctx.env, verb, 'before');
    const result = await reconcile(orderOf(inputs, status, owner, deleting), ports, {
      clock: ctx.clock,
      onObserved: (world) => {
        for (const r of world.generations) if (r.credential?.privileges) privileges.set(r.generation, r.credential.privileges);
      },
      onAction: (e) => {
        // A mint whose outcome is unsure (its reply lost, Keystone gone mid-way) may have created the successor: its
        // parked secret is recorded, so the next up finds it in Keystone and continues with it.
        if (e.action.type === 'mint') changed = true;
        if (e.outcome === 'failed') return;
        if (['delete', 'backup', 'remove-backup', 'remove-former-backup'].includes(e.action.type)) changed = true;
        const a = e.action;
        if (a.type === 'mint' && e.credentialId !== undefined) minted.set(a.generation, e.credentialId);
        if (a.type === 'mint' && e.privileges) privileges.set(a.generation, e.privileges);
        if (a.type === 'delete' && minted.get(a.generation) === a.id) minted.delete(a.generation);
        notices.push(...deliveryNotice(a, inputs, target?.target));
        halt(ctx.env, verb, a.type);
      },
    });
    const leftover = leftoverNote(result.foreign, inputs.prefix, target === undefined ? undefined : { mount: target.target.mount, ...(inputs.backup?.path !== undefined ? { path: inputs.backup.path } : {}) });
    await reportOf(ctx, result.status, result.foreign, deleting, leftover);
    for (const notice of notices) await ctx.warn(notice);
    if (result.former?.state === 'foreign') {
      await ctx.warn(`the backup path keystone-appcred 0.1.0 wrote for this resource (without its owner id) holds credential ${result.former.credentialId}, which this resource does not record: left alone; remove it with bao kv metadata delete once you know whose it is`);
    }
    const outputs = await current(inputs);
    halt(ctx.env, verb, 'after');
    return outputs;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (changed && !deleting) {
      // Pulumi stores these outputs as the resource's (partial) state: what is true in the world now.
      const switched = status.credentialID !== olds.credentialId;
      const properties = verb === 'create' || switched ? await current(inputs) : await current(echoedInputs(olds, inputs), previous);
      throw Object.assign(new Error(message), { id, properties, reasons: [message] });
    }
    throw error instanceof Error ? error : new Error(message);
  } finally {
    await keystone.close();
  }
}

/**
 * What a run that converged says to the user. No credential to deliver is an error naming the reason (a generation
 * Keystone refused, names held by foreign credentials); a credential under the resource's names that it did not mint,
 * or a condition that is not True beside a delivered credential, is a warning.
 */
async function reportOf(ctx: RunContext, status: KeystoneApplicationCredentialStatus, foreign: readonly ForeignCredential[], deleting: boolean, leftover: string | undefined): Promise<void> {
  if (deleting) {
    if (foreign.length > 0) await ctx.warn(`destroyed; left alone in Keystone: ${foreignNote(foreign)}`);
    if (leftover !== undefined) await ctx.warn(leftover);
    return;
  }
  const credential = status.conditions?.find((c) => c.type === ConditionType.CredentialReady);
  if (status.credentialID === undefined) throw new Error(credential ? `${credential.reason}: ${credential.message}` : 'no credential was created');
  // A role the user does not hold is a wrong input, not a state to live with: the up fails and the state keeps the
  // credential it has (issue 42).
  if (credential?.reason === CredentialReason.RoleNotAssigned) throw new Error(`${credential.reason}: ${credential.message}`);
  for (const c of status.conditions ?? []) {
    if (c.type !== ConditionType.Ready && (c.status !== 'True' || WARNING_REASONS.has(c.reason))) await ctx.warn(`${c.type} ${c.reason}: ${c.message}`);
  }
  if (leftover !== undefined) await ctx.warn(leftover);
}
