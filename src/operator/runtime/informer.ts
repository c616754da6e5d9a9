/**
 * An informer keeps one kind's objects in a {@link Store} and tells its handlers what changed: it lists, then watches
 * from the list's resourceVersion (with bookmarks), resumes a watch the server closed from the last resourceVersion it
 * saw, relists when that version has expired (410) and, after a backoff, on any other error (so it never stops, unlike
 * client-node's informer), and every `resyncPeriodMs` hands every cached object to the handlers again without an API call.
 */
import type { KubeApi, ListResult, Selection } from '../../kube/api';
import { isGone, KubeApiError } from '../../kube/errors';
import { keyOf, slimAs, typeOf, type KubeObject, type ResourceKind } from '../../kube/object';
import { withSharedStrings } from '../../kube/shared-strings';
import { Store } from '../../kube/store';
import type { WatchEvent, WatchStream } from '../../kube/transport';
import { backoffDelay, type BackoffOptions } from './backoff';
import { errorMessage, silentLogger, type Logger } from './log';

/**
 * The relist backoff: 1 s doubling to 30 s (plus the backoff's jitter), client-go's reflector's ceiling. Not longer: a
 * process that becomes the leader during a long API outage passes its orders only once every informer has synced, so
 * with a 60 s ceiling its first pass came up to 70 s after the API answered again (the simulation's
 * waiters-recover-in-60s, seed 460001 schedule 22); a relist is one list per kind, cheap next to that wait.
 */
export const RELIST_BACKOFF: BackoffOptions = { baseMs: 1000, maxMs: 30_000 };

/** The two calls an informer makes. */
export interface ListWatch<T extends KubeObject> {
  list(): Promise<ListResult<T>>;
  watch(resourceVersion: string, timeoutSeconds: number, onEvent: (event: WatchEvent) => void, onDone: (error?: Error) => void): Promise<WatchStream>;
}

/** The list and watch of a kind (in a namespace, with a label selector) through the API. */
export function listWatchOf<T extends KubeObject>(api: KubeApi, kind: ResourceKind<T>, selection: Selection = {}): ListWatch<T> {
  return {
    list: () => api.list(kind, selection),
    watch: (resourceVersion, timeoutSeconds, onEvent, onDone) => api.watch(kind, { ...selection, resourceVersion, timeoutSeconds }, onEvent, onDone),
  };
}

/** What an informer reports. Handlers must not throw (a throw is logged and ignored) and must not block. */
export interface InformerHandler<T extends KubeObject = KubeObject> {
  added?(object: T): void;
  updated?(old: T, current: T): void;
  deleted?(object: T): void;
  /** The periodic resync: the object did not change. */
  resynced?(object: T): void;
}

export interface InformerOptions<T extends KubeObject = KubeObject> {
  /** Hand every cached object to the handlers this often; 0 turns it off. @default 0 */
  readonly resyncPeriodMs?: number;
  /**
   * What the cache keeps of each object, applied before it is stored or handed to a handler (as client-go's transform
   * functions): e.g. a metadata-only cache drops annotations nothing reads. @default the object as listed or watched
   */
  readonly transform?: (object: T) => T;
  /** Backoff between failed list/watch rounds. @default {@link RELIST_BACKOFF}: 1 s doubling to 30 s */
  readonly backoff?: BackoffOptions;
  /** The server ends each watch after a random time in this range, in seconds. @default [300, 600] */
  readonly watchTimeoutSeconds?: readonly [number, number];
  readonly logger?: Logger;
  /** Called when the informer relists: `expired` (410) or `error`. */
  readonly onRelist?: (reason: 'expired' | 'error') => void;
  /** Called after each list that succeeded (true) and each list or watch that failed (false, with the error's text and the error). */
  readonly onHealth?: (connected: boolean, error?: string, cause?: unknown) => void;
  readonly random?: () => number;
}

type WatchEnd = { readonly reason: 'closed' | 'gone' | 'stopped'; readonly resourceVersion: string; readonly events: number } | { readonly reason: 'error'; readonly error: Error };

