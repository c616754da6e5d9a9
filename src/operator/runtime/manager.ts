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
 * Registered target clusters are engaged and disengaged at run time ({@link Manager.engage}, as multicluster-runtime's
 * providers engage clusters): each gets its own informers for the kinds declared with `clusters: 'all'` (a controller's
 * primary kind, a watch, a cache; every partition of it), its objects are reconciled by the same controllers once its caches have synced, with
 * the cluster in the request and in the work-queue key (clusters.ts), and its writes go to its own API server. Leader
 * election stays on the management cluster: one leader serves every cluster.
 */
import type { KubeApi, Selection } from '../../kube/api';
import type { Cluster } from '../../kube/cluster';
import { LiveCluster } from '../../kube/live-cluster';
import type { KubeObject, ResourceKind } from '../../kube/object';
import { MergedStore, type IndexFunction, type StoreReader } from '../../kube/store';
import { MANAGEMENT, clusterKey, type ClusterScope, type FleetReader } from './clusters';
import { Controller, type ControllerSpec } from './controller';
import { EventRecorder, type EventRecorderOptions } from './events';
import { Informer, listWatchOf, type ListWatch } from './informer';
import { LeaderElector, leaseClientOf, type LeaseClient } from './leader';
import { errorMessage, silentLogger, type Logger } from './log';
import { MapperRegistry, kindId, self, type Mapper } from './mapper';
import { NamespaceCaches, ScopedStore, type NamespaceAccess, type NamespaceShare } from './namespaces';
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

/** One informer's share of a kind: a selection of it and what the cache keeps of each object. */
export interface CacheOptions<T extends KubeObject = KubeObject> extends Selection {
  /** What the cache keeps of each object (see {@link InformerOptions.transform}). @default the whole object */
  readonly transform?: (object: T) => T;
  /** `all`: the same share is cached on every engaged target cluster too. @default 'management' */
  readonly clusters?: ClusterScope;
}

/** A kind's informer and the selection it lists. */
interface Partition {
  readonly selection: Selection;
  readonly transform?: (object: KubeObject) => KubeObject;
  readonly informer: Informer;
}

/** Kinds cached per namespace, for namespaces that change at run time (see {@link Manager.cacheByNamespace}). */
export interface NamespacedCacheOptions {
  /** The kinds whose caches are (also) per namespace; no cluster-wide informer is made for them. */
  readonly kinds: readonly ResourceKind<KubeObject>[];
  /** The namespaces to cache on a cluster ({@link MANAGEMENT} or a target cluster's name), each with its shares. */
  readonly wanted: (cluster: string) => ReadonlyMap<string, readonly NamespaceShare[]>;
  /** The kinds whose changes may change `wanted`: it is computed again on each of their events. */
  readonly dependsOn: readonly ResourceKind<KubeObject>[];
  /** `all`: target clusters cache per namespace too. @default 'management' */
  readonly clusters?: ClusterScope;
  /** Each change of a namespace's state on a cluster (see ./namespaces.ts). */
  readonly onAccess?: (cluster: string, namespace: string, access: NamespaceAccess) => void;
}

/** The name of a kind's cache in metrics, logs and `/readyz`: `Secret`, or `Secret/metadata` for its metadata-only view. */
export function cacheName(kind: ResourceKind<KubeObject>): string {
  return kind.metadataOnly ? `${kind.kind}/metadata` : kind.kind;
}

const selectionText = (selection: Selection) => JSON.stringify({ namespace: selection.namespace, labelSelector: selection.labelSelector });

/** How a shutdown went. */
export interface ShutdownResult {
  /** Every reconcile in flight finished within the deadline. */
  readonly drained: boolean;
  /** The Lease was released (only when leading and drained). */
  readonly released: boolean;
}

