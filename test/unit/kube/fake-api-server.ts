/**
 * A small in-memory API server behind the {@link Transport} interface, for unit tests of the adapter and the runtime and
 * for the simulation (test/sim/): collections by path, resourceVersions, list paging, watches that resume from a
 * resourceVersion (every change after it is sent, from a history that compaction shortens: a watch from before the
 * compacted version gets 410 Gone), bookmarks, server-side closes, label and field selectors (`k=v`, `k!=v`, `k`, `!k`,
 * `metadata.name=x`; a watch sends DELETED for an object that leaves its selection), the metadata-only view
 * (`PartialObjectMetadata` for gets, lists and watch events), create, PUT with optimistic concurrency, merge patches
 * (with a resourceVersion precondition), apply (a merge that creates, or 409 on a field another manager owns unless
 * forced), the status subresource, delete with
 * preconditions and finalizers, server-side apply's field ownership (./field-owners.ts), and the garbage collector's background deletion of the objects whose owner references
 * all name deleted owners. Every request is recorded. test/e2e/fakes-conformance.test.ts holds these semantics to the
 * real API server.
 *
 * Faults on demand: the next matching request answers a status (`failNext`), every request and watch fails as a refused
 * connection (`down`), a write takes effect and its reply is lost (`loseReplies`), every answer comes late
 * (`latencyMs`), the authorizer refuses (`authorize`), the open watches end (`closeWatches`) or get an ERROR
 * (`watchError`), and the next watches of a collection start further back than asked (`replay`: a watch that sends
 * again what its informer has seen).
 */
import { randomUUID } from 'node:crypto';
import { KubeApiError } from '../../../src/kube/errors';
import { applyMergePatch, jsonEqual } from '../../../src/kube/json';
import { FieldOwners, fieldName, leavesOf, valueAt, without } from './field-owners';
import { METADATA_ACCEPT, type HttpRequest, type HttpResponse, type Query, type Transport, type WatchEvent, type WatchOptions, type WatchStream } from '../../../src/kube/transport';
import { WatchHub, type ChangeType } from './watch-hub';
import { forbidden, partial, selectorOf, status } from './wire';

export type Obj = { apiVersion?: string; kind?: string; metadata: Record<string, unknown> & { name: string; namespace?: string; resourceVersion?: string; uid?: string }; [k: string]: unknown };

export interface FakeApiServerOptions {
  /** The uid of each new object. @default randomUUID */
  readonly uid?: () => string;
  /** The clock of deletionTimestamps. @default () => new Date() */
  readonly now?: () => Date;
  /** Called after every change the server makes (a write, a deletion, the garbage collector's). */
  readonly onChange?: (change: { readonly collection: string; readonly type: ChangeType; readonly object: Obj; readonly old?: Obj; readonly fieldManager?: string }) => void;
}

const PATH = /^\/(api\/v1|apis\/[^/]+\/[^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/;

/** The collection path the fake keys a kind's objects by: `/api/v1/secrets`, `/apis/c5c3.io/v1alpha1/keystoneusers`. */
export const collectionOf = (kind: { readonly group: string; readonly version: string; readonly plural: string }): string => `/${kind.group ? `apis/${kind.group}` : 'api'}/${kind.version}/${kind.plural}`;

/** Collections whose objects nobody server-side applies (their field owners are not kept). */
const UNAPPLIED = new Set(['/apis/coordination.k8s.io/v1/leases', '/apis/events.k8s.io/v1/events', '/api/v1/events']);

/** An object without its resourceVersion, to tell whether a write changes it. */
const withoutVersion = (o: Obj): Obj => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });

/** The uids an object's owner references name ('' for a reference without one: an owner that never exists). */
const ownersOf = (object: Obj): string[] => ((object.metadata.ownerReferences as { uid?: string }[] | undefined) ?? []).map((o) => o.uid ?? '');

/** A refused connection, as Node's fetch reports one. */
const refused = (server: string): Error => Object.assign(new Error(`connect ECONNREFUSED ${server}`), { code: 'ECONNREFUSED' });

