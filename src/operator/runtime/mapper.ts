/**
 * Mappers turn a change of a watched object into the keys of the primary objects (the orders) to reconcile: the object
 * itself, the owners in its owner references, the order its labels name, or the orders a custom index of the primary
 * kind files under the watched object. The registry holds them per watched kind and hands out one informer handler per
 * kind that feeds the controllers' queues.
 */
import type { ClusterReader } from '../../kube/cluster';
import { groupOf, keyOf, objectKey, type KubeObject, type ObjectKey, type ResourceKind } from '../../kube/object';
import type { IndexFunction } from '../../kube/store';
import { MANAGEMENT, clusterKey, managementOnly, type ClusterObjectKey, type ClusterScope, type FleetReader } from './clusters';
import type { InformerHandler } from './informer';
import { errorMessage, silentLogger, type Logger } from './log';

/** Where a changed object lives, for a mapper that reaches across clusters. */
export interface MapContext {
  /** The changed object's cluster ({@link MANAGEMENT} for the management cluster). */
  readonly cluster: string;
  /** Every cluster's caches. */
  readonly fleet: FleetReader;
}

/**
 * The keys of the primary objects a watched object affects: a plain key names an object on the changed object's own
 * cluster (`reads` are that cluster's caches), a {@link ClusterObjectKey} one on another cluster.
 */
export type MapFunction<W extends KubeObject = KubeObject> = (object: W, reads: ClusterReader, context?: MapContext) => readonly (ObjectKey | ClusterObjectKey)[];

/** An index the mapper needs on a kind's cache. */
export interface IndexSpec {
  readonly kind: ResourceKind<KubeObject>;
  readonly name: string;
  readonly fn: IndexFunction;
}

/** A map function with the indexes it reads. */
export interface Mapper<W extends KubeObject = KubeObject> {
  readonly map: MapFunction<W>;
  readonly indexes?: readonly IndexSpec[];
}

/** The object itself (the primary kind's own mapper). */
export function self<W extends KubeObject>(): Mapper<W> {
  return { map: (object) => [keyOf(object)] };
}

/** The owners of kind `owner` in the object's owner references (a namespaced owner is in the object's namespace). */
export function byOwner<W extends KubeObject>(owner: ResourceKind<KubeObject>, options: { controllerOnly?: boolean } = {}): Mapper<W> {
  return {
    map: (object) =>
      (object.metadata.ownerReferences ?? [])
        .filter((r) => r.kind === owner.kind && groupOf(r.apiVersion) === owner.group && (!options.controllerOnly || r.controller))
        .map((r) => objectKey(owner.namespaced ? object.metadata.namespace : undefined, r.name)),
  };
}

/** The order whose name (and namespace) the object's labels carry; the object's namespace when there is no namespace label. */
export function byLabels<W extends KubeObject>(labels: { readonly name: string; readonly namespace?: string }): Mapper<W> {
  return {
    map: (object) => {
      const name = object.metadata.labels?.[labels.name];
      if (!name) return [];
      const namespace = (labels.namespace && object.metadata.labels?.[labels.namespace]) || object.metadata.namespace;
      return [objectKey(namespace, name)];
    },
  };
}

/**
 * The primary objects that the index `name` of the primary kind files under `valueOf(watched)`: e.g. every order whose
 * `spec.controlPlaneRef` names the changed ControlPlane, with `index = (order) => [key of its ControlPlane]`.
 */
export function byIndex<P extends KubeObject, W extends KubeObject = KubeObject>(
  primary: ResourceKind<P>,
  name: string,
  index: IndexFunction<P>,
  valueOf: (watched: W) => string = keyOf,
): Mapper<W> {
  return {
    indexes: [{ kind: primary as ResourceKind<KubeObject>, name, fn: index as IndexFunction }],
    map: (object, reads) => reads.list(primary, { index: { name, value: valueOf(object) } }).map(keyOf),
  };
}

interface Entry {
  /** Receives work-queue keys (see clusters.ts: `clusterKey`). */
  readonly target: (key: string) => void;
  readonly mapper: Mapper;
  readonly controller: string;
  /** Whether resyncs go through (only for the primary kind: its resync already covers every order). */
  readonly resync: boolean;
  /** Whether changes on target clusters go through too. @default "management" */
  readonly clusters?: ClusterScope;
}

export class MapperRegistry {
  private readonly entries = new Map<string, Entry[]>();
  private readonly fleet: FleetReader;

  /** `reads`: the management cluster's caches, or a {@link FleetReader} of every cluster's. */
  constructor(
    reads: ClusterReader | FleetReader,
    private readonly logger: Logger = silentLogger,
  ) {
    this.fleet = 'readsOf' in reads ? reads : managementOnly(reads);
  }

  /** Sends the keys `mapper` maps a change of `kind` to into `target`. */
  register(kind: ResourceKind<KubeObject>, entry: Entry): void {
    const id = kindId(kind);
    this.entries.set(id, [...(this.entries.get(id) ?? []), entry]);
  }

  /** The informer handler of `kind` on `cluster` (the management cluster by default). */
  handlerFor(kind: ResourceKind<KubeObject>, cluster: string = MANAGEMENT): InformerHandler {
    const id = kindId(kind);
    const context: MapContext = { cluster, fleet: this.fleet };
    const dispatch = (objects: readonly KubeObject[], resync: boolean) => {
      const reads = this.fleet.readsOf(cluster);
      if (!reads) return; // a target cluster whose caches have not synced (or are gone): its engagement queues its objects
      for (const entry of this.entries.get(id) ?? []) {
        if (resync && !entry.resync) continue;
        if (cluster !== MANAGEMENT && entry.clusters !== 'all') continue;
        const keys = new Set<string>();
        for (const object of objects) {
          try {
            for (const key of entry.mapper.map(object, reads, context)) keys.add(typeof key === 'string' ? clusterKey(cluster, key) : clusterKey(key.cluster, key.key));
          } catch (error) {
            this.logger.error('a mapper failed', { controller: entry.controller, kind: kind.kind, ...(cluster ? { cluster } : {}), key: keyOf(object), error: errorMessage(error) });
          }
        }
        for (const key of keys) entry.target(key);
      }
    };
    return {
      added: (object) => dispatch([object], false),
      // Both: a changed owner reference or label may move the object from one order to another.
      updated: (old, current) => dispatch([old, current], false),
      deleted: (object) => dispatch([object], false),
      resynced: (object) => dispatch([object], true),
    };
  }
}

/** A kind's identity across versions (its metadata-only view is a kind of its own: its own cache, its own watches). */
export function kindId(kind: ResourceKind<KubeObject>): string {
  // Every cache read looks its store up by it: made once per kind object, not once per read.
  let id = kindIds.get(kind);
  if (id === undefined) kindIds.set(kind, (id = `${kind.plural}.${kind.group}${kind.metadataOnly ? '/metadata' : ''}`));
  return id;
}

/** The ids of the kind objects met so far (a kind's fields never change). */
const kindIds = new WeakMap<ResourceKind<KubeObject>, string>();
