/**
 * The manager runs the operator's parts together: one informer (and cache) per kind, shared by every controller that
 * reads or watches it, or one per declared selection of a kind (see {@link Manager.cache}: a kind cached whole only
 * where labels select it, and as metadata only elsewhere, ./partition.ts); the controllers registered with {@link Manager.controller}; leader election, so that only the
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
 *
 * Registered target clusters are engaged and disengaged at run time ({@link Manager.engage}, ./engagement.ts). Leader
 * election stays on the management cluster: one leader serves every cluster. The caches are ./caches.ts's.
 */
import type { KubeApi, Selection } from '../../kube/api';
import type { Cluster } from '../../kube/cluster';
import { LiveCluster } from '../../kube/live-cluster';
import type { KubeObject, ResourceKind } from '../../kube/object';
import type { IndexFunction, StoreReader } from '../../kube/store';
import { Caches, cacheName, type CacheOptions, type NamespacedCacheOptions } from './caches';
import { MANAGEMENT, type ClusterScope, type FleetReader } from './clusters';
import { Controller, type ControllerSpec } from './controller';
import { DependencyWaits } from './dependencies';
import { Engagements, REPORTING_CONTROLLER, type EngageOptions } from './engagement';
import { EventRecorder, type EventRecorderOptions } from './events';
import type { ListWatch } from './informer';
import { LeaderElector, leaseClientOf, type LeaseClient } from './leader';
import { errorMessage, silentLogger, type Logger } from './log';
import { MapperRegistry, kindId, self, type Mapper } from './mapper';
import type { NamespaceAccess } from './namespaces';
import { OperatorMetrics } from './metrics';
import { StatusWriter } from './status';

