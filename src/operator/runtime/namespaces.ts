/**
 * Kinds cached per namespace, for a set of namespaces that changes at run time (issue 34: the operator's Secrets in the
 * namespaced mode, controller-runtime's cache `DefaultNamespaces` made dynamic). Each wanted namespace gets its own
 * informers, one per share (a kind and a label or field selection within the namespace, with what its cache keeps), and
 * an access state the reconcilers read:
 *
 * - `pending` while its caches fill: the namespace's first share lists first (the probe); only once the API server
 *   allowed that list do the others start, so a namespace without a grant costs one request per attempt, not one per
 *   share;
 * - `synced` once every share has listed;
 * - `denied` when the API server refused a list or watch there (403: no Role grants it). Its informers stop and their
 *   caches are dropped (nothing stale is read), and the probe is tried again after a backoff (1 s doubling to
 *   {@link DENIED_RETRY_MAX_MS}, with jitter): one list per namespace per attempt, whatever the number of objects that
 *   wait on it, and no state change (so no reconcile) until an attempt is allowed. A grant added is picked up within
 *   that bound, without a restart;
 * - `unwatched` for a namespace not wanted (any more): its informers stop and its caches are dropped.
 *
 * `onAccess` hears every change of state (not the repeated refusals of a denied namespace), so the objects that wait on
 * a namespace are reconciled when it is filled or refused. A refusal of an established watch (a Role removed while the
 * operator runs) is seen when the watch ends and is renewed: within the watch's timeout (5 to 10 minutes).
 *
 * The informers' events go to the same handlers as the kind's cluster-wide informers (the mappers), and their stores
 * are read, with the kind's other partitions, as one store (`partsOf`).
 */
import type { Selection } from '../../kube/api';
import { isForbidden } from '../../kube/errors';
import { keyOf, type KubeObject, type ObjectKey, type ResourceKind } from '../../kube/object';
import { newerOf, type IndexFunction, type ListOptions, type StoreReader } from '../../kube/store';
import { backoffDelay, type BackoffOptions } from './backoff';
import { Informer, type InformerHandler, type ListWatch } from './informer';
import { errorMessage, silentLogger, type Logger } from './log';
import { kindId } from './mapper';

/** The longest pause between two probes of a namespace the API server refused: how soon a grant added is picked up. */
export const DENIED_RETRY_MAX_MS = 10_000;

/** One informer's share of a kind within a namespace. */
export interface NamespaceShare {
  readonly kind: ResourceKind<KubeObject>;
  /** @default every object of the kind in the namespace */
  readonly labelSelector?: string;
  /** e.g. `metadata.name=x`: a list RBAC restricts to that name (`resourceNames`) may pass. @default none */
  readonly fieldSelector?: string;
  /** What the cache keeps of each object. @default the object */
  readonly transform?: (object: KubeObject) => KubeObject;
}

/** What the caches of a namespace hold. */
export type NamespaceAccess =
  | { readonly state: 'unwatched' }
  | { readonly state: 'pending' }
  | { readonly state: 'synced' }
  /** The API server's words. */
  | { readonly state: 'denied'; readonly error: string };

const UNWATCHED: NamespaceAccess = { state: 'unwatched' };
const PENDING: NamespaceAccess = { state: 'pending' };
const SYNCED: NamespaceAccess = { state: 'synced' };

export interface NamespaceCachesOptions {
  /** The list and watch of a kind's selection. */
  readonly listWatch: (kind: ResourceKind<KubeObject>, selection: Selection) => ListWatch<KubeObject>;
  /** The handler every informer of the kind feeds (the mappers). */
  readonly handlerFor: (kind: ResourceKind<KubeObject>) => InformerHandler;
  /** The named indexes of the kind's cache. @default none */
  readonly indexesOf?: (kind: ResourceKind<KubeObject>) => readonly { readonly name: string; readonly fn: IndexFunction }[];
  /** Whether the kind's informers resync (only primary kinds do). @default false */
  readonly resync?: (kind: ResourceKind<KubeObject>) => boolean;
  readonly resyncPeriodMs?: number;
  /** Each change of a namespace's state. */
  readonly onAccess?: (namespace: string, access: NamespaceAccess) => void;
  /** Each relist of an informer (for the relist counter). */
  readonly onRelist?: (kind: ResourceKind<KubeObject>, reason: 'expired' | 'error') => void;
  /** The probes of a refused namespace. @default 1 s doubling to {@link DENIED_RETRY_MAX_MS}, +≤20 % */
  readonly deniedBackoff?: BackoffOptions;
  readonly logger?: Logger;
  readonly random?: () => number;
}

