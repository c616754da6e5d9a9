/**
 * What the dynamic provider does in each of Pulumi's verbs. It maps the verbs onto the one lifecycle engine
 * (`src/lifecycle`): `check` applies the CRD's and the inputs' rules (check.ts); `diff` asks `decide` whether the state,
 * taken as the world, has anything to do at the current time; `create`/`update`/`delete` run `reconcile` against
 * Keystone (run.ts); `read` observes Keystone. No rotation rule lives here.
 *
 * The serialized provider (`provider.ts`) `require()`s this compiled module at run time, so nothing of the project is
 * serialized into the state. It keeps no module-level client: every call builds its session from its own inputs and the
 * provider process's environment.
 */
import { DEFAULT_CREDENTIAL_GENERATION, formatTime } from '../api';
import { decide, type CredentialPort } from '../lifecycle';
import { checkInputs, isUnknown, type CheckFailure } from './check';
import { resolveConnection, type ResolvedConnection } from './connection';
import { engineWarn, type Warn } from './engine-log';
import { sharedSessions } from './keystone';
import { foreignHolder, sharedPathMessage, type OwnedBackup } from './backup-path';
import { backupOf, orderOf, run, type BackupTarget, type RunContext } from './run';
import { STATUS_OUTPUTS, outputsOf, privilegesOf, statusOf, stripUndefined, worldOf, type ProviderInputs, type ProviderOutputs } from './state';

export { UNKNOWN, type CheckFailure } from './check';
export { worldOf } from './state';

/** What the provider needs from its surroundings; replaced in unit tests. */
export interface ProviderDeps {
  /** The clock. @default () => new Date() */
  readonly clock?: () => Date;
  /** The environment the standard OpenStack and OpenBao variables are read from. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Builds the Keystone port; `fresh`: its list observes Keystone as it is now (`read`).
   * @default a session of the resolved connection, shared by the verbs in flight (keystone.ts)
   */
  readonly keystone?: (connection: ResolvedConnection, prefix: string, options?: { readonly fresh?: boolean }) => { port: CredentialPort; close(): Promise<void> };
  /** Builds the backup port of a resolved target (its owner: the resource's). @default an OpenBao KV v2 backup */
  readonly backup?: (settings: BackupTarget) => OwnedBackup | undefined;
  /** Shows the user a warning. @default the engine's log, as a `warning:` diagnostic (engine-log.ts) */
  readonly warn?: (message: string) => Promise<void>;
}

type Loose = Record<string, unknown>;

/** The provider's verbs, over `deps`. */
export function makeProvider(deps: ProviderDeps = {}) {
  let engine: Warn | undefined;
  const context: RunContext = {
    clock: deps.clock ?? ((): Date => new Date()),
    get env() {
      return deps.env ?? process.env;
    },
    openKeystone: deps.keystone ?? sharedSessions(),
    ...(deps.backup ? { backup: deps.backup } : {}),
    warn: (message: string): Promise<void> => (deps.warn ?? (engine ??= engineWarn()))(message),
  };

  return {
    /**
     * Defaults, the CRD's rules and the text inputs' rules (`input-rules.ts`); no Keystone call; values not known yet
     * pass. One failure per broken rule, each the resource's (see {@link CheckFailure}); a connection that cannot be
     * assembled, from the inputs or the environment, fails naming the field or variable. The owner id of a create is
     * drawn here (check.ts). With valid inputs and an explicit `backup.path`, one OpenBao read: a path another owner's
     * document holds is refused ({@link backupPathProblem}); no other OpenBao call.
     */
    async check(olds: Loose, news: Loose): Promise<{ inputs: Loose; failures: CheckFailure[] }> {
      const checked = checkInputs(context.env, olds, news);
      if (checked.failures.length > 0) return checked;
      const problem = await backupPathProblem(context, checked.inputs, Object.keys(olds).length === 0);
      return problem === undefined ? checked : { ...checked, failures: [{ property: '', reason: problem }] };
    },

    /**
     * An update when, at the current time, the engine has something to do with the state taken as the world (a rotation
     * or a grace sweep is due, roles or access rules that differ from the delivered credential's while no grace period
     * runs), or when an input the state echoes changed. No Keystone call.
     */
    async diff(_id: string, olds: ProviderOutputs, news: ProviderInputs): Promise<{ changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }> {
      const replaces = news.prefix !== olds.prefix ? ['prefix'] : [];
      if (isUnknown(news)) return { changes: true, replaces, deleteBeforeReplace: false };
      const echoed = (o: Partial<ProviderInputs>): string =>
        JSON.stringify(stripUndefined({ rotation: o.rotation, connection: o.connection, backup: o.backup, cloudName: o.cloudName, secretTemplate: o.secretTemplate, deletionPolicy: o.deletionPolicy }));
      if (replaces.length > 0 || echoed(olds) !== echoed(news)) return { changes: true, replaces, deleteBeforeReplace: false };
      const plan = decide(orderOf(news, statusOf(olds), olds.owner), worldOf(olds, news.backup !== undefined), context.clock());
      const shapes = stripUndefined({ cloudConf: olds.cloudConf, env: olds.env, data: olds.data });
      const projected = outputsOf(news, plan.status, { credentialSecret: olds.credentialSecret, cloudsYaml: olds.cloudsYaml, privileges: privilegesOf(olds), shapes });
      const moved = STATUS_OUTPUTS.some((k) => JSON.stringify(projected[k]) !== JSON.stringify(olds[k]));
      return { changes: plan.actions.length > 0 || moved, replaces, deleteBeforeReplace: false };
    },

    async create(inputs: ProviderInputs): Promise<{ id: string; outs: ProviderOutputs }> {
      return { id: inputs.prefix, outs: await keepingHostFields(inputs, () => run(context, 'create', inputs.prefix, {}, inputs)) };
    },

    async update(id: string, olds: ProviderOutputs, news: ProviderInputs): Promise<{ outs: ProviderOutputs }> {
      return { outs: await keepingHostFields(news, () => run(context, 'update', id, olds, news)) };
    },

    /**
     * Refresh: what Keystone holds now. A live credential deleted out of band loses its `credentialId` (so the next
     * `diff` sees it gone and the next `pulumi up` rotates); its expiry is taken from Keystone.
     */
    async read(id: string, props: ProviderOutputs): Promise<{ id: string; props: ProviderOutputs }> {
      const connection = resolveConnection(props.connection, context.env);
      const keystone = context.openKeystone(connection, props.prefix, { fresh: true });
      try {
        const held = await keystone.port.list(adoptedOf(props));
        const live = held.find((c) => c.generation === props.credentialGeneration && c.id === props.credentialId);
        const previous = held.find((c) => c.generation === props.previousCredentialGeneration && c.id === props.previousCredentialId);
        const next: Loose = { ...props };
        if (live) {
          if (live.expiresAt) next.credentialExpiresAt = formatTime(live.expiresAt);
          // What it carries, as Keystone lists it (issue 42): the roles, the subset it was minted with, its rules.
          const held = live.privileges;
          if (held) {
            next.credentialRoles = held.roles;
            next.roles = held.subset ? held.roles : undefined;
            next.accessRules = held.accessRules.length > 0 ? held.accessRules : undefined;
          }
        } else {
          delete next.credentialId;
        }
        if (!previous) {
          delete next.previousCredentialId;
          delete next.previousCredentialGeneration;
          delete next.previousCredentialDeleteAt;
        }
        if (props.successorCredentialId !== undefined && !held.some((c) => c.generation === props.successorGeneration && c.id === props.successorCredentialId)) {
          delete next.successorCredentialId;
        }
        return { id, props: stripUndefined(next) as unknown as ProviderOutputs };
      } finally {
        await keystone.close();
      }
    },

    /** Destroy: deletes every generation the resource holds in Keystone (an already-deleted one is fine), and the backup. */
    async delete(id: string, props: ProviderOutputs): Promise<void> {
      await run(context, 'delete', id, props, { ...props, credentialGeneration: props.credentialGeneration ?? DEFAULT_CREDENTIAL_GENERATION });
    },
  };
}

