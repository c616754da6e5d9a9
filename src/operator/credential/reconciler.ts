/**
 * The KeystoneApplicationCredential reconciler: a thin driver of `src/lifecycle` on the cluster. It reads the order and
 * what it stands on (ControlPlane, KeystoneUser, KeystoneProject, KeystoneRoleAssignments, the user's parked password,
 * the CA bundle) from the cache, wires the lifecycle's ports (the `secret-v<N>` children, the delivered Secret, OpenBao,
 * Keystone as the ordered user) and runs the lifecycle's passes. Every rule of rotation, grace, repair and teardown is
 * the lifecycle's; consent and the gates are the identity plane's (`src/plane`), shared with the other kinds.
 *
 * A steady order costs nothing: after a pass that converged without writing, the reconciler remembers the
 * resourceVersions of what it read (the identity plane's `fingerprintOf`), and a resync that finds the same inputs
 * before the order's `wakeAt` makes no Keystone call and no write. It lives in memory only; after a restart (or on the
 * standby that took over) an order the cache shows settled (src/lifecycle/settled.ts: the status agrees with the
 * delivered Secret and the parked secrets, nothing is due) is remembered as converged without a Keystone call, and any
 * other gets one full pass. The pass that the reconciler's own writes wake, right after a pass that acted, is vouched
 * for the same way: it would only list Keystone again to find what the pass before established. A credential deleted in
 * Keystone by hand is noticed at the next wake-up or change.
 */
import { createHash } from 'node:crypto';
import { TEARDOWN_FINALIZER, backingPath, resolveSpec, secretName, type KeystoneApplicationCredential, type KeystoneApplicationCredentialStatus } from '../../api';
import { KeystoneSessions, credentialPort, deliveredData, isTerminalCreateError } from '../../keystone';
import type { FormerBackup } from '../../lifecycle/migration';
import { observeCached, reconcile as runLifecycle, settleBackup, statusOfFailure, type ActionEvent } from '../../lifecycle/runner';
import { KubeApiError } from '../../kube/errors';
import { settled } from '../../lifecycle/settled';
import { shownCredentialId } from '../../lifecycle/ownership';
import type { BackupPort, CredentialPort, Ports } from '../../lifecycle/ports';
import { fingerprintOf } from '../../plane/driver/memo';
import { credentialGates, credentialReads, type UserConnection } from '../../plane/gates';
import type { ClusterPort, OrderSite } from '../../plane/ports';
import { ParkedSecrets } from './children';
import { DeliveredSecret } from './delivery';
import { adoptionOf, deliveryOptionEvent, revokeRequestOfOrder, templateFields, templatePorts, type CredentialEvent, type RetainContext } from './delivery-options';

export type { UserConnection } from '../../plane/gates';

export type { CredentialEvent } from './delivery-options';

/** What the reconciler runs with. */
export interface CredentialReconcilerDeps {
  /** The management cluster: the ControlPlane, its Secrets, the user's parked passwords and the children. */
  readonly cluster: ClusterPort;
  /** The backup at a backing path; absent: no backup is configured and delivery does not wait for one. */
  readonly backup?: (path: string) => BackupPort;
  /**
   * Keystone as the ordered user; `fresh`: the pass follows a change the user made and lists anew; `onAnswer`: to be
   * called each time Keystone itself answered a call of the port (src/keystone/credential-port.ts).
   * @default the project's Keystone client (`credentialPort` on a session of `sessions`)
   */
  readonly keystone?: (connection: UserConnection, prefix: string, options: { readonly fresh: boolean; readonly onAnswer?: () => void }) => CredentialPort;
  /**
   * The sessions the ordered users log in through: one token per (Keystone, user, project, password generation), shared
   * by every pass of that user's orders until shortly before it expires. @default sessions of the reconciler's own
   */
  readonly sessions?: KeystoneSessions;
  /** The clock. @default () => new Date() */
  readonly clock?: () => Date;
  /** Records an Event about the order, on the order's cluster (`cluster`: its name, undefined for the management cluster). @default none */
  readonly event?: (order: KeystoneApplicationCredential, event: CredentialEvent, cluster?: string) => Promise<void>;
  /** Called after each lifecycle action (logs, metrics). @default none */
  readonly onAction?: (order: KeystoneApplicationCredential, event: ActionEvent, cluster?: string) => void;
  /**
   * Called with the order's own generations Keystone holds (foreign credentials under its names excluded:
   * src/lifecycle/ownership.ts), each time a pass observed Keystone (metrics: whether a successor exists). @default none
   */
  readonly onKeystoneListed?: (order: KeystoneApplicationCredential, generations: readonly number[], cluster?: string) => void;
  /** Called after each status write (logs): the recorded status, which never carries a secret. @default none */
  readonly onStatus?: (order: KeystoneApplicationCredential, status: KeystoneApplicationCredentialStatus, cluster?: string) => void;
}

