/**
 * A small in-memory API server behind the {@link Transport} interface, for unit tests of the adapter and the runtime:
 * collections by path, resourceVersions, list paging, watches (with bookmarks, compaction → 410, server-side closes),
 * label selectors (`k=v`, `k!=v`, `k`, `!k`; a watch sends DELETED for an object that leaves its selection), the
 * metadata-only view (`PartialObjectMetadata` for gets, lists and watch events), create, PUT with optimistic concurrency, merge patches (with a resourceVersion precondition), apply (as a merge that
 * creates), the status subresource, delete with preconditions and finalizers. Every request is recorded.
 */
import { randomUUID } from 'node:crypto';
import { KubeApiError } from '../../../src/kube/errors';
import { applyMergePatch } from '../../../src/kube/json';
import { METADATA_ACCEPT, type HttpRequest, type HttpResponse, type Query, type Transport, type WatchEvent, type WatchOptions, type WatchStream } from '../../../src/kube/transport';

type Obj = { apiVersion?: string; kind?: string; metadata: Record<string, unknown> & { name: string; namespace?: string; resourceVersion?: string }; [k: string]: unknown };

interface Watcher {
  readonly collection: string;
  readonly namespace?: string;
  readonly selector: (object: Obj) => boolean;
  readonly metadataOnly: boolean;
  readonly onEvent: (event: WatchEvent) => void;
  readonly onDone: (error?: Error) => void;
  open: boolean;
}

const PATH = /^\/(api\/v1|apis\/[^/]+\/[^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/;

/** The label and field selectors of a query as a predicate (labels: `k=v`, `k!=v`, `k`, `!k`; fields: `metadata.name=x`). */
function selectorOf(query: Query): (object: Obj) => boolean {
  const labels = labelSelectorOf(query);
  const fields = (typeof query.fieldSelector === 'string' ? query.fieldSelector : '')
    .split(',')
    .filter(Boolean)
    .map((term) => {
      const [path, value] = term.split('=');
      return (o: Obj) => String(path.split('.').reduce<unknown>((v, step) => (v as Record<string, unknown> | undefined)?.[step], o)) === value;
    });
  return (o) => labels(o) && fields.every((f) => f(o));
}

function labelSelectorOf(query: Query): (object: Obj) => boolean {
  const text = typeof query.labelSelector === 'string' ? query.labelSelector : '';
  const terms = text
    .split(',')
    .filter(Boolean)
    .map((term): ((labels: Record<string, string>) => boolean) => {
      const ne = /^([^!=]+)!=(.*)$/.exec(term);
      if (ne) return (l) => l[ne[1]] !== ne[2];
      const eq = /^([^!=]+)==?(.*)$/.exec(term);
      if (eq) return (l) => l[eq[1]] === eq[2];
      if (term.startsWith('!')) return (l) => !(term.slice(1) in l);
      return (l) => term in l;
    });
  return (o) => terms.every((t) => t((o.metadata.labels as Record<string, string> | undefined) ?? {}));
}

/** An object as the metadata-only view serves it. */
const partial = (o: Obj): Obj => ({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: o.metadata });

const status = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });

/** A 403 as the RBAC authorizer words it. */
const forbidden = (verb: string, plural: string, namespace?: string) =>
  status(403, 'Forbidden', `${plural} is forbidden: User "system:serviceaccount:ops:operator" cannot ${verb} resource "${plural}" in API group ""${namespace ? ` in the namespace "${namespace}"` : ' at the cluster scope'}`);

export class FakeApiServer implements Transport {
  readonly server = 'https://fake.invalid';
  readonly requests: (HttpRequest & { watch?: boolean })[] = [];
  private readonly objects = new Map<string, Obj>();
  private readonly watchers: Watcher[] = [];
  private readonly failures: { match: (r: HttpRequest) => boolean; status: number; reason: string }[] = [];
  private version = 100;
  /** Watches from a resourceVersion below this get 410 Gone. */
  compactedBelow = 0;
  /** Delay of each response, in ms (0: next microtask). */
  latencyMs = 0;
  /**
   * The authorizer, as RBAC answers: false refuses the request with 403 Forbidden (a list, a get or a write; a watch is
   * refused as it starts). @default everything allowed
   */
  authorize: (request: { readonly verb: string; readonly namespace?: string; readonly plural: string; readonly name?: string; readonly fieldSelector?: string }) => boolean = () => true;

  /** Stores an object as a user would (no request recorded); returns it with its metadata. */
  seed(collectionPath: string, input: object): Obj {
    const object = JSON.parse(JSON.stringify(input)) as Obj;
    const stored = this.stamp(object, this.objects.get(this.itemKey(collectionPath, object.metadata.namespace, object.metadata.name)));
    this.put(collectionPath, stored);
    return stored;
  }

