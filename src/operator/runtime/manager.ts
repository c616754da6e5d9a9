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
 */
import type { KubeApi, Selection } from '../../kube/api';
import type { Cluster } from '../../kube/cluster';
import { LiveCluster } from '../../kube/live-cluster';
import type { KubeObject, ResourceKind } from '../../kube/object';
import { MergedStore, type IndexFunction, type StoreReader } from '../../kube/store';
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
}

/** A kind's informer and the selection it lists. */
interface Partition {
  readonly selection: Selection;
  readonly transform?: (object: KubeObject) => KubeObject;
  readonly informer: Informer;
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
    const caches = { storeOf: <T extends KubeObject>(kind: ResourceKind<T>) => this.storeOf(kind) };
    this.cluster = options.cluster
      ? options.cluster(caches)
      : new LiveCluster(this.requireApi(), caches, {
        reportingController: REPORTING_CONTROLLER,
        reportingInstance: options.identity,
        onWrite: (verb, kind) => this.metrics.wrote(kind, verb),
      });
    this.registry = new MapperRegistry(this.cluster, this.logger);
    this.metrics.cacheSizesFrom(() => {
      const sizes: Record<string, number> = {};
      for (const parts of this.partitions.values()) {
        const kind = parts[0].informer.kind;
        sizes[cacheName(kind)] = this.storeOf(kind)?.size ?? 0;
      }
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
    const concurrency = spec.concurrency ?? this.options.workersPerKind?.[spec.kind.kind] ?? this.options.workers ?? 1;
    const controller = new Controller({ ...(spec as unknown as ControllerSpec), concurrency }, {
      metrics: this.metrics,
      logger: this.logger,
      keys: () => this.storeOf(spec.kind)?.keys() ?? [],
    });
    const target = (key: string) => controller.enqueue(key);
    this.registry.register(spec.kind, { target, mapper: self(), controller: name, resync: true });
    for (const watch of spec.watches ?? []) {
      this.informers(watch.kind);
      const mapper: Mapper = typeof watch.map === 'function' ? { map: watch.map as Mapper['map'] } : (watch.map as Mapper);
      for (const index of mapper.indexes ?? []) this.index(index.kind, index.name, index.fn);
      this.registry.register(watch.kind, { target, mapper, controller: name, resync: false });
    }
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
    const { transform, ...selection } = options;
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
  }

  /** The cache of a kind (its partitions read as one), or undefined when nothing caches it. */
  storeOf<T extends KubeObject>(kind: ResourceKind<T>): StoreReader<T> | undefined {
    const id = kindId(kind);
    let store = this.stores.get(id);
    if (!store) {
      const parts = this.partitions.get(id);
      if (!parts) return undefined;
      store = parts.length === 1 ? parts[0].informer.store : new MergedStore(parts.map((p) => p.informer.store));
      this.stores.set(id, store);
    }
    return store as unknown as StoreReader<T>;
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
    await Promise.all(this.allInformers().map((i) => i.stop()));
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

  private requireApi(): KubeApi {
    if (!this.api) throw new Error('the manager needs a KubeApi (or test doubles for every part)');
    return this.api;
  }
}
