/**
 * The {@link Cluster} of a running operator: reads from the informers' stores, writes through {@link KubeApi}.
 */
import { randomBytes } from 'node:crypto';
import type { KubeApi } from './api';
import type { ApplyOptions, Cluster, DeleteOptions, EventSpec, WithStatus } from './cluster';
import { isNotFound } from './errors';
import { mergePatch } from './json';
import { Kinds, type Event } from './kinds';
import type { ApplyConfiguration, KubeObject, ResourceKind } from './object';
import type { ListOptions, StoreReader } from './store';

/** Where the cached objects of a kind are; undefined for a kind nothing caches. */
export interface CacheSource {
  storeOf<T extends KubeObject>(kind: ResourceKind<T>): StoreReader<T> | undefined;
}

export interface LiveClusterOptions {
  /** Events' `reportingController`, e.g. `c5c3.io/keystone-appcred-operator`. */
  readonly reportingController: string;
  /** Events' `reportingInstance`: the pod's name. */
  readonly reportingInstance: string;
  /** Called after every successful write (for the write counter). */
  readonly onWrite?: (verb: string, kind: string) => void;
  readonly now?: () => Date;
}

/** RFC 3339 with six fraction digits, as `metav1.MicroTime` is written. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LiveCluster implements Cluster {
  private readonly now: () => Date;

  constructor(
    private readonly api: KubeApi,
    private readonly caches: CacheSource,
    private readonly options: LiveClusterOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  get<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, name: string): T | undefined {
    return this.store(kind).get(namespace, name);
  }

  list<T extends KubeObject>(kind: ResourceKind<T>, options?: ListOptions): T[] {
    return this.store(kind).list(options);
  }

  read<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, name: string): Promise<T | undefined> {
    return this.api.get(kind, namespace, name);
  }

  async create<T extends KubeObject>(kind: ResourceKind<T>, object: T): Promise<T> {
    const result = await this.api.create(kind, object);
    this.wrote('create', kind);
    return result;
  }

  async apply<T extends KubeObject>(kind: ResourceKind<T>, object: ApplyConfiguration, options: ApplyOptions = {}): Promise<T> {
    const result = await this.api.apply(kind, object, { force: options.force });
    this.wrote('apply', kind);
    return result;
  }

  async patchStatus<T extends WithStatus>(kind: ResourceKind<T>, object: T, status: NonNullable<T['status']>): Promise<T> {
    const diff = mergePatch(object.status, status);
    if (diff === undefined) return object;
    const patch = { metadata: { resourceVersion: object.metadata.resourceVersion }, status: diff };
    const result = await this.api.patch(kind, object.metadata.namespace, object.metadata.name, patch, { type: 'merge', subresource: 'status' });
    this.wrote('patchStatus', kind);
    return result;
  }

  async addFinalizer<T extends KubeObject>(kind: ResourceKind<T>, object: T, finalizer: string): Promise<T> {
    const finalizers = object.metadata.finalizers ?? [];
    if (finalizers.includes(finalizer)) return object;
    const result = await this.patchFinalizers(kind, object, [...finalizers, finalizer]);
    this.wrote('addFinalizer', kind);
    return result;
  }

  async removeFinalizer<T extends KubeObject>(kind: ResourceKind<T>, object: T, finalizer: string): Promise<T | undefined> {
    const finalizers = object.metadata.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return object;
    try {
      const result = await this.patchFinalizers(kind, object, finalizers.filter((f) => f !== finalizer));
      this.wrote('removeFinalizer', kind);
      const gone = result.metadata.deletionTimestamp && (result.metadata.finalizers ?? []).length === 0;
      return gone ? undefined : result;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async delete(kind: ResourceKind<KubeObject>, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<boolean> {
    const deleted = await this.api.delete(kind, namespace, name, options);
    if (deleted) this.wrote('delete', kind);
    return deleted;
  }

  async event(regarding: KubeObject, spec: EventSpec): Promise<void> {
    const now = this.now();
    const namespace = regarding.metadata.namespace ?? 'default';
    const event: Event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `${regarding.metadata.name}.${now.getTime().toString(16)}${randomBytes(3).toString('hex')}`, namespace },
      eventTime: microTime(now),
      reportingController: this.options.reportingController,
      reportingInstance: this.options.reportingInstance.slice(0, 128),
      action: spec.action.slice(0, 128),
      reason: spec.reason.slice(0, 128),
      note: spec.note.slice(0, 1024),
      type: spec.type,
      regarding: {
        apiVersion: regarding.apiVersion,
        kind: regarding.kind,
        name: regarding.metadata.name,
        namespace: regarding.metadata.namespace,
        uid: regarding.metadata.uid,
        resourceVersion: regarding.metadata.resourceVersion,
      },
    };
    await this.api.create(Kinds.Event, event);
    this.wrote('event', Kinds.Event);
  }

  /** A merge patch of the whole list, guarded by resourceVersion (409 when another writer got there first). */
  private patchFinalizers<T extends KubeObject>(kind: ResourceKind<T>, object: T, finalizers: readonly string[]): Promise<T> {
    const patch = { metadata: { resourceVersion: object.metadata.resourceVersion, finalizers } };
    return this.api.patch(kind, object.metadata.namespace, object.metadata.name, patch, { type: 'merge' });
  }

  private store<T extends KubeObject>(kind: ResourceKind<T>): StoreReader<T> {
    const store = this.caches.storeOf(kind);
    if (!store) {
      throw new Error(`${kind.kind} is not cached: declare it in a controller's watches or with manager.cache(${kind.kind}) before reading it`);
    }
    return store;
  }

  private wrote(verb: string, kind: ResourceKind<KubeObject>): void {
    this.options.onWrite?.(verb, kind.kind);
  }
}
