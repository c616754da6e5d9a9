/**
 * The manager runs the operator's parts together: one informer (and cache) per kind, shared by every controller that
 * reads or watches it; the controllers registered with {@link Manager.controller}; leader election, so that only the
 * leader's controllers run (every replica keeps its caches warm, so a standby takes over with synced caches); and the
 * shutdown that finishes the reconciles in flight within a deadline before it releases the Lease.
 *
 * ```ts
 * manager.controller({
 *   kind: Kinds.KeystoneUser,
 *   reconcile: (request) => reconcileUser(manager.cluster, request),
 *   watches: [
 *     { kind: Kinds.ControlPlane, map: byIndex(Kinds.KeystoneUser, 'controlPlane', (user) => [controlPlaneKeyOf(user)]) },
 *     { kind: Kinds.Secret, map: byOwner(Kinds.KeystoneUser) },
 *   ],
 * });
 * ```
 */
import type { KubeApi, Selection } from '../../kube/api';
import type { Cluster } from '../../kube/cluster';
import { LiveCluster } from '../../kube/live-cluster';
import type { KubeObject, ResourceKind } from '../../kube/object';
import type { IndexFunction, Store } from '../../kube/store';
import { Controller, type ControllerSpec } from './controller';
import { EventRecorder, type EventRecorderOptions } from './events';
import { Informer, listWatchOf, type ListWatch } from './informer';
import { LeaderElector, leaseClientOf, type LeaseClient } from './leader';
import { errorMessage, silentLogger, type Logger } from './log';
import { MapperRegistry, kindId, self, type Mapper } from './mapper';
import { OperatorMetrics } from './metrics';
import { StatusWriter } from './status';

/** The reportingController of the operator's Events. */
export const REPORTING_CONTROLLER = 'c5c3.io/keystone-appcred-operator';

export interface ManagerOptions {
  /** This replica's identity: the election candidate and the Events' reportingInstance. */
  readonly identity: string;
  /** The namespace of the election Lease. */
  readonly namespace: string;
  /** The election Lease's name. */
  readonly leaseName: string;
  /** Elect a leader; false runs the controllers at once (one replica only). @default true */
  readonly leaderElect?: boolean;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  /** Every cached object is reconciled again this often (no API call). @default 1 h */
  readonly resyncPeriodMs?: number;
  /** How long shutdown waits for reconciles in flight. @default 20 s */
  readonly shutdownTimeoutMs?: number;
  readonly logger?: Logger;
  readonly metrics?: OperatorMetrics;
  /** For tests: the list/watch of a kind and the election's Lease client. @default through `api` */
  readonly listWatch?: <T extends KubeObject>(kind: ResourceKind<T>, selection: Selection) => ListWatch<T>;
  readonly leaseClient?: LeaseClient;
  /** For tests: the cluster reconcilers see. @default a LiveCluster on `api` and the caches */
  readonly cluster?: (caches: { storeOf<T extends KubeObject>(kind: ResourceKind<T>): Store<T> | undefined }) => Cluster;
}

/** How a shutdown went. */
export interface ShutdownResult {
  /** Every reconcile in flight finished within the deadline. */
  readonly drained: boolean;
  /** The Lease was released (only when leading and drained). */
  readonly released: boolean;
}

export class Manager {
  readonly cluster: Cluster;
  readonly metrics: OperatorMetrics;
  readonly logger: Logger;
  /** Resolves when this replica loses the Lease it held (the process should exit and restart as a standby). */
  readonly lostLeadership: Promise<void>;
  private readonly informers = new Map<string, Informer>();
  private readonly selections = new Map<string, Selection>();
  private readonly controllers: Controller[] = [];
  private readonly registry: MapperRegistry;
  private readonly elector: LeaderElector | undefined;
  private signalLost: () => void = () => undefined;
  private started = false;
  private controllersStarted = false;
  private stopping = false;

  constructor(
    private readonly api: KubeApi | undefined,
    private readonly options: ManagerOptions,
  ) {
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics ?? new OperatorMetrics({ defaultMetrics: false });
    const caches = { storeOf: <T extends KubeObject>(kind: ResourceKind<T>) => this.informers.get(kindId(kind))?.store as Store<T> | undefined };
    this.cluster = options.cluster
      ? options.cluster(caches)
      : new LiveCluster(this.requireApi(), caches, {
        reportingController: REPORTING_CONTROLLER,
        reportingInstance: options.identity,
        onWrite: (verb, kind) => this.metrics.wrote(kind, verb),
      });
    this.registry = new MapperRegistry(this.cluster, this.logger);
    this.lostLeadership = new Promise((resolve) => (this.signalLost = resolve));
    if (options.leaderElect ?? true) {
      const client = options.leaseClient ?? leaseClientOf(this.requireApi(), options.namespace, options.leaseName);
      this.elector = new LeaderElector(client, {
        identity: options.identity,
        namespace: options.namespace,
        name: options.leaseName,
        leaseDurationMs: options.leaseDurationMs,
        renewDeadlineMs: options.renewDeadlineMs,
        retryPeriodMs: options.retryPeriodMs,
        logger: this.logger,
      });
    }
  }

  /** Whether this replica's controllers run (it leads, or election is off). */
  get isLeader(): boolean {
    return this.elector ? this.elector.isLeader : this.started;
  }

