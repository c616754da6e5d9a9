/**
 * Errors of the Kubernetes API, as the API server reports them (`metav1.Status`), with the predicates the runtime acts on.
 */

/** A failed API request: the HTTP status and the Status object's reason and message. */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';

  constructor(
    /** HTTP status code (409 conflict, 404 not found, 410 gone, ...). */
    readonly status: number,
    /** The Status reason, e.g. `Conflict`, `NotFound`, `Expired`, `Forbidden`. */
    readonly reason: string,
    message: string,
    /** What was requested, e.g. `PATCH /apis/c5c3.io/v1alpha1/namespaces/a/controlplanes/cp/status`. */
    readonly request: string,
  ) {
    super(`${request}: ${status} ${reason}: ${message}`);
  }

  /** Builds the error from a response body (a Status object when the API server wrote it). */
  static from(status: number, body: unknown, request: string): KubeApiError {
    const s = typeof body === 'object' && body !== null ? (body as { reason?: unknown; message?: unknown }) : {};
    const reason = typeof s.reason === 'string' && s.reason ? s.reason : defaultReason(status);
    const message = typeof s.message === 'string' ? s.message : typeof body === 'string' ? body.slice(0, 300) : '';
    return new KubeApiError(status, reason, message, request);
  }
}

function defaultReason(status: number): string {
  switch (status) {
    case 400: return 'BadRequest';
    case 401: return 'Unauthorized';
    case 403: return 'Forbidden';
    case 404: return 'NotFound';
    case 409: return 'Conflict';
    case 410: return 'Expired';
    case 422: return 'Invalid';
    case 429: return 'TooManyRequests';
    default: return status >= 500 ? 'InternalError' : 'Unknown';
  }
}

const statusOf = (error: unknown): number | undefined => (error instanceof KubeApiError ? error.status : undefined);

/** A write lost an optimistic-concurrency race (stale resourceVersion) or an apply conflict: re-read and retry. */
export function isConflict(error: unknown): boolean {
  return statusOf(error) === 409 && (error as KubeApiError).reason !== 'AlreadyExists';
}

/** A create found an object of that name. */
export function isAlreadyExists(error: unknown): boolean {
  return statusOf(error) === 409 && (error as KubeApiError).reason === 'AlreadyExists';
}

/** The object (or the kind) does not exist. */
export function isNotFound(error: unknown): boolean {
  return statusOf(error) === 404;
}

/** The watch's or list's resourceVersion is too old: relist. */
export function isGone(error: unknown): boolean {
  return statusOf(error) === 410;
}

/** RBAC refused the request. */
export function isForbidden(error: unknown): boolean {
  return statusOf(error) === 403;
}
