/**
 * The HTTP conversation with the API server, as the rest of the adapter needs it: one request, one watch stream. The
 * real one (client-node.ts) authenticates with a kubeconfig or the pod's service account; tests use a fake.
 */

/** Query parameters; undefined values are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute path on the server, e.g. `/api/v1/namespaces/a/secrets`. */
  readonly path: string;
  readonly query?: Query;
  /** Serialized as JSON. */
  readonly body?: unknown;
  /** @default "application/json" */
  readonly contentType?: string;
  /** The media type to answer in, e.g. the metadata-only view (see {@link METADATA_ACCEPT}). @default "application/json" */
  readonly accept?: string;
  /**
   * Drop the values of `kubectl apply`'s last-applied annotation from a 200 reply as it arrives, before it is read
   * into a string (src/kube/last-applied.ts): for metadata reads, where that annotation may be most of the reply.
   * @default false
   */
  readonly omitLastApplied?: boolean;
}

/**
 * The `Accept` headers of the API server's metadata-only view (`PartialObjectMetadata`, GA since Kubernetes 1.15): a get
 * and each watch event carry a `PartialObjectMetadata`, a list a `PartialObjectMetadataList`. Deliberately without a
 * plain `application/json` fallback: a server that cannot answer so fails (406) instead of sending whole objects.
 */
export const METADATA_ACCEPT = {
  object: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
  list: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
} as const;

/** Options of a watch. */
export interface WatchOptions {
  /** The media type of the events' objects. @default "application/json" */
  readonly accept?: string;
}

export interface HttpResponse {
  readonly status: number;
  /** The parsed JSON body, or the text when it is not JSON. */
  readonly body: unknown;
}

/** One line of a watch stream. */
export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  /** The object, or a Status for ERROR. */
  readonly object: unknown;
}

/** A running watch. */
export interface WatchStream {
  /** Ends the stream; `onDone` is not called after stop. */
  stop(): void;
}

export interface Transport {
  /** The API server's URL, for messages. */
  readonly server: string;
  /** Sends one request; resolves with any HTTP status (errors are the caller's to interpret), rejects on network errors. */
  request(request: HttpRequest): Promise<HttpResponse>;
  /**
   * Opens a watch (`?watch=true` is added). `onDone` is called once when the stream ends: without an error when the
   * server closed it, with one on a network error, an inactivity timeout or a non-200 answer (a KubeApiError).
   */
  watch(path: string, query: Query, onEvent: (event: WatchEvent) => void, onDone: (error?: Error) => void, options?: WatchOptions): Promise<WatchStream>;
}
