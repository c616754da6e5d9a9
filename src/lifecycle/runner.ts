/**
 * The plan runner: observe, `decide`, execute the actions in order, record the status, and again until the order has
 * converged for now. Every face runs its passes through here, so the Pulumi provider and the reconciler cannot drift.
 *
 * Crash-safety: the runner remembers nothing between steps. If it dies between two actions, the next pass observes the
 * world again (the parked secrets, the credentials Keystone holds under the deterministic names, the backup, the Secret)
 * and `decide` continues from there.
 */
import type { KeystoneApplicationCredentialStatus, Privileges } from '../api';
import { adopt } from './adoption';
import { decide, decideFailure } from './decide';
import { formerBackup, migration, accountedIds, recordMigration, type FormerBackup } from './migration';
import type { Action, BackupObservation, DeliveryObservation, ForeignCredential, GenerationRecord, HeldCredential, HeldPrivileges, LifecycleOrder, Observations, Plan } from './model';
import { needsProof, proofOf, sortCredentials } from './ownership';
import type { BackupPort, KeystoneCredential, Ports, SecretData } from './ports';
import { TemplateError, carriesDocument, type ObservedSecret } from './secret-template';
import type { CachedObservations } from './settled';

/** How one action went, for timelines, logs and metrics. Carries no secret. */
export interface ActionEvent {
  readonly action: Action;
  readonly outcome: 'done' | 'failed' | 'refused';
  readonly ms: number;
  readonly error?: string;
  /** The Keystone id a mint created. */
  readonly credentialId?: string;
  /** What the credential a mint created carries (issue 42). */
  readonly privileges?: HeldPrivileges;
}

export interface RunOptions {
  /** The clock; injectable for tests and time travel. @default () => new Date() */
  readonly clock?: () => Date;
  /** Called after each action. */
  readonly onAction?: (event: ActionEvent) => void;
  /** Called with what the pass observed, once, before it decides (the order's own generations, the foreign ones). */
  readonly onObserved?: (world: Observations) => void;
  /** Steps before giving up on convergence in one pass. @default 8 */
  readonly maxSteps?: number;
}

/** The outcome of a pass. */
export interface RunResult {
  readonly status: KeystoneApplicationCredentialStatus;
  readonly wakeAt?: Date;
  /** Teardown finished and the order was released. */
  readonly released: boolean;
  readonly steps: number;
  /** The credentials under the order's names the order did not mint, as the pass observed them (ownership.ts). */
  readonly foreign: readonly ForeignCredential[];
  /**
   * The document at the path keystone-appcred 0.1.0 backed up to, as the pass left it (migration.ts), when the pass
   * looked there: `foreign` is another's, left alone, for the face to report.
   */
  readonly former?: FormerBackup;
}

/** Error text of a failed observation; the ports' errors are already secret-free (Keystone and OpenBao redact theirs). */
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Observes the world through the ports. A Keystone list or a backup read that fails is an observation too (the order
 * repairs what it can without them and says what is wrong); any other failure is thrown. `order.status` maps a
 * delivered credential id to its generation while Keystone cannot be listed. The credentials Keystone lists under the
 * order's names are sorted into the order's own and the foreign ones (ownership.ts): only what the order can prove it
 * minted becomes a generation record.
 */
