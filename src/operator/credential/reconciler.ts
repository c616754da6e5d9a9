/**
 * The KeystoneApplicationCredential reconciler: a thin driver of `src/lifecycle` on the cluster. One pass reads top to
 * bottom: read (the order and what it stands on, from the caches: src/plane/credential-reads.ts) → gates (the order's
 * verdict in one call: src/plane/gates.ts) → ports (Keystone as the ordered user, the `secret-v<N>` children, the
 * delivered Secret, OpenBao: ./pass-ports.ts) → lifecycle (src/lifecycle/runner.ts) → announce (the Events:
 * ./announce.ts). Every rule of rotation, grace, repair and teardown is the lifecycle's; consent and the gates are the
 * identity plane's (`src/plane`), shared with the other kinds.
 *
 * A steady order costs nothing: after a pass that converged without writing, the reconciler remembers the
 * resourceVersions of what it read (the identity plane's `fingerprintOf`), and a resync that finds the same inputs
 * before the order's `wakeAt` makes no Keystone call and no write (./memory.ts). It lives in memory only; after a
 * restart (or on the standby that took over) an order the cache shows settled (src/lifecycle/settled.ts: the status
 * agrees with the delivered Secret and the parked secrets, nothing is due) is remembered as converged without a Keystone
 * call, and any other gets one full pass. The pass that the reconciler's own writes wake, right after a pass that
 * acted, is vouched for the same way: it would only list Keystone again to find what the pass before established. A
 * credential deleted in Keystone by hand is noticed at the next wake-up or change.
 */
import { TEARDOWN_FINALIZER, type KeystoneApplicationCredential, type KeystoneApplicationCredentialStatus } from '../../api';
import { KeystoneSessions, isTerminalCreateError } from '../../keystone';
import { statusOfFailure } from '../../lifecycle/failures';
import type { FormerBackup } from '../../lifecycle/migration';
import { observeCached } from '../../lifecycle/observe';
import type { BackupPort, Ports } from '../../lifecycle/ports';
import { reconcile as runLifecycle, settleBackup, type ActionEvent } from '../../lifecycle/runner';
import { settled } from '../../lifecycle/settled';
import { readCredential } from '../../plane/credential-reads';
import { fingerprintOf } from '../../plane/driver/memo';
import { credentialGates } from '../../plane/gates';
import { effectivePolicy } from '../../plane/policy';
import type { ClusterPort, OrderSite } from '../../plane/ports';
import { actionEvents, formerBackupEvent, tornDownEvent } from './announce';
import type { CredentialEvent, RetainContext } from './delivery-options';
import { PassMemory, orderId, type OrderId } from './memory';
import { passPorts, type PassPorts } from './pass-ports';
import { PassReach } from './reached';
import type { KeystoneFactory } from './user-keystone';

export type { UserConnection } from '../../plane/gates';

export type { CredentialEvent } from './delivery-options';

export { OPENBAO_DEPENDENCY, apiServerDependency, keystoneDependency } from './reached';

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
  readonly keystone?: KeystoneFactory;
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

const KIND = 'KeystoneApplicationCredential';

type Key = { readonly namespace: string; readonly name: string };

export class CredentialReconciler {
  /** What the reconciler remembers of its orders between passes (./memory.ts). */
  private readonly memory = new PassMemory();
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
  async reconcile(key: Key, site: OrderSite = {}): Promise<CredentialOutcome> {
    const reach = new PassReach();
    try {
      const outcome = await this.pass(key, site, reach);
      return { ...outcome, ...(reach.answered.size > 0 ? { answered: reach.answeredAll() } : {}) };
    } catch (error) {
      throw new CredentialPassError(error, statusOfFailure(error), [...reach.unanswered], reach.answeredAll());
    }
  }

