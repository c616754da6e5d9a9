/**
 * The management cluster's caches, as the manager declares them: one informer per kind, or one per declared selection
 * of a kind (a partition: a kind cached whole only where labels select it, and as metadata only elsewhere,
 * ./partition.ts), read as one store; named indexes; and the kinds cached per namespace, in the namespaces that change
 * at run time (./namespaces.ts). Target clusters cache the same partitions (./engagement.ts).
 */
import type { KubeApi, Selection } from '../../kube/api';
import type { KubeObject, ResourceKind } from '../../kube/object';
import { MergedStore, type IndexFunction, type StoreReader } from '../../kube/store';
import { MANAGEMENT, type ClusterScope } from './clusters';
import { Informer, listWatchOf, type ListWatch } from './informer';
import type { Logger } from './log';
import { kindId, type MapperRegistry } from './mapper';
import type { OperatorMetrics } from './metrics';
import { NamespaceCaches, ScopedStore, type NamespaceAccess, type NamespaceShare } from './namespaces';

/** One informer's share of a kind: a selection of it and what the cache keeps of each object. */
export interface CacheOptions<T extends KubeObject = KubeObject> extends Selection {
  /** What the cache keeps of each object (see {@link InformerOptions.transform}). @default the whole object */
  readonly transform?: (object: T) => T;
  /** `all`: the same share is cached on every engaged target cluster too. @default 'management' */
  readonly clusters?: ClusterScope;
}

/** A kind's informer and the selection it lists. */
export interface Partition {
  readonly selection: Selection;
  readonly transform?: (object: KubeObject) => KubeObject;
  readonly informer: Informer;
}

/** Kinds cached per namespace, for namespaces that change at run time (see {@link Caches.cacheByNamespace}). */
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

/** A selection as text, to compare two and to say which one a log line or an error is about. */
export const selectionText = (selection: Selection) => JSON.stringify({ namespace: selection.namespace, labelSelector: selection.labelSelector });

/** What the caches run with: the manager's settings and parts. */
export interface CachesContext {
  readonly listWatch?: <T extends KubeObject>(kind: ResourceKind<T>, selection: Selection) => ListWatch<T>;
  readonly resyncPeriodMs: number;
  readonly logger: Logger;
  readonly metrics: OperatorMetrics;
  readonly registry: () => MapperRegistry;
  readonly api: () => KubeApi;
  /** Whether the manager has started: no kind is cached after that. */
  readonly started: () => boolean;
}

export class Caches {
  /** Each cached kind's informers: one for the whole kind, or one per selection declared with {@link cache}. */
  readonly partitions = new Map<string, Partition[]>();
  /** The kinds some controller reconciles: only their informers resync. */
  readonly primaries = new Set<string>();
  /** The kinds cached on every engaged target cluster too. */
  readonly everyCluster = new Set<string>();
  /** The named indexes of every kind. */
  readonly indexes = new Map<string, { readonly name: string; readonly fn: IndexFunction }[]>();
  /** The kinds cached per namespace (as declared), and the management cluster's per-namespace caches. */
  namespaced: (NamespacedCacheOptions & { readonly ids: ReadonlySet<string> }) | undefined;
  scoped: NamespaceCaches | undefined;
  private readonly stores = new Map<string, StoreReader>();

  constructor(private readonly context: CachesContext) {}

  /**
   * Caches a kind, or a share of it: only a namespace or the objects a label selector selects, and only what
   * `transform` keeps of each. Each call with another selection adds one more informer of the kind (a partition), so a
   * kind can be cached as the union of several selections (label selectors cannot say "this label or that one"); reads
   * of the kind see its partitions as one store, and a watch of the kind hears every partition. Cache the metadata-only
   * view of a kind with `cache(metadataOf(kind), ...)`: a cache of its own, read and watched as that view. Partitions
   * must be declared before any controller or watch of the kind, which would otherwise cache all of it.
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

  /** The objects each cache holds, by cache name (the informer-size metric). */
  sizes(): Record<string, number> {
    const sizes: Record<string, number> = {};
    for (const parts of this.partitions.values()) {
      const kind = parts[0].informer.kind;
      sizes[cacheName(kind)] = this.storeOf(kind)?.size ?? 0;
    }
    for (const kind of this.namespaced?.kinds ?? []) sizes[cacheName(kind)] = this.storeOf(kind)?.size ?? 0;
    return sizes;
  }

