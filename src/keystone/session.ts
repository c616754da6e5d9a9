/**
 * An authenticated connection to Keystone that keeps its token fresh, so callers just make requests.
 */
import { isKeystoneError } from './errors';
import { issueToken, validateToken, type IssuedToken, type KeystoneAuth } from './auth';
import {
  KeystoneTransport,
  type KeystoneConnectionOptions,
  type KeystoneRequest,
  type KeystoneResponse,
} from './transport';

/** Options of {@link KeystoneSession}. */
export interface KeystoneSessionOptions extends KeystoneConnectionOptions {
  /** How to authenticate: a password scoped to a project, or an application credential. */
  readonly auth: KeystoneAuth;
  /**
   * A token is reused until this many milliseconds before it expires, then replaced, so that a request never
   * starts with a token about to lapse mid-flight.
   * @default 60000
   */
  readonly refreshMarginMs?: number;
  /** Clock in epoch milliseconds (tests). @default Date.now */
  readonly now?: () => number;
}

/** A request made through a session: the session supplies the token. */
export type SessionRequest = Omit<KeystoneRequest, 'token'>;

/**
 * Authenticates lazily on the first request and reuses the token until shortly before it expires. Concurrent callers
 * share one login. When Keystone answers 401 to a request made with a reused token (revoked, keys rotated, Keystone
 * restarted), the session logs in again once and retries that request once; a 401 with a fresh token is final.
 *
 * The password or secret stays in memory for re-authentication and never appears in errors.
 */
export class KeystoneSession {
  readonly transport: KeystoneTransport;
  private readonly auth: KeystoneAuth;
  private readonly refreshMarginMs: number;
  private readonly now: () => number;
  private current?: IssuedToken;
  private pending?: Promise<IssuedToken>;

  constructor(options: KeystoneSessionOptions) {
    this.transport = new KeystoneTransport(options);
    this.auth = options.auth;
    this.refreshMarginMs = options.refreshMarginMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** The identity endpoint, ending in `/v3`. */
  get authUrl(): string {
    return this.transport.authUrl;
  }

  /** A token valid for at least the refresh margin, logging in if needed. */
  async token(): Promise<IssuedToken> {
    return (await this.acquire()).token;
  }

  /** The id of the authenticated user. */
  async userId(): Promise<string> {
    return (await this.token()).userId;
  }

  /** The id of the project the session's token is scoped to. */
  async projectId(): Promise<string> {
    return (await this.token()).projectId;
  }

  /** Sends a request with the session's token (see the class doc for the one re-login on 401). */
  async request(request: SessionRequest): Promise<KeystoneResponse> {
    const { token, fresh } = await this.acquire();
    try {
      return await this.transport.send({ ...request, token: token.token });
    } catch (error) {
      if (fresh || !isKeystoneError(error, 'unauthorized')) throw error;
      this.forget(token);
      const retry = await this.acquire();
      return this.transport.send({ ...request, token: retry.token.token });
    }
  }

  /** Validates another token with this session's (see {@link validateToken}). */
  async validate(subjectToken: string): Promise<IssuedToken> {
    const { token } = await this.acquire();
    return validateToken(this.transport, token.token, subjectToken);
  }

  /** Drops the cached token; the next request logs in again. */
  invalidate(): void {
    this.current = undefined;
  }

  /** Releases connections held for a custom CA bundle. The session must not be used afterwards. */
  async close(): Promise<void> {
    await this.transport.close();
  }

  private forget(token: IssuedToken): void {
    if (this.current === token) this.current = undefined;
  }

  private async acquire(): Promise<{ token: IssuedToken; fresh: boolean }> {
    const cached = this.current;
    if (cached && cached.expiresAt.getTime() - this.refreshMarginMs > this.now()) return { token: cached, fresh: false };
    if (!this.pending) {
      this.pending = (async (): Promise<IssuedToken> => {
        try {
          const issued = await issueToken(this.transport, this.auth);
          this.current = issued;
          return issued;
        } finally {
          this.pending = undefined;
        }
      })();
    }
    return { token: await this.pending, fresh: true };
  }
}