export class FakeApiServer implements Transport {
  readonly server = 'https://fake.invalid';
  readonly requests: (HttpRequest & { watch?: boolean })[] = [];
  /** Collection path → item key → object. */
  private readonly collections = new Map<string, Map<string, Obj>>();
  private readonly watches = new WatchHub();
  private readonly failures: { match: (r: HttpRequest) => boolean; status: number; reason: string }[] = [];
  private readonly fields = new FieldOwners();
  /**
   * The garbage collector's books: how many stored objects carry each uid, and how many name each uid as an owner. A
   * deletion wakes the collector only when a stored object named the deleted one, or one was stored whose owners
   * were all gone already (`strays`): a fleet's thousands of deletions of unowned objects cost no scan of the store.
   */
  private readonly live = new Map<string, number>();
  private readonly owned = new Map<string, number>();
  private strays = false;
  private version = 100;
  /** Delay of each response, in ms (0: next microtask). */
  latencyMs = 0;
  /** Every request and new watch fails as a refused connection (set it with {@link cut} to end the open watches too). */
  down = false;
  /** Writes matching this take effect, and their reply is lost (the client sees a reset connection). */
  loseReplies: (request: HttpRequest) => boolean = () => false;
  /**
   * The authorizer, as RBAC answers: false refuses the request with 403 Forbidden (a list, a get or a write; a watch is
   * refused as it starts). @default everything allowed
   */
  authorize: (request: { readonly verb: string; readonly namespace?: string; readonly plural: string; readonly name?: string; readonly fieldSelector?: string }) => boolean = () => true;

  constructor(private readonly options: FakeApiServerOptions = {}) {}

  /** Stores an object as a user would (no request recorded); returns it with its metadata. */
  seed(collectionPath: string, input: object, fieldManager?: string): Obj {
    const object = JSON.parse(JSON.stringify(input)) as Obj;
    const stored = this.stamp(object, this.items(collectionPath).get(this.itemKey(object.metadata.namespace, object.metadata.name)));
    this.put(collectionPath, stored, fieldManager ?? 'user');
    return stored;
  }

  /** Removes an object as a user would: at once, or (`graceful`) as a delete request does, respecting finalizers. */
  remove(collectionPath: string, namespace: string | undefined, name: string, options: { graceful?: boolean } = {}): void {
    const old = this.items(collectionPath).get(this.itemKey(namespace, name));
    if (!old) return;
    if (options.graceful && ((old.metadata.finalizers as string[] | undefined) ?? []).length > 0) {
      if (!old.metadata.deletionTimestamp) this.write(collectionPath, { ...old, metadata: { ...old.metadata, deletionTimestamp: this.timestamp() } }, old, 200, 'user');
      return;
    }
    this.erase(collectionPath, old);
  }

  /** The stored object. */
  object(collectionPath: string, namespace: string | undefined, name: string): Obj | undefined {
    return this.items(collectionPath).get(this.itemKey(namespace, name));
  }

  /** Every stored object of a collection. */
  list(collectionPath: string): Obj[] {
    return [...this.items(collectionPath).values()];
  }

  /** Makes the next matching request answer `status`. */
  failNext(match: (r: HttpRequest) => boolean, code: number, reason = 'InternalError'): void {
    this.failures.push({ match, status: code, reason });
  }

  /** Ends every open watch as the server would after timeoutSeconds (or, with an error, as a broken connection). */
  closeWatches(error?: Error): void {
    this.watches.closeAll(error);
  }

