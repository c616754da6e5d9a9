/**
 * OpenBao's KV v2 in memory, at the HTTP level: what the backup client (src/backup/openbao.ts) sends, answered as the
 * real OpenBao answers it (test/e2e/fakes-conformance.test.ts holds it to a real dev server, call for call). The
 * simulation (test/sim/) backs every order up through it.
 *
 * Served, under `/v1/<mount>/`: `data/<path>` GET (the current version, 404 when none or removed) and POST (a new
 * version; `options.cas` checks the current version: 0 only when none exists, else 400), `metadata/<path>` GET (the
 * versions and `custom_metadata`, 404 when never written), POST (sets `custom_metadata`) and DELETE (every version and
 * the metadata; 204 also when there is none). A token it does not know, or whose policy does not grant the capability
 * on the path, gets 403 `permission denied`; a mount it does not serve, 404 (no handler for the route).
 */

/** What a token may do: the capabilities it holds on a path (`data/...` and `metadata/...` below the mount). */
export type Policy = (capability: 'read' | 'create' | 'update' | 'delete' | 'list', path: string) => boolean;

/** One document and its versions. */
interface Stored {
  readonly versions: { data: Record<string, string>; created: Date }[];
  customMetadata: Record<string, string> | null;
  /** The version a read returns; 0: removed (or only metadata written). */
  current: number;
}

/** One request as the fake received it (never a body: the document is a secret). */
export interface OpenBaoCall {
  readonly at: number;
  readonly method: string;
  /** `/v1/<mount>/<data|metadata>/<path>`. */
  readonly path: string;
  readonly status: number;
}

const ALL: Policy = () => true;

export class FakeOpenBaoServer {
  readonly calls: OpenBaoCall[] = [];
  /** Token → policy. */
  readonly tokens = new Map<string, Policy>();
  private readonly documents = new Map<string, Stored>();
  private readonly mounts: Set<string>;
  private readonly now: () => Date;

  constructor(options: { readonly mounts?: readonly string[]; readonly now?: () => Date } = {}) {
    this.mounts = new Set(options.mounts ?? ['openstack']);
    this.now = options.now ?? (() => new Date());
  }

  /** Allows `token` everything, or what `policy` grants. */
  addToken(token: string, policy: Policy = ALL): void {
    this.tokens.set(token, policy);
  }

  /** The document at `<mount>/<path>` now, when one is there. */
  document(backingPath: string): Readonly<Record<string, string>> | undefined {
    const stored = this.documents.get(backingPath);
    return stored && stored.current > 0 ? stored.versions[stored.current - 1].data : undefined;
  }

  /** The owner its metadata names, if any. */
  owner(backingPath: string): string | undefined {
    return this.documents.get(backingPath)?.customMetadata?.owner;
  }

  /** The paths that hold a document. */
  paths(): string[] {
    return [...this.documents.keys()].filter((p) => this.document(p) !== undefined).sort();
  }

  /** Writes a document as another writer would (0.1.0, another installation), without a request. */
  put(backingPath: string, data: Record<string, string>, customMetadata?: Record<string, string>): void {
    const stored = this.documents.get(backingPath) ?? { versions: [], customMetadata: null, current: 0 };
    stored.versions.push({ data: { ...data }, created: this.now() });
    stored.current = stored.versions.length;
    if (customMetadata) stored.customMetadata = { ...customMetadata };
    this.documents.set(backingPath, stored);
  }

  /** Removes a document with its versions and metadata, as another writer would, without a request. */
  remove(backingPath: string): void {
    this.documents.delete(backingPath);
  }

  /** As `fetch` would reach it: `url` absolute (its origin is ignored). */
  readonly fetch = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const parsed = new URL(url);
    const body = typeof init.body === 'string' && init.body.length > 0 ? (JSON.parse(init.body) as unknown) : undefined;
    return this.handle(init.method ?? 'GET', parsed.pathname, new Headers(init.headers), body);
  };

  /** Answers one request. */
  handle(method: string, path: string, headers: Headers, body: unknown): Response {
    const response = this.answer(method, path, headers, body);
    this.calls.push({ at: this.now().getTime(), method, path, status: response.status });
    return response;
  }

  private answer(method: string, path: string, headers: Headers, body: unknown): Response {
    const match = /^\/v1\/([^/]+)\/(data|metadata)\/(.+)$/.exec(path);
    const policy = this.tokens.get(headers.get('x-vault-token') ?? '');
    const capability = method === 'GET' ? 'read' : method === 'DELETE' ? 'delete' : 'update';
    if (!match || !policy || !policy(capability, `${match[2]}/${match[3]}`)) return errors(403, ['permission denied']);
    if (!this.mounts.has(match[1])) return errors(404, [`no handler for route "${path.slice('/v1/'.length)}". route entry not found.`]);
    const [, mount, kind, rest] = match;
    const key = `${mount}/${rest}`;
    const stored = this.documents.get(key);
    if (kind === 'data') {
      if (method === 'GET') {
        if (!stored || stored.current === 0) return errors(404, []);
        const version = stored.versions[stored.current - 1];
        return reply(200, { data: { data: version.data, metadata: this.versionMetadata(stored, stored.current) } });
      }
      if (method !== 'POST' && method !== 'PUT') return errors(405, ['unsupported operation']);
      const input = body as { data?: Record<string, unknown>; options?: { cas?: number } } | undefined;
      const cas = input?.options?.cas;
      if (cas !== undefined && cas !== (stored?.versions.length ?? 0)) return errors(400, ['check-and-set parameter did not match the current version']);
      const data = Object.fromEntries(Object.entries(input?.data ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
      this.put(key, data);
      const written = this.documents.get(key) as Stored;
      return reply(200, { data: this.versionMetadata(written, written.current) });
    }
    if (method === 'GET') {
      if (!stored) return errors(404, []);
      const versions = Object.fromEntries(stored.versions.map((v, i) => [String(i + 1), { created_time: v.created.toISOString(), deletion_time: '', destroyed: false }]));
      return reply(200, { data: { current_version: stored.versions.length, oldest_version: stored.versions.length > 0 ? 1 : 0, max_versions: 0, cas_required: false, custom_metadata: stored.customMetadata, versions } });
    }
    if (method === 'DELETE') {
      this.documents.delete(key);
      return new Response(null, { status: 204 });
    }
    if (method !== 'POST' && method !== 'PUT') return errors(405, ['unsupported operation']);
    const custom = (body as { custom_metadata?: Record<string, string> } | undefined)?.custom_metadata;
    const next = stored ?? { versions: [], customMetadata: null, current: 0 };
    if (custom !== undefined) next.customMetadata = { ...custom };
    this.documents.set(key, next);
    return new Response(null, { status: 204 });
  }

  private versionMetadata(stored: Stored, version: number) {
    return { version, created_time: stored.versions[version - 1].created.toISOString(), deletion_time: '', destroyed: false, custom_metadata: stored.customMetadata };
  }
}

function reply(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

function errors(status: number, list: readonly string[]): Response {
  return reply(status, { errors: list });
}