export async function observe(ports: Ports, order: Pick<LifecycleOrder, 'status' | 'owner'> = { status: {} }): Promise<Observations> {
  const status = order.status;
  // The parked records first: the credentials they adopted (issue 49) are listed by id, their names being none of the order's.
  const parked = await ports.secrets.list();
  const adopted = new Map(parked.flatMap((p) => (p.adopted !== undefined ? [[p.adopted, p.generation] as const] : [])));
  // A face that parks no superseded secret (Pulumi) knows the adopted credential in its grace period by the status alone.
  const recordedAdoption = status.adoptedCredentialID === undefined ? undefined : recordedGeneration(status, status.adoptedCredentialID);
  if (recordedAdoption !== undefined) adopted.set(status.adoptedCredentialID as string, recordedAdoption);
  const [listed, backupRead, formerRead, delivered, admission, gate, undeliverable] = await Promise.all([
    ports.keystone.list(adopted.size > 0 ? adopted : undefined).then(
      (credentials) => ({ credentials }),
      (error: unknown) => ({ error: reason(error) }),
    ),
    readBackup(ports.backup),
    readBackup(ports.formerBackup),
    ports.delivery.read(),
    ports.admission?.(),
    ports.gate?.(),
    ports.undeliverable?.(),
  ]);
  const records = new Map<number, GenerationRecord>();
  for (const p of parked) {
    records.set(p.generation, { generation: p.generation, parked: p.parked, ...(p.failure !== undefined ? { failure: p.failure } : {}), ...(p.adopted !== undefined ? { adopted: p.adopted } : {}) });
  }
  let keystone: { credentials: readonly KeystoneCredential[] } | { error: string } = listed;
  const backedUp = backupRead && 'credentialId' in backupRead ? backupRead.credentialId : undefined;
  let sorted: { own: KeystoneCredential[]; foreign: ForeignCredential[] } = { own: [], foreign: [] };
  try {
    sorted = await sortByOwner(ports, order, 'credentials' in keystone ? keystone.credentials : [], records, backedUp);
  } catch (error) {
    // Keystone could not check an unmarked credential: what is the order's is not known for sure this pass.
    if (!(error instanceof VerifyError)) throw error;
    keystone = { error: error.message };
  }
  const { own, foreign } = sorted;
  for (const c of own) {
    const existing = records.get(c.generation) ?? { generation: c.generation, parked: false };
    records.set(c.generation, { ...existing, credential: { id: c.id, ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}), ...(c.privileges ? { privileges: c.privileges } : {}) } });
  }
  // The delivered generation's secret is lost only when the store itself says so: a listing may lag behind a park made a
  // moment ago (an adoption parks last, right before the pass that its writes wake), and a lost secret rotates at once.
  const live = status.credentialGeneration === undefined ? undefined : records.get(status.credentialGeneration);
  if (live?.credential && !live.parked && (await ports.secrets.read(live.generation)) !== undefined) records.set(live.generation, { ...live, parked: true });
  const delivery = await deliveryOf(ports, delivered, records, status);
  return {
    generations: [...records.values()].sort((a, b) => a.generation - b.generation),
    delivery,
    ...(foreign.length > 0 && 'credentials' in keystone ? { foreign } : {}),
    ...('error' in keystone ? { keystoneError: keystone.error } : {}),
    ...(backupRead !== undefined ? { backup: backupRead } : {}),
    ...(formerRead !== undefined ? { formerBackup: formerRead } : {}),
    ...(admission ? { admission } : {}),
    ...(gate ? { gate } : {}),
    ...(undeliverable ? { undeliverable } : {}),
  };
}

/** What a backup port holds (an error is an observation too); undefined without a port. */
function readBackup(port: BackupPort | undefined): Promise<BackupObservation> | undefined {
  return port?.read().then(
    (credentialId) => (credentialId === undefined ? {} : { credentialId }),
    (error: unknown) => ({ error: reason(error) }),
  );
}

/**
 * The listed credentials the order minted and the foreign ones (ownership.ts), with the evidence gathered: the ids the
 * status records and the backup (at the order's own path) holds, which only the order writes; an unmarked credential
 * as {@link verifiedRecords} proves it (never the delivered Secret's id as such: a tenant may edit the Secret); and a
 * parked secret's proof only for a credential that carries a proof and is settled by neither owner nor record.
 */
async function sortByOwner(
  ports: Pick<Ports, 'secrets' | 'keystone'>,
  order: Pick<LifecycleOrder, 'status' | 'owner'>,
  listed: readonly KeystoneCredential[],
  records: ReadonlyMap<number, GenerationRecord>,
  backedUp: string | undefined,
): Promise<{ own: KeystoneCredential[]; foreign: ForeignCredential[] }> {
  // A parked record's adopted id (issue 49, adoption.ts) is the order's record too: only the order writes its parked records.
  const adopted = [...records.values()].map((r) => r.adopted);
  const recorded = new Set([order.status.credentialID, order.status.previousCredentialID, backedUp, ...adopted].filter((id): id is string => id !== undefined && id !== ''));
  for (const id of await verifiedRecords(ports, recorded, listed, records)) recorded.add(id);
  const base = { ...(order.owner !== undefined ? { owner: order.owner } : {}), recorded };
  const proofs = new Map<number, string>();
  for (const g of new Set(listed.filter((c) => needsProof(base, c) && records.get(c.generation)?.parked).map((c) => c.generation))) {
    const secret = await ports.secrets.read(g);
    if (secret !== undefined) proofs.set(g, proofOf(secret));
  }
  return sortCredentials(listed, { ...base, proofs });
}