  /** Removes an object as a user would. */
  remove(collectionPath: string, namespace: string | undefined, name: string): void {
    const key = this.itemKey(collectionPath, namespace, name);
    const old = this.objects.get(key);
    if (!old) return;
    this.objects.delete(key);
    this.notify(collectionPath, 'DELETED', { ...old, metadata: { ...old.metadata, resourceVersion: String(++this.version) } });
  }

  /** The stored object. */
  object(collectionPath: string, namespace: string | undefined, name: string): Obj | undefined {
    return this.objects.get(this.itemKey(collectionPath, namespace, name));
  }

  /** Makes the next matching request answer `status`. */
  failNext(match: (r: HttpRequest) => boolean, code: number, reason = 'InternalError'): void {
    this.failures.push({ match, status: code, reason });
  }

  /** Ends every open watch as the server would after timeoutSeconds. */
  closeWatches(error?: Error): void {
    for (const w of this.watchers.splice(0)) if (w.open) {
      w.open = false;
      w.onDone(error);
    }
  }

  /** Sends an ERROR event with a Status to every open watch (e.g. 410). */
  watchError(code: number, reason: string): void {
    for (const w of this.watchers) if (w.open) w.onEvent({ type: 'ERROR', object: status(code, reason, 'watch error') });
  }

