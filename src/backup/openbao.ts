/**
 * The backup of the delivered document in OpenBao (KV v2), on the global `fetch`: the spec's "the backup comes first"
 * (Delivered Secret contract). The document at the backing path holds the delivered Secret's three keys, one of which
 * is the credential id the lifecycle reads back to know which credential the backup holds.
 *
 * KV v2 splits a path in two: `<mount>/data/<path>` holds the versions, `<mount>/metadata/<path>` the key itself.
 * Removing deletes the metadata, which removes every version, so a torn-down order leaves nothing behind.
 *
 * A backup with an owner claims its path with its first document: KV v2's check-and-set (`options.cas`) writes it only
 * over the version this port last saw there (0: none), so of two writers that both found the path empty (two Pulumi
 * creates given the same explicit `backup.path`) exactly one wins, and the other's write is refused before its owner
 * is written anywhere (issue 46). Then the path's metadata names the owner.
 */
import type { BackupPort, SecretData } from '../lifecycle/ports';

/** The subset of `fetch` the client uses; inject one in unit tests. */
export type BackupFetch = (url: string, init: RequestInit) => Promise<Response>;

/** Where the backup lives and how to authenticate. */
export interface OpenBaoBackupOptions {
  /** The OpenBao address, e.g. `https://bao.example.com:8200` (no `/v1`). */
  readonly address: string;
  /** A token allowed to read, write and delete at the path (`X-Vault-Token`). Never logged. */
  readonly token: string;
  /** The KV v2 mount. @default "openstack" */
  readonly mount?: string;
  /** The path of the document below the mount, e.g. `keystone/<ns>/<prefix>/service-accounts/application-credential`. */
  readonly path: string;
  /** An OpenBao namespace (`X-Vault-Namespace`). @default none */
  readonly namespace?: string;
  /** Milliseconds one request may take. @default 30000 */
  readonly timeoutMs?: number;
  /** Replaces the global `fetch` (unit tests). @default globalThis.fetch */
  readonly fetch?: BackupFetch;
  /**
   * The owner id of the order or resource this backup is for: written into the path's metadata
   * (`custom_metadata.owner`) with the document, so that whoever else is pointed at the same path can tell the
   * document is not theirs ({@link OpenBaoBackup.readOwner}). @default none
   */
  readonly owner?: string;
}

/** A failed OpenBao call. The message names the method, the path and the status; never the token or the document. */
export class OpenBaoError extends Error {
  override readonly name = 'OpenBaoError';
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number | undefined,
    detail: string,
  ) {
    super(`OpenBao ${method} ${path}: ${status ?? 'no reply'}: ${detail}`);
  }
}

/** The default KV v2 mount of the backing path (its first segment). */
export const DEFAULT_MOUNT = 'openstack';

/** The backup at one KV v2 path. */
export class OpenBaoBackup implements BackupPort {
  private readonly base: string;
  private readonly mount: string;
  private readonly path: string;
  private readonly fetchImpl: BackupFetch;
  private readonly timeoutMs: number;
  /** The path's metadata names this backup's owner already (read or written by this instance). */
  private claimed = false;
  /** The document's version this instance last saw (0: none), for the claim's check-and-set. */
  private version?: number;

