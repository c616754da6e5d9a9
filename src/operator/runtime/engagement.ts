/**
 * Registered target clusters, engaged and disengaged at run time (as multicluster-runtime's providers engage clusters):
 * each gets its own informers for the kinds declared with `clusters: 'all'` (a controller's primary kind, a watch, a
 * cache; every partition of it, as ./caches.ts declares them), its objects are reconciled by the same controllers once
 * its caches have synced, with the cluster in the request and in the work-queue key (./clusters.ts), and its writes go
 * to its own API server.
 */
import type { KubeApi } from '../../kube/api';
import type { Cluster } from '../../kube/cluster';
import { LiveCluster } from '../../kube/live-cluster';
import type { KubeObject, ResourceKind } from '../../kube/object';
import { MergedStore, type StoreReader } from '../../kube/store';
import { cacheName, selectionText, type Caches } from './caches';
import { MANAGEMENT, clusterKey } from './clusters';
import type { Controller } from './controller';
import { Informer, listWatchOf } from './informer';
import type { Logger } from './log';
import { kindId, type MapperRegistry } from './mapper';
import type { OperatorMetrics } from './metrics';
import { ScopedStore, type NamespaceCaches } from './namespaces';

/** The reportingController of the operator's Events. */
export const REPORTING_CONTROLLER = 'c5c3.io/keystone-appcred-operator';

/** A registered target cluster the manager serves (see {@link Engagements.engage}). */
export interface Engagement {
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

/** What {@link Engagements.engage} reports about a target cluster's connection. */
export interface EngageOptions {
  /**
   * Called when the cluster's API server answers for the first time or again (`connected` true: every informer's last
   * list succeeded) and when it stops answering (false, with the error's text: an informer's list or watch failed).
   * @default none
   */
  readonly onHealth?: (connected: boolean, error?: string) => void;
}

/** What the engagements run with: the manager's settings and parts. */
export interface EngagementsContext {
  /** This replica's identity: the Events' reportingInstance. */
  readonly identity: string;
  readonly resyncPeriodMs: number;
  readonly logger: Logger;
  readonly metrics: OperatorMetrics;
  readonly caches: Caches;
  readonly registry: () => MapperRegistry;
  /** The controllers whose primary kind is reconciled on every cluster, with that kind. */
  readonly multiClusterControllers: ReadonlyMap<Controller, ResourceKind<KubeObject>>;
  /** Whether the manager is shutting down: nothing is engaged then. */
  readonly stopping: () => boolean;
  /** Called once a target cluster is disengaged (not when it is replaced by a changed kubeconfig). @default none */
  readonly onDisengaged?: (name: string) => void;
}

/** The target clusters the manager serves. */
export class Engagements {
  private readonly targets = new Map<string, Engagement>();

  constructor(private readonly context: EngagementsContext) {}

