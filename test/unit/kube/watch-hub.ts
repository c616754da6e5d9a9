/**
 * The fake API server's watches (./fake-api-server.ts), as the API server's watch cache serves them: a watch resumes
 * from a resourceVersion (every change after it is sent first, from a history that compaction shortens: a watch from
 * before the compacted version gets 410 Gone), an object entering a watch's selection is ADDED to it and one leaving
 * it DELETED, a watch asked for with `timeoutSeconds` ends then (with a bookmark 2 s before, when bookmarks are
 * allowed), and on demand the watches end, get an ERROR, a bookmark, or resume further back than they ask (a replay).
 */
import type { Query, WatchEvent, WatchStream } from '../../../src/kube/transport';
import { partial, status } from './wire';

type Obj = { metadata: Record<string, unknown> & { namespace?: string } };

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change, as the history keeps it for watches that resume. */
export interface Change {
  readonly version: number;
  readonly collection: string;
  readonly type: ChangeType;
  readonly object: Obj;
  readonly old?: Obj;
}

/** What a watch covers. */
export interface WatchScope {
  readonly collection: string;
  readonly namespace?: string;
  readonly selector: (object: Obj) => boolean;
  readonly metadataOnly: boolean;
}

interface Watcher extends WatchScope {
  readonly onEvent: (event: WatchEvent) => void;
  readonly onDone: (error?: Error) => void;
  open: boolean;
}

export class WatchHub {
  /** Watches from a resourceVersion below this get 410 Gone. */
  compactedBelow = 0;
  private readonly watchers: Watcher[] = [];
  private readonly history: Change[] = [];
  private readonly replays = new Map<string, number>();
  private current = 0;

  /** Opens a watch of `scope` from `query.resourceVersion`; `version` is the server's current one. */
  watch(scope: WatchScope, query: Query, version: number, onEvent: (event: WatchEvent) => void, onDone: (error?: Error) => void): WatchStream {
    this.current = version;
    const watcher: Watcher = { ...scope, onEvent, onDone, open: true };
    const stream = { stop: () => void (watcher.open = false) };
    this.watchers.push(watcher);
    const back = this.replays.get(scope.collection) ?? 0;
    this.replays.delete(scope.collection);
    const from = Number(query.resourceVersion ?? 0);
    if (from < this.compactedBelow) {
      queueMicrotask(() => onEvent({ type: 'ERROR', object: status(410, 'Expired', `too old resource version: ${from} (${this.compactedBelow})`) }));
      return stream;
    }
    // What changed since `from` (and, replayed, the `back` changes before it), sent before anything newer.
    const mine = from > 0 ? this.history.filter((c) => c.collection === scope.collection) : [];
    const again = back > 0 ? mine.filter((c) => c.version <= from).slice(-back) : [];
    const missed = [...again, ...mine.filter((c) => c.version > from)];
    queueMicrotask(() => {
      for (const change of missed) if (watcher.open) this.send(watcher, change);
    });
    const seconds = Number(query.timeoutSeconds ?? 0);
    if (seconds > 0) {
      if (query.allowWatchBookmarks === true || query.allowWatchBookmarks === 'true') setTimeout(() => watcher.open && watcher.onEvent(this.bookmarkEvent()), Math.max(0, seconds - 2) * 1000).unref();
      setTimeout(() => this.end(watcher), seconds * 1000).unref();
    }
    return stream;
  }

  /** Records a change and tells each watch of its collection. */
  changed(change: Change): void {
    this.current = change.version;
    this.history.push(change);
    for (const w of this.watchers) if (w.open && w.collection === change.collection) this.send(w, change);
  }

  /** Ends every open watch (as after timeoutSeconds, or with an error as a broken connection). */
  closeAll(error?: Error): void {
    for (const w of this.watchers.splice(0)) {
      if (!w.open) continue;
      w.open = false;
      w.onDone(error);
    }
  }

  /** Sends an ERROR event with a Status to every open watch. */
  error(statusObject: unknown): void {
    for (const w of this.watchers) if (w.open) w.onEvent({ type: 'ERROR', object: statusObject });
  }

  /** Sends a bookmark at `version` to every open watch. */
  bookmark(version: number): void {
    this.current = version;
    for (const w of this.watchers) if (w.open) w.onEvent(this.bookmarkEvent());
  }

  /** Forgets the history below `version`. */
  compact(version: number): void {
    this.compactedBelow = version;
    this.history.length = 0;
  }

  /** The next watch of each collection (all, or `collection`) starts `changes` changes earlier than it asks. */
  replay(changes: number, collection?: string): void {
    for (const c of collection ? [collection] : new Set(this.watchers.filter((w) => w.open).map((w) => w.collection))) this.replays.set(c, changes);
  }

  get open(): number {
    return this.watchers.filter((w) => w.open).length;
  }

  private bookmarkEvent(): WatchEvent {
    return { type: 'BOOKMARK', object: { kind: 'Status', apiVersion: 'v1', metadata: { resourceVersion: String(this.current) } } };
  }

  private end(watcher: Watcher): void {
    if (!watcher.open) return;
    watcher.open = false;
    this.watchers.splice(this.watchers.indexOf(watcher), 1);
    watcher.onDone();
  }

  /** As the API server does: an object entering a watch's selection is ADDED to it, one leaving it DELETED. */
  private send(w: Watcher, change: Change): void {
    const { type, object, old } = change;
    if (w.namespace && w.namespace !== object.metadata.namespace) return;
    const now = w.selector(object);
    const before = old !== undefined && w.selector(old);
    const seen = type === 'MODIFIED' ? (now && !before ? 'ADDED' : !now && before ? 'DELETED' : now ? 'MODIFIED' : undefined) : now ? type : undefined;
    if (seen) w.onEvent({ type: seen, object: w.metadataOnly ? partial(object) : object });
  }
}