  /** One pass, read → gates → ports → lifecycle → announce; `reach` collects the dependencies it reached. */
  private async pass(key: Key, site: OrderSite, reach: PassReach): Promise<CredentialOutcome> {
    const where = site.cluster || undefined;
    // The writes of the pass, each noted when its API server did not answer (the children's on the management cluster).
    const cluster = reach.apiServer(this.deps.cluster);
    const orders = site.orders ? reach.apiServer(site.orders, where) : cluster;
    const id = orderId(key, where);

    // Read: the order, then what it stands on (the identity plane says where each thing lives).
    const order = await orders.get(KIND, key);
    if (!order) {
      this.memory.gone(id);
      return {};
    }
    const deleting = order.metadata.deletionTimestamp !== undefined;
    if (deleting && !(order.metadata.finalizers ?? []).includes(TEARDOWN_FINALIZER)) return {};
    const read = await readCredential(order, where, { management: cluster, orders });

    // The steady state: nothing read changed since a converged pass, and no deadline has come. Checked before anything
    // is decoded or decided, as a resync runs it for every order.
    const fingerprint = fingerprintOf([order, read.controlPlane, read.user, read.project, read.assignments, read.passwordSecret, read.caSecret, read.children, read.delivered]);
    const now = this.clock();
    const sight = this.memory.meet(id, order, fingerprint, now);
    if (sight.steady) {
      const wakeAt = sight.steady.wakeAt;
      return { skipped: true, ...(wakeAt !== undefined ? { requeueAfterMs: wakeAt - now.getTime() } : {}), ...(order.status ? { status: order.status } : {}) };
    }

    // Gates: the order's verdict, in one step (consent, admission, references, delivery target, its user's connection).
    // The operator's access to Secrets in the order's namespace counts (the namespaced mode: refused → SecretAccessNotGranted).
    // Fleet defaults (issue 48): the policy the order runs with, its roles among it, so the gates check those (and the
    // lifecycle runs with it: the ports' order).
    const policy = effectivePolicy(order, read.controlPlane, where);
    const verdict = credentialGates({ ...order, spec: policy.spec }, read, { ...(where ? { cluster: where } : {}), deleting });
    // The finalizer is stored before anything is created for the order (spec, Deletion Semantics), and the same pass
    // goes on: a pass of its own for the finalizer cost every new order one more reconcile.
    // The status the pass records is conditional on the copy it decided from (`ClusterPort.writeStatus`): an order
    // changed during the pass (a raise, a spec edit) loses that write with 409 and the next pass decides anew; the
    // finalizer's write is the pass's own, so its result is that copy from then on.
    let wrote = false;
    let basis = order;
    if (verdict.finalizerDue) {
      basis = (await orders.addFinalizer(KIND, key, TEARDOWN_FINALIZER, order)) ?? order;
      wrote = true;
    }

    // Ports: every call OpenBao or Keystone does not answer makes the order wait on it (dependencies.ts).
    const description = `managed by keystone-appcred for KeystoneApplicationCredential ${key.namespace}/${key.name}${where ? ` on cluster ${where}` : ''}`;
    const ports = passPorts({
      order,
      policy,
      read,
      verdict,
      management: cluster,
      orders,
      asUser: { sessions: this.sessions, ...(this.deps.keystone ? { factory: this.deps.keystone } : {}), fresh: sight.fresh, description },
      ...(this.deps.backup ? { backup: this.deps.backup } : {}),
      reach,
    });
    const before = order.status ?? {};

    // The first pass of this process over the order (a restart, a failover): an order its cache shows settled costs
    // Keystone nothing now and is looked at in full at its next wake-up or change (src/lifecycle/settled.ts). The same
    // holds for the pass that this reconciler's own writes wake right after a pass that acted and converged: that pass
    // observed Keystone a moment ago, and what it wrote is what the cache now shows (a cache that lags is not settled,
    // and takes the full pass).
    if (sight.vouchable && !wrote && !deleting && fingerprint !== undefined) {
      const cached = settled(ports.order, await observeCached(ports.cached, before), now);
      if (cached.settled) {
        const wakeAt = cached.wakeAt?.getTime();
        const requeue = wakeAt !== undefined ? { requeueAfterMs: Math.max(0, wakeAt - now.getTime()) } : {};
        // On a first sight the backup is looked at too, in OpenBao only, unless the status records its migration done:
        // after an upgrade, this moves it to the own path, and the status records that once (one write).
        if (sight.firstSight && ports.ownBackup && !ports.migrated) {
          const recorded = await this.settleBackup(order, ports, ports.ownBackup, (status) => orders.writeStatus(KIND, key, status, basis), id, where);
          if (recorded) return { settled: true, status: recorded, ...requeue };
        }
        this.memory.converge(id, fingerprint, wakeAt);
        return { skipped: true, settled: true, status: before, ...requeue };
      }
    }

    // Lifecycle: the passes of src/lifecycle through the ports; each action announced as it is done.
    const lifecyclePorts: Ports = {
      keystone: ports.keystone,
      ...ports.cached,
      ...(ports.adoption ? { adoption: ports.adoption } : {}),
      ...(ports.ownBackup ? { backup: ports.ownBackup } : {}),
      ...(ports.formerBackup ? { formerBackup: ports.formerBackup } : {}),
      writeStatus: async (status) => {
        await orders.writeStatus(KIND, key, status, basis); // the port records an Event per condition transition
        wrote = true;
        this.deps.onStatus?.(order, status, where);
      },
      release: async () => {
        await orders.removeFinalizer(KIND, key, TEARDOWN_FINALIZER);
      },
      isTerminal: isTerminalCreateError,
    };
    const retain: RetainContext = { ...(where ? { cluster: where } : {}), backupPath: ports.backupPath, ...ids(read) };
    let actions = 0;
    const result = await runLifecycle(ports.order, lifecyclePorts, {
      clock: this.clock,
      onObserved: (world) => {
        if (world.keystoneError === undefined && ports.reachesKeystone) this.deps.onKeystoneListed?.(order, world.generations.filter((r) => r.credential).map((r) => r.generation), where);
      },
      onAction: (e) => {
        actions++;
        this.deps.onAction?.(order, e, where);
        void this.emit(order, actionEvents(order, e, read.delivered !== undefined, retain), where);
      },
    });
    if (ports.reachesKeystone && sight.fresh) this.memory.listed(id); // the pass observed Keystone anew and succeeded

    // Announce: what the pass found at the former backup path, a finished teardown; and what it leaves in memory.
    if (ports.formerBackup) await this.formerLooked(order, result.former, id, where);
    if (result.released) {
      await this.emit(order, [tornDownEvent()], where);
      this.memory.released(id);
      return {};
    }
    const wakeAt = result.wakeAt?.getTime();
    if (actions === 0 && !wrote && fingerprint !== undefined) this.memory.converge(id, fingerprint, wakeAt);
    else this.memory.acted(id);
    return { status: result.status, ...(wakeAt !== undefined ? { requeueAfterMs: Math.max(0, wakeAt - this.clock().getTime()) } : {}) };
  }