/**
 * A pass that failed. Its message is the cause's. It carries the status the pass recorded (or would have recorded when
 * that write failed too), so the metrics follow what the order says whether the pass succeeded or not, and the
 * dependencies that did not answer it (`waitsOn`: Keystone at the order's endpoint unreachable or answering 5xx,
 * OpenBao refusing or down, the order's API server answering 5xx), so the work queue waits on them
 * (src/operator/runtime/dependencies.ts) instead of backing the order off on its own, and those it reached and that
 * answered it (`answered`), whose waiters are woken.
 */
export class CredentialPassError extends Error {
  override readonly name = 'CredentialPassError';
  constructor(
    override readonly cause: unknown,
    /** The status the pass recorded or would have recorded; undefined when it failed before deciding one. */
    readonly status: KeystoneApplicationCredentialStatus | undefined,
    /** The dependencies that did not answer, named for people (`Keystone <auth URL>`, `OpenBao`, `the API server …`). */
    readonly waitsOn: readonly string[],
    /** The dependencies the pass reached and that answered every call it made of them. */
    readonly answered: readonly string[] = [],
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/** OpenBao, as a failed pass names it: one dependency for every order (one login, one policy). */
export const OPENBAO_DEPENDENCY = 'OpenBao';

/** Keystone at an auth URL, as a failed pass names it: every order of the ControlPlanes with that URL shares it. */
export const keystoneDependency = (authUrl: string): string => `Keystone ${authUrl.replace(/\/+$/, '')}`;

/** An API server, as a failed pass names it. */
export const apiServerDependency = (cluster: string | undefined): string => (cluster ? `the API server of cluster ${cluster}` : 'the API server');

/** The outcome of one reconcile. */
export interface CredentialOutcome {
  /** Look again after this many milliseconds (the plan's `wakeAt`), if nothing else happens first. */
  readonly requeueAfterMs?: number;
  /** The status as recorded, when the order still exists. */
  readonly status?: KeystoneApplicationCredentialStatus;
  /** The pass was skipped: nothing it reads changed since the last converged pass, or the order is settled. */
  readonly skipped?: boolean;
  /** Skipped on this process's first sight of the order, as settled by the cache (the status is the recorded one). */
  readonly settled?: boolean;
  /**
   * The dependencies the pass reached and that answered every call it made of them (Keystone only for a request it
   * sent, not a list the known credentials served): what wakes the orders waiting on them. None for a pass that
   * reached none (skipped, gated, frozen).
   */
  readonly answered?: readonly string[];
}

/** What a pass's calls found of its dependencies: those that did not answer, and those that did. */
interface Reached {
  readonly unanswered: Set<string>;
  readonly answered: Set<string>;
}

const KIND = 'KeystoneApplicationCredential';

export class CredentialReconciler {
  /**
   * The last converged pass per order, by the work queue's key: one worker at a time holds a key, so an entry is
   * never read or written by two passes at once, however many workers run (different orders' entries are independent).
   */
  private readonly converged = new Map<string, { fingerprint: string; wakeAt?: number }>();
  /**
   * The orders this process has met, with what the user last asked of each (its spec generation and annotations, and
   * its `credentialGeneration`): the first pass over an order may find it settled by the cache alone, and a pass that
   * follows a change the user made observes Keystone afresh rather than through the session's known credentials
   * (docs/concepts/passes.md, "To make an order look now, change it"). A raised `credentialGeneration` is the exception: the
   * pass mints a new generation whatever Keystone holds, so a mass rotation by hand costs Keystone one create per order.
   * `fresh` stays set until a pass that reached Keystone succeeds: the retry of a pass that failed (Keystone down, a
   * conflict) lists anew too, rather than falling back to the known credentials the user's change meant to bypass.
   */
  private readonly seen = new Map<string, { readonly asked: string; readonly credentialGeneration: number; readonly fresh: boolean }>();
  /** Orders whose last pass acted and converged: the pass their writes wake may be vouched for by the cache. */
  private readonly justActed = new Set<string>();
  /**
   * Orders whose backup this process has looked at on both paths, its own and the one keystone-appcred 0.1.0 wrote
   * (src/lifecycle/migration.ts): a foreign document at the latter is reported once per process. Both paths are read
   * until the order's status records the migration done (`backupPath`); then the own path alone (a teardown reads both).
   */
  private readonly backupLooked = new Set<string>();
  private readonly clock: () => Date;
  private readonly sessions: KeystoneSessions;

  constructor(private readonly deps: CredentialReconcilerDeps) {
    this.clock = deps.clock ?? (() => new Date());
    this.sessions = deps.sessions ?? new KeystoneSessions();
  }

  /**
   * Reconciles the order `namespace/name` on the site's cluster (the management cluster by default). Throws a
   * {@link CredentialPassError} when a pass failed (the conditions say why): the queue waits on the dependencies it
   * names, or backs off.
   */
  async reconcile(key: { readonly namespace: string; readonly name: string }, site: OrderSite = {}): Promise<CredentialOutcome> {
    const reached: Reached = { unanswered: new Set(), answered: new Set() };
    // A dependency that failed one call of the pass did not answer it, whatever it answered before.
    const answered = () => [...reached.answered].filter((d) => !reached.unanswered.has(d));
    try {
      const outcome = await this.pass(key, site, reached);
      return { ...outcome, ...(reached.answered.size > 0 ? { answered: answered() } : {}) };
    } catch (error) {
      throw new CredentialPassError(error, statusOfFailure(error), [...reached.unanswered], answered());
    }
  }

  /** One pass; `reached` collects the dependencies that did not answer it, and those that did. */
  private async pass(key: { readonly namespace: string; readonly name: string }, site: OrderSite, reached: Reached): Promise<CredentialOutcome> {
    const where = site.cluster || undefined;
    // The writes of the pass, each noted when its API server did not answer (the children's on the management cluster).
    const cluster = noting(this.deps.cluster, reached, apiServerDependency(undefined), unansweredByApiServer, API_WRITES);
    const orders = site.orders ? noting(site.orders, reached, apiServerDependency(where), unansweredByApiServer, API_WRITES) : cluster;
    const id = convergedId(key, where);
    const order = await orders.get(KIND, key);
    if (!order) {
      this.converged.delete(id);
      this.seen.delete(id);
      this.justActed.delete(id);
      this.backupLooked.delete(id);
      return {};
    }
    const deleting = order.metadata.deletionTimestamp !== undefined;
    const finalizers = order.metadata.finalizers ?? [];
    if (deleting && !finalizers.includes(TEARDOWN_FINALIZER)) return {};

    // Read: what the pass stands on (the identity plane says where each thing lives: plane/gates.ts).
    const reads = credentialReads(order, where);
    const { location, prefix } = reads;
    const cpKey = reads.controlPlane;
    const controlPlane = await cluster.get('ControlPlane', cpKey);
    const user = await orders.get('KeystoneUser', reads.user);
    const project = await orders.get('KeystoneProject', reads.project);
    const assignments = await orders.list('KeystoneRoleAssignment', reads.assignments.namespace, reads.assignments.labels);
    const passwordKey = controlPlane ? reads.password(user) : undefined;
    const passwordSecret = passwordKey ? await cluster.getSecret(passwordKey) : undefined;
    const caKey = reads.caBundle(controlPlane);
    const caSecret = caKey ? await cluster.getSecret(caKey) : undefined;

    // The steady state: nothing read changed since a converged pass, and no deadline has come. Checked before anything
    // is decoded or decided, as a resync runs it for every order.
    const children = await cluster.listSecrets(reads.children.namespace, reads.children.labels);
    const delivered = await orders.getSecret(reads.delivered);
    const fingerprint = fingerprintOf([order, controlPlane, user, project, assignments, passwordSecret, caSecret, children, delivered]);
    const last = this.converged.get(id);
    // The cache alone may vouch for the order on this process's first sight of it, and on the pass its own writes wake.
    const asked = { asked: askedOf(order), credentialGeneration: order.spec.credentialGeneration ?? 1 };
    const met = this.seen.get(id);
    const changedByUser = met !== undefined && met.asked !== asked.asked && asked.credentialGeneration <= met.credentialGeneration;
    const fresh = changedByUser || (met?.fresh ?? false);
    // A change the user made is never vouched for by the cache, even when it lands on the pass the own writes wake.
    const firstSight = met === undefined;
    const vouchable = firstSight || (this.justActed.delete(id) && !fresh);
    this.seen.set(id, { ...asked, fresh });
    const now = this.clock();
    if (!deleting && fingerprint !== undefined && last?.fingerprint === fingerprint && (last.wakeAt === undefined || now.getTime() < last.wakeAt)) {
      return { skipped: true, ...(last.wakeAt !== undefined ? { requeueAfterMs: last.wakeAt - now.getTime() } : {}), ...(order.status ? { status: order.status } : {}) };
    }
    this.converged.delete(id);

    // Gates: the order's verdict, in one step (consent, admission, references, delivery target, its user's connection).
    // The operator's access to Secrets in the order's namespace counts (the namespaced mode: refused → SecretAccessNotGranted).
    const secretAccess = orders.secretAccess?.(key.namespace);
    const verdict = credentialGates(
      order,
      {
        ...(controlPlane ? { controlPlane } : {}),
        ...(user ? { user } : {}),
        ...(project ? { project } : {}),
        assignments,
        ...(passwordSecret ? { passwordSecret } : {}),
        ...(caSecret ? { caSecret } : {}),
        ...(secretAccess ? { secretAccess } : {}),
      },
      { ...(where ? { cluster: where } : {}), deleting },
    );
    const { admission, gate, undeliverable } = verdict;

    // The finalizer is stored before anything is created for the order (spec, Deletion Semantics), and the same pass
    // goes on: a pass of its own for the finalizer cost every new order one more reconcile.
    let wrote = false;
    if (verdict.finalizerDue) {
      await orders.addFinalizer(KIND, key, TEARDOWN_FINALIZER);
      wrote = true;
    }

    // Ports: Keystone as the ordered user (abandoned once the ControlPlane is gone in a teardown), the children, the
    // delivered Secret, the backup.
    const about = `managed by keystone-appcred for KeystoneApplicationCredential ${key.namespace}/${key.name}${where ? ` on cluster ${where}` : ''}`;
    const connection = verdict.releasable ? undefined : verdict.connection;
    // Keystone's answers are the port's to tell: a list its known credentials served did not reach Keystone.
    const keystoneAt = connection ? keystoneDependency(connection.authUrl) : '';
    const onAnswer = () => reached.answered.add(keystoneAt);
    const asUser = connection ? noting(this.keystoneOf(connection, prefix, fresh, about, onAnswer), { unanswered: reached.unanswered }, keystoneAt, unansweredByKeystone) : undefined;
    const keystone = verdict.releasable ? abandoned() : asUser ? asUser : unreachable(verdict.unreachable ?? 'Keystone is not reachable');
    const before = order.status ?? {};
    // The order's uid is its owner id: every credential it mints carries it, and its backup path names it, so another
    // cluster ordering the same names for the same Keystone user never has its credentials or its backup taken
    // (src/lifecycle/ownership.ts).
    const owner = order.metadata.uid;
    // The path 0.1.0 backed up to (the spec's, without the uid): looked at once per process and order until the status
    // records the backup's migration done at the own path (src/lifecycle/migration.ts), and at teardown. Every call
    // either port makes that OpenBao does not answer makes the order wait on OpenBao (dependencies.ts).
    const backupOf = this.deps.backup;
    const backupAt = backupOf ? (path: string) => noting(backupOf(path), reached, OPENBAO_DEPENDENCY, () => true) : undefined;
    const ownPath = backupAt && owner ? backingPath(cpKey.namespace, prefix, owner) : undefined;
    const ownBackup = backupAt?.(ownPath ?? backingPath(cpKey.namespace, prefix, owner));
    const migrated = ownPath !== undefined && before.backupPath === ownPath;
    const formerBackup = backupAt && owner && (deleting || !migrated) ? backupAt(backingPath(cpKey.namespace, prefix)) : undefined;
    // Issue 49: the template's keys, labels and annotations, and a revoke request (delivery-options.ts).
    const shapes = templatePorts(order, templateFields({ ...(controlPlane ? { controlPlane } : {}), ...(user ? { user } : {}), ...(project ? { project } : {}), ...(verdict.document ? { document: verdict.document } : {}) }));
    const revokeRequest = revokeRequestOfOrder(order);
    const lifecycleOrder = {
      prefix,
      ...(owner ? { owner } : {}),
      generation: order.metadata.generation ?? 1,
      spec: resolveSpec(order.spec),
      status: before,
      deleting,
      secretName: secretName(order.metadata.name),
      ...(ownPath !== undefined ? { backupPath: ownPath } : {}),
      secretKeys: shapes.secretKeys,
      ...(revokeRequest !== undefined ? { revokeRequest } : {}),
    };
    const cachedPorts = {
      secrets: new ParkedSecrets(cluster, cpKey.namespace, prefix, location),
      delivery: new DeliveredSecret(orders, order, shapes.secretMetadata),
      template: shapes.template,
      secretMetadata: shapes.secretMetadata,
      // The auth URL is the one published for the order's cluster (spec, Delivered Secret contract), and the region: the
      // document as every release delivered it (the endpoint interface is the template's, not the reference's). With the
      // ControlPlane gone (teardown only) or no endpoint published (nothing is delivered then) no document can be rendered.
      render: (credentialId: string, secret: string) =>
        verdict.document
          ? deliveredData({ authUrl: verdict.document.authUrl, regionName: verdict.document.regionName }, credentialId, secret)
          : { 'clouds.yaml': '', application_credential_id: credentialId, application_credential_secret: secret },
      admission: async () => (deleting ? undefined : admission),
      gate: async () => (deleting ? undefined : gate),
      undeliverable: async () => (deleting ? undefined : undeliverable),
    };

    // The first pass of this process over the order (a restart, a failover): an order its cache shows settled costs
    // Keystone nothing now and is looked at in full at its next wake-up or change (src/lifecycle/settled.ts). The same
    // holds for the pass that this reconciler's own writes wake right after a pass that acted and converged: that pass
    // observed Keystone a moment ago, and what it wrote is what the cache now shows (a cache that lags is not settled,
    // and takes the full pass).
    if (vouchable && !wrote && !deleting && fingerprint !== undefined) {
      const verdict = settled(lifecycleOrder, await observeCached(cachedPorts, before), now);
      if (verdict.settled) {
        const wakeAt = verdict.wakeAt?.getTime();
        const requeue = wakeAt !== undefined ? { requeueAfterMs: Math.max(0, wakeAt - now.getTime()) } : {};
        // On a first sight the backup is looked at too, in OpenBao only, unless the status records its migration done:
        // after an upgrade, this moves it to the own path, and the status records that once (one write).
        if (firstSight && ownBackup && !migrated) {
          const writeStatus = (status: KeystoneApplicationCredentialStatus) => orders.writeStatus(KIND, key, status);
          const recorded = await this.settleBackup(order, lifecycleOrder, { ...cachedPorts, backup: ownBackup, ...(formerBackup ? { formerBackup } : {}) }, writeStatus, id, where);
          if (recorded) return { settled: true, status: recorded, ...requeue };
        }
        this.converged.set(id, { fingerprint, ...(wakeAt !== undefined ? { wakeAt } : {}) });
        return { skipped: true, settled: true, status: before, ...requeue };
      }
    }

    const adoption = adoptionOf(orders, order);
    const ports: Ports = {
      keystone,
      ...cachedPorts,
      ...(adoption ? { adoption } : {}),
      ...(ownBackup ? { backup: ownBackup } : {}),
      ...(formerBackup ? { formerBackup } : {}),
      writeStatus: async (status) => {
        await orders.writeStatus(KIND, key, status); // the port records an Event per condition transition
        wrote = true;
        this.deps.onStatus?.(order, status, where);
      },
      release: async () => {
        await orders.removeFinalizer(KIND, key, TEARDOWN_FINALIZER);
      },
      isTerminal: isTerminalCreateError,
    };
    let actions = 0;
    const result = await runLifecycle(lifecycleOrder, ports, {
      clock: this.clock,
      onObserved: (world) => {
        if (world.keystoneError === undefined && asUser) this.deps.onKeystoneListed?.(order, world.generations.filter((r) => r.credential).map((r) => r.generation), where);
      },
      onAction: (e) => {
        actions++;
        this.deps.onAction?.(order, e, where);
        void this.announce(order, e, where, delivered !== undefined, { backupPath: backingPath(cpKey.namespace, prefix, owner), userId: user?.status?.userID, projectId: project?.status?.projectID });
      },
    });
    if (asUser && fresh) this.seen.set(id, { ...asked, fresh: false }); // the pass observed Keystone anew and succeeded
    if (formerBackup) await this.formerLooked(order, result.former, id, where);
    if (result.released) {
      await this.emit(order, { type: 'Normal', reason: 'TornDown', action: 'Teardown', note: 'every credential, the backup, the parked secrets and the delivered Secret are gone' }, where);
      this.converged.delete(id);
      return {};
    }
    const wakeAt = result.wakeAt?.getTime();
    if (actions === 0 && !wrote && fingerprint !== undefined) this.converged.set(id, { fingerprint, ...(wakeAt !== undefined ? { wakeAt } : {}) });
    else this.justActed.add(id);
    return { status: result.status, ...(wakeAt !== undefined ? { requeueAfterMs: Math.max(0, wakeAt - this.clock().getTime()) } : {}) };
  }

  /**
   * Forgets what the reconciler remembers of an order (e.g. when it is deleted), on `cluster` (absent: the management
   * cluster). `anew`: the order is met anew, its next pass a first sight the cache may settle (what this process knew of
   * it changed under it: a namespace's Secret access), unless a change of the user's is still to be listed anew.
   */
  forget(key: { readonly namespace: string; readonly name: string }, cluster?: string, options: { readonly anew?: boolean } = {}): void {
    const id = convergedId(key, cluster || undefined);
    this.converged.delete(id);
    if (options.anew && !this.seen.get(id)?.fresh) {
      this.seen.delete(id);
      this.justActed.delete(id);
    }
  }

  /**
   * The backup of an order the cache settles, on this process's first sight of it (src/lifecycle/runner.ts
   * `settleBackup`): the status it records with `writeStatus` when the migration's record changed it (undefined when
   * nothing was written); the pass that write wakes is vouched for by the cache. A path that cannot be read, or a write
   * that fails, fails the pass (it waits on what did not answer) and leaves the order met for the first time, so that
   * its retry is settled by the cache again: a settled order never goes to Keystone because OpenBao (or the API server)
   * does not answer (issue 46).
   */
  private async settleBackup(
    order: KeystoneApplicationCredential,
    lifecycleOrder: Parameters<typeof settleBackup>[0],
    ports: Parameters<typeof settleBackup>[1],
    writeStatus: (status: KeystoneApplicationCredentialStatus) => Promise<void>,
    id: string,
    where: string | undefined,
  ): Promise<KeystoneApplicationCredentialStatus | undefined> {
    try {
      const moved = await settleBackup(lifecycleOrder, ports, { onAction: (e) => this.deps.onAction?.(order, e, where) });
      if (ports.formerBackup) await this.formerLooked(order, moved.former, id, where);
      if (moved.status === lifecycleOrder.status) return undefined;
      await writeStatus(moved.status);
      this.deps.onStatus?.(order, moved.status, where);
      this.justActed.add(id);
      return moved.status;
    } catch (error) {
      this.seen.delete(id);
      throw error;
    }
  }

  /**
   * The path 0.1.0 wrote was looked at. A document there the order cannot account for is left alone and reported, once
   * per process, with a Warning Event naming the path's credential.
   */
  private async formerLooked(order: KeystoneApplicationCredential, former: FormerBackup | undefined, id: string, where: string | undefined): Promise<void> {
    const reported = this.backupLooked.has(id);
    this.backupLooked.add(id);
    if (reported || former?.state !== 'foreign') return;
    const note =
      `the backup path keystone-appcred 0.1.0 wrote for this order (without its uid) holds credential ${former.credentialId}, which this order does not record: ` +
      'left alone (another installation sharing this OpenBao may have written it); remove it with bao kv metadata delete once you know whose it is';
    await this.emit(order, { type: 'Warning', reason: 'ForeignBackup', action: 'Migrate', note }, where);
  }

  /**
   * Forgets what the reconciler remembers of every order of a target cluster (deregistered): registered again, each is
   * met anew, and its first pass may be settled by the cache.
   */
  forgetCluster(cluster: string): void {
    const prefix = `${cluster}/`;
    for (const memory of [this.converged, this.seen]) for (const id of [...memory.keys()]) if (id.startsWith(prefix)) memory.delete(id);
    for (const memory of [this.justActed, this.backupLooked]) for (const id of [...memory]) if (id.startsWith(prefix)) memory.delete(id);
  }

  /**
   * Keystone as the ordered user, through the user's shared session (its token and its known credentials outlive the
   * pass; `fresh`: the pass lists anew).
   */
  private keystoneOf(connection: UserConnection, prefix: string, fresh: boolean, description: string, onAnswer: () => void): CredentialPort {
    if (this.deps.keystone) return this.deps.keystone(connection, prefix, { fresh, onAnswer });
    const session = this.sessions.session({
      authUrl: connection.authUrl,
      ...(connection.caBundle ? { caBundle: connection.caBundle } : {}),
      auth: { method: 'password', user: { id: connection.userId }, password: connection.password, project: { id: connection.projectId } },
      ...(connection.passwordGeneration !== undefined ? { generation: connection.passwordGeneration } : {}),
    });
    return credentialPort(session, prefix, { description, onAnswer, ...(fresh ? { fresh } : {}) });
  }

  /**
   * Events on mint, switch, sweep and a refused mint (the lifecycle's moments; never a secret). `replacing`: the pass
   * found a delivered Secret, so a delivery that switches replaces a credential (observed, not taken from the status,
   * which a restored cluster does not have).
   */
  private async announce(order: KeystoneApplicationCredential, e: ActionEvent, cluster: string | undefined, replacing: boolean, context: Omit<RetainContext, 'cluster'>): Promise<void> {
    const a = e.action;
    if (e.outcome === 'failed') return;
    const option = deliveryOptionEvent(order, e, { ...context, ...(cluster ? { cluster } : {}) });
    if (option) return this.emit(order, option, cluster);
    if (a.type === 'deliver' && a.unowned !== undefined) {
      // A tenant may edit the delivered Secret: an id that is none of the order's was never counted (src/lifecycle/runner.ts).
      const secret = `${order.metadata.namespace ?? ''}/${secretName(order.metadata.name)}${cluster ? ` on cluster ${cluster}` : ''}`;
      const note = `the delivered Secret ${secret} named application credential ${shownCredentialId(a.unowned)}, which is not this order's; rewritten with generation ${a.generation}, and nothing was recorded, adopted or deleted for that id`;
      await this.emit(order, { type: 'Warning', reason: 'SecretRepaired', action: 'Repair', note }, cluster);
    }
    if (a.type === 'mint' && e.outcome === 'done') await this.emit(order, { type: 'Normal', reason: 'Minted', action: 'Mint', note: `created generation ${a.generation} in Keystone (${a.why})` }, cluster);
    else if (a.type === 'mint' && e.outcome === 'refused') await this.emit(order, { type: 'Warning', reason: 'CredentialFailed', action: 'Mint', note: `Keystone refused generation ${a.generation}` }, cluster);
    // A first delivery is no switch (nothing was delivered before): the Minted Event says it, one API write fewer.
    else if (a.type === 'deliver' && a.why === 'switch' && replacing) await this.emit(order, { type: 'Normal', reason: 'Switched', action: 'Rotate', note: `the delivered Secret carries generation ${a.generation}` }, cluster);
    else if (a.type === 'delete' && order.metadata.deletionTimestamp === undefined) await this.emit(order, { type: 'Normal', reason: 'Swept', action: 'Sweep', note: `deleted generation ${a.generation} in Keystone (${a.why})` }, cluster);
  }

  private async emit(order: KeystoneApplicationCredential, event: CredentialEvent, cluster: string | undefined): Promise<void> {
    await this.deps.event?.(order, event, cluster).catch(() => undefined); // an Event is best effort
  }
}

/** What the user last asked of an order: its spec generation and its annotations (a digest). */
function askedOf(order: KeystoneApplicationCredential): string {
  const annotations = order.metadata.annotations;
  const digest = annotations ? createHash('sha256').update(JSON.stringify(annotations)).digest('base64url').slice(0, 16) : '';
  return `${order.metadata.generation ?? 0}/${digest}`;
}

/** What the reconciler remembers an order by: its cluster (absent: the management cluster), namespace and name. */
function convergedId(key: { readonly namespace: string; readonly name: string }, cluster: string | undefined): string {
  return `${cluster ?? ''}/${key.namespace}/${key.name}`;
}

/** The cluster port's calls that reach the API server (its reads come from the caches). */
const API_WRITES: ReadonlySet<PropertyKey> = new Set(['readSecret', 'createSecret', 'applySecret', 'deleteSecret', 'writeStatus', 'addFinalizer', 'removeFinalizer']);

/**
 * `port` with every failed call that `counts` noted in `reached.unanswered` as `dependency` (the error is thrown on as it
 * was), and, given `reached.answered`, every other call (one that returned, or a refusal `counts` does not count) noted
 * there: every method, or only `methods` (each an async call).
 */
function noting<T extends object>(port: T, reached: Pick<Reached, 'unanswered'> & Partial<Reached>, dependency: string, counts: (error: unknown) => boolean, methods?: ReadonlySet<PropertyKey>): T {
  return new Proxy(port, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (methods && !methods.has(property)) return (value as (...a: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        try {
          const reply = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          reached.answered?.add(dependency);
          return reply;
        } catch (error) {
          (counts(error) ? reached.unanswered : reached.answered)?.add(dependency);
          throw error;
        }
      };
    },
  });
}

/** Keystone did not answer (no connection, no reply in time, 5xx or 429): an outage, not a refusal of this order's. */
function unansweredByKeystone(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { retryable?: unknown }).retryable === true;
}

/** An API server did not answer a write: no HTTP answer at all, a 5xx or a 429. A refusal (4xx) is the order's own. */
function unansweredByApiServer(error: unknown): boolean {
  return !(error instanceof KubeApiError) || error.status >= 500 || error.status === 429;
}

/** A Keystone port that cannot be reached: every call fails with the reason, so the pass repairs what needs no Keystone. */
function unreachable(reason: string): CredentialPort {
  const fail = async (): Promise<never> => {
    throw new Error(reason);
  };
  return { list: fail, create: fail, delete: fail };
}

/**
 * The ControlPlane is gone: nothing is left to reach Keystone with (spec, Deletion Semantics: "one pass issues every
 * delete and releases the finalizer"). Keystone holds nothing this order could still delete.
 */
function abandoned(): CredentialPort {
  return {
    list: async () => [],
    create: async () => {
      throw new Error('the ControlPlane is gone');
    },
    delete: async () => undefined,
  };
}
