/**
 * Typed REST access to any kind the API server serves (core or a group, namespaced or cluster-scoped): get, list with
 * paging, watch, create, replace, server-side apply, merge and JSON patches (of the object or a subresource), delete. Every
 * write carries the operator's field manager. Errors are {@link KubeApiError}s.
 */
import { KubeApiError } from './errors';
import { slimAs, typeOf, type ApplyConfiguration, type KubeObject, type ResourceKind } from './object';
import { METADATA_ACCEPT, type HttpRequest, type Query, type Transport, type WatchEvent, type WatchStream } from './transport';

/** Which objects a list or watch covers. */
export interface Selection {
  /** Only this namespace. @default every namespace */
  readonly namespace?: string;
  /**
   * A label selector in the API server's syntax: `key=value`, `key!=value`, `key` (has the label), `!key` (lacks it),
   * joined by commas (all must hold), e.g. `app.kubernetes.io/managed-by=keystone-appcred`.
   */
  readonly labelSelector?: string;
  /**
   * A field selector, e.g. `metadata.name=keystone-admin`: with exactly one name it lets a list or watch pass an RBAC rule
   * restricted to that name (`resourceNames`), which a plain list never does.
   */
  readonly fieldSelector?: string;
}

/** A complete list and the resourceVersion to watch from. */
export interface ListResult<T> {
  readonly items: T[];
  readonly resourceVersion: string;
}

const CONTENT_TYPE = {
  apply: 'application/apply-patch+yaml',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
} as const;

/** The size of one list page. */
const PAGE_SIZE = 500;

export class KubeApi {
  constructor(
    readonly transport: Transport,
    /** The field manager of every write (server-side apply requires one). */
    readonly fieldManager: string,
  ) {}

  /** `/api/v1/namespaces/ns/secrets/name/status` and the like. */
  path(kind: ResourceKind<KubeObject>, namespace?: string, name?: string, subresource?: string): string {
    const base = kind.group ? `/apis/${kind.group}/${kind.version}` : `/api/${kind.version}`;
    const ns = kind.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    if (kind.namespaced && name !== undefined && !namespace) throw new Error(`${kind.kind} ${name}: a namespaced kind needs a namespace`);
    const item = name !== undefined ? `/${encodeURIComponent(name)}` : '';
    return `${base}${ns}/${kind.plural}${item}${subresource ? `/${subresource}` : ''}`;
  }

