/**
 * What the dynamic provider does in each of Pulumi's verbs. It maps the verbs onto the one lifecycle engine
 * (`src/lifecycle`): `diff` asks `decide` whether the state, taken as the world, has anything to do at the current time;
 * `create`/`update`/`delete` run `reconcile` against Keystone; `read` observes Keystone. No rotation rule lives here.
 *
 * The serialized provider (`provider.ts`) `require()`s this compiled module at run time, so nothing of the project is
 * serialized into the state. It keeps no module-level client: every call builds its session from its own inputs and the
 * provider process's environment.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  ConditionType,
  DEFAULT_CREDENTIAL_GENERATION,
  DEFAULT_GRACE_PERIOD,
  DEFAULT_INTERVAL,
  WARNING_REASONS,
  backingPath,
  formatTime,
  resolveSpec,
  validate,
  type KeystoneApplicationCredentialStatus,
} from '../api';
import { OpenBaoBackup } from '../backup/openbao';
import { credentialPort, deliveredData, isTerminalCreateError } from '../keystone/credential-port';
import { KeystoneSession } from '../keystone/session';
import { decide, foreignNote, reconcile, type CredentialPort, type ForeignCredential, type LifecycleOrder, type Observations, type Ports, type SecretData } from '../lifecycle';
import { MemoryDelivery, MemorySecretStore } from '../local/memory';
import { connectionProblems, resolveConnection, type ResolvedConnection } from './connection';
import { engineWarn, type Warn } from './engine-log';
import { CLOUD_NAME_RULE, backupProblems, textProblem } from './input-rules';
import { STATUS_OUTPUTS, outputsOf, statusOf, stripUndefined, type BackupSettings, type ProviderInputs, type ProviderOutputs } from './state';

/** The value Pulumi sends for an input that is not known yet (preview). */
export const UNKNOWN = '04da6b54-80e4-46f7-96ec-b56ff0331ba9';

/**
 * A failed input check, as Pulumi's `check` reports it. Every failure is the resource's (`property: ""`): the engine
 * prints a failure on a property with that property's value as Go formats it (`property rotation value
 * {map[gracePeriod:{24h} interval:{30s}]} has a problem: ...`, and a secret inside it in clear), and on a nested path
 * with no value at all (`{<nil>}`). On the resource it prints `<type> resource '<name>' has a problem: <reason>`, and the
 * reason names the field, the value as the program wrote it and the rule.
 */
export interface CheckFailure {
  /** Always `""`: the resource as a whole (see above). */
  readonly property: '';
  /** What is wrong: the full field path, the value as written (a secret by its length) and the rule (`rotation.interval ("30s"): ...`). */
  readonly reason: string;
}

/** What the provider needs from its surroundings; replaced in unit tests. */
export interface ProviderDeps {
  /** The clock. @default () => new Date() */
  readonly clock?: () => Date;
  /** The environment the standard OpenStack and OpenBao variables are read from. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Builds the Keystone port; `fresh`: its list observes Keystone as it is now (`read`).
   * @default a {@link KeystoneSession} of the resolved connection
   */
  readonly keystone?: (connection: ResolvedConnection, prefix: string, options?: { readonly fresh?: boolean }) => { port: CredentialPort; close(): Promise<void> };
  /** Builds the backup port. @default {@link OpenBaoBackup} */
  readonly backup?: (settings: Required<Pick<BackupSettings, 'address' | 'token' | 'mount' | 'path'>> & BackupSettings) => Ports['backup'];
  /** Shows the user a warning. @default the engine's log, as a `warning:` diagnostic (engine-log.ts) */
  readonly warn?: (message: string) => Promise<void>;
}

type Loose = Record<string, unknown>;

function isUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(isUnknown);
  if (value !== null && typeof value === 'object') return Object.values(value).some(isUnknown);
  return false;
}

function record(value: unknown): Loose | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Loose) : undefined;
}

/** The field path a violation names in its reason (`spec.rotation.interval` → `rotation.interval`). */
function fieldOf(field: string): string {
  return field.replace(/^spec\./, '');
}