/** A stable text of the shares, to tell whether a namespace's wanted shares changed. */
function signature(shares: readonly NamespaceShare[]): string {
  return shares.map((s) => `${kindId(s.kind)}|${s.labelSelector ?? ''}|${s.fieldSelector ?? ''}`).join(';');
}

/** One namespace's caches and their state. */
class NamespaceEntry {
  state: NamespaceAccess = PENDING;
  informers: Informer[] = [];
  /** Bumped whenever the informers are dropped: callbacks of older ones are ignored. */
  private generation = 0;
  private refusals = 0;
  private timer: NodeJS.Timeout | undefined;
  private retired = false;

  constructor(
    readonly namespace: string,
    readonly shares: readonly NamespaceShare[],
    readonly signature: string,
    private readonly owner: NamespaceCaches,
    private readonly options: NamespaceCachesOptions,
    private readonly logger: Logger,
  ) {}

  /** Starts the probe (the first share), then the other shares once it listed. */
  start(): void {
    if (this.retired) return;
    const generation = ++this.generation;
    this.informers = this.shares.map((share) => this.informer(share, generation));
    const [probe, ...rest] = this.informers;
    probe.start({ resync: this.options.resync?.(probe.kind) ?? false });
    void probe.waitForSync().then(async () => {
      if (generation !== this.generation) return;
      for (const informer of rest) informer.start({ resync: this.options.resync?.(informer.kind) ?? false });
      await Promise.all(rest.map((i) => i.waitForSync()));
      if (generation !== this.generation) return;
      this.refusals = 0;
      this.transition(SYNCED);
    });
  }

  /** Stops for good (the namespace is no longer wanted). */
  retire(): Promise<void> {
    this.retired = true;
    this.generation++;
    clearTimeout(this.timer);
    const stopping = this.informers.map((i) => i.stop());
    this.informers = [];
    this.state = UNWATCHED;
    return Promise.all(stopping).then(() => undefined);
  }

  private informer(share: NamespaceShare, generation: number): Informer {
    const kind = share.kind;
    const selection: Selection = { namespace: this.namespace, ...(share.labelSelector ? { labelSelector: share.labelSelector } : {}), ...(share.fieldSelector ? { fieldSelector: share.fieldSelector } : {}) };
    const informer = new Informer(kind, this.options.listWatch(kind, selection), {
      ...(this.options.resyncPeriodMs !== undefined ? { resyncPeriodMs: this.options.resyncPeriodMs } : {}),
      logger: this.logger,
      ...(share.transform ? { transform: share.transform } : {}),
      ...(this.options.random ? { random: this.options.random } : {}),
      onRelist: (reason) => this.options.onRelist?.(kind, reason),
      onHealth: (ok, error, cause) => {
        // Out of the informer's own loop first: the refusal stops the informer that reports it.
        if (!ok && isForbidden(cause)) queueMicrotask(() => this.refused(generation, error ?? errorMessage(cause)));
      },
    });
    for (const index of this.options.indexesOf?.(kind) ?? []) informer.store.addIndex(index.name, index.fn);
    informer.addHandler(this.options.handlerFor(kind));
    return informer;
  }

  /** The API server refused a list or watch: drop every cache of the namespace and probe again after a backoff. */
  private refused(generation: number, error: string): void {
    if (generation !== this.generation || this.retired) return;
    this.generation++;
    for (const informer of this.informers) void informer.stop();
    this.informers = [];
    const delay = backoffDelay(this.refusals++, { baseMs: 1000, maxMs: DENIED_RETRY_MAX_MS, ...(this.options.random ? { random: this.options.random } : {}), ...this.options.deniedBackoff });
    if (this.state.state !== 'denied') this.logger.warn('secret namespace refused; probing again with backoff', { namespace: this.namespace, error, retryInMs: delay });
    else this.logger.debug('secret namespace still refused', { namespace: this.namespace, retryInMs: delay, refusals: this.refusals });
    this.transition({ state: 'denied', error });
    this.timer = setTimeout(() => this.start(), delay);
    this.timer.unref();
  }

