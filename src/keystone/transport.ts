/**
 * One HTTP exchange with Keystone's v3 API on the global `fetch`: URL joining, per-request timeout, custom CA bundle,
 * JSON, and the classification of every failure into a {@link KeystoneError}. Sessions and resource clients build on it.
 */
import type { Agent } from 'undici';
import { withDeadline } from '../http/deadline';
import { leasePool, type PoolLease } from './dispatchers';
import { KeystoneError, kindOfStatus, redact } from './errors';
import { MAX_RETRY_AFTER_MS, retryAfterMs, type EndpointLimit, type KeystoneLimits } from './limits';
import { routeOf, type ExchangeOutcome } from './pacing';
import { isRecord } from './reply';

/** The subset of `fetch` the client uses; inject one in unit tests. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Where Keystone is and how to reach it. */
export interface KeystoneConnectionOptions {
  /** Identity endpoint ending in `/v3`, e.g. `https://keystone.example.com/v3`. */
  readonly authUrl: string;
  /**
   * PEM certificates to trust for this endpoint instead of the system's, for a Keystone behind a private CA.
   * @default the system's trust store
   */
  readonly caBundle?: string;
  /**
   * Milliseconds one request (including reading the reply) may take before it fails with kind `timeout`.
   * @default 30000
   */
  readonly timeoutMs?: number;
  /** Replaces the global `fetch` (unit tests). */
  readonly fetch?: FetchLike;
  /**
   * The process's limits per Keystone endpoint, shared by every client of the endpoint (see limits.ts).
   * @default no limit (a `Retry-After` is still honoured, for this client's request)
   */
  readonly limits?: KeystoneLimits;
}

/** HTTP methods the client uses. */
export type KeystoneMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request to Keystone. */
export interface KeystoneRequest {
  readonly method: KeystoneMethod;
  /** Path below the auth URL's origin, e.g. `/v3/auth/tokens`; may carry a query (never a secret). */
  readonly path: string;
  /** Token to send as `X-Auth-Token`. */
  readonly token?: string;
  /** Token to send as `X-Subject-Token` (token validation). */
  readonly subjectToken?: string;
  /** JSON body. */
  readonly body?: unknown;
  /** Values in the body that must never reach an error message (passwords, secrets). Tokens are added automatically. */
  readonly sensitive?: readonly string[];
}

/** A successful (2xx) reply. */
export interface KeystoneResponse {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON body; `undefined` for an empty body (204, HEAD). */
  readonly body: unknown;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** Sends of one request when Keystone answers 429 or 503 with a `Retry-After` of at most a minute. */
const RETRY_AFTER_ATTEMPTS = 3;

/**
 * Sends requests to one Keystone. Every non-2xx reply and every failure to get one is thrown as a
 * {@link KeystoneError} naming the method and path, with Keystone's own message for error replies, redacted.
 */
export class KeystoneTransport {
  /** The auth URL without a trailing slash, e.g. `http://127.0.0.1:5000/v3`. */
  readonly authUrl: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly timeoutMs: number;
  private readonly fetchImpl: FetchLike;
  /** The shared pool of the CA bundle's connections (dispatchers.ts), until `close`. */
  private readonly pool?: PoolLease;
  /** The endpoint's limit, when the process limits its Keystone requests. */
  private readonly limit?: EndpointLimit;