  /** Sends a bookmark at the current resourceVersion to every open watch. */
  bookmark(): void {
    for (const w of this.watchers) if (w.open) w.onEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(this.version) } } });
  }

  get openWatches(): number {
    return this.watchers.filter((w) => w.open).length;
  }

  async request(request: HttpRequest): Promise<HttpResponse> {
    this.requests.push(request);
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    else await Promise.resolve();
    const failure = this.failures.findIndex((f) => f.match(request));
    if (failure >= 0) {
      const f = this.failures.splice(failure, 1)[0];
      return { status: f.status, body: status(f.status, f.reason, 'injected') };
    }
    const m = PATH.exec(request.path);
    if (!m) return { status: 404, body: '404 page not found' };
    const [, group, namespace, plural, name, sub] = m;
    const collection = `/${group}/${plural}`;
    const query = request.query ?? {};
    const verb = { GET: name === undefined ? 'list' : 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' }[request.method];
    const fieldSelector = typeof query.fieldSelector === 'string' ? query.fieldSelector : undefined;
    if (!this.authorize({ verb, plural, ...(namespace ? { namespace } : {}), ...(name ? { name } : {}), ...(fieldSelector ? { fieldSelector } : {}) })) {
      return { status: 403, body: forbidden(verb, plural, namespace) };
    }
    if (name === undefined) {
      if (request.method === 'GET') return this.list(collection, namespace, query, request.accept === METADATA_ACCEPT.list);
      if (request.method === 'POST') return this.create(collection, namespace, request.body as Obj);
      return { status: 405, body: status(405, 'MethodNotAllowed', request.method) };
    }
    const key = this.itemKey(collection, namespace, name);
    const stored = this.objects.get(key);
    const notFound = { status: 404, body: status(404, 'NotFound', `${plural} "${name}" not found`) };
    switch (request.method) {
      case 'GET':
        return stored ? { status: 200, body: request.accept === METADATA_ACCEPT.object ? partial(stored) : stored } : notFound;
      case 'PUT': {
        if (!stored) return notFound;
        const body = request.body as Obj;
        if (body.metadata.resourceVersion !== stored.metadata.resourceVersion) return this.conflict(plural, name);
        const next = sub === 'status' ? { ...stored, status: body.status } : { ...body, status: stored.status };
        return this.write(collection, next, stored);
      }
      case 'PATCH': {
        if (request.contentType === 'application/apply-patch+yaml') {
          const merged = applyMergePatch(stored ?? {}, request.body) as Obj;
          return this.write(collection, { ...merged, metadata: { ...merged.metadata, namespace } }, stored);
        }
        if (!stored) return notFound;
        const patch = request.body as { metadata?: { resourceVersion?: string } };
        if (patch.metadata?.resourceVersion && patch.metadata.resourceVersion !== stored.metadata.resourceVersion) return this.conflict(plural, name);
        const merged = applyMergePatch(stored, patch) as Obj;
        const next = sub === 'status' ? { ...stored, status: merged.status } : { ...merged, status: stored.status };
        if (next.metadata.deletionTimestamp && ((next.metadata.finalizers as string[] | undefined) ?? []).length === 0) {
          this.objects.delete(key);
          this.notify(collection, 'DELETED', this.stamp(next, stored));
          return { status: 200, body: next };
        }
        return this.write(collection, next, stored);
      }
      case 'DELETE': {
        if (!stored) return notFound;
        const pre = (request.body as { preconditions?: { uid?: string; resourceVersion?: string } } | undefined)?.preconditions;
        if ((pre?.uid && pre.uid !== stored.metadata.uid) || (pre?.resourceVersion && pre.resourceVersion !== stored.metadata.resourceVersion)) {
          return { status: 409, body: status(409, 'Conflict', 'Precondition failed') };
        }
        if (((stored.metadata.finalizers as string[] | undefined) ?? []).length > 0) {
          return this.write(collection, { ...stored, metadata: { ...stored.metadata, deletionTimestamp: new Date().toISOString() } }, stored);
        }
        this.objects.delete(key);
        this.notify(collection, 'DELETED', { ...stored, metadata: { ...stored.metadata, resourceVersion: String(++this.version) } });
        return { status: 200, body: status(200, '', 'deleted') };
      }
      default:
        return { status: 405, body: status(405, 'MethodNotAllowed', request.method) };
    }
  }

  async watch(path: string, query: Query, onEvent: (event: WatchEvent) => void, onDone: (error?: Error) => void, options: WatchOptions = {}): Promise<WatchStream> {
    this.requests.push({ method: 'GET', path, query, watch: true, ...(options.accept ? { accept: options.accept } : {}) });
    await Promise.resolve();
    const m = PATH.exec(path);
    if (!m) throw new Error(`bad watch path ${path}`);
    const [, group, namespace, plural] = m;
    const fieldSelector = typeof query.fieldSelector === 'string' ? query.fieldSelector : undefined;
    if (!this.authorize({ verb: 'watch', plural, ...(namespace ? { namespace } : {}), ...(fieldSelector ? { fieldSelector } : {}) })) {
      throw KubeApiError.from(403, forbidden('watch', plural, namespace), `WATCH ${path}`);
    }
    const watcher: Watcher = { collection: `/${group}/${plural}`, namespace, selector: selectorOf(query), metadataOnly: options.accept === METADATA_ACCEPT.object, onEvent, onDone, open: true };
    const from = Number(query.resourceVersion ?? 0);
    if (from < this.compactedBelow) {
      queueMicrotask(() => onEvent({ type: 'ERROR', object: status(410, 'Expired', `too old resource version: ${from}`) }));
    }
    this.watchers.push(watcher);
    return { stop: () => { watcher.open = false; } };
  }

  private list(collection: string, namespace: string | undefined, query: Query, metadataOnly: boolean): HttpResponse {
    const selector = selectorOf(query);
    const all = [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`${collection}|`))
      .map(([, o]) => o)
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

  private create(collection: string, namespace: string | undefined, body: Obj): HttpResponse {
    const key = this.itemKey(collection, namespace ?? body.metadata.namespace, body.metadata.name);
    if (this.objects.has(key)) return { status: 409, body: status(409, 'AlreadyExists', `"${body.metadata.name}" already exists`) };
    return this.write(collection, { ...body, metadata: { ...body.metadata, namespace: namespace ?? body.metadata.namespace } }, undefined, 201);
  }

  private conflict(plural: string, name: string): HttpResponse {
    return { status: 409, body: status(409, 'Conflict', `Operation cannot be fulfilled on ${plural} "${name}": the object has been modified`) };
  }

  private write(collection: string, next: Obj, old: Obj | undefined, code = 200): HttpResponse {
    const stored = this.stamp(next, old);
    this.put(collection, stored);
    return { status: code, body: stored };
  }

  private stamp(object: Obj, old: Obj | undefined): Obj {
    const body = (o: Obj | undefined) => JSON.stringify(Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => !['metadata', 'status', 'apiVersion', 'kind'].includes(k))));
    const generation = (old?.metadata.generation as number | undefined) ?? 0;
    return {
      ...object,
      metadata: {
        ...object.metadata,
        uid: old?.metadata.uid ?? (object.metadata.uid as string | undefined) ?? randomUUID(),
        resourceVersion: String(++this.version),
        generation: !old || body(old) !== body(object) ? generation + 1 : generation,
      },
    };
  }

  private put(collection: string, object: Obj): void {
    const key = this.itemKey(collection, object.metadata.namespace, object.metadata.name);
    const old = this.objects.get(key);
    this.objects.set(key, object);
    this.notify(collection, old ? 'MODIFIED' : 'ADDED', object, old);
  }

  /** Tells each watch of the collection; as the API server does, an object entering a selection is ADDED to it, one leaving it DELETED. */
  private notify(collection: string, type: WatchEvent['type'], object: Obj, old?: Obj): void {
    for (const w of this.watchers) {
      if (!w.open || w.collection !== collection || (w.namespace && w.namespace !== object.metadata.namespace)) continue;
      const now = w.selector(object);
      const before = old !== undefined && w.selector(old);
      const seen = type === 'MODIFIED' ? (now && !before ? 'ADDED' : !now && before ? 'DELETED' : now ? 'MODIFIED' : undefined) : now ? type : undefined;
      if (seen) w.onEvent({ type: seen, object: w.metadataOnly ? partial(object) : object });
    }
  }

  private itemKey(collection: string, namespace: string | undefined, name: string): string {
    return `${collection}|${namespace ?? ''}|${name}`;
  }
}