  /**
   * Caches `kinds` per namespace (see the manager's `cacheByNamespace`); `refresh` computes the wanted namespaces again,
   * on each event of a `dependsOn` kind.
   */
  cacheByNamespace(options: NamespacedCacheOptions, refresh: () => void): void {
    const ids = new Set(options.kinds.map(kindId));
    for (const id of ids) if (this.partitions.has(id)) throw new Error(`${id} is already cached cluster-wide; declare its namespaced caches before any controller, watch or cache of it`);
    this.namespaced = { ...options, ids };
    if (options.clusters === 'all') for (const id of ids) this.everyCluster.add(id);
    this.scoped = this.namespaceCaches(MANAGEMENT, (kind, selection) => (this.context.listWatch ? this.context.listWatch(kind, selection) : listWatchOf(this.context.api(), kind, selection)));
    const handler = { added: refresh, updated: refresh, deleted: refresh };
    for (const kind of options.dependsOn) for (const informer of this.informers(kind)) informer.addHandler(handler);
  }

  /** The per-namespace caches of `cluster`, listing and watching through `listWatch`. */
  namespaceCaches(cluster: string, listWatch: (kind: ResourceKind<KubeObject>, selection: Selection) => ListWatch<KubeObject>): NamespaceCaches {
    const declared = this.namespaced as NamespacedCacheOptions;
    const logger = cluster === MANAGEMENT ? this.context.logger : this.context.logger.child({ cluster });
    return new NamespaceCaches({
      listWatch,
      handlerFor: (kind) => this.context.registry().handlerFor(kind, cluster),
      indexesOf: (kind) => this.indexes.get(kindId(kind)) ?? [],
      resync: (kind) => this.primaries.has(kindId(kind)),
      resyncPeriodMs: this.context.resyncPeriodMs,
      logger,
      onRelist: (kind, reason) => this.context.metrics.relisted(cacheName(kind), reason),
      onAccess: (namespace, access) => declared.onAccess?.(cluster, namespace, access),
    });
  }

  /** Every informer of the management cluster's partitions. */
  allInformers(): Informer[] {
    return [...this.partitions.values()].flat().map((p) => p.informer);
  }

  /** The informers of a kind: its partitions, or (none declared) one informer of the whole kind, made now. */
  informers<T extends KubeObject>(kind: ResourceKind<T>): Informer<T>[] {
    // A kind cached per namespace has no cluster-wide informer (its list would need a cluster-wide grant).
    if (!this.partitions.has(kindId(kind)) && this.namespaced?.ids.has(kindId(kind))) return [];
    const parts = this.partitions.get(kindId(kind)) ?? [this.addPartition(kind, {}, undefined)];
    return parts.map((p) => p.informer as unknown as Informer<T>);
  }

  private addPartition(kind: ResourceKind<KubeObject>, selection: Selection, transform: ((object: KubeObject) => KubeObject) | undefined): Partition {
    const id = kindId(kind);
    if (this.context.started()) throw new Error(`${cacheName(kind)}: kinds are cached only when declared before the manager starts`);
    const name = cacheName(kind);
    const listWatch = this.context.listWatch ? this.context.listWatch(kind, selection) : listWatchOf(this.context.api(), kind, selection);
    const { logger, metrics } = this.context;
    const informer = new Informer(kind, listWatch, {
      resyncPeriodMs: this.context.resyncPeriodMs,
      logger: selection.namespace || selection.labelSelector ? logger.child({ selection: selectionText(selection) }) : logger,
      onRelist: (reason) => metrics.relisted(name, reason),
      ...(transform ? { transform } : {}),
    });
    const partition: Partition = { selection, informer, ...(transform ? { transform } : {}) };
    const parts = [...(this.partitions.get(id) ?? []), partition];
    this.partitions.set(id, parts);
    this.stores.delete(id);
    metrics.informerSynced(name, false);
    void Promise.all(parts.map((p) => p.informer.waitForSync())).then(() => {
      // Synced once every partition declared so far is (a partition declared later sets it back to 0 first).
      if (parts.length === this.partitions.get(id)?.length) metrics.informerSynced(name, true);
    });
    informer.addHandler(this.context.registry().handlerFor(kind));
    return partition;
  }
}