  /**
   * Serves a registered target cluster through `api` (its kubeconfig's connection): starts its informers of the kinds
   * declared for every cluster and, once every one of them has synced, reconciles its objects with the controllers
   * whose `clusters` is `all` and maps its changes. A cluster of that name already engaged is disengaged first (a
   * changed kubeconfig reconnects). Resolves once its caches have synced; rejects when it is disengaged before.
   * An unreachable API server never fails it: its informers retry with backoff, and `onHealth` says how it goes.
   */
  async engage(name: string, api: KubeApi, options: EngageOptions = {}): Promise<void> {
    const { caches, metrics } = this.context;
    if (name === MANAGEMENT || name.includes(':')) throw new Error(`a target cluster needs a name without ":": ${JSON.stringify(name)}`);
    if (this.context.stopping()) throw new Error(`cluster ${name}: the manager is shutting down`);
    // Replaced at once (calls take effect in the order they are made); the old informers stop before the new ones start.
    const previous = this.targets.get(name);
    const informers = new Map<string, Informer[]>();
    const stores = new Map<string, StoreReader>();
    const namespaced = caches.namespaced;
    const scoped = namespaced && namespaced.clusters === 'all' ? caches.namespaceCaches(name, (kind, selection) => listWatchOf(api, kind, selection)) : undefined;
    const reads = {
      storeOf: <T extends KubeObject>(kind: ResourceKind<T>) => {
        const id = kindId(kind);
        let store = stores.get(id);
        const parts = informers.get(id);
        if (!store && scoped && namespaced?.ids.has(id)) stores.set(id, (store = new ScopedStore(kind, () => (informers.get(id) ?? []).map((i) => i.store), () => scoped)));
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
      cluster: new LiveCluster(api, reads, { reportingController: REPORTING_CONTROLLER, reportingInstance: this.context.identity, onWrite: (verb, kind) => metrics.wrote(kind, verb) }),
      ready: false,
      stopped: false,
      connected: true,
    };
    const logger = this.context.logger.child({ cluster: name });
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
    for (const id of caches.everyCluster) {
      // The same partitions as on the management cluster: each selection, with what its cache keeps of an object.
      for (const part of caches.partitions.get(id) ?? []) {
        const kind = part.informer.kind;
        const informer = new Informer(kind, listWatchOf(api, kind, part.selection), {
          resyncPeriodMs: this.context.resyncPeriodMs,
          logger,
          onRelist: (reason) => metrics.relisted(cacheName(kind), reason),
          onHealth: health(`${cacheName(kind)} ${selectionText(part.selection)}`),
          ...(part.transform ? { transform: part.transform } : {}),
        });
        for (const index of caches.indexes.get(id) ?? []) informer.store.addIndex(index.name, index.fn);
        informer.addHandler(this.context.registry().handlerFor(kind, name));
        informers.set(id, [...(informers.get(id) ?? []), informer]);
      }
    }
    this.targets.set(name, engagement);
    if (previous) await this.stop(previous);
    if (engagement.stopped) throw new Error(`cluster ${name} was disengaged before its caches synced`);
    for (const informer of [...informers.values()].flat()) informer.start({ resync: caches.primaries.has(kindId(informer.kind)) });
    if (scoped && namespaced) scoped.set(namespaced.wanted(name));
    logger.info('cluster engaged', { kinds: [...informers.values()].flat().map((i) => cacheName(i.kind)).join(',') });
    await Promise.race([Promise.all([...informers.values()].flat().map((i) => i.waitForSync())), engagement.stoppedSignal]);
    if (engagement.stopped) throw new Error(`cluster ${name} was disengaged before its caches synced`);
    engagement.ready = true;
    logger.info('cluster caches synced', { objects: [...informers.values()].flat().reduce((n, i) => n + i.store.size, 0) });
    // Its objects are reconciled as the management cluster's are when the controllers start.
    this.enqueueAll(engagement);
  }

  /** Whether a target cluster's API server answers (as its informers last found). */
  connected(name: string): boolean {
    return this.targets.get(name)?.connected === true;
  }

  /**
   * Stops serving a target cluster: its informers stop and its caches are dropped; keys of it still queued reconcile
   * nothing. What its orders made on the management cluster stays (spec, Deletion Semantics).
   */
  async disengage(name: string): Promise<void> {
    const engagement = this.targets.get(name);
    if (!engagement) return;
    this.targets.delete(name);
    await this.stop(engagement);
    this.context.onDisengaged?.(name);
  }

  /** Disengages every target cluster. */
  async disengageAll(): Promise<void> {
    await Promise.all([...this.targets.keys()].map((name) => this.disengage(name)));
  }

  /** An engaged target cluster whose caches synced, by name. */
  cluster(name: string): Cluster | undefined {
    const engagement = this.targets.get(name);
    return engagement?.ready ? engagement.cluster : undefined;
  }

  /** The per-namespace caches of an engaged target cluster. */
  scopedOf(name: string): NamespaceCaches | undefined {
    return this.targets.get(name)?.scoped;
  }

  /** The wanted namespaces of every engaged target cluster, computed again. */
  refreshNamespaces(): void {
    const declared = this.context.caches.namespaced;
    if (!declared) return;
    for (const engagement of this.targets.values()) if (!engagement.stopped) engagement.scoped?.set(declared.wanted(engagement.name));
  }

  /** The engaged target clusters whose caches have synced, sorted by name. */
  ready(): Engagement[] {
    return [...this.targets.values()].filter((t) => t.ready).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The work-queue keys of a target cluster's cached objects of `kind`. */
  keys(engagement: Engagement, kind: ResourceKind<KubeObject>): string[] {
    const parts = engagement.informers.get(kindId(kind)) ?? [];
    const keys = parts.length === 1 ? parts[0].store.keys() : [...new Set(parts.flatMap((i) => i.store.keys()))];
    return keys.map((key) => clusterKey(engagement.name, key));
  }

  private async stop(engagement: Engagement): Promise<void> {
    engagement.stopped = true;
    engagement.ready = false;
    engagement.stop();
    await Promise.all([...[...engagement.informers.values()].flat().map((i) => i.stop()), engagement.scoped?.stop()]);
    this.context.logger.info('cluster disengaged', { cluster: engagement.name });
  }

  /** Queues every object of a target cluster for the controllers that reconcile its kinds. */
  private enqueueAll(engagement: Engagement): void {
    for (const [controller, kind] of this.context.multiClusterControllers) for (const key of this.keys(engagement, kind)) controller.enqueue(key);
  }
}