  /** Goes down (every request and new watch refused) and ends the open watches with a reset connection. */
  cut(): void {
    this.down = true;
    this.closeWatches(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
  }

  /** Sends an ERROR event with a Status to every open watch (e.g. 410). */
  watchError(code: number, reason: string): void {
    this.watches.error(status(code, reason, 'watch error'));
  }

  /** Sends a bookmark at the current resourceVersion to every open watch. */
  bookmark(): void {
    this.watches.bookmark(this.version);
  }

  /** Forgets the history below the current version: a watch that resumes from before it gets 410 Gone. */
  compact(): void {
    this.watches.compact(this.version);
  }

  /** Watches from a resourceVersion below this get 410 Gone. */
  get compactedBelow(): number {
    return this.watches.compactedBelow;
  }

  set compactedBelow(version: number) {
    this.watches.compactedBelow = version;
  }

  /** The next watch of each collection (all, or `collectionPath`) starts `changes` changes earlier than it asks. */
  replay(changes: number, collectionPath?: string): void {
    this.watches.replay(changes, collectionPath);
  }

  get openWatches(): number {
    return this.watches.open;
  }

  /** The current resourceVersion. */
  get resourceVersion(): number {
    return this.version;
  }

  async request(request: HttpRequest): Promise<HttpResponse> {
    this.requests.push(request);
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    else await Promise.resolve();
    if (this.down) throw refused(this.server);
    const failure = this.failures.findIndex((f) => f.match(request));
    if (failure >= 0) {
      const f = this.failures.splice(failure, 1)[0];
      return { status: f.status, body: status(f.status, f.reason, 'injected') };
    }
    const response = this.answer(request);
    if (request.method !== 'GET' && response.status < 300 && this.loseReplies(request)) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    return response;
  }

  async watch(path: string, query: Query, onEvent: (event: WatchEvent) => void, onDone: (error?: Error) => void, options: WatchOptions = {}): Promise<WatchStream> {
    this.requests.push({ method: 'GET', path, query, watch: true, ...(options.accept ? { accept: options.accept } : {}) });
    await Promise.resolve();
    if (this.down) throw refused(this.server);
    const m = PATH.exec(path);
    if (!m) throw new Error(`bad watch path ${path}`);
    const [, group, namespace, plural] = m;
    const fieldSelector = typeof query.fieldSelector === 'string' ? query.fieldSelector : undefined;
    if (!this.authorize({ verb: 'watch', plural, ...(namespace ? { namespace } : {}), ...(fieldSelector ? { fieldSelector } : {}) })) {
      throw KubeApiError.from(403, forbidden('watch', plural, namespace), `WATCH ${path}`);
    }
    return this.watches.watch({ collection: `/${group}/${plural}`, namespace, selector: selectorOf(query), metadataOnly: options.accept === METADATA_ACCEPT.object }, query, this.version, onEvent, onDone);
  }

  private answer(request: HttpRequest): HttpResponse {
    const m = PATH.exec(request.path);
    if (!m) return { status: 404, body: '404 page not found' };
    const [, group, namespace, plural, name, sub] = m;
    const collection = `/${group}/${plural}`;
    const query = request.query ?? {};
    const fieldManager = typeof query.fieldManager === 'string' ? query.fieldManager : undefined;
    const verb = { GET: name === undefined ? 'list' : 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' }[request.method];
    const fieldSelector = typeof query.fieldSelector === 'string' ? query.fieldSelector : undefined;
    if (!this.authorize({ verb, plural, ...(namespace ? { namespace } : {}), ...(name ? { name } : {}), ...(fieldSelector ? { fieldSelector } : {}) })) {
      return { status: 403, body: forbidden(verb, plural, namespace) };
    }
    if (name === undefined) {
      if (request.method === 'GET') return this.listed(collection, namespace, query, request.accept === METADATA_ACCEPT.list);
      if (request.method === 'POST') return this.create(collection, namespace, request.body as Obj, fieldManager);
      return { status: 405, body: status(405, 'MethodNotAllowed', request.method) };
    }
    const stored = this.items(collection).get(this.itemKey(namespace, name));
    const notFound = { status: 404, body: status(404, 'NotFound', `${plural} "${name}" not found`) };
    switch (request.method) {
      case 'GET':
        return stored ? { status: 200, body: request.accept === METADATA_ACCEPT.object ? partial(stored) : stored } : notFound;
      case 'PUT': {
        if (!stored) return notFound;
        const body = request.body as Obj;
        if (body.metadata.resourceVersion !== stored.metadata.resourceVersion) return this.conflict(plural, name);
        const next = sub === 'status' ? { ...stored, status: body.status } : { ...body, status: stored.status };
        return this.write(collection, next, stored, 200, fieldManager);
      }
      case 'PATCH': {
        if (request.contentType === 'application/apply-patch+yaml') {
          const manager = fieldManager ?? 'unknown';
          const owned = `${collection}|${this.itemKey(namespace, name)}`;
          const conflicts = stored ? this.fields.conflicts(owned, stored, request.body, manager) : [];
          if (conflicts.length > 0 && query.force !== true && query.force !== 'true') {
            const message = `Apply failed with ${conflicts.length} conflict${conflicts.length > 1 ? 's' : ''}: ${conflicts.map((c) => `conflict with "${c.owner}": ${fieldName(c.path)}`).join(', ')}`;
            return { status: 409, body: status(409, 'Conflict', message) };
          }
          let merged = applyMergePatch(stored ?? {}, request.body) as Obj;
          for (const path of this.fields.applied(owned, request.body, manager)) merged = without(merged, path) as Obj;
          return this.write(collection, { ...merged, metadata: { ...merged.metadata, namespace } }, stored, stored ? 200 : 201, fieldManager);
        }
        if (!stored) return notFound;
        const patch = request.body as { metadata?: { resourceVersion?: string } };
        if (patch.metadata?.resourceVersion && patch.metadata.resourceVersion !== stored.metadata.resourceVersion) return this.conflict(plural, name);
        const merged = applyMergePatch(stored, patch) as Obj;
        const next = sub === 'status' ? { ...stored, status: merged.status } : { ...merged, status: stored.status };
        if (next.metadata.deletionTimestamp && ((next.metadata.finalizers as string[] | undefined) ?? []).length === 0) {
          this.erase(collection, stored);
          return { status: 200, body: next };
        }
        return this.write(collection, next, stored, 200, fieldManager);
      }
      case 'DELETE': {
        if (!stored) return notFound;
        const pre = (request.body as { preconditions?: { uid?: string; resourceVersion?: string } } | undefined)?.preconditions;
        if ((pre?.uid && pre.uid !== stored.metadata.uid) || (pre?.resourceVersion && pre.resourceVersion !== stored.metadata.resourceVersion)) {
          return { status: 409, body: status(409, 'Conflict', 'Precondition failed') };
        }
        if (((stored.metadata.finalizers as string[] | undefined) ?? []).length > 0) {
          if (stored.metadata.deletionTimestamp) return { status: 200, body: stored };
          return this.write(collection, { ...stored, metadata: { ...stored.metadata, deletionTimestamp: this.timestamp() } }, stored, 200, fieldManager);
        }
        this.erase(collection, stored);
        return { status: 200, body: status(200, '', 'deleted') };
      }
      default:
        return { status: 405, body: status(405, 'MethodNotAllowed', request.method) };
    }
  }

  private listed(collection: string, namespace: string | undefined, query: Query, metadataOnly: boolean): HttpResponse {
    const selector = selectorOf(query);
    const all = [...this.items(collection).values()]
      .filter((o) => !namespace || o.metadata.namespace === namespace)
      .filter(selector)
      .map((o) => (metadataOnly ? partial(o) : o))
      .map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
    const offset = Number(query.continue ?? 0);
    const limit = Number(query.limit ?? all.length) || all.length;
    const page = all.slice(offset, offset + limit);
    const more = offset + limit < all.length;
    return { status: 200, body: { kind: 'List', metadata: { resourceVersion: String(this.version), ...(more ? { continue: String(offset + limit) } : {}) }, items: page } };
  }

  private create(collection: string, namespace: string | undefined, body: Obj, fieldManager?: string): HttpResponse {
    const ns = namespace ?? body.metadata.namespace;
    if (this.items(collection).has(this.itemKey(ns, body.metadata.name))) return { status: 409, body: status(409, 'AlreadyExists', `"${body.metadata.name}" already exists`) };
    return this.write(collection, { ...body, metadata: { ...body.metadata, namespace: ns } }, undefined, 201, fieldManager);
  }

  private conflict(plural: string, name: string): HttpResponse {
    return { status: 409, body: status(409, 'Conflict', `Operation cannot be fulfilled on ${plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`) };
  }

  private write(collection: string, next: Obj, old: Obj | undefined, code: number, fieldManager?: string): HttpResponse {
    // A write that changes nothing is no write: the object keeps its resourceVersion and no watch hears of it.
    if (old && jsonEqual(withoutVersion(next), withoutVersion(old))) return { status: code, body: old };
    const stored = this.stamp(next, old);
    this.put(collection, stored, fieldManager);
    return { status: code, body: stored };
  }

  private timestamp(): string {
    return (this.options.now?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  private stamp(object: Obj, old: Obj | undefined): Obj {
    const body = (o: Obj | undefined) => JSON.stringify(Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => !['metadata', 'status', 'apiVersion', 'kind'].includes(k))));
    const generation = (old?.metadata.generation as number | undefined) ?? 0;
    return {
      ...object,
      metadata: {
        ...object.metadata,
        uid: old?.metadata.uid ?? object.metadata.uid ?? (this.options.uid ?? randomUUID)(),
        creationTimestamp: old?.metadata.creationTimestamp ?? object.metadata.creationTimestamp ?? this.timestamp(),
        ...(old?.metadata.deletionTimestamp ? { deletionTimestamp: old.metadata.deletionTimestamp } : {}),
        resourceVersion: String(++this.version),
        // The spec changed, or (as the API server counts it for a custom resource) the deletion began: one more.
        generation: !old || body(old) !== body(object) || (object.metadata.deletionTimestamp !== undefined && old.metadata.deletionTimestamp === undefined) ? generation + 1 : generation,
      },
    };
  }

  private put(collection: string, object: Obj, fieldManager?: string): void {
    const key = this.itemKey(object.metadata.namespace, object.metadata.name);
    const old = this.items(collection).get(key);
    this.items(collection).set(key, object);
    if (old) this.unbook(old);
    this.book(object);
    // The writer owns what it changed (server-side apply's managedFields; an apply took its own leaves already). Leases
    // and Events nobody applies: their fields are not tracked (the leader's renewals are most writes).
    if (!UNAPPLIED.has(collection)) {
      const changed = [...leavesOf(object)].filter(([path, value]) => !jsonEqual(valueAt(old, path), value));
      this.fields.wrote(`${collection}|${key}`, Object.fromEntries(changed), fieldManager ?? 'unknown', true);
    }
    this.notify(collection, old ? 'MODIFIED' : 'ADDED', object, old, fieldManager);
  }

  /** Removes a stored object; the garbage collector then deletes, in the background, what only it owned. */
  private erase(collection: string, stored: Obj): void {
    this.items(collection).delete(this.itemKey(stored.metadata.namespace, stored.metadata.name));
    this.unbook(stored);
    this.fields.forget(`${collection}|${this.itemKey(stored.metadata.namespace, stored.metadata.name)}`);
    this.notify(collection, 'DELETED', { ...stored, metadata: { ...stored.metadata, resourceVersion: String(++this.version) } });
    const uid = stored.metadata.uid;
    if (uid && ((this.owned.get(uid) ?? 0) > 0 || this.strays)) setTimeout(() => this.collectGarbage(), 0);
  }

  /** Enters a stored object in the garbage collector's books ({@link unbook}: takes one out, replaced or deleted). */
  private book(object: Obj): void {
    const owners = ownersOf(object);
    if (owners.length > 0 && !owners.some((uid) => this.live.has(uid))) this.strays = true;
    for (const uid of owners) count(this.owned, uid, 1);
    if (object.metadata.uid) count(this.live, object.metadata.uid, 1);
  }

  private unbook(object: Obj): void {
    for (const uid of ownersOf(object)) count(this.owned, uid, -1);
    if (object.metadata.uid) count(this.live, object.metadata.uid, -1);
  }

  /** Deletes (as a delete request would) every object whose owner references all name objects that no longer exist. */
  private collectGarbage(): void {
    const live = new Set(this.live.keys());
    for (const [collection, items] of this.collections) {
      for (const object of [...items.values()]) {
        const owners = ownersOf(object);
        if (owners.length === 0 || owners.some((uid) => live.has(uid))) continue;
        if (((object.metadata.finalizers as string[] | undefined) ?? []).length > 0) {
          if (!object.metadata.deletionTimestamp) this.write(collection, { ...object, metadata: { ...object.metadata, deletionTimestamp: this.timestamp() } }, object, 200, 'garbage-collector');
        } else this.erase(collection, object);
      }
    }
    this.strays = false;
  }

  /** Records a change (for the watches, and `onChange`). */
  private notify(collection: string, type: ChangeType, object: Obj, old?: Obj, fieldManager?: string): void {
    this.watches.changed({ version: this.version, collection, type, object, ...(old ? { old } : {}) });
    this.options.onChange?.({ collection, type, object, ...(old ? { old } : {}), ...(fieldManager ? { fieldManager } : {}) });
  }

  private items(collection: string): Map<string, Obj> {
    let items = this.collections.get(collection);
    if (!items) this.collections.set(collection, (items = new Map()));
    return items;
  }

  private itemKey(namespace: string | undefined, name: string): string {
    return `${namespace ?? ''}|${name}`;
  }
}

/** Adds `by` to a count, dropping it at zero. */
function count(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