  /** The object (its metadata only for a {@link metadataOf} kind), or undefined when it does not exist. */
  async get<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, name: string): Promise<T | undefined> {
    const res = await this.send({ method: 'GET', path: this.path(kind, namespace, name), ...(kind.metadataOnly ? { accept: METADATA_ACCEPT.object, omitLastApplied: true } : {}) }, [404]);
    return res.status === 404 ? undefined : (res.body as T);
  }

  /**
   * Every object of the selection (pages of 500), with apiVersion and kind filled in, and the list's resourceVersion.
   * A {@link metadataOf} kind lists `PartialObjectMetadata`: the objects' other fields never leave the
   * API server, and the last-applied annotations in their metadata are dropped as the reply arrives. Each object is {@link slim}med as its page arrives (no `managedFields`, no last-applied annotation:
   * nothing reads them, and they would otherwise stay in memory for the whole list).
   */
  async list<T extends KubeObject>(kind: ResourceKind<T>, selection: Selection = {}): Promise<ListResult<T>> {
    const items: T[] = [];
    const type = typeOf(kind);
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const res = await this.send({
        method: 'GET',
        path: this.path(kind, selection.namespace),
        query: { labelSelector: selection.labelSelector, fieldSelector: selection.fieldSelector, limit: PAGE_SIZE, continue: cont },
        ...(kind.metadataOnly ? { accept: METADATA_ACCEPT.list, omitLastApplied: true } : {}),
      });
      const body = res.body as { metadata?: { resourceVersion?: string; continue?: string }; items?: T[] };
      for (const item of body.items ?? []) items.push({ ...slimAs(kind, item), ...type });
      resourceVersion = body.metadata?.resourceVersion ?? resourceVersion;
      cont = body.metadata?.continue || undefined;
    } while (cont);
    return { items, resourceVersion };
  }

  /**
   * Watches the selection from `resourceVersion`, with bookmarks; the server ends the stream after `timeoutSeconds`. A
   * {@link metadataOf} kind's events carry `PartialObjectMetadata`.
   */
  watch(
    kind: ResourceKind<KubeObject>,
    selection: Selection & { readonly resourceVersion: string; readonly timeoutSeconds: number },
    onEvent: (event: WatchEvent) => void,
    onDone: (error?: Error) => void,
  ): Promise<WatchStream> {
    const query: Query = {
      labelSelector: selection.labelSelector,
      fieldSelector: selection.fieldSelector,
      resourceVersion: selection.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: selection.timeoutSeconds,
    };
    return this.transport.watch(this.path(kind, selection.namespace), query, onEvent, onDone, kind.metadataOnly ? { accept: METADATA_ACCEPT.object } : {});
  }

  async create<T extends KubeObject>(kind: ResourceKind<T>, object: KubeObject): Promise<T> {
    const res = await this.send({ method: 'POST', path: this.path(kind, object.metadata.namespace), query: { fieldManager: this.fieldManager }, body: object });
    return res.body as T;
  }

  /** PUT: replaces the object; its resourceVersion makes it fail with 409 when stale. */
  async replace<T extends KubeObject>(kind: ResourceKind<T>, object: KubeObject, subresource?: string): Promise<T> {
    const path = this.path(kind, object.metadata.namespace, object.metadata.name, subresource);
    const res = await this.send({ method: 'PUT', path, query: { fieldManager: this.fieldManager }, body: object });
    return res.body as T;
  }

  /** Server-side apply (creates when missing). `force` takes over fields other managers own. */
  async apply<T extends KubeObject>(kind: ResourceKind<T>, object: ApplyConfiguration, options: { force?: boolean; subresource?: string } = {}): Promise<T> {
    const path = this.path(kind, object.metadata.namespace, object.metadata.name, options.subresource);
    const query = { fieldManager: this.fieldManager, force: options.force ? true : undefined };
    const res = await this.send({ method: 'PATCH', path, query, body: object, contentType: CONTENT_TYPE.apply });
    return res.body as T;
  }

  /** A merge patch (RFC 7386) or a JSON patch (RFC 6902) of the object or a subresource. */
  async patch<T extends KubeObject>(
    kind: ResourceKind<T>,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    options: { type: 'merge' | 'json'; subresource?: string },
  ): Promise<T> {
    const path = this.path(kind, namespace, name, options.subresource);
    const res = await this.send({ method: 'PATCH', path, query: { fieldManager: this.fieldManager }, body: patch, contentType: CONTENT_TYPE[options.type] });
    return res.body as T;
  }

  /** Deletes; false when the object did not exist. Preconditions fail with 409. */
  async delete(
    kind: ResourceKind<KubeObject>,
    namespace: string | undefined,
    name: string,
    options: { uid?: string; resourceVersion?: string; propagationPolicy?: string } = {},
  ): Promise<boolean> {
    const preconditions = options.uid || options.resourceVersion ? { uid: options.uid, resourceVersion: options.resourceVersion } : undefined;
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', preconditions, propagationPolicy: options.propagationPolicy ?? 'Background' };
    const res = await this.send({ method: 'DELETE', path: this.path(kind, namespace, name), body }, [404]);
    return res.status !== 404;
  }

  private async send(request: HttpRequest, accepted: readonly number[] = []) {
    const res = await this.transport.request(request);
    if ((res.status >= 200 && res.status < 300) || accepted.includes(res.status)) return res;
    throw KubeApiError.from(res.status, res.body, `${request.method} ${request.path}`);
  }
}