/** Keystone could not say whether an unmarked credential was minted with the order's parked secret (not a plain refusal). */
class VerifyError extends Error {
  constructor(credential: KeystoneCredential, cause: unknown) {
    super(`checking whether credential ${credential.id} (generation ${credential.generation}, without marks) was minted with the order's parked secret: ${reason(cause)}`);
    this.name = 'VerifyError';
  }
}

/**
 * The unmarked listed credentials that count as the order's records: each carries no mark (minted before marks existed,
 * by keystone-appcred 0.1.0: a marked one is judged by its marks alone), no record settles it already, its generation
 * has a parked secret, and Keystone authenticates it with that secret, so it was created with the order's secret,
 * which nobody else holds (a restricted credential cannot read it, a tenant who edits the delivered Secret cannot make
 * Keystone take it). What this proves: 0.1.0's successor, minted and parked but not switched to when the upgrade came,
 * is the order's to switch to (issue 46), and so is a delivered credential whose status a restore lost. An unmarked
 * credential Keystone does not authenticate with the parked secret is somebody else's; one without a parked secret is
 * left to its records alone. Keystone is asked once per such credential and pass (none once the status records it).
 */
async function verifiedRecords(
  ports: Pick<Ports, 'secrets' | 'keystone'>,
  recorded: ReadonlySet<string>,
  listed: readonly KeystoneCredential[],
  records: ReadonlyMap<number, GenerationRecord>,
): Promise<string[]> {
  const verify = ports.keystone.verify?.bind(ports.keystone);
  if (!verify) return [];
  const proven: string[] = [];
  for (const c of listed) {
    if (recorded.has(c.id) || c.mark.owner !== undefined || c.mark.proof !== undefined || !records.get(c.generation)?.parked) continue;
    const secret = await ports.secrets.read(c.generation);
    if (secret === undefined) continue;
    const minted = await verify(c.id, secret).catch((error: unknown) => {
      throw new VerifyError(c, error);
    });
    if (minted) proven.push(c.id);
  }
  return proven;
}

/**
 * What the delivered Secret carries: the credential it names, and whether its three keys are that credential's
 * document (its generation found by Keystone's records, else by the status, and its parked secret).
 */
async function deliveryOf(
  ports: Pick<Ports, 'secrets' | 'render' | 'template' | 'secretMetadata'>,
  delivered: Awaited<ReturnType<Ports['delivery']['read']>>,
  records: ReadonlyMap<number, GenerationRecord>,
  status: KeystoneApplicationCredentialStatus,
): Promise<DeliveryObservation> {
  if (!delivered) return { state: 'absent' };
  const credentialId = delivered.data.application_credential_id ?? '';
  if (!delivered.owned) return { state: 'foreign', ...(credentialId !== '' ? { credentialId } : {}) };
  const generation = [...records.values()].find((r) => r.credential?.id === credentialId)?.generation ?? recordedGeneration(status, credentialId);
  const secret = generation !== undefined && records.get(generation)?.parked ? await ports.secrets.read(generation) : undefined;
  const intact = secret !== undefined && carries(ports, delivered, credentialId, secret);
  return { state: 'delivered', credentialId, intact };
}

/**
 * Whether the Secret carries a credential's document whole: the three keys, those of the order's template and the
 * template's labels and annotations (secret-template.ts). A template that cannot be rendered here leaves it not intact,
 * and the write that would repair it says why.
 */
function carries(ports: Pick<Ports, 'render' | 'template' | 'secretMetadata'>, found: ObservedSecret, credentialId: string, secret: string): boolean {
  let expected: SecretData;
  try {
    expected = delivered(ports, credentialId, secret);
  } catch (error) {
    if (error instanceof TemplateError) return false;
    throw error;
  }
  return carriesDocument(found, expected, ports.secretMetadata ?? { labels: {}, annotations: {} });
}

/** The delivered Secret's data of a credential: the three keys, and those the order's template adds (issue 49). */
export function delivered(ports: Pick<Ports, 'render' | 'template'>, credentialId: string, secret: string): SecretData {
  const document = ports.render(credentialId, secret);
  return ports.template ? { ...document, ...ports.template(document) } : document;
}