  private transition(next: NamespaceAccess): void {
    const before = this.state;
    this.state = next;
    // A repeated refusal is no change: the objects waiting on the namespace are not reconciled again for it.
    if (before.state === next.state) return;
    if (next.state === 'synced') this.logger.info('secret namespace synced', { namespace: this.namespace, objects: this.informers.reduce((n, i) => n + i.store.size, 0) });
    this.owner.changed(this.namespace, next);
  }
}

/** The per-namespace caches of one cluster (see the module comment). */
export class NamespaceCaches {
  private readonly entries = new Map<string, NamespaceEntry>();
  private readonly logger: Logger;
  private stopped = false;

  constructor(private readonly options: NamespaceCachesOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /**
   * Caches exactly the wanted namespaces, each with its shares: a new namespace starts (pending), one no longer wanted
   * stops (unwatched, its caches dropped), one whose shares changed starts again. Cheap when nothing changed.
   */
  set(wanted: ReadonlyMap<string, readonly NamespaceShare[]>): void {
    if (this.stopped) return;
    for (const [namespace, entry] of this.entries) {
      const shares = wanted.get(namespace);
      if (shares && signature(shares) === entry.signature) continue;
      this.entries.delete(namespace);
      void entry.retire();
      if (!shares) this.changed(namespace, UNWATCHED);
    }
    for (const [namespace, shares] of wanted) {
      if (this.entries.has(namespace) || shares.length === 0) continue;
      const entry = new NamespaceEntry(namespace, shares, signature(shares), this, this.options, this.logger);
      this.entries.set(namespace, entry);
      this.changed(namespace, PENDING);
      entry.start();
    }
  }

  /** What the caches of `namespace` hold. */
  access(namespace: string): NamespaceAccess {
    return this.entries.get(namespace)?.state ?? UNWATCHED;
  }

  /** The namespaces cached (wanted), sorted. */
  namespaces(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** The stores of `kind` in `namespace`, or in every namespace when it is undefined. */
  partsOf(kind: ResourceKind<KubeObject>, namespace?: string): StoreReader[] {
    const id = kindId(kind);
    const entries = namespace === undefined ? [...this.entries.values()] : [this.entries.get(namespace)].filter((e): e is NamespaceEntry => e !== undefined);
    return entries.flatMap((e) => e.informers.filter((i) => kindId(i.kind) === id).map((i) => i.store));
  }

  /** Stops every namespace's informers. */
  async stop(): Promise<void> {
    this.stopped = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(entries.map((e) => e.retire()));
  }

  /** @internal A namespace's state changed. */
  changed(namespace: string, access: NamespaceAccess): void {
    if (this.stopped) return;
    try {
      this.options.onAccess?.(namespace, access);
    } catch (error) {
      this.logger.error('a namespace access listener failed', { namespace, error: errorMessage(error) });
    }
  }
}

/**
 * A kind's store read across its cluster-wide partitions and its per-namespace caches, which come and go: a read in a
 * namespace looks at that namespace's caches only.
 */
export class ScopedStore<T extends KubeObject = KubeObject> implements StoreReader<T> {
  constructor(
    private readonly kind: ResourceKind<KubeObject>,
    private readonly fixed: () => readonly StoreReader[],
    private readonly scoped: () => NamespaceCaches | undefined,
  ) {}

  private parts(namespace?: string): StoreReader<T>[] {
    return [...this.fixed(), ...(this.scoped()?.partsOf(this.kind, namespace) ?? [])] as StoreReader<T>[];
  }

  get size(): number {
    return this.keys().length;
  }

  get(namespace: string | undefined, name: string): T | undefined {
    let found: T | undefined;
    for (const part of this.parts(namespace)) {
      const object = part.get(namespace, name);
      if (object) found = found ? newerOf(found, object) : object;
    }
    return found;
  }

  keys(): ObjectKey[] {
    const parts = this.parts();
    return parts.length === 1 ? parts[0].keys() : [...new Set(parts.flatMap((p) => p.keys()))];
  }

  list(options: ListOptions = {}): T[] {
    const parts = this.parts(options.namespace);
    if (parts.length === 1) return parts[0].list(options);
    const byKey = new Map<ObjectKey, T>();
    for (const part of parts) {
      for (const object of part.list(options)) {
        const key = keyOf(object);
        const seen = byKey.get(key);
        byKey.set(key, seen ? newerOf(seen, object) : object);
      }
    }
    return [...byKey.keys()].sort().map((key) => byKey.get(key) as T);
  }
}