  constructor(private readonly options: OpenBaoBackupOptions) {
    let url: URL;
    try {
      url = new URL(options.address);
    } catch {
      throw new Error(`address (${options.address}) is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`address (${options.address}) must be an http or https URL`);
    if (options.token.length === 0) throw new Error('token must not be empty');
    this.base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    this.mount = trimSlashes(options.mount ?? DEFAULT_MOUNT);
    this.path = trimSlashes(options.path);
    if (this.mount.length === 0) throw new Error('mount must not be empty');
    if (this.path.length === 0) throw new Error('path must not be empty');
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** The document as stored, or `undefined` when the path holds none (never written, or removed). */
  async readDocument(): Promise<Record<string, string> | undefined> {
    const response = await this.send('GET', 'data', undefined, [404]);
    if (response.status === 404) {
      this.version = 0;
      return undefined;
    }
    const body = (await response.json()) as { data?: { data?: unknown; metadata?: { version?: unknown } } };
    this.version = typeof body.data?.metadata?.version === 'number' ? body.data.metadata.version : undefined;
    const data = body.data?.data;
    if (data === null || data === undefined || typeof data !== 'object') return undefined;
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(data)) if (typeof value === 'string') out[key] = value;
    return out;
  }

  /** The credential id of the document the backup holds, if any. */
  async read(): Promise<string | undefined> {
    return (await this.readDocument())?.application_credential_id;
  }

  /** The owner id the path's metadata names (`custom_metadata.owner`), if any: none for a path never written. */
  async readOwner(): Promise<string | undefined> {
    const response = await this.send('GET', 'metadata', undefined, [404]);
    if (response.status === 404) return undefined;
    const body = (await response.json()) as { data?: { custom_metadata?: Record<string, unknown> | null } };
    const owner = body.data?.custom_metadata?.owner;
    if (typeof owner === 'string' && owner === this.options.owner) this.claimed = true;
    return typeof owner === 'string' ? owner : undefined;
  }

  /**
   * Writes a new version of the document: the three keys. With an owner whose path's metadata does not name it yet (as
   * this instance read or wrote it), the write claims the path: the document only over the version last seen there (a
   * read first when this instance has read nothing), refused with OpenBao's 400 when another writer came first, and
   * then the owner in the metadata (once per instance).
   */
  async write(data: SecretData): Promise<void> {
    const claiming = this.options.owner !== undefined && !this.claimed;
    if (claiming && this.version === undefined) await this.readDocument();
    const response = await this.send('POST', 'data', { ...(claiming ? { options: { cas: this.version ?? 0 } } : {}), data: { ...data } });
    const written = ((await response.json().catch(() => ({}))) as { data?: { version?: unknown } }).data?.version;
    this.version = typeof written === 'number' ? written : undefined;
    if (!claiming) return;
    await this.send('POST', 'metadata', { custom_metadata: { owner: this.options.owner } });
    this.claimed = true;
  }

  /** Removes the document with every version; a path that holds none is fine. */
  async remove(): Promise<void> {
    await this.send('DELETE', 'metadata', undefined, [404]);
  }

  private async send(method: 'GET' | 'POST' | 'DELETE', kind: 'data' | 'metadata', body?: unknown, accepted: readonly number[] = []): Promise<Response> {
    const where = `/v1/${this.mount}/${kind}/${this.path}`;
    const headers: Record<string, string> = { 'x-vault-token': this.options.token, accept: 'application/json' };
    if (this.options.namespace !== undefined) headers['x-vault-namespace'] = this.options.namespace;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.base}${where}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'manual',
      });
    } catch (error) {
      throw new OpenBaoError(method, where, undefined, error instanceof Error ? describe(error) : String(error));
    }
    if ((response.status >= 200 && response.status < 300) || accepted.includes(response.status)) return response;
    const text = await response.text().catch(() => '');
    throw new OpenBaoError(method, where, response.status, errorsOf(text));
  }
}

function trimSlashes(value: string): string {
  return value.replace(/^\/+|\/+$/g, '');
}

/** OpenBao's `{"errors": [...]}`, or a short excerpt. The reply never echoes the token or the written data. */
export function errorsOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { errors?: unknown };
    if (Array.isArray(parsed.errors) && parsed.errors.length > 0) return parsed.errors.map(String).join('; ');
  } catch {
    // not JSON
  }
  const plain = text.replace(/\s+/g, ' ').trim();
  return plain.length > 200 ? `${plain.slice(0, 200)}…` : plain || 'no explanation';
}

function describe(error: Error): string {
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