/**
 * Observes what a face sees without Keystone and without the backup (the parked secrets, the delivered Secret, the
 * admission and the gates), for {@link settled}. The delivered credential is matched to its generation by the status.
 */
export async function observeCached(ports: Pick<Ports, 'secrets' | 'delivery' | 'render' | 'template' | 'secretMetadata' | 'admission' | 'gate'>, status: KeystoneApplicationCredentialStatus): Promise<CachedObservations> {
  const [parked, delivered, admission, gate] = await Promise.all([ports.secrets.list(), ports.delivery.read(), ports.admission?.(), ports.gate?.()]);
  const records = new Map(parked.map((p) => [p.generation, { generation: p.generation, parked: p.parked }]));
  const delivery = await deliveryOf(ports, delivered, records, status);
  return { parked, delivery, ...(admission ? { admission } : {}), ...(gate ? { gate } : {}) };
}

/** The generation the status records for a credential id (the delivered or the superseded one). */
function recordedGeneration(status: KeystoneApplicationCredentialStatus, credentialId: string): number | undefined {
  if (status.credentialID === credentialId) return status.credentialGeneration;
  if (status.previousCredentialID === credentialId) return status.previousCredentialGeneration;
  return undefined;
}

/**
 * The backup of an order the cache settles (settled.ts) on a process's first sight of it, after an upgrade above all:
 * the own path and the path keystone-appcred 0.1.0 wrote are read, and the migration's actions run (migration.ts): the
 * own path gets the delivered document when it lacks it, the order's document leaves the former path. OpenBao only,
 * never Keystone, never the API server: `status` is the order's with the migration's record, for the face to write
 * when it differs. A path that cannot be read throws an {@link ObservationError} (the face waits for OpenBao: a settled
 * order has no reason to ask Keystone anything); an action that fails throws an {@link ActionError}.
 */
export async function settleBackup(
  order: Pick<LifecycleOrder, 'status' | 'backupPath'>,
  ports: Pick<Ports, 'backup' | 'formerBackup' | 'secrets' | 'render'>,
  options: Pick<RunOptions, 'onAction'> = {},
): Promise<{ readonly former: FormerBackup; readonly actions: number; readonly status: KeystoneApplicationCredentialStatus }> {
  const [backup, former] = await Promise.all([readBackup(ports.backup), readBackup(ports.formerBackup)]);
  const unread = [backup?.error && `backup: ${backup.error}`, former?.error && `the backup path keystone-appcred 0.1.0 wrote: ${former.error}`].filter(Boolean);
  if (unread.length > 0) throw new ObservationError(`the backup's migration could not look at both paths: ${unread.join('; ')}`, order.status);
  const live = order.status.credentialGeneration;
  const deliveredParked = live !== undefined && (await ports.secrets.list()).some((p) => p.generation === live && p.parked);
  const planned = migration({ status: order.status, deliveredParked, ...(backup ? { backup } : {}), ...(former ? { former } : {}) });
  for (const action of planned.actions) {
    const t0 = performance.now();
    try {
      if (action.type === 'backup') await ports.backup?.write(await documentOf(ports, action));
      else if (action.type === 'remove-former-backup') await ports.formerBackup?.remove();
      options.onAction?.({ action, outcome: 'done', ms: performance.now() - t0 });
    } catch (error) {
      const failure = new ActionError(action, error, order.status);
      options.onAction?.({ action, outcome: 'failed', ms: performance.now() - t0, error: failure.message });
      throw failure;
    }
  }
  const after = planned.actions.some((a) => a.type === 'remove-former-backup') ? { state: 'empty' as const } : planned.former;
  return { former: after, actions: planned.actions.length, status: recordMigration(order.status, order.backupPath, planned.done) };
}

/**
 * A pass that failed: its error carries the status the pass recorded, or would have recorded when the write failed too,
 * so that what a face reports (the operator's metrics) follows what the order's status says whether the pass succeeded
 * or not (a backup refused, Keystone down: the conditions name it while every pass fails).
 */
export interface FailedPass {
  readonly status: KeystoneApplicationCredentialStatus;
}

/** The status a failed pass recorded (or would have), when its error is one of the runner's. */
export function statusOfFailure(error: unknown): KeystoneApplicationCredentialStatus | undefined {
  return error instanceof ObservationError || error instanceof ActionError || error instanceof NotConvergedError ? error.status : undefined;
}