/** The provider's verbs, over `deps`. */
export function makeProvider(deps: ProviderDeps = {}) {
  const clock = deps.clock ?? ((): Date => new Date());
  const env = (): Readonly<Record<string, string | undefined>> => deps.env ?? process.env;
  let engine: Warn | undefined;
  const warn = (message: string): Promise<void> => (deps.warn ?? (engine ??= engineWarn()))(message);

  // Sessions shared by the verbs in flight over the same connection: Pulumi runs the creates and updates of a program's
  // resources in parallel in one provider process, and each would otherwise log in on its own (N logins for N
  // credentials). A session lives while a verb uses it and is closed by the last one, so nothing outlives the verbs;
  // a verb that starts later logs in again. The key is a digest of the session options (the password among them), so a
  // changed password or endpoint is a new session, and the options themselves are not kept beyond the session.
  const shared = new Map<string, { session: KeystoneSession; users: number }>();
  const openKeystone =
    deps.keystone ??
    ((connection: ResolvedConnection, prefix: string, options: { readonly fresh?: boolean } = {}) => {
      const key = createHash('sha256').update(JSON.stringify(connection.session)).digest('hex');
      let entry = shared.get(key);
      if (!entry) shared.set(key, (entry = { session: new KeystoneSession(connection.session), users: 0 }));
      entry.users++;
      const mine = entry;
      let closed = false;
      const close = async (): Promise<void> => {
        if (closed) return;
        closed = true;
        if (--mine.users > 0) return;
        if (shared.get(key) === mine) shared.delete(key);
        await mine.session.close();
      };
      // The verbs of one up start within milliseconds of each other: their observations share one list of the user's
      // credentials (a list costs Keystone as much as a login), joined for 20 ms, and kept current by the verbs' own
      // creates and deletes while the session lives (src/keystone/known-credentials.ts). A refresh's `read` lists anew.
      return { port: credentialPort(mine.session, prefix, { description: 'managed by keystone-appcred (Pulumi)', listWindowMs: 20, ...(options.fresh ? { fresh: true } : {}) }), close };
    });

  function backupOf(inputs: Pick<ProviderInputs, 'backup' | 'prefix'>, owner: string | undefined): Ports['backup'] {
    if (inputs.backup === undefined) return undefined;
    const e = env();
    const address = inputs.backup.address ?? e.BAO_ADDR ?? e.VAULT_ADDR;
    const token = inputs.backup.token ?? e.BAO_TOKEN ?? e.VAULT_TOKEN;
    if (!address) throw new Error('backup.address is not set and neither is BAO_ADDR (or VAULT_ADDR)');
    if (!token) throw new Error('backup.token is not set and neither is BAO_TOKEN (or VAULT_TOKEN)');
    const settings = {
      ...inputs.backup,
      address,
      token,
      mount: inputs.backup.mount ?? 'openstack',
      path: inputs.backup.path ?? backingPath('pulumi', inputs.prefix, owner).split('/').slice(1).join('/'),
      ...(inputs.backup.namespace ?? e.BAO_NAMESPACE ? { namespace: inputs.backup.namespace ?? e.BAO_NAMESPACE } : {}),
    };
    return deps.backup ? deps.backup(settings) : new OpenBaoBackup(settings);
  }

  function orderOf(inputs: Pick<ProviderInputs, 'prefix' | 'credentialGeneration' | 'rotation'>, status: KeystoneApplicationCredentialStatus, owner?: string, deleting = false): LifecycleOrder {
    return {
      prefix: inputs.prefix,
      ...(owner !== undefined ? { owner } : {}),
      spec: resolveSpec({ credentialGeneration: inputs.credentialGeneration, rotation: inputs.rotation }),
      status,
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
    });
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
  async function run(verb: 'create' | 'update' | 'delete', id: string, olds: Partial<ProviderOutputs>, inputs: ProviderInputs): Promise<ProviderOutputs> {
    const deleting = verb === 'delete';
    const owner = olds.owner ?? (deleting ? undefined : randomUUID());
    const connection = resolveConnection(inputs.connection, env());
    const keystone = openKeystone(connection, inputs.prefix);
    const live = olds.credentialGeneration;
    const parked: [number, string][] = [];
    if (live !== undefined && olds.credentialSecret !== undefined) parked.push([live, olds.credentialSecret]);
    if (olds.successorGeneration !== undefined && olds.successorSecret !== undefined && olds.successorGeneration !== live) parked.push([olds.successorGeneration, olds.successorSecret]);
    const secrets = new MemorySecretStore(parked);
    const render = (credentialId: string, secret: string): SecretData =>
      deliveredData(
        { authUrl: connection.authUrl, ...(connection.regionName ? { regionName: connection.regionName } : {}), ...(inputs.cloudName ? { cloudName: inputs.cloudName } : {}) },
        credentialId,
        secret,
      );
    const delivery = new MemoryDelivery();
    const previous: SecretData | undefined =
      olds.credentialId !== undefined && olds.credentialSecret !== undefined && olds.cloudsYaml !== undefined
        ? { 'clouds.yaml': olds.cloudsYaml, application_credential_id: olds.credentialId, application_credential_secret: olds.credentialSecret }
        : undefined;
    if (previous) delivery.data = { ...previous };
    let status = statusOf(olds);
    /** Whether the run changed Keystone or the backup: then a failure records what is true now. */
    let changed = false;
    /** The successor's credential, as this run's own mint created it. */
    const minted = new Map<number, string>();
    if (olds.successorGeneration !== undefined && olds.successorCredentialId !== undefined) minted.set(olds.successorGeneration, olds.successorCredentialId);
    const ports: Ports = {
      keystone: keystone.port,
      secrets,
      delivery,
      ...(inputs.backup !== undefined ? { backup: backupOf(inputs, owner) } : {}),
      render,
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
      return outputsOf(recorded, status, { credentialSecret: secret, ...(carries ? { cloudsYaml: data['clouds.yaml'] } : {}) }, {
        owner,
        ...(above !== undefined && successorSecret !== undefined
          ? { successorGeneration: above.generation, successorSecret, ...(minted.has(above.generation) ? { successorCredentialId: minted.get(above.generation) } : {}) }
          : {}),
      });
    };
    try {
      const result = await reconcile(orderOf(inputs, status, owner, deleting), ports, {
        clock,
        onAction: (e) => {
          // A mint whose outcome is unsure (its reply lost, Keystone gone mid-way) may have created the successor: its
          // parked secret is recorded, so the next up finds it in Keystone and continues with it.
          if (e.action.type === 'mint') changed = true;
          if (e.outcome === 'failed') return;
          if (['delete', 'backup', 'remove-backup'].includes(e.action.type)) changed = true;
          const a = e.action;
          if (a.type === 'mint' && e.credentialId !== undefined) minted.set(a.generation, e.credentialId);
          if (a.type === 'delete' && minted.get(a.generation) === a.id) minted.delete(a.generation);
        },
      });
      await reportOf(result.status, result.foreign, deleting);
      return await current(inputs);
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
  async function reportOf(status: KeystoneApplicationCredentialStatus, foreign: readonly ForeignCredential[], deleting: boolean): Promise<void> {
    if (deleting) {
      if (foreign.length > 0) await warn(`destroyed; left alone in Keystone: ${foreignNote(foreign)}`);
      return;
    }
    const credential = status.conditions?.find((c) => c.type === ConditionType.CredentialReady);
    if (status.credentialID === undefined) throw new Error(credential ? `${credential.reason}: ${credential.message}` : 'no credential was created');
    for (const c of status.conditions ?? []) {
      if (c.type !== ConditionType.Ready && (c.status !== 'True' || WARNING_REASONS.has(c.reason))) await warn(`${c.type} ${c.reason}: ${c.message}`);
    }
  }

  return {
    /**
     * Defaults, the CRD's rules and the text inputs' rules (`input-rules.ts`); no Keystone or OpenBao call; values not
     * known yet pass. One failure per broken rule, each the resource's (see {@link CheckFailure}); a connection that
     * cannot be assembled, from the inputs or the environment, fails naming the field or variable.
     */
    async check(olds: Loose, news: Loose): Promise<{ inputs: Loose; failures: CheckFailure[] }> {
      const rotationIn = news.rotation === UNKNOWN ? undefined : record(news.rotation);
      const rotation: Loose = {
        ...rotationIn,
        interval: rotationIn?.interval ?? (news.rotation === UNKNOWN ? UNKNOWN : DEFAULT_INTERVAL),
        gracePeriod: rotationIn?.gracePeriod ?? (news.rotation === UNKNOWN ? UNKNOWN : DEFAULT_GRACE_PERIOD),
      };
      const credentialGeneration = news.credentialGeneration ?? DEFAULT_CREDENTIAL_GENERATION;
      const inputs: Loose = { ...news, credentialGeneration, rotation: news.rotation === UNKNOWN ? UNKNOWN : rotation };
      const reasons: string[] = [];
      if (news.rotation !== undefined && news.rotation !== null && news.rotation !== UNKNOWN && rotationIn === undefined) {
        reasons.push(`rotation (${JSON.stringify(news.rotation)}): must be an object with the fields interval, gracePeriod`);
      }
      for (const key of Object.keys(rotationIn ?? {})) {
        if (key !== 'interval' && key !== 'gracePeriod') reasons.push(`rotation.${key}: is not a field of rotation (its fields: interval, gracePeriod)`);
      }
      const unknown = new Set<string>();
      if (isUnknown(credentialGeneration)) unknown.add('spec.credentialGeneration');
      if (isUnknown(rotation.interval)) unknown.add('spec.rotation.interval');
      if (isUnknown(rotation.gracePeriod)) unknown.add('spec.rotation.gracePeriod');
      if (unknown.has('spec.rotation.interval') || unknown.has('spec.rotation.gracePeriod')) unknown.add('spec.rotation');
      const known = <T>(path: string, value: T): T | undefined => (unknown.has(path) ? undefined : value);
      const oldRotation = record(olds.rotation);
      const violations = validate(
        {
          spec: {
            credentialGeneration: known('spec.credentialGeneration', credentialGeneration) as number | undefined,
            rotation: { interval: known('spec.rotation.interval', rotation.interval) as string | undefined, gracePeriod: known('spec.rotation.gracePeriod', rotation.gracePeriod) as string | undefined },
          },
        },
        olds.credentialGeneration === undefined || isUnknown(olds.credentialGeneration)
          ? undefined
          : { spec: { credentialGeneration: olds.credentialGeneration as number, rotation: { interval: oldRotation?.interval as string | undefined, gracePeriod: oldRotation?.gracePeriod as string | undefined } } },
        'settings',
      ).filter((v) => !unknown.has(v.field));
      for (const v of violations) {
        reasons.push(
          v.field === 'spec.rotation'
            ? `rotation.gracePeriod (${String(rotation.gracePeriod)}) must be shorter than rotation.interval (${String(rotation.interval)})`
            : `${fieldOf(v.field)} (${JSON.stringify(v.value)}): ${v.rule}`,
        );
      }
      if (!isUnknown(news.cloudName)) {
        const problem = textProblem('cloudName', news.cloudName, CLOUD_NAME_RULE);
        if (problem !== undefined) reasons.push(problem);
      }
      if (news.backup !== UNKNOWN) reasons.push(...backupProblems(news.backup, env(), isUnknown));
      if (news.connection !== UNKNOWN) reasons.push(...connectionProblems(news.connection, env(), { skip: isUnknown }));
      return { inputs, failures: reasons.map((reason) => ({ property: '', reason })) };
    },

    /**
     * An update when, at the current time, the engine has something to do with the state taken as the world (a rotation
     * or a grace sweep is due), or when an input the state echoes changed. No Keystone call.
     */
    async diff(_id: string, olds: ProviderOutputs, news: ProviderInputs): Promise<{ changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }> {
      const replaces = news.prefix !== olds.prefix ? ['prefix'] : [];
      if (isUnknown(news)) return { changes: true, replaces, deleteBeforeReplace: false };
      const echoed = (o: Partial<ProviderInputs>): string => JSON.stringify(stripUndefined({ rotation: o.rotation, connection: o.connection, backup: o.backup, cloudName: o.cloudName }));
      if (replaces.length > 0 || echoed(olds) !== echoed(news)) return { changes: true, replaces, deleteBeforeReplace: false };
      const plan = decide(orderOf(news, statusOf(olds), olds.owner), worldOf(olds, news.backup !== undefined), clock());
      const projected = outputsOf(news, plan.status, { credentialSecret: olds.credentialSecret, cloudsYaml: olds.cloudsYaml });
      const moved = STATUS_OUTPUTS.some((k) => projected[k] !== olds[k]);
      return { changes: plan.actions.length > 0 || moved, replaces, deleteBeforeReplace: false };
    },

    async create(inputs: ProviderInputs): Promise<{ id: string; outs: ProviderOutputs }> {
      return { id: inputs.prefix, outs: await run('create', inputs.prefix, {}, inputs) };
    },

    async update(id: string, olds: ProviderOutputs, news: ProviderInputs): Promise<{ outs: ProviderOutputs }> {
      return { outs: await run('update', id, olds, news) };
    },

    /**
     * Refresh: what Keystone holds now. A live credential deleted out of band loses its `credentialId` (so the next
     * `diff` sees it gone and the next `pulumi up` rotates); its expiry is taken from Keystone.
     */
    async read(id: string, props: ProviderOutputs): Promise<{ id: string; props: ProviderOutputs }> {
      const connection = resolveConnection(props.connection, env());
      const keystone = openKeystone(connection, props.prefix, { fresh: true });
      try {
        const held = await keystone.port.list();
        const live = held.find((c) => c.generation === props.credentialGeneration && c.id === props.credentialId);
        const previous = held.find((c) => c.generation === props.previousCredentialGeneration && c.id === props.previousCredentialId);
        const next: Loose = { ...props };
        if (live) {
          if (live.expiresAt) next.credentialExpiresAt = formatTime(live.expiresAt);
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
      await run('delete', id, props, { ...props, credentialGeneration: props.credentialGeneration ?? DEFAULT_CREDENTIAL_GENERATION });
    },
  };
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
        ? { credential: { id: state.credentialId, ...(state.credentialExpiresAt ? { expiresAt: new Date(state.credentialExpiresAt) } : {}) } }
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

/** The verbs over the real Keystone, OpenBao, clock and environment. */
export const provider = makeProvider();
export const { check, diff, create, update, read } = provider;
export const remove = provider.delete;
