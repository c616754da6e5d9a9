/**
 * The Kubernetes API as a reconciler sees it: reads come from the informers' caches (no API call), writes go to the API
 * server with the operator's field manager. `LiveCluster` (live-cluster.ts) is the real one, `MemoryCluster`
 * (memory.ts) the in-memory one for unit tests; reconcilers depend only on this interface.
 */
import type { ApplyConfiguration, KubeObject, ResourceKind } from './object';
import type { ListOptions } from './store';

export type { ListOptions } from './store';

/** Reads, served from the caches. A kind that no informer caches is an error (register it as a watch or a cache). */
export interface ClusterReader {
  /** The cached object, or undefined when it does not exist (as far as the cache knows). */
  get<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, name: string): T | undefined;
  /** The cached objects matching `options`, sorted by key. */
  list<T extends KubeObject>(kind: ResourceKind<T>, options?: ListOptions): T[];
}

/** Server-side apply options. */
export interface ApplyOptions {
  /**
   * Take over fields another manager owns instead of failing with a 409 conflict. Only for objects that are ours (e.g.
   * carry our owner reference or labels); a foreign object is reported, never overwritten.
   * @default false
   */
  readonly force?: boolean;
}

/** Preconditions and propagation of a delete. */
export interface DeleteOptions {
  /** Delete only the object with this uid (409 otherwise). */
  readonly uid?: string;
  /** Delete only at this resourceVersion (409 otherwise). */
  readonly resourceVersion?: string;
  /** @default "Background" */
  readonly propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
}

/** An `events.k8s.io/v1` Event about an object. Never put a secret into `note`. */
export interface EventSpec {
  readonly type: 'Normal' | 'Warning';
  /** UpperCamelCase, e.g. a condition reason. */
  readonly reason: string;
  /** What the operator did or observed, e.g. `Reconcile`, `Rotate`, `Teardown`. */
  readonly action: string;
  /** A sentence for humans (at most 1 KiB). */
  readonly note: string;
}

/** An object with a status. */
export interface WithStatus<S = unknown> extends KubeObject {
  readonly status?: S;
}

/** Reads from the caches and writes to the API server. */
export interface Cluster extends ClusterReader {
  /**
   * The object as the API server holds it now, bypassing the cache: for the rare read that must not lag (e.g. after a
   * create that found the object existing). Undefined when it does not exist.
   */
  read<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, name: string): Promise<T | undefined>;
  /** Creates an object; one that exists fails with 409 AlreadyExists (see isAlreadyExists). */
  create<T extends KubeObject>(kind: ResourceKind<T>, object: T): Promise<T>;
  /**
   * Server-side apply of the fields in `object` with the operator's field manager; creates the object when missing.
   * Returns the object as stored. A field another manager owns fails with 409 unless `force`.
   */
  apply<T extends KubeObject>(kind: ResourceKind<T>, object: ApplyConfiguration, options?: ApplyOptions): Promise<T>;
  /**
   * Replaces the status of `object` through the status subresource, guarded by `object`'s resourceVersion: a stale
   * object fails with 409 (isConflict), and the work queue retries the reconcile with a fresh read. Sends only the
   * difference. Callers skip the call when nothing changed (see the runtime's StatusWriter).
   */
  patchStatus<T extends WithStatus>(kind: ResourceKind<T>, object: T, status: NonNullable<T['status']>): Promise<T>;
  /** Adds a finalizer, guarded by resourceVersion; a no-op (no write) when present. */
  addFinalizer<T extends KubeObject>(kind: ResourceKind<T>, object: T, finalizer: string): Promise<T>;
  /**
   * Removes a finalizer, guarded by resourceVersion; a no-op when absent. Returns undefined when the object is gone
   * (it was being deleted and this was its last finalizer, or it no longer existed).
   */
  removeFinalizer<T extends KubeObject>(kind: ResourceKind<T>, object: T, finalizer: string): Promise<T | undefined>;
  /** Deletes an object; true when it was deleted or is being deleted, false when it did not exist. */
  delete(kind: ResourceKind<KubeObject>, namespace: string | undefined, name: string, options?: DeleteOptions): Promise<boolean>;
  /** Records an Event about `regarding` (in its namespace). */
  event(regarding: KubeObject, event: EventSpec): Promise<void>;
}