/** A pass could not observe all it needs (Keystone or the backup unreachable); the recorded conditions say so. */
export class ObservationError extends Error implements FailedPass {
  constructor(
    message: string,
    readonly status: KeystoneApplicationCredentialStatus,
  ) {
    super(message);
    this.name = 'ObservationError';
  }
}

/** An action failed; the message names the action and generation and carries the cause's (secret-free) message. */
export class ActionError extends Error implements FailedPass {
  constructor(
    readonly action: Action,
    override readonly cause: unknown,
    readonly status: KeystoneApplicationCredentialStatus,
  ) {
    super(actionFailure(action, cause));
    this.name = 'ActionError';
  }
}

/** What an {@link ActionError} says: the action, its generation and the cause's (secret-free) message. */
const actionFailure = (action: Action, cause: unknown): string =>
  `${action.type}${'generation' in action ? ` generation ${action.generation}` : ''} failed: ${cause instanceof Error ? cause.message : String(cause)}`;

/** The pass did not converge within its steps; the status is what the steps that succeeded established. */
export class NotConvergedError extends Error implements FailedPass {
  constructor(
    message: string,
    readonly status: KeystoneApplicationCredentialStatus,
  ) {
    super(message);
    this.name = 'NotConvergedError';
  }
}

async function documentOf(ports: Pick<Ports, 'secrets' | 'render'>, action: { readonly generation: number; readonly credentialId: string }) {
  const secret = await ports.secrets.read(action.generation);
  if (secret === undefined) throw new Error(`generation ${action.generation} has no parked secret`);
  return ports.render(action.credentialId, secret);
}

/** What an action established: `refused` when Keystone refused a mint for good; the credential a mint created. */
type Executed = { readonly outcome: 'done'; readonly created?: HeldCredential } | { readonly outcome: 'refused'; readonly failure: string };

/** What a mint asks of Keystone besides the name and the secret: the order's owner mark, its roles and access rules. */
type Minting = { readonly owner?: string } & Privileges;

/** How long a mint waits for a secret its own pass parked to become readable (see {@link parkedSecret}). */
const PARKED_READ_WAIT_MS = [5, 10, 20, 40, 80, 160, 320, 640];

/**
 * The parked secret a mint sends to Keystone. A store may serve reads from a cache that lags behind its own writes (the
 * operator reads its `secret-v<N>` children from an informer): when this pass parked the generation, a miss is read
 * again after short pauses (1.3 s at most) rather than failing the mint, which would cost a failed pass, a retry after
 * backoff and a second observation of Keystone. Nothing is minted without a secret read back from the store, so
 * crash-safety is as before; a generation this pass did not park fails at once, as always.
 */
async function parkedSecret(ports: Ports, generation: number, parkedThisPass: boolean): Promise<string> {
  let secret = await ports.secrets.read(generation);
  for (const pause of parkedThisPass ? PARKED_READ_WAIT_MS : []) {
    if (secret !== undefined) break;
    await new Promise((resolve) => setTimeout(resolve, pause));
    secret = await ports.secrets.read(generation);
  }
  if (secret === undefined) throw new Error(`generation ${generation} has no parked secret`);
  return secret;
}