/**
 * The credential the state says the resource adopted (issue 49), by its id, as the generation it is recorded under:
 * listed by id, its name being none of the resource's.
 */
function adoptedOf(state: Partial<ProviderOutputs>): ReadonlyMap<string, number> | undefined {
  const id = state.adoptedCredentialId;
  if (id === undefined) return undefined;
  const generation = id === state.credentialId ? state.credentialGeneration : id === state.previousCredentialId ? state.previousCredentialGeneration : undefined;
  return generation === undefined ? undefined : new Map([[id, generation]]);
}

/**
 * Whether an explicit `backup.path` holds another owner's document (backup-path.ts), asked of OpenBao at `check`, so
 * that `pulumi preview` refuses it as `pulumi up` does, before anything is created. The only call `check` makes, and
 * only for an explicit path (the default one names the owner). A create (`fresh`) owns no document yet, so any document
 * there is another's; for an existing resource only an owner the metadata names is judged here (the update judges the
 * rest against the state). Values not known yet pass.
 */
async function backupPathProblem(context: RunContext, inputs: Loose, fresh: boolean): Promise<string | undefined> {
  const checked = inputs as unknown as ProviderInputs;
  if (checked.backup?.path === undefined || checked.owner === undefined || isUnknown(checked.backup) || isUnknown(checked.prefix)) return undefined;
  const backup = backupOf(context, checked, checked.owner);
  if (backup === undefined) return undefined;
  try {
    const holder = await foreignHolder(backup.port, checked.owner, fresh ? new Set() : undefined);
    return holder === undefined ? undefined : sharedPathMessage(backup.target, holder, checked.owner);
  } catch (error) {
    return `backup.path ("${backup.target.path}", mount "${backup.target.mount}"): OpenBao could not say whose document it holds: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * The fields a host put into the inputs for itself, which the partial state of a failed create or update must keep:
 * the dynamic-provider host's `__provider` (the serialized provider). The host adds it to the outputs of a verb that
 * succeeded, but not to the properties of a failure (`@pulumi/pulumi/cmd/dynamic-provider`, `grpcResponseFromError`),
 * and without it every later read and delete of that state fails ("code must be a string"): `pulumi refresh` and
 * `pulumi destroy` would then work only after an `up` succeeded. The plugin's inputs have none.
 */
const HOST_FIELDS = ['__provider'] as const;

async function keepingHostFields<T>(inputs: object, verb: () => Promise<T>): Promise<T> {
  try {
    return await verb();
  } catch (error) {
    const partial = error as { properties?: Record<string, unknown> };
    if (partial.properties !== undefined) {
      for (const field of HOST_FIELDS) {
        const value = (inputs as Record<string, unknown>)[field];
        if (value !== undefined) partial.properties[field] = value;
      }
    }
    throw error;
  }
}

/** The verbs over the real Keystone, OpenBao, clock and environment. */
export const provider = makeProvider();
export const { check, diff, create, update, read } = provider;
export const remove = provider.delete;