/** A registered target cluster the manager serves (see {@link Manager.engage}). */
interface Engagement {
  readonly name: string;
  /** Each kind's informers on the cluster, one per partition of the kind on the management cluster. */
  readonly informers: Map<string, Informer[]>;
  readonly stores: Map<string, StoreReader>;
  /** The per-namespace caches on the cluster (the namespaced kinds declared for every cluster). */
  readonly scoped?: NamespaceCaches;
  readonly cluster: Cluster;
  /** Every cache has synced: its objects are reconciled and its changes mapped. */
  ready: boolean;
  stopped: boolean;
  /** False while a list or watch of its API server fails (its orders are not reconciled then). */
  connected: boolean;
  /** Resolves once the cluster is disengaged. */
  readonly stoppedSignal: Promise<void>;
  readonly stop: () => void;
}

/** What {@link Manager.engage} reports about a target cluster's connection. */
export interface EngageOptions {
  /**
   * Called when the cluster's API server answers for the first time or again (`connected` true: every informer's last
   * list succeeded) and when it stops answering (false, with the error's text: an informer's list or watch failed).
   * @default none
   */
  readonly onHealth?: (connected: boolean, error?: string) => void;
}

export class Manager {
  readonly cluster: Cluster;
  readonly metrics: OperatorMetrics;
  readonly logger: Logger;
  /** Resolves when this replica loses the Lease it held (the process should exit and restart as a standby). */
  readonly lostLeadership: Promise<void>;
  /** Each cached kind's informers: one for the whole kind, or one per selection declared with {@link cache}. */
  private readonly partitions = new Map<string, Partition[]>();
  private readonly stores = new Map<string, StoreReader>();
  /** The kinds some controller reconciles: only their informers resync. */
  private readonly primaries = new Set<string>();
  /** The kinds cached on every engaged target cluster too, and the named indexes of every kind. */
  private readonly everyCluster = new Set<string>();
  private readonly indexes = new Map<string, { readonly name: string; readonly fn: IndexFunction }[]>();
  private readonly targets = new Map<string, Engagement>();
  private readonly controllers: Controller[] = [];
  private readonly registry: MapperRegistry;
  /** The controllers whose primary kind is reconciled on every cluster, with that kind. */
  private readonly multiClusterControllers = new Map<Controller, ResourceKind<KubeObject>>();
  private readonly elector: LeaderElector | undefined;
  /** The kinds cached per namespace, and the management cluster's per-namespace caches. */
  private namespaced: (NamespacedCacheOptions & { readonly ids: ReadonlySet<string> }) | undefined;
  private scoped: NamespaceCaches | undefined;
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
    const caches = { storeOf: <T extends KubeObject>(kind: ResourceKind<T>) => this.storeOf(kind) };
    this.cluster = options.cluster
      ? options.cluster(caches)
      : new LiveCluster(this.requireApi(), caches, {
        reportingController: REPORTING_CONTROLLER,
        reportingInstance: options.identity,
        onWrite: (verb, kind) => this.metrics.wrote(kind, verb),
      });
    this.registry = new MapperRegistry(this.fleet(), this.logger);
    this.metrics.cacheSizesFrom(() => {
      const sizes: Record<string, number> = {};
      for (const parts of this.partitions.values()) {
        const kind = parts[0].informer.kind;
        sizes[cacheName(kind)] = this.storeOf(kind)?.size ?? 0;
      }
      for (const kind of this.namespaced?.kinds ?? []) sizes[cacheName(kind)] = this.storeOf(kind)?.size ?? 0;
      return sizes;
    });
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
    this.informers(spec.kind);
    this.primaries.add(kindId(spec.kind));
    const scope: ClusterScope = spec.clusters ?? 'management';
    if (scope === 'all') this.everyCluster.add(kindId(spec.kind));
    const concurrency = spec.concurrency ?? this.options.workersPerKind?.[spec.kind.kind] ?? this.options.workers ?? 1;
    const controller = new Controller({ ...(spec as unknown as ControllerSpec), concurrency }, {
      metrics: this.metrics,
      logger: this.logger,
      keys: () => [...(this.storeOf(spec.kind)?.keys() ?? []), ...(scope === 'all' ? this.readyTargets().flatMap((t) => this.targetKeys(t, spec.kind)) : [])],
    });
    const target = (key: string) => controller.enqueue(key);
    this.registry.register(spec.kind, { target, mapper: self(), controller: name, resync: true, clusters: scope });
    for (const watch of spec.watches ?? []) {
      this.informers(watch.kind);
      if (watch.clusters === 'all') this.everyCluster.add(kindId(watch.kind));
      const mapper: Mapper = typeof watch.map === 'function' ? { map: watch.map as Mapper['map'] } : (watch.map as Mapper);
      for (const index of mapper.indexes ?? []) this.index(index.kind, index.name, index.fn);
      this.registry.register(watch.kind, { target, mapper, controller: name, resync: false, clusters: watch.clusters ?? 'management' });
    }
    if (scope === 'all') this.multiClusterControllers.set(controller, spec.kind);
    this.controllers.push(controller);
    return controller;
  }

  /**
   * Caches a kind, or a share of it: only a namespace or the objects a label selector selects, and only what
   * `transform` keeps of each. Each call with another selection adds one more informer of the kind (a partition), so a
   * kind can be cached as the union of several selections (label selectors cannot say "this label or that one"); reads
   * of the kind see its partitions as one store, and a watch of the kind hears every partition. Cache the metadata-only
   * view of a kind with `cache(metadataOf(kind), ...)`: a cache of its own, read and watched as that view. Partitions
   * must be declared before any controller or watch of the kind, which would otherwise cache all of it.
   *
   * ```ts
   * manager.cache(Kinds.Secret, { labelSelector: 'c5c3.io/keystoneuser-name' });          // full objects
   * manager.cache(metadataOf(Kinds.Secret), { labelSelector: '!c5c3.io/keystoneuser-name' }); // metadata of the rest
   * ```
   */
  cache<T extends KubeObject>(kind: ResourceKind<T>, options: CacheOptions<T> = {}): void {
    const id = kindId(kind);
    const { transform, clusters, ...selection } = options;
    if (clusters === 'all') this.everyCluster.add(id);
    const existing = this.partitions.get(id) ?? [];
    const same = existing.find((p) => selectionText(p.selection) === selectionText(selection));
    if (same) {
      if (same.transform !== transform) throw new Error(`${cacheName(kind)} is already cached with the selection ${selectionText(selection)} and another transform`);
      return;
    }
    const whole = existing.find((p) => !p.selection.namespace && !p.selection.labelSelector);
    if (whole || (existing.length > 0 && !selection.namespace && !selection.labelSelector)) {
      throw new Error(`${cacheName(kind)} is already cached ${whole ? 'whole' : `by the selections ${existing.map((p) => selectionText(p.selection)).join(', ')}`}; declare its partitions before any controller or watch of it`);
    }
    this.addPartition(kind, selection, transform as ((object: KubeObject) => KubeObject) | undefined);
  }

  /** Adds a named index to a kind's cache (every partition), for `cluster.list(kind, { index })` and `byIndex` mappers. */
  index<T extends KubeObject>(kind: ResourceKind<T>, name: string, fn: IndexFunction<T>): void {
    for (const informer of this.informers(kind)) informer.store.addIndex(name, fn as IndexFunction);
    const id = kindId(kind);
    this.indexes.set(id, [...(this.indexes.get(id) ?? []), { name, fn: fn as IndexFunction }]);
  }

  /** The cache of a kind (its partitions read as one), or undefined when nothing caches it. */
  storeOf<T extends KubeObject>(kind: ResourceKind<T>): StoreReader<T> | undefined {
    const id = kindId(kind);
    let store = this.stores.get(id);
    if (!store) {
      const parts = this.partitions.get(id);
      if (this.namespaced?.ids.has(id)) {
        store = new ScopedStore(kind, () => (this.partitions.get(id) ?? []).map((p) => p.informer.store), () => this.scoped);
      } else {
        if (!parts) return undefined;
        store = parts.length === 1 ? parts[0].informer.store : new MergedStore(parts.map((p) => p.informer.store));
      }
      this.stores.set(id, store);
    }
    return store as unknown as StoreReader<T>;
  }

  /**
   * Caches `kinds` per namespace, in the namespaces `wanted` names for each cluster, which are computed again whenever a
   * `dependsOn` kind changes (issue 34: the operator's Secrets, only where ControlPlanes say it needs them). Reads of
   * such a kind see the objects of the namespaces cached now (and of any cluster-wide partition of it); a namespace's
   * state is {@link namespaceAccess}. Before {@link start} only; once per manager.
   */
  cacheByNamespace(options: NamespacedCacheOptions): void {
    if (this.started) throw new Error('cacheByNamespace: declare it before the manager starts');
    if (this.namespaced) throw new Error('cacheByNamespace: declared already');
    const ids = new Set(options.kinds.map(kindId));
    for (const id of ids) if (this.partitions.has(id)) throw new Error(`${id} is already cached cluster-wide; declare its namespaced caches before any controller, watch or cache of it`);
    this.namespaced = { ...options, ids };
    if (options.clusters === 'all') for (const id of ids) this.everyCluster.add(id);
    this.scoped = this.namespaceCaches(MANAGEMENT, (kind, selection) => (this.options.listWatch ? this.options.listWatch(kind, selection) : listWatchOf(this.requireApi(), kind, selection)));
    const refresh = { added: () => this.refreshNamespaces(), updated: () => this.refreshNamespaces(), deleted: () => this.refreshNamespaces() };
    for (const kind of options.dependsOn) for (const informer of this.informers(kind)) informer.addHandler(refresh);
  }

  /** What the per-namespace caches of `namespace` on `cluster` hold; undefined when no kind is cached per namespace. */
  namespaceAccess(cluster: string, namespace: string): NamespaceAccess | undefined {
    if (!this.namespaced) return undefined;
    const caches = cluster === MANAGEMENT ? this.scoped : this.targets.get(cluster)?.scoped;
    return caches?.access(namespace) ?? { state: 'unwatched' };
  }

  /** The namespaces cached per namespace on `cluster`, sorted. */
  cachedNamespaces(cluster: string = MANAGEMENT): string[] {
    const caches = cluster === MANAGEMENT ? this.scoped : this.targets.get(cluster)?.scoped;
    return caches?.namespaces() ?? [];
  }

  /** Computes the wanted namespaces of every cluster again and starts or stops their caches (cheap when nothing changed). */
  refreshNamespaces(): void {
    const declared = this.namespaced;
    if (!declared || this.stopping) return;
    this.scoped?.set(declared.wanted(MANAGEMENT));
    for (const engagement of this.targets.values()) if (!engagement.stopped) engagement.scoped?.set(declared.wanted(engagement.name));
  }

  private namespaceCaches(cluster: string, listWatch: (kind: ResourceKind<KubeObject>, selection: Selection) => ListWatch<KubeObject>): NamespaceCaches {
    const declared = this.namespaced as NamespacedCacheOptions;
    const logger = cluster === MANAGEMENT ? this.logger : this.logger.child({ cluster });
    return new NamespaceCaches({
      listWatch,
      handlerFor: (kind) => this.registry.handlerFor(kind, cluster),
      indexesOf: (kind) => this.indexes.get(kindId(kind)) ?? [],
      resync: (kind) => this.primaries.has(kindId(kind)),
      resyncPeriodMs: this.options.resyncPeriodMs ?? 3_600_000,
      logger,
      onRelist: (kind, reason) => this.metrics.relisted(cacheName(kind), reason),
      onAccess: (namespace, access) => declared.onAccess?.(cluster, namespace, access),
    });
  }

  /**
   * Serves a registered target cluster through `api` (its kubeconfig's connection): starts its informers of the kinds
   * declared for every cluster and, once every one of them has synced, reconciles its objects with the controllers
   * whose `clusters` is `all` and maps its changes. A cluster of that name already engaged is disengaged first (a
   * changed kubeconfig reconnects). Resolves once its caches have synced; rejects when it is disengaged before.
   * An unreachable API server never fails it: its informers retry with backoff, and `onHealth` says how it goes.
   */
  async engage(name: string, api: KubeApi, options: EngageOptions = {}): Promise<void> {
    if (name === MANAGEMENT || name.includes(':')) throw new Error(`a target cluster needs a name without ":": ${JSON.stringify(name)}`);
    if (this.stopping) throw new Error(`cluster ${name}: the manager is shutting down`);
    // Replaced at once (calls take effect in the order they are made); the old informers stop before the new ones start.
    const previous = this.targets.get(name);
    const informers = new Map<string, Informer[]>();
    const stores = new Map<string, StoreReader>();
    const scoped = this.namespaced && this.namespaced.clusters === 'all' ? this.namespaceCaches(name, (kind, selection) => listWatchOf(api, kind, selection)) : undefined;
    const caches = {
      storeOf: <T extends KubeObject>(kind: ResourceKind<T>) => {
        const id = kindId(kind);
        let store = stores.get(id);
        const parts = informers.get(id);
        if (!store && scoped && this.namespaced?.ids.has(id)) stores.set(id, (store = new ScopedStore(kind, () => (informers.get(id) ?? []).map((i) => i.store), () => scoped)));
        if (!store && parts) stores.set(id, (store = parts.length === 1 ? parts[0].store : new MergedStore(parts.map((i) => i.store))));
        return store as unknown as StoreReader<T> | undefined;
      },
    };
    let stop: () => void = () => undefined;
    const stoppedSignal = new Promise<void>((resolve) => (stop = resolve));
    const engagement: Engagement = {
      name,
      informers,
      stores,
      ...(scoped ? { scoped } : {}),
      stoppedSignal,
      stop: () => stop(),
      cluster: new LiveCluster(api, caches, { reportingController: REPORTING_CONTROLLER, reportingInstance: this.options.identity, onWrite: (verb, kind) => this.metrics.wrote(kind, verb) }),
      ready: false,
      stopped: false,
      connected: true,
    };
    const logger = this.logger.child({ cluster: name });
    // The cluster's connection, from its informers: down while any of them fails, up again once all of them listed.
    const failing = new Map<string, string>();
    let reported: boolean | undefined;
    const health = (kind: string) => (ok: boolean, error?: string) => {
      if (engagement.stopped) return;
      if (ok) failing.delete(kind);
      else failing.set(kind, error ?? 'list or watch failed');
      const connected = failing.size === 0;
      if (connected === reported) return;
      const before = reported;
      reported = connected;
      engagement.connected = connected;
      options.onHealth?.(connected, connected ? undefined : [...failing.values()][0]);
      // Back after an outage: its orders are looked at again at once (their changes meanwhile relisted as updates).
      if (connected && before === false && engagement.ready) this.enqueueAll(engagement);
    };
    for (const id of this.everyCluster) {
      // The same partitions as on the management cluster: each selection, with what its cache keeps of an object.
      for (const part of this.partitions.get(id) ?? []) {
        const kind = part.informer.kind;
        const informer = new Informer(kind, listWatchOf(api, kind, part.selection), {
          resyncPeriodMs: this.options.resyncPeriodMs ?? 3_600_000,
          logger,
          onRelist: (reason) => this.metrics.relisted(cacheName(kind), reason),
          onHealth: health(`${cacheName(kind)} ${selectionText(part.selection)}`),
          ...(part.transform ? { transform: part.transform } : {}),
        });
        for (const index of this.indexes.get(id) ?? []) informer.store.addIndex(index.name, index.fn);
        informer.addHandler(this.registry.handlerFor(kind, name));
        informers.set(id, [...(informers.get(id) ?? []), informer]);
      }
    }
    this.targets.set(name, engagement);
    if (previous) await this.stopEngagement(previous);
    if (engagement.stopped) throw new Error(`cluster ${name} was disengaged before its caches synced`);
    for (const informer of [...informers.values()].flat()) informer.start({ resync: this.primaries.has(kindId(informer.kind)) });
    scoped?.set((this.namespaced as NamespacedCacheOptions).wanted(name));
    logger.info('cluster engaged', { kinds: [...informers.values()].flat().map((i) => cacheName(i.kind)).join(',') });
    await Promise.race([Promise.all([...informers.values()].flat().map((i) => i.waitForSync())), engagement.stoppedSignal]);
    if (engagement.stopped) throw new Error(`cluster ${name} was disengaged before its caches synced`);
    engagement.ready = true;
    logger.info('cluster caches synced', { objects: [...informers.values()].flat().reduce((n, i) => n + i.store.size, 0) });
    // Its objects are reconciled as the management cluster's are when the controllers start.
    this.enqueueAll(engagement);
  }

  /** Whether a target cluster's API server answers (as its informers last found); true for the management cluster. */
  connected(name: string): boolean {
    return name === MANAGEMENT || this.targets.get(name)?.connected === true;
  }

  /**
   * Stops serving a target cluster: its informers stop and its caches are dropped; keys of it still queued reconcile
   * nothing. What its orders made on the management cluster stays (spec, Deletion Semantics).
   */
  async disengage(name: string): Promise<void> {
    const engagement = this.targets.get(name);
    if (!engagement) return;
    this.targets.delete(name);
    await this.stopEngagement(engagement);
  }

  private async stopEngagement(engagement: Engagement): Promise<void> {
    engagement.stopped = true;
    engagement.ready = false;
    engagement.stop();
    await Promise.all([...[...engagement.informers.values()].flat().map((i) => i.stop()), engagement.scoped?.stop()]);
    this.logger.info('cluster disengaged', { cluster: engagement.name });
  }

  /** The cluster of that name: the management cluster for {@link MANAGEMENT}, else an engaged target cluster whose caches synced. */
  clusterNamed(name: string): Cluster | undefined {
    if (name === MANAGEMENT) return this.cluster;
    const engagement = this.targets.get(name);
    return engagement?.ready ? engagement.cluster : undefined;
  }

  /** The engaged target clusters whose caches have synced, sorted by name. */
  targetClusters(): string[] {
    return this.readyTargets().map((t) => t.name);
  }

  /** A StatusWriter that records Events on condition transitions. */
  statusWriter(options: EventRecorderOptions = {}): StatusWriter {
    return new StatusWriter(this.cluster, new EventRecorder(this.cluster, { logger: this.logger, ...options }));
  }

  /** The caches that have not synced yet (a kind's name once, however many of its partitions are behind). */
  unsynced(): string[] {
    return [...new Set(this.allInformers().filter((i) => !i.synced).map((i) => cacheName(i.kind)))];
  }

  /** Resolves when every cache has synced. */
  async waitForCacheSync(): Promise<void> {
    await Promise.all(this.allInformers().map((i) => i.waitForSync()));
  }

  /** Starts the informers and the election (or, without election, the controllers once the caches synced). */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (const informer of this.allInformers()) informer.start({ resync: this.primaries.has(kindId(informer.kind)) });
    this.refreshNamespaces();
    this.logger.info('manager started', { kinds: [...new Set(this.allInformers().map((i) => cacheName(i.kind)))].join(','), controllers: this.controllers.map((c) => c.name).join(',') });
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
    await Promise.all([...this.targets.keys()].map((name) => this.disengage(name)));
    await Promise.all([...this.allInformers().map((i) => i.stop()), this.scoped?.stop()]);
    this.logger.info('manager stopped', { drained, released });
    return { drained, released };
  }

  private async startControllers(): Promise<void> {
    await this.waitForCacheSync();
    if (this.stopping || this.controllersStarted) return;
    this.controllersStarted = true;
    for (const controller of this.controllers) controller.start();
  }

  private allInformers(): Informer[] {
    return [...this.partitions.values()].flat().map((p) => p.informer);
  }

  /** The informers of a kind: its partitions, or (none declared) one informer of the whole kind, made now. */
  private informers<T extends KubeObject>(kind: ResourceKind<T>): Informer<T>[] {
    // A kind cached per namespace has no cluster-wide informer (its list would need a cluster-wide grant).
    if (!this.partitions.has(kindId(kind)) && this.namespaced?.ids.has(kindId(kind))) return [];
    const parts = this.partitions.get(kindId(kind)) ?? [this.addPartition(kind, {}, undefined)];
    return parts.map((p) => p.informer as unknown as Informer<T>);
  }

  private addPartition(kind: ResourceKind<KubeObject>, selection: Selection, transform: ((object: KubeObject) => KubeObject) | undefined): Partition {
    const id = kindId(kind);
    if (this.started) throw new Error(`${cacheName(kind)}: kinds are cached only when declared before the manager starts`);
    const name = cacheName(kind);
    const listWatch = this.options.listWatch ? this.options.listWatch(kind, selection) : listWatchOf(this.requireApi(), kind, selection);
    const informer = new Informer(kind, listWatch, {
      resyncPeriodMs: this.options.resyncPeriodMs ?? 3_600_000,
      logger: selection.namespace || selection.labelSelector ? this.logger.child({ selection: selectionText(selection) }) : this.logger,
      onRelist: (reason) => this.metrics.relisted(name, reason),
      ...(transform ? { transform } : {}),
    });
    const partition: Partition = { selection, informer, ...(transform ? { transform } : {}) };
    const parts = [...(this.partitions.get(id) ?? []), partition];
    this.partitions.set(id, parts);
    this.stores.delete(id);
    this.metrics.informerSynced(name, false);
    void Promise.all(parts.map((p) => p.informer.waitForSync())).then(() => {
      // Synced once every partition declared so far is (a partition declared later sets it back to 0 first).
      if (parts.length === this.partitions.get(id)?.length) this.metrics.informerSynced(name, true);
    });
    informer.addHandler(this.registry.handlerFor(kind));
    return partition;
  }

  /** Every cluster's caches, for the mappers. */
  private fleet(): FleetReader {
    return {
      readsOf: (cluster) => (cluster === MANAGEMENT ? this.cluster : this.clusterNamed(cluster)),
      targets: () => this.targetClusters(),
    };
  }

  private readyTargets(): Engagement[] {
    return [...this.targets.values()].filter((t) => t.ready).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Queues every object of a target cluster for the controllers that reconcile its kinds. */
  private enqueueAll(engagement: Engagement): void {
    for (const [controller, kind] of this.multiClusterControllers) for (const key of this.targetKeys(engagement, kind)) controller.enqueue(key);
  }

  /** The work-queue keys of a target cluster's cached objects of `kind`. */
  private targetKeys(engagement: Engagement, kind: ResourceKind<KubeObject>): string[] {
    const parts = engagement.informers.get(kindId(kind)) ?? [];
    const keys = parts.length === 1 ? parts[0].store.keys() : [...new Set(parts.flatMap((i) => i.store.keys()))];
    return keys.map((key) => clusterKey(engagement.name, key));
  }

  private requireApi(): KubeApi {
    if (!this.api) throw new Error('the manager needs a KubeApi (or test doubles for every part)');
    return this.api;
  }
}