  /**
   * Forgets what the reconciler remembers of an order (e.g. when it is deleted), on `cluster` (absent: the management
   * cluster). `anew`: the order is met anew, its next pass a first sight the cache may settle (what this process knew of
   * it changed under it: a namespace's Secret access), unless a change of the user's is still to be listed anew.
   */
  forget(key: Key, cluster?: string, options: { readonly anew?: boolean } = {}): void {
    this.memory.forget(orderId(key, cluster || undefined), options.anew === true);
  }

  /**
   * Forgets what the reconciler remembers of every order of a target cluster (deregistered): registered again, each is
   * met anew, and its first pass may be settled by the cache.
   */
  forgetCluster(cluster: string): void {
    this.memory.forgetCluster(cluster);
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
    ports: PassPorts,
    ownBackup: BackupPort,
    writeStatus: (status: KeystoneApplicationCredentialStatus) => Promise<void>,
    id: OrderId,
    where: string | undefined,
  ): Promise<KeystoneApplicationCredentialStatus | undefined> {
    try {
      const backups = { ...ports.cached, backup: ownBackup, ...(ports.formerBackup ? { formerBackup: ports.formerBackup } : {}) };
      const moved = await settleBackup(ports.order, backups, { onAction: (e) => this.deps.onAction?.(order, e, where) });
      if (ports.formerBackup) await this.formerLooked(order, moved.former, id, where);
      if (moved.status === ports.order.status) return undefined;
      await writeStatus(moved.status);
      this.deps.onStatus?.(order, moved.status, where);
      this.memory.acted(id);
      return moved.status;
    } catch (error) {
      this.memory.unmeet(id);
      throw error;
    }
  }

  /** The path 0.1.0 wrote was looked at: a document there the order cannot account for is reported once per process. */
  private async formerLooked(order: KeystoneApplicationCredential, former: FormerBackup | undefined, id: OrderId, where: string | undefined): Promise<void> {
    const event = formerBackupEvent(former, this.memory.formerLooked(id));
    if (event) await this.emit(order, [event], where);
  }

  /** Records `events` about the order, one after the other; an Event is best effort. */
  private async emit(order: KeystoneApplicationCredential, events: readonly CredentialEvent[], cluster: string | undefined): Promise<void> {
    for (const event of events) await this.deps.event?.(order, event, cluster).catch(() => undefined);
  }
}

/** The ordered user's and project's Keystone ids, as a Retain teardown's Event names them. */
function ids(read: { readonly user?: { readonly status?: { readonly userID?: string } }; readonly project?: { readonly status?: { readonly projectID?: string } } }): Pick<RetainContext, 'userId' | 'projectId'> {
  return { userId: read.user?.status?.userID, projectId: read.project?.status?.projectID };
}