/** Executes one action. A mint Keystone refused terminally is recorded as the generation's failure. */
async function execute(ports: Ports, action: Action, parked: ReadonlySet<number>, minting: Minting): Promise<Executed> {
  switch (action.type) {
    case 'park':
      await ports.secrets.park(action.generation);
      return { outcome: 'done' };
    case 'mint': {
      const secret = await parkedSecret(ports, action.generation, parked.has(action.generation));
      try {
        const { owner, roles, accessRules } = minting;
        const mark = { ...(owner !== undefined ? { owner } : {}), proof: proofOf(secret), ...(roles !== undefined ? { subset: true } : {}) };
        const created = await ports.keystone.create({
          name: action.name,
          secret,
          ...(action.expiresAt ? { expiresAt: action.expiresAt } : {}),
          mark,
          ...(roles !== undefined ? { roles } : {}),
          ...(accessRules !== undefined ? { accessRules } : {}),
        });
        return { outcome: 'done', created };
      } catch (error) {
        if (!ports.isTerminal(error)) throw error;
        const failure = error instanceof Error ? error.message : String(error);
        await ports.secrets.recordFailure(action.generation, failure);
        return { outcome: 'refused', failure };
      }
    }
    case 'backup':
      await ports.backup?.write(await documentOf(ports, action));
      return { outcome: 'done' };
    case 'deliver': {
      const secret = await ports.secrets.read(action.generation);
      if (secret === undefined) throw new Error(`generation ${action.generation} has no parked secret`);
      await ports.delivery.write(delivered(ports, action.credentialId, secret));
      return { outcome: 'done' };
    }
      return { outcome: 'done' };
    case 'adopt':
      return { outcome: 'done', created: await adopt(ports, action) };
    case 'delete':
      await ports.keystone.delete(action.id);
      return { outcome: 'done' };
    case 'discard':
      await ports.secrets.discard(action.generation);
      return { outcome: 'done' };
    case 'remove-backup':
      await ports.backup?.remove();
      return { outcome: 'done' };
    case 'remove-former-backup':
      await ports.formerBackup?.remove();
      return { outcome: 'done' };
    case 'withdraw':
      await ports.delivery.remove();
      return { outcome: 'done' };
    case 'retain': {
      const secret = await ports.secrets.read(action.generation);
      if (secret === undefined) throw new Error(`generation ${action.generation} has no parked secret`);
      await ports.delivery.retain?.(delivered(ports, action.id, secret));
      return { outcome: 'done' };
    }
    case 'release':
      await ports.release();
      return { outcome: 'done' };
  }
}

/**
 * The world after an action succeeded, as the action established it: what the next step of the same pass decides on,
 * without observing everything again. Only facts the action itself made true are carried; a pass that starts (after a
 * crash, a failure or a wake-up) observes everything.
 */
export function carry(world: Observations, action: Action, executed: Executed): Observations {
  const records = new Map(world.generations.map((r) => [r.generation, r]));
  const g = 'generation' in action ? action.generation : 0;
  const record = records.get(g) ?? { generation: g, parked: false };
  let { backup, delivery, formerBackup: former } = world;
  switch (action.type) {
    case 'park':
      records.set(g, { ...record, parked: true });
      break;
    case 'mint':
      if (executed.outcome === 'refused') records.set(g, { ...record, failure: executed.failure });
      else if (executed.created) records.set(g, { ...record, credential: executed.created });
      break;
    case 'adopt':
      if (executed.outcome === 'done' && executed.created) records.set(g, { generation: g, parked: true, adopted: action.credentialId, credential: executed.created });
      break;
    case 'backup':
      backup = { credentialId: action.credentialId };
      break;
    case 'deliver':
      delivery = { state: 'delivered', credentialId: action.credentialId, intact: true };
      break;
    case 'delete':
      records.set(g, { generation: g, parked: record.parked, ...(record.failure !== undefined ? { failure: record.failure } : {}) });
      break;
    case 'discard':
      records.set(g, { generation: g, parked: false, ...(record.credential ? { credential: record.credential } : {}) });
      break;
    case 'remove-backup':
      backup = {};
      break;
    case 'remove-former-backup':
      former = {};
      break;
    case 'withdraw':
      delivery = { state: 'absent' };
      break;
    case 'retain':
    case 'release':
      break;
  }
  const generations = [...records.values()].filter((r) => r.parked || r.failure !== undefined || r.credential !== undefined).sort((a, b) => a.generation - b.generation);
  return { ...world, generations, delivery, ...(backup !== undefined ? { backup } : {}), ...(former !== undefined ? { formerBackup: former } : {}) };
}

/** The roles and access rules the order's spec asks for (issue 42). */
function privilegesOf(order: LifecycleOrder): Privileges {
  const { roles, accessRules } = order.spec;
  return { ...(roles !== undefined ? { roles } : {}), ...(accessRules !== undefined ? { accessRules } : {}) };
}

/**
 * JSON with every object's keys sorted (arrays keep their order), so two statuses that hold the same fields compare
 * equal whatever order their keys were written in. The status an API server returns has its keys sorted, the one
 * `decide` builds has them in the order the rules set them: compared as they are, a converged order would write its
 * unchanged status on every pass (a no-op PATCH, yet an API write, and a pass that never counts as converged).
 */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** The former path's verdict as a pass leaves it, when the pass looked there. */
