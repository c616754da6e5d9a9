/**
 * Sessions kept across passes, so that an identity logs in to Keystone once per token lifetime instead of once per
 * pass. A password login costs Keystone one bcrypt verification, as much as a credential create: a reconciler that
 * logged in on every pass spent half of a rotation's Keystone work on logins.
 *
 * A session is kept per connection: the endpoint and its CA bundle, the identity and scope, the secret it logs in
 * with, and a `generation` the caller names (a user's password generation). Every pass of that identity shares it; its
 * token is reused until shortly before it expires, a 401 drops it and logs in once more (see {@link KeystoneSession}).
 * A new generation, or a changed password or CA bundle, is another connection: it never uses the old token, and it
 * replaces the session of its `family` (the same endpoint, identity and scope), which is closed. Tokens live in memory
 * only, are never persisted and never logged; the key holds a digest, never the password.
 */
import { createHash } from 'node:crypto';
import type { KeystoneAuth } from './auth';
import type { KeystoneLimits } from './limits';
import { KeystoneSession } from './session';
import type { FetchLike } from './transport';

/** Options of {@link KeystoneSessions}. */
export interface KeystoneSessionsOptions {
  /** Sessions kept; the least recently used is closed beyond it. @default 1024 */
  readonly maxSessions?: number;
  /** Per-request timeout. @default the client's (30 s) */
  readonly timeoutMs?: number;
  /** The process's limits per Keystone endpoint. @default none */
  readonly limits?: KeystoneLimits;
  /** Replaces the global fetch (tests). */
  readonly fetch?: FetchLike;
  /** Clock in epoch milliseconds (tests). @default Date.now */
  readonly now?: () => number;
}

/** One identity at one Keystone. */
export interface SessionConnection {
  /** Identity endpoint ending in `/v3`. */
  readonly authUrl: string;
  /** PEM of the endpoint's CA bundle; absent: the system trust store. */
  readonly caBundle?: string;
  readonly auth: KeystoneAuth;
  /** What makes a credential new although the identity is the same, e.g. a user's password generation. */
  readonly generation?: string | number;
}

interface Entry {
  readonly session: KeystoneSession;
  readonly family: string;
}

const digest = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/** The identity and scope of a connection, without its secret. */
function familyOf(connection: SessionConnection): unknown[] {
  const auth = connection.auth;
  const who = auth.method === 'password' ? ['password', auth.user, auth.project] : ['application-credential', 'id' in auth ? auth.id : { name: auth.name, user: auth.user }];
  return [connection.authUrl, ...who];
}

/** Sessions by connection, least recently used first. */
export class KeystoneSessions {
  private readonly entries = new Map<string, Entry>();
  /** The key of the session each family uses now. */
  private readonly families = new Map<string, string>();
  private readonly max: number;

  constructor(private readonly options: KeystoneSessionsOptions = {}) {
    this.max = options.maxSessions ?? 1024;
  }

  /** The session of `connection`, shared with every other caller of the same connection. Do not close it. */
  session(connection: SessionConnection): KeystoneSession {
    const family = digest(familyOf(connection));
    const secret = connection.auth.method === 'password' ? connection.auth.password : connection.auth.secret;
    const key = digest([familyOf(connection), connection.caBundle ?? '', connection.generation ?? '', secret]);
    let entry = this.entries.get(key);
    if (entry) this.entries.delete(key);
    else {
      const replaced = this.families.get(family);
      if (replaced !== undefined) this.drop(replaced);
      const session = new KeystoneSession({
        authUrl: connection.authUrl,
        auth: connection.auth,
        ...(connection.caBundle !== undefined ? { caBundle: connection.caBundle } : {}),
        ...(this.options.timeoutMs !== undefined ? { timeoutMs: this.options.timeoutMs } : {}),
        ...(this.options.limits ? { limits: this.options.limits } : {}),
        ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
        ...(this.options.now ? { now: this.options.now } : {}),
      });
      entry = { session, family };
      this.families.set(family, key);
    }
    this.entries.set(key, entry);
    while (this.entries.size > this.max) this.drop(this.entries.keys().next().value as string);
    return entry.session;
  }

  /** Sessions kept. */
  get size(): number {
    return this.entries.size;
  }

  /** Closes every session (connection pools of custom CA bundles). */
  async close(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    this.families.clear();
    await Promise.all(all.map((e) => e.session.close()));
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    if (this.families.get(entry.family) === key) this.families.delete(entry.family);
    // A pass may still hold the session: its CA pool lingers (dispatchers.ts), so a request under way completes.
    void entry.session.close();
  }
}