  /**
   * Registers a controller: its kind is cached and each of its objects reconciled on change, on resync and on
   * wake-ups; each watched kind is cached and its changes mapped to the keys to reconcile. Before {@link start} only.
   */
  controller<T extends KubeObject>(spec: ControllerSpec<T>): Controller {
    if (this.started) throw new Error(`controller ${spec.name ?? spec.kind.kind}: register controllers before the manager starts`);
    const name = spec.name ?? spec.kind.kind;
    if (this.controllers.some((c) => c.name === name)) throw new Error(`a controller named ${name} is already registered`);
    const primary = this.informer(spec.kind);
    const controller = new Controller(spec as unknown as ControllerSpec, {
      metrics: this.metrics,
      logger: this.logger,
      keys: () => primary.store.keys(),
    });
    const target = (key: string) => controller.enqueue(key);
    this.registry.register(spec.kind, { target, mapper: self(), controller: name, resync: true });
    for (const watch of spec.watches ?? []) {
      this.informer(watch.kind);
      const mapper: Mapper = typeof watch.map === 'function' ? { map: watch.map as Mapper['map'] } : (watch.map as Mapper);
      for (const index of mapper.indexes ?? []) this.index(index.kind, index.name, index.fn);
      this.registry.register(watch.kind, { target, mapper, controller: name, resync: false });
    }
    this.controllers.push(controller);
    return controller;
  }

  /**
   * Caches a kind that reconcilers read but whose changes requeue nothing, optionally only a namespace or labels. A
   * selection must come before any controller or watch of the kind (which cache all of it).
   */
  cache<T extends KubeObject>(kind: ResourceKind<T>, selection: Selection = {}): void {
    const existing = this.selections.get(kindId(kind));
    if (existing && JSON.stringify(existing) !== JSON.stringify(selection)) {
      throw new Error(`${kind.kind} is already cached with the selection ${JSON.stringify(existing)}; declare its cache first`);
    }
    this.informer(kind, selection);
  }

  /** Adds a named index to a kind's cache, for `cluster.list(kind, { index })` and `byIndex` mappers. */
  index<T extends KubeObject>(kind: ResourceKind<T>, name: string, fn: IndexFunction<T>): void {
    this.informer(kind).store.addIndex(name, fn as IndexFunction);
  }

  /** A StatusWriter that records Events on condition transitions. */
  statusWriter(options: EventRecorderOptions = {}): StatusWriter {
    return new StatusWriter(this.cluster, new EventRecorder(this.cluster, { logger: this.logger, ...options }));
  }

  /** The kinds whose caches have not synced yet. */
  unsynced(): string[] {
    return [...this.informers.values()].filter((i) => !i.synced).map((i) => i.kind.kind);
  }

  /** Resolves when every cache has synced. */
  async waitForCacheSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
  }

  /** Starts the informers and the election (or, without election, the controllers once the caches synced). */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (const informer of this.informers.values()) informer.start();
    this.logger.info('manager started', { kinds: [...this.informers.values()].map((i) => i.kind.kind).join(','), controllers: this.controllers.map((c) => c.name).join(',') });
    if (!this.elector) {
      this.metrics.leader(true);
      void this.startControllers();
      return;
    }
    void this.elector
      .run({
        onStartedLeading: () => {
          this.metrics.leader(true);
          void this.startControllers();
        },
        onStoppedLeading: () => {
          this.metrics.leader(false);
          this.signalLost();
        },
      })
      .catch((error: unknown) => {
        this.logger.error('leader election failed', { error: errorMessage(error) });
        this.signalLost();
      });
  }

  /**
   * Stops: no new reconciles, the ones in flight get `shutdownTimeoutMs` to finish; then, when they all finished and this
   * replica leads, the Lease is released so a standby takes over at once (otherwise it expires on its own).
   */
  async shutdown(): Promise<ShutdownResult> {
    this.stopping = true;
    this.elector?.stop();
    const timeout = this.options.shutdownTimeoutMs ?? 20_000;
    const drained = (await Promise.all(this.controllers.map((c) => c.stop(timeout)))).every((d) => d);
    let released = false;
    if (!drained) this.logger.warn('reconciles still in flight at the shutdown deadline; the lease is left to expire', { shutdownTimeoutMs: timeout });
    else if (this.elector) released = await this.elector.release();
    this.metrics.leader(false);
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
    this.logger.info('manager stopped', { drained, released });
    return { drained, released };
  }

  private async startControllers(): Promise<void> {
    await this.waitForCacheSync();
    if (this.stopping || this.controllersStarted) return;
    this.controllersStarted = true;
    for (const controller of this.controllers) controller.start();
  }

  private informer<T extends KubeObject>(kind: ResourceKind<T>, selection: Selection = {}): Informer<T> {
    const id = kindId(kind);
    let informer = this.informers.get(id) as Informer<T> | undefined;
    if (informer) return informer;
    if (this.started) throw new Error(`${kind.kind}: kinds are cached only when declared before the manager starts`);
    this.selections.set(id, selection);
    const listWatch = this.options.listWatch ? this.options.listWatch(kind, selection) : listWatchOf(this.requireApi(), kind, selection);
    informer = new Informer(kind, listWatch, {
      resyncPeriodMs: this.options.resyncPeriodMs ?? 3_600_000,
      logger: this.logger,
      onRelist: (reason) => this.metrics.relisted(kind.kind, reason),
    });
    this.metrics.informerSynced(kind.kind, false);
    void informer.waitForSync().then(() => this.metrics.informerSynced(kind.kind, true));
    informer.addHandler(this.registry.handlerFor(kind));
    this.informers.set(id, informer as unknown as Informer);
    return informer;
  }

  private requireApi(): KubeApi {
    if (!this.api) throw new Error('the manager needs a KubeApi (or test doubles for every part)');
    return this.api;
  }
}