  constructor(options: KeystoneConnectionOptions) {
    let url: URL;
    try {
      url = new URL(options.authUrl);
    } catch {
      throw new Error(`authUrl (${options.authUrl}) is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new Error(`authUrl (${options.authUrl}) must be an http or https URL`);
    }
    const basePath = url.pathname.replace(/\/+$/, '');
    if (!basePath.endsWith('/v3')) throw new Error(`authUrl (${options.authUrl}) must end in /v3`);
    if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
      throw new Error(`timeoutMs (${options.timeoutMs}) must be a positive number of milliseconds`);
    }
    this.origin = url.origin;
    this.basePath = basePath;
    this.authUrl = `${url.origin}${basePath}`;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    // Node's fetch is undici; a dispatcher that trusts the bundle alone scopes the trust to the clients of that bundle.
    if (options.caBundle !== undefined) this.pool = leasePool(options.caBundle);
    if (options.limits) this.limit = options.limits.of(this.authUrl);
  }

  /**
   * Resolves a path relative to the auth URL: `auth/tokens` → `/v3/auth/tokens` (for an auth URL `…/v3`).
   * `''` is the auth URL's own path; absolute paths (starting with `/`) are taken as they are.
   */
  pathOf(relative: string): string {
    if (relative === '') return this.basePath;
    return relative.startsWith('/') ? relative : `${this.basePath}/${relative}`;
  }

  /** Sends one request; resolves on 2xx, throws {@link KeystoneError} otherwise. */
  async send(request: KeystoneRequest): Promise<KeystoneResponse> {
    const path = this.pathOf(request.path);
    const where = path.split('?')[0];
    const sensitive = [...(request.sensitive ?? []), request.token ?? '', request.subjectToken ?? ''];
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'keystone-appcred' };
    if (request.token !== undefined) headers['x-auth-token'] = request.token;
    if (request.subjectToken !== undefined) headers['x-subject-token'] = request.subjectToken;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const init: RequestInit & { dispatcher?: Agent } = {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      redirect: 'manual',
    };
    if (this.pool) init.dispatcher = this.pool.agent;

    let response: Response;
    let text: string;
    for (let attempt = 1; ; attempt++) {
      const exchange = () =>
        withDeadline(this.timeoutMs, async (signal) => {
          const reply = await this.fetchImpl(`${this.origin}${path}`, { ...init, signal });
          return [reply, await reply.text()] as const;
        });
      try {
        [response, text] = await (this.limit ? this.limit.schedule(exchange, { route: routeOf(request.method, path), outcome: outcomeOf }) : exchange());
      } catch (error) {
        const failure = this.failure(request.method, where, error, sensitive);
        this.limit?.ended(failure.kind);
        throw failure;
      }
      this.limit?.ended(response.status >= 200 && response.status < 300 ? 'success' : kindOfStatus(response.status));
      // 429 Too Many Requests, 503 Service Unavailable with Retry-After: Keystone did not act on the request and says
      // when to come back. The endpoint pauses for everyone (limits.ts), and the request is sent again then.
      const wait = response.status === 429 || response.status === 503 ? retryAfterMs(response.headers.get('retry-after')) : undefined;
      if (wait === undefined || wait > MAX_RETRY_AFTER_MS || attempt >= RETRY_AFTER_ATTEMPTS) break;
      if (this.limit) this.limit.pause(wait);
      else await new Promise((resolve) => setTimeout(resolve, wait));
    }
    if (response.status < 200 || response.status >= 300) {
      throw new KeystoneError({
        kind: kindOfStatus(response.status),
        method: request.method,
        path: where,
        status: response.status,
        detail: redact(errorMessageOf(text), sensitive) || undefined,
      });
    }
    let body: unknown;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        throw new KeystoneError({
          kind: 'server',
          method: request.method,
          path: where,
          status: response.status,
          detail: 'the reply is not JSON',
        });
      }
    }
    return { status: response.status, headers: response.headers, body };
  }

  /** Releases this client's lease on the CA bundle's connection pool, if any (the pool closes when no client holds it). */
  async close(): Promise<void> {
    this.pool?.release();
  }

  private failure(method: string, path: string, error: unknown, sensitive: readonly string[]): KeystoneError {
    const timedOut = isRecord(error) && (error.name === 'TimeoutError' || error.name === 'AbortError');
    if (timedOut) {
      return new KeystoneError({ kind: 'timeout', method, path, detail: `no reply within ${this.timeoutMs} ms` });
    }
    return new KeystoneError({
      kind: 'transport',
      method,
      path,
      detail: redact(`${describeTransportError(error)} (${this.origin})`, sensitive),
      cause: error,
    });
  }
}

/**
 * How an exchange ended, for the endpoint's pacing: a 2xx reply is answered (its latency counts); a timeout, a 429 or
 * a 503 says Keystone is overloaded; anything else (a refusal, a transport error) says nothing about its queue.
 */
function outcomeOf(settled: { value: readonly [Response, string] } | { error: unknown }): ExchangeOutcome {
  if ('error' in settled) return isRecord(settled.error) && (settled.error.name === 'TimeoutError' || settled.error.name === 'AbortError') ? 'overloaded' : 'other';
  const status = settled.value[0].status;
  if (status >= 200 && status < 300) return 'answered';
  return status === 429 || status === 503 ? 'overloaded' : 'other';
}

/** Keystone's `{"error": {"message": …}}`, or a short excerpt of a non-JSON reply. */
function errorMessageOf(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    const error = isRecord(parsed) ? parsed.error : undefined;
    if (isRecord(error) && typeof error.message === 'string') return error.message;
  } catch {
    // not JSON: fall through
  }
  const plain = text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  return plain.length > 200 ? `${plain.slice(0, 200)}…` : plain;
}

/**
 * `fetch failed` says nothing; its cause (`connect ECONNREFUSED 127.0.0.1:5000`) does. Duck-typed rather than
 * `instanceof Error`, because errors from Node's fetch may come from another realm (e.g. under Jest).
 */
function describeTransportError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && isRecord(current) && typeof current.message === 'string'; depth++) {
    const code = typeof current.code === 'string' && !current.message.includes(current.code) ? ` (${current.code})` : '';
    if (current.message.length > 0 || code) parts.push(`${current.message}${code}`);
    current = current.cause;
  }
  return parts.length > 0 ? parts.join(': ') : String(error);
}
