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
import { decide, type CredentialPort, type Ports } from '../lifecycle';
import { checkInputs, isUnknown, type CheckFailure } from './check';
import { resolveConnection, type ResolvedConnection } from './connection';
import { engineWarn, type Warn } from './engine-log';
import { sharedSessions } from './keystone';
import { orderOf, run, type RunContext } from './run';
import { STATUS_OUTPUTS, outputsOf, privilegesOf, statusOf, stripUndefined, worldOf, type BackupSettings, type ProviderInputs, type ProviderOutputs } from './state';

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
  /** Builds the backup port. @default an OpenBao KV v2 backup */
  readonly backup?: (settings: Required<Pick<BackupSettings, 'address' | 'token' | 'mount' | 'path'>> & BackupSettings) => Ports['backup'];
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
     * Defaults, the CRD's rules and the text inputs' rules (`input-rules.ts`); no Keystone or OpenBao call; values not
     * known yet pass. One failure per broken rule, each the resource's (see {@link CheckFailure}); a connection that
     * cannot be assembled, from the inputs or the environment, fails naming the field or variable.
     */
    async check(olds: Loose, news: Loose): Promise<{ inputs: Loose; failures: CheckFailure[] }> {
      return checkInputs(context.env, olds, news);
    },

    /**
     * An update when, at the current time, the engine has something to do with the state taken as the world (a rotation
     * or a grace sweep is due, roles or access rules that differ from the delivered credential's while no grace period
     * runs), or when an input the state echoes changed. No Keystone call.
     */
    async diff(_id: string, olds: ProviderOutputs, news: ProviderInputs): Promise<{ changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }> {
      const replaces = news.prefix !== olds.prefix ? ['prefix'] : [];
      if (isUnknown(news)) return { changes: true, replaces, deleteBeforeReplace: false };
      const echoed = (o: Partial<ProviderInputs>): string => JSON.stringify(stripUndefined({ rotation: o.rotation, connection: o.connection, backup: o.backup, cloudName: o.cloudName }));
      if (replaces.length > 0 || echoed(olds) !== echoed(news)) return { changes: true, replaces, deleteBeforeReplace: false };
      const plan = decide(orderOf(news, statusOf(olds), olds.owner), worldOf(olds, news.backup !== undefined), context.clock());
      const projected = outputsOf(news, plan.status, { credentialSecret: olds.credentialSecret, cloudsYaml: olds.cloudsYaml, privileges: privilegesOf(olds) });
      const moved = STATUS_OUTPUTS.some((k) => JSON.stringify(projected[k]) !== JSON.stringify(olds[k]));
      return { changes: plan.actions.length > 0 || moved, replaces, deleteBeforeReplace: false };
    },

    async create(inputs: ProviderInputs): Promise<{ id: string; outs: ProviderOutputs }> {
      return { id: inputs.prefix, outs: await run(context, 'create', inputs.prefix, {}, inputs) };
    },

    async update(id: string, olds: ProviderOutputs, news: ProviderInputs): Promise<{ outs: ProviderOutputs }> {
      return { outs: await run(context, 'update', id, olds, news) };
    },

    /**
     * Refresh: what Keystone holds now. A live credential deleted out of band loses its `credentialId` (so the next
     * `diff` sees it gone and the next `pulumi up` rotates); its expiry is taken from Keystone.
     */
    async read(id: string, props: ProviderOutputs): Promise<{ id: string; props: ProviderOutputs }> {
      const connection = resolveConnection(props.connection, context.env);
      const keystone = context.openKeystone(connection, props.prefix, { fresh: true });
      try {
        const held = await keystone.port.list();
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

/** The verbs over the real Keystone, OpenBao, clock and environment. */
export const provider = makeProvider();
export const { check, diff, create, update, read } = provider;
export const remove = provider.delete;
