/**
 * How a failed Keystone call is reported, so that callers can decide without parsing messages: retry later
 * (`retryable`), give up and report (`bad-request`, `unauthorized`, `forbidden`), or treat the outcome as an answer
 * (`not-found` on delete means "already gone", `conflict` on create means "that name exists").
 */

/**
 * What went wrong, by cause:
 * - `transport`: no HTTP answer (connection refused or reset, DNS, TLS). Retryable.
 * - `timeout`: no complete answer within the request timeout. Retryable.
 * - `server`: 5xx, 429, or a 2xx reply that is not what the API documents. Retryable.
 * - `bad-request`: 400 and any other 4xx not listed here (Keystone rejected the input). Terminal.
 * - `unauthorized`: 401 (wrong password or secret, expired credential, missing or revoked token). Terminal.
 * - `forbidden`: 403 (the policy denies the call, e.g. a restricted application credential managing credentials). Terminal.
 * - `not-found`: 404 (the resource does not exist; also an unknown or deleted application credential at login). Terminal.
 * - `conflict`: 409 (a resource with that name exists). Terminal.
 */
export type KeystoneErrorKind =
  | 'transport'
  | 'timeout'
  | 'server'
  | 'bad-request'
  | 'unauthorized'
  | 'forbidden'
  | 'not-found'
  | 'conflict';

/** Everything {@link KeystoneError} is built from. */
export interface KeystoneErrorInit {
  readonly kind: KeystoneErrorKind;
  /** HTTP method of the failed request. */
  readonly method: string;
  /** URL path of the failed request (never a query with secrets: the client sends none). */
  readonly path: string;
  /** HTTP status, when Keystone answered. */
  readonly status?: number;
  /** Keystone's own explanation or the transport's, already redacted. */
  readonly detail?: string;
  readonly cause?: unknown;
}

/**
 * A failed Keystone call. The message names the method, the path, the status and Keystone's own explanation, e.g.
 * `Keystone POST /v3/auth/tokens: 401 Unauthorized: The request you have made requires authentication.`
 *
 * It never carries a token, a password, an application-credential secret or a request body: the client does not put
 * them into messages and redacts every value it sent as sensitive from Keystone's explanation before building one.
 */
export class KeystoneError extends Error {
  override readonly name = 'KeystoneError';
  readonly kind: KeystoneErrorKind;
  /** HTTP status, when Keystone answered. */
  readonly status?: number;
  /** Whether the same call may succeed later unchanged (transport errors, timeouts, 5xx). */
  readonly retryable: boolean;
  readonly method: string;
  readonly path: string;
  /** Keystone's explanation (redacted), without the method/path prefix. */
  readonly detail?: string;

  constructor(init: KeystoneErrorInit) {
    super(messageOf(init), init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.status = init.status;
    this.retryable = isRetryable(init.kind);
    this.method = init.method;
    this.path = init.path;
    this.detail = init.detail;
  }
}

/** Whether a {@link KeystoneErrorKind} is worth retrying unchanged. */
export function isRetryable(kind: KeystoneErrorKind): boolean {
  return kind === 'transport' || kind === 'timeout' || kind === 'server';
}

/** Maps an HTTP error status to its {@link KeystoneErrorKind}. */
export function kindOfStatus(status: number): KeystoneErrorKind {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not-found';
    case 409:
      return 'conflict';
    case 408:
      return 'timeout';
    case 429:
      return 'server';
    default:
      return status >= 500 ? 'server' : 'bad-request';
  }
}

/** Whether `error` is a {@link KeystoneError} of one of `kinds`. */
export function isKeystoneError(error: unknown, ...kinds: KeystoneErrorKind[]): error is KeystoneError {
  return error instanceof KeystoneError && (kinds.length === 0 || kinds.includes(error.kind));
}

/**
 * Replaces every occurrence of each sensitive value in `text` with `***`. Keystone's schema errors can echo an input
 * value (`Invalid input for field 'secret': …`), so explanations are redacted before they become messages.
 */
export function redact(text: string, sensitive: readonly string[]): string {
  let out = text;
  for (const value of sensitive) {
    if (value.length > 0) out = out.split(value).join('***');
  }
  return out;
}

function messageOf(init: KeystoneErrorInit): string {
  const head = `Keystone ${init.method} ${init.path}`;
  const status = init.status === undefined ? init.kind : `${init.status}${reasonOf(init.status)}`;
  return init.detail ? `${head}: ${status}: ${init.detail}` : `${head}: ${status}`;
}

function reasonOf(status: number): string {
  const reasons: Record<number, string> = {
    400: ' Bad Request',
    401: ' Unauthorized',
    403: ' Forbidden',
    404: ' Not Found',
    409: ' Conflict',
    500: ' Internal Server Error',
    502: ' Bad Gateway',
    503: ' Service Unavailable',
    504: ' Gateway Timeout',
  };
  return reasons[status] ?? '';
}