export class Informer<T extends KubeObject = KubeObject> {
  readonly store = new Store<T>();
  private readonly handlers: InformerHandler<T>[] = [];
  private readonly syncWaiters: (() => void)[] = [];
  private readonly logger: Logger;
  private hasSynced = false;
  private stopped = true;
  private endWatch: (() => void) | undefined;
  private wake: (() => void) | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    readonly kind: ResourceKind<T>,
    private readonly listWatch: ListWatch<T>,
    private readonly options: InformerOptions<T> = {},
  ) {
    this.logger = (options.logger ?? silentLogger).child({ informer: kind.kind });
  }

  /** Whether the first list has filled the store. */
  get synced(): boolean {
    return this.hasSynced;
  }

  addHandler(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }

  /** Starts listing and watching in the background; `resync: false` turns the periodic resync off (nothing wants it). */
  start(options: { readonly resync?: boolean } = {}): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.running = this.run();
    const period = options.resync === false ? 0 : (this.options.resyncPeriodMs ?? 0);
    if (period > 0) {
      this.resyncTimer = setInterval(() => this.resync(), period);
      this.resyncTimer.unref();
    }
  }

  /** Resolves once the store is filled. */
  waitForSync(): Promise<void> {
    if (this.hasSynced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** Stops watching; the store keeps its content. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resyncTimer);
    this.endWatch?.();
    this.wake?.();
    await this.running;
  }

  /** Hands every cached object to the handlers' `resynced` (no API call). */
  resync(): void {
    if (!this.hasSynced) return;
    for (const object of this.store.values()) this.emit((h) => h.resynced?.(object));
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        // Dropped once applied: a local of this frame, which lives as long as the watch loop, the list as received
        // (every object before the cache slims it) stayed in memory until the next relist.
        let listed: ListResult<T> | undefined = await this.listWatch.list();
        if (this.stopped) return;
        this.applyList(listed.items);
        this.options.onHealth?.(true);
        let rv = listed.resourceVersion;
        listed = undefined;
        failures = 0;
        while (!this.stopped) {
          const started = Date.now();
          const end = await this.watchOnce(rv);
          if (this.stopped || end.reason === 'stopped') return;
          if (end.reason === 'error') throw end.error;
          if (end.reason === 'gone') {
            this.logger.info('watch expired; relisting', { resourceVersion: rv });
            this.options.onRelist?.('expired');
            break;
          }
          rv = end.resourceVersion;
          if (end.events === 0 && Date.now() - started < 1000) throw new Error('the watch closed at once without an event');
        }
      } catch (error) {
        if (this.stopped) return;
        const delay = backoffDelay(failures++, { ...RELIST_BACKOFF, ...this.options.backoff, random: this.options.random });
        this.logger.warn('list/watch failed; relisting after a backoff', { error: errorMessage(error), retryInMs: delay, failures });
        this.options.onRelist?.('error');
        this.options.onHealth?.(false, errorMessage(error), error);
        await this.sleep(delay);
      }
    }
  }

  private applyList(items: readonly T[]): void {
    const { added, updated, deleted } = this.store.replace(items.map((i) => this.typed(i)));
    if (!this.hasSynced) {
      this.hasSynced = true;
      this.logger.info('synced', { objects: this.store.size });
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
    for (const object of added) this.emit((h) => h.added?.(object));
    for (const { old, current } of updated) this.emit((h) => h.updated?.(old, current));
    for (const object of deleted) this.emit((h) => h.deleted?.(object));
  }

  private watchOnce(resourceVersion: string): Promise<WatchEnd> {
    const [min, max] = this.options.watchTimeoutSeconds ?? [300, 600];
    const timeout = Math.round(min + (max - min) * (this.options.random ?? Math.random)());
    return new Promise<WatchEnd>((resolve) => {
      let rv = resourceVersion;
      let events = 0;
      let ended = false;
      let stream: WatchStream | undefined;
      const finish = (end: WatchEnd) => {
        if (ended) return;
        ended = true;
        this.endWatch = undefined;
        stream?.stop();
        resolve(end);
      };
      this.endWatch = () => finish({ reason: 'stopped', resourceVersion: rv, events });
      const onEvent = (event: WatchEvent) => {
        if (ended) return;
        events++;
        if (event.type === 'ERROR') {
          const status = event.object as { code?: number };
          const error = KubeApiError.from(status.code ?? 500, event.object, `WATCH ${this.kind.plural}`);
          finish(isGone(error) ? { reason: 'gone', resourceVersion: rv, events } : { reason: 'error', error });
          return;
        }
        const object = this.typed(event.object as T);
        rv = object.metadata.resourceVersion ?? rv;
        if (event.type === 'BOOKMARK') return;
        if (event.type === 'DELETED') {
          const old = this.store.remove(keyOf(object));
          this.emit((h) => h.deleted?.(old ?? object));
          return;
        }
        const old = this.store.upsert(object);
        if (!old) this.emit((h) => h.added?.(object));
        else if (old.metadata.resourceVersion !== object.metadata.resourceVersion) this.emit((h) => h.updated?.(old, object));
      };
      const onDone = (error?: Error) => {
        if (!error) finish({ reason: 'closed', resourceVersion: rv, events });
        else finish(isGone(error) ? { reason: 'gone', resourceVersion: rv, events } : { reason: 'error', error });
      };
      this.listWatch.watch(resourceVersion, timeout, onEvent, onDone).then(
        (s) => {
          if (ended) s.stop();
          else stream = s;
        },
        (error: unknown) => finish({ reason: 'error', error: error instanceof Error ? error : new Error(String(error)) }),
      );
    });
  }

  /**
   * The object as the cache keeps it: with its apiVersion and kind (a list's items lack them), slimmed (no
   * `managedFields`, no last-applied annotation: 5,000 orders hold some 15,000 Secrets), its repeated strings shared
   * (../../kube/shared-strings.ts), then the cache's own transform.
   */
  private typed(object: T): T {
    let kept = withSharedStrings(slimAs(this.kind, object));
    if (!kept.apiVersion || !kept.kind) kept = { ...kept, ...typeOf(this.kind) };
    return this.options.transform ? this.options.transform(kept) : kept;
  }

  private emit(call: (handler: InformerHandler<T>) => void): void {
    for (const handler of this.handlers) {
      try {
        call(handler);
      } catch (error) {
        this.logger.error('an informer handler failed', { error: errorMessage(error) });
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