export { cacheName, type CacheOptions, type NamespacedCacheOptions } from './caches';
export { REPORTING_CONTROLLER, type EngageOptions } from './engagement';

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
  /**
   * Workers of each controller that sets no `concurrency` of its own (controller-runtime's MaxConcurrentReconciles).
   * @default 1
   */
  readonly workers?: number;
  /**
   * Workers by kind, over `workers`, for every controller of that kind (controller-runtime's GroupKindConcurrency).
   * @default none
   */
  readonly workersPerKind?: Readonly<Record<string, number>>;
  readonly logger?: Logger;
  readonly metrics?: OperatorMetrics;
  /** For tests: the list/watch of a kind and the election's Lease client. @default through `api` */
  readonly listWatch?: <T extends KubeObject>(kind: ResourceKind<T>, selection: Selection) => ListWatch<T>;
  readonly leaseClient?: LeaseClient;
  /** For tests: the cluster reconcilers see. @default a LiveCluster on `api` and the caches */
  readonly cluster?: (caches: { storeOf<T extends KubeObject>(kind: ResourceKind<T>): StoreReader<T> | undefined }) => Cluster;
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
  /** The dependencies objects wait on after a pass they refused, shared by every controller (./dependencies.ts). */
  readonly waits: DependencyWaits;
  private readonly caches: Caches;
  private readonly targets: Engagements;
  private readonly controllers: Controller[] = [];
  private readonly registry: MapperRegistry;
  /** The controllers whose primary kind is reconciled on every cluster, with that kind. */
  private readonly multiClusterControllers = new Map<Controller, ResourceKind<KubeObject>>();
  private readonly elector: LeaderElector | undefined;
  private signalLost: () => void = () => undefined;
  private readonly clusterGone: ((name: string) => void)[] = [];
  private started = false;
  private controllersStarted = false;
  private stopping = false;

  constructor(
    private readonly api: KubeApi | undefined,
    private readonly options: ManagerOptions,
  ) {
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics ?? new OperatorMetrics({ defaultMetrics: false });
    const resyncPeriodMs = options.resyncPeriodMs ?? 3_600_000;
    this.waits = new DependencyWaits({ logger: this.logger });
    this.caches = new Caches({
      ...(options.listWatch ? { listWatch: options.listWatch } : {}),
      resyncPeriodMs,
      logger: this.logger,
      metrics: this.metrics,
      registry: () => this.registry,
      api: () => this.requireApi(),
      started: () => this.started,
    });
    this.targets = new Engagements({
      identity: options.identity,
      resyncPeriodMs,
      logger: this.logger,
      metrics: this.metrics,
      caches: this.caches,
      registry: () => this.registry,
      multiClusterControllers: this.multiClusterControllers,
      stopping: () => this.stopping,
      onDisengaged: (name) => {
        for (const listener of this.clusterGone) listener(name);
      },
    });
    const caches = { storeOf: <T extends KubeObject>(kind: ResourceKind<T>) => this.storeOf(kind) };
    this.cluster = options.cluster
      ? options.cluster(caches)
      : new LiveCluster(this.requireApi(), caches, {
        reportingController: REPORTING_CONTROLLER,
        reportingInstance: options.identity,
        onWrite: (verb, kind) => this.metrics.wrote(kind, verb),
      });
    this.registry = new MapperRegistry(this.fleet(), this.logger);
    this.metrics.cacheSizesFrom(() => this.caches.sizes());
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
    this.caches.informers(spec.kind);
    this.caches.primaries.add(kindId(spec.kind));
    const scope: ClusterScope = spec.clusters ?? 'management';
    if (scope === 'all') this.caches.everyCluster.add(kindId(spec.kind));
    const concurrency = spec.concurrency ?? this.options.workersPerKind?.[spec.kind.kind] ?? this.options.workers ?? 1;
    const controller = new Controller({ ...(spec as unknown as ControllerSpec), concurrency }, {
      metrics: this.metrics,
      logger: this.logger,
      waits: this.waits,
      keys: () => [...(this.storeOf(spec.kind)?.keys() ?? []), ...(scope === 'all' ? this.targets.ready().flatMap((t) => this.targets.keys(t, spec.kind)) : [])],
    });
    const target = (key: string) => controller.enqueue(key);
    this.registry.register(spec.kind, { target, mapper: self(), controller: name, resync: true, clusters: scope });
    for (const watch of spec.watches ?? []) {
      this.caches.informers(watch.kind);
      if (watch.clusters === 'all') this.caches.everyCluster.add(kindId(watch.kind));
      const mapper: Mapper = typeof watch.map === 'function' ? { map: watch.map as Mapper['map'] } : (watch.map as Mapper);
      for (const index of mapper.indexes ?? []) this.index(index.kind, index.name, index.fn);
      this.registry.register(watch.kind, { target, mapper, controller: name, resync: false, clusters: watch.clusters ?? 'management' });
    }
    if (scope === 'all') this.multiClusterControllers.set(controller, spec.kind);
    this.controllers.push(controller);
    return controller;
  }

  /**
   * Caches a kind, or a share of it (./caches.ts): only a namespace or the objects a label selector selects, and only
   * what `transform` keeps of each; each selection one more informer of the kind (a partition), read as one store.
   * Partitions must be declared before any controller or watch of the kind, which would otherwise cache all of it.
   *
   * ```ts
   * manager.cache(Kinds.Secret, { labelSelector: 'c5c3.io/keystoneuser-name' });          // full objects
   * manager.cache(metadataOf(Kinds.Secret), { labelSelector: '!c5c3.io/keystoneuser-name' }); // metadata of the rest
   * ```
   */
  cache<T extends KubeObject>(kind: ResourceKind<T>, options: CacheOptions<T> = {}): void {
    this.caches.cache(kind, options);
  }

  /** Adds a named index to a kind's cache (every partition), for `cluster.list(kind, { index })` and `byIndex` mappers. */
  index<T extends KubeObject>(kind: ResourceKind<T>, name: string, fn: IndexFunction<T>): void {
    this.caches.index(kind, name, fn);
  }

  /** The cache of a kind (its partitions read as one), or undefined when nothing caches it. */
  storeOf<T extends KubeObject>(kind: ResourceKind<T>): StoreReader<T> | undefined {
    return this.caches.storeOf(kind);
  }

  /**
   * Caches `kinds` per namespace, in the namespaces `wanted` names for each cluster, which are computed again whenever a
   * `dependsOn` kind changes (issue 34: the operator's Secrets, only where ControlPlanes say it needs them). Reads of
   * such a kind see the objects of the namespaces cached now (and of any cluster-wide partition of it); a namespace's
   * state is {@link namespaceAccess}. Before {@link start} only; once per manager.
   */
  cacheByNamespace(options: NamespacedCacheOptions): void {
    if (this.started) throw new Error('cacheByNamespace: declare it before the manager starts');
    if (this.caches.namespaced) throw new Error('cacheByNamespace: declared already');
    this.caches.cacheByNamespace(options, () => this.refreshNamespaces());
  }

  /** What the per-namespace caches of `namespace` on `cluster` hold; undefined when no kind is cached per namespace. */
  namespaceAccess(cluster: string, namespace: string): NamespaceAccess | undefined {
    if (!this.caches.namespaced) return undefined;
    return this.scopedOf(cluster)?.access(namespace) ?? { state: 'unwatched' };
  }

  /** The namespaces cached per namespace on `cluster`, sorted. */
  cachedNamespaces(cluster: string = MANAGEMENT): string[] {
    return this.scopedOf(cluster)?.namespaces() ?? [];
  }

  /** Computes the wanted namespaces of every cluster again and starts or stops their caches (cheap when nothing changed). */
  refreshNamespaces(): void {
    const declared = this.caches.namespaced;
    if (!declared || this.stopping) return;
    this.caches.scoped?.set(declared.wanted(MANAGEMENT));
    this.targets.refreshNamespaces();
  }

  /**
   * Serves a registered target cluster through `api` (its kubeconfig's connection); see ./engagement.ts. Resolves once
   * its caches have synced; rejects when it is disengaged before.
   */
  engage(name: string, api: KubeApi, options: EngageOptions = {}): Promise<void> {
    return this.targets.engage(name, api, options);
  }

  /** Whether a target cluster's API server answers (as its informers last found); true for the management cluster. */
  connected(name: string): boolean {
    return name === MANAGEMENT || this.targets.connected(name);
  }

  /** Stops serving a target cluster: its informers stop and its caches are dropped (./engagement.ts). */
  disengage(name: string): Promise<void> {
    return this.targets.disengage(name);
  }

  /**
   * Calls `listener` with a target cluster's name once it is disengaged (deregistered, its kubeconfig unusable, or the
   * manager stopping): what a controller keeps per object of that cluster (memory, per-object metric series) can go.
   */
  onClusterGone(listener: (name: string) => void): void {
    this.clusterGone.push(listener);
  }

  /** The cluster of that name: the management cluster for {@link MANAGEMENT}, else an engaged target cluster whose caches synced. */
  clusterNamed(name: string): Cluster | undefined {
    return name === MANAGEMENT ? this.cluster : this.targets.cluster(name);
  }

  /** The engaged target clusters whose caches have synced, sorted by name. */
  targetClusters(): string[] {
    return this.targets.ready().map((t) => t.name);
  }

  /** A StatusWriter that records Events on condition transitions. */
  statusWriter(options: EventRecorderOptions = {}): StatusWriter {
    return new StatusWriter(this.cluster, new EventRecorder(this.cluster, { logger: this.logger, ...options }));
  }

  /** The caches that have not synced yet (a kind's name once, however many of its partitions are behind). */
  unsynced(): string[] {
    return [...new Set(this.caches.allInformers().filter((i) => !i.synced).map((i) => cacheName(i.kind)))];
  }

  /** Resolves when every cache has synced. */
  async waitForCacheSync(): Promise<void> {
    await Promise.all(this.caches.allInformers().map((i) => i.waitForSync()));
  }

  /** Starts the informers and the election (or, without election, the controllers once the caches synced). */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (const informer of this.caches.allInformers()) informer.start({ resync: this.caches.primaries.has(kindId(informer.kind)) });
    this.refreshNamespaces();
    this.logger.info('manager started', { kinds: [...new Set(this.caches.allInformers().map((i) => cacheName(i.kind)))].join(','), controllers: this.controllers.map((c) => c.name).join(',') });
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
    this.waits.stop();
    const timeout = this.options.shutdownTimeoutMs ?? 20_000;
    const drained = (await Promise.all(this.controllers.map((c) => c.stop(timeout)))).every((d) => d);
    let released = false;
    if (!drained) this.logger.warn('reconciles still in flight at the shutdown deadline; the lease is left to expire', { shutdownTimeoutMs: timeout });
    else if (this.elector) released = await this.elector.release();
    this.metrics.leader(false);
    await this.targets.disengageAll();
    await Promise.all([...this.caches.allInformers().map((i) => i.stop()), this.caches.scoped?.stop()]);
    this.logger.info('manager stopped', { drained, released });
    return { drained, released };
  }

  private async startControllers(): Promise<void> {
    await this.waitForCacheSync();
    if (this.stopping || this.controllersStarted) return;
    this.controllersStarted = true;
    for (const controller of this.controllers) controller.start();
  }

  private scopedOf(cluster: string) {
    return cluster === MANAGEMENT ? this.caches.scoped : this.targets.scopedOf(cluster);
  }

  /** Every cluster's caches, for the mappers. */
  private fleet(): FleetReader {
    return {
      readsOf: (cluster) => (cluster === MANAGEMENT ? this.cluster : this.clusterNamed(cluster)),
      targets: () => this.targetClusters(),
    };
  }

  private requireApi(): KubeApi {
    if (!this.api) throw new Error('the manager needs a KubeApi (or test doubles for every part)');
    return this.api;
  }
}