function formerOf(world: Observations, status: KeystoneApplicationCredentialStatus): { former?: FormerBackup } {
  if (world.formerBackup === undefined) return {};
  const own = world.keystoneError === undefined ? world.generations.flatMap((r) => (r.credential ? [r.credential.id] : [])) : [];
  return { former: formerBackup(world.formerBackup, accountedIds(status, own)) };
}

/**
 * Runs passes until the order converges for now (a plan without actions), teardown releases it, or `maxSteps` is reached.
 * The status is recorded once, when the pass ends, and only when it differs from the recorded one: a new order's pass
 * (park, mint, deliver) writes its status once, with every condition as it ends, instead of once per step on the way.
 * Nothing depends on a status written between two steps: the status is a hint, and a pass that dies between them
 * observes the world again (recorded.ts rebuilds a status the Secret or the backup is ahead of). When an action fails,
 * the status that says what is wrong is recorded (best effort) and the failure is thrown as an {@link ActionError};
 * when the pass converged without Keystone or the backup, it is thrown as an {@link ObservationError}. The next pass
 * starts from what it observes.
 */
export async function reconcile(order: LifecycleOrder, ports: Ports, options: RunOptions = {}): Promise<RunResult> {
  const clock = options.clock ?? (() => new Date());
  const maxSteps = options.maxSteps ?? 8;
  let current = order;
  let plan: Plan | undefined;
  const record = async (status: KeystoneApplicationCredentialStatus) => {
    if (canonicalJson(status) === canonicalJson(order.status)) return;
    await ports.writeStatus(status);
  };
  // Observed once per pass; each later step decides on what the earlier steps' actions established.
  let world = await observe(ports, current);
  options.onObserved?.(world);
  const parked = new Set<number>();
  for (let step = 1; step <= maxSteps; step++) {
    plan = decide(current, world, clock());
    const observed = world;
    let refused = false;
    let released = false;
    for (const action of plan.actions) {
      const t0 = performance.now();
      try {
        const executed = await execute(ports, action, parked, { ...(order.owner !== undefined ? { owner: order.owner } : {}), ...privilegesOf(order) });
        if (action.type === 'park') parked.add(action.generation);
        world = carry(world, action, executed);
        refused ||= executed.outcome === 'refused';
        released ||= action.type === 'release';
        const created = executed.outcome === 'done' ? executed.created : undefined;
        options.onAction?.({
          action,
          outcome: executed.outcome,
          ms: performance.now() - t0,
          ...(created ? { credentialId: created.id } : {}),
          ...(created?.privileges ? { privileges: created.privileges } : {}),
        });
        if (refused) break;
      } catch (error) {
        const message = actionFailure(action, error);
        options.onAction?.({ action, outcome: 'failed', ms: performance.now() - t0, error: message });
        const status = decideFailure(current, observed, { action, message, ...(error instanceof TemplateError ? { template: true } : {}) }, clock());
        await record(status).catch(() => undefined);
        throw new ActionError(action, error, status);
      }
    }
    if (released) return { status: plan.status, released: true, steps: step, foreign: observed.foreign ?? [], ...formerOf(world, plan.status) };
    // The step's status holds once its actions succeeded; the next step decides on it (a refused mint is decided again).
    if (!refused) current = { ...current, status: plan.status };
    if (plan.actions.length === 0) {
      await record(plan.status);
      world = observed;
      const unobserved = [
        world.keystoneError && `Keystone: ${world.keystoneError}`,
        world.backup?.error && `backup: ${world.backup.error}`,
        world.formerBackup?.error && `the backup path keystone-appcred 0.1.0 wrote: ${world.formerBackup.error}`,
      ].filter(Boolean);
      if (unobserved.length > 0 && !world.admission && !world.gate) throw new ObservationError(`the order could not be observed whole: ${unobserved.join('; ')}`, plan.status);
      return { status: plan.status, ...(plan.wakeAt ? { wakeAt: plan.wakeAt } : {}), released: false, steps: step, foreign: world.foreign ?? [], ...formerOf(world, plan.status) };
    }
  }
  await record(current.status).catch(() => undefined); // what the steps that succeeded established
  throw new NotConvergedError(`the order did not converge in ${maxSteps} steps; last plan: ${plan?.actions.map((a) => a.type).join(', ')}`, current.status);
}
