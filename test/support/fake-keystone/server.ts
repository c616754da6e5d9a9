/**
 * Keystone's v3 API in memory, at the HTTP level: what the project's Keystone client (src/keystone) sends, answered as
 * the real Keystone answers it. test/e2e/fakes-conformance.test.ts holds it to the real one (test/support/keystone.ts),
 * call for call. The simulation (test/sim/) runs the whole operator against it, so a simulated pass goes through the
 * real sessions, token reuse, limits, error classes and retries. (The port-level fakes, test/support/fake-keystone.ts
 * and test/unit/plane/fakes, stand in for the client itself in the lifecycle's and the plane's unit tests.)
 *
 * Served: `GET /v3` (the version); tokens (`POST /v3/auth/tokens` with a password scoped to a project, or an
 * application credential by id or by name and user; `GET` validates one); domains and roles by name; users and
 * projects (./admin.ts); a user's application credentials (./credentials.ts). Without a token → 401; a password or
 * secret that does not match, an expired credential, a project the user holds no role on → 401; an unknown credential
 * → 404; the admin API without the admin role → 403. `admin` implies `member` implies `reader`, as `keystone-manage
 * bootstrap` sets them up.
 */
import { adminApi } from './admin';
import { credentialsApi } from './credentials';
import { FORBIDDEN, json, keystoneError, KeystoneState, NOT_FOUND, UNAUTHORIZED, type Ref, type StoredCredential, type Token } from './state';

export { json, keystoneError, type StoredCredential } from './state';

/** One request as the fake received it, for counting calls (never a body: it may carry a secret). */
export interface KeystoneCall {
  /** Milliseconds since the epoch, on the fake's clock. */
  readonly at: number;
  readonly method: string;
  /** Without the query. */
  readonly path: string;
  /** The user the request acts as: the token's, or the one a login names; undefined when none is known. */
  readonly userId?: string;
  readonly status: number;
}

export interface FakeKeystoneOptions {
  /** @default () => new Date() */
  readonly now?: () => Date;
  /** What tokens last. @default 1 h (Keystone's default `[token] expiration`) */
  readonly tokenTtlMs?: number;
  /** Mixed into every id and token, so that two fakes never share one. @default "keystone" */
  readonly seed?: string;
}

export class FakeKeystoneServer {
  /** Every request answered, in order. */
  readonly calls: KeystoneCall[] = [];
  /** Called before a credential is deleted through the API (the simulation's invariants look at what holds it). */
  onDeleteCredential?: (credential: StoredCredential) => void;
  private readonly state: KeystoneState;
  private readonly ttl: number;

  constructor(options: FakeKeystoneOptions = {}) {
    this.state = new KeystoneState(options.now ?? (() => new Date()), options.seed ?? 'keystone');
    this.ttl = options.tokenTtlMs ?? 3_600_000;
  }

  /** The application credentials, by id, secrets included. */
  get credentials(): ReadonlyMap<string, StoredCredential> {
    return this.state.credentials;
  }

  // --- the world, as an administrator outside the operator sets it up -------------------------------------------

  /** Creates a user in the Default domain; returns its id. */
  addUser(name: string, password: string): string {
    const id = this.state.next('user');
    this.state.users.set(id, { id, name, domainId: 'default', password });
    return id;
  }

  /** Creates a project in the Default domain; returns its id. */
  addProject(name: string): string {
    const id = this.state.next('project');
    this.state.projects.set(id, { id, name, domainId: 'default', tags: [] });
    return id;
  }

  /** Grants a role (by name) to a user on a project. */
  grant(userId: string, projectId: string, role: string): void {
    this.state.grants.add(`${projectId}/${userId}/${this.state.roleId(role)}`);
  }

  /** Stores a credential as a create by its user would (another installation's, or one 0.1.0 minted). */
  addCredential(input: Omit<StoredCredential, 'id' | 'roles' | 'accessRules' | 'unrestricted'> & { readonly roles?: readonly string[] }): StoredCredential {
    const stored: StoredCredential = { roles: this.state.rolesOf(input.userId, input.projectId), accessRules: [], unrestricted: false, ...input, id: this.state.next('credential') };
    this.state.credentials.set(stored.id, stored);
    return stored;
  }

  /** Changes what a stored credential says of itself (its description: the marks a release wrote, or did not). */
  describe(id: string, description: string | undefined): void {
    const stored = this.state.credentials.get(id);
    if (!stored) return;
    this.state.credentials.set(id, { ...stored, description });
  }

  /** Deletes a credential outside the API (by hand), without the delete hook. */
  removeCredential(id: string): void {
    this.state.credentials.delete(id);
    this.state.revoke((t) => t.credentialId === id);
  }

  userNamed(name: string): string | undefined {
    return [...this.state.users.values()].find((u) => u.name === name)?.id;
  }

  projectNamed(name: string): string | undefined {
    return [...this.state.projects.values()].find((p) => p.name === name)?.id;
  }

  /** Whether the user holds `role` on the project (implied roles included). */
  holds(userId: string, projectId: string, role: string): boolean {
    return this.state.rolesOf(userId, projectId).includes(role);
  }

  /** Whether `id` + `secret` authenticate now (exists, not expired, right secret): what a consumer of them would see. */
  authenticates(id: string | undefined, secret: string | undefined): boolean {
    const c = id === undefined ? undefined : this.state.credentials.get(id);
    return c !== undefined && c.secret === secret && (c.expiresAt === undefined || c.expiresAt > this.state.now());
  }

  /** Every password and credential secret it holds, and every token it issued (for the secret scans). */
  secrets(): string[] {
    return [...[...this.state.users.values()].map((u) => u.password), ...[...this.state.credentials.values()].map((c) => c.secret), ...this.state.tokens.keys()];
  }

  /**
   * The user a request acts as, whether or not it would be answered (for counting calls per user): its token's, the
   * one its path names, or the one a login names.
   */
  actor(path: string, headers: Headers, body: unknown): string | undefined {
    const token = this.state.tokens.get(headers.get('x-auth-token') ?? '');
    if (token) return token.userId;
    const named = /\/v3\/users\/([^/?]+)/.exec(path)?.[1];
    if (named) return decodeURIComponent(named);
    const identity = (body as { auth?: { identity?: { password?: { user?: Ref }; application_credential?: { id?: string; user?: Ref } } } } | undefined)?.auth?.identity;
    if (identity?.password?.user) return this.state.findUser(identity.password.user)?.id;
    const credential = identity?.application_credential;
    if (credential?.id !== undefined) return this.state.credentials.get(credential.id)?.userId;
    return credential?.user ? this.state.findUser(credential.user)?.id : undefined;
  }

  // --- HTTP --------------------------------------------------------------------------------------------------------

  /** As `fetch` would reach it: `url` absolute (its origin is ignored). */
  readonly fetch = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const parsed = new URL(url);
    const body = typeof init.body === 'string' && init.body.length > 0 ? (JSON.parse(init.body) as unknown) : undefined;
    return this.handle(init.method ?? 'GET', `${parsed.pathname}${parsed.search}`, new Headers(init.headers), body);
  };

  /** Answers one request (`path` below the origin, with its query). */
  handle(method: string, path: string, headers: Headers, body: unknown): Response {
    const token = headers.get('x-auth-token') ?? undefined;
    const caller = token !== undefined ? this.state.valid(token) : undefined;
    const [pathname, query = ''] = path.split('?');
    let userId = caller?.userId;
    const answer = (response: Response): Response => {
      this.calls.push({ at: this.state.now().getTime(), method, path: pathname, ...(userId !== undefined ? { userId } : {}), status: response.status });
      return response;
    };
    const parts = pathname.replace(/\/+$/, '').split('/').slice(1).map(decodeURIComponent);
    if (parts[0] !== 'v3') return answer(keystoneError(404, NOT_FOUND));
    if (parts.length === 1 && method === 'GET') return answer(json(200, { version: { id: 'v3.14', status: 'stable', updated: '2020-04-07T00:00:00Z', links: [{ rel: 'self', href: pathname }] } }));
    if (parts[1] === 'auth' && parts[2] === 'tokens' && method === 'POST') {
      const login = this.login(body);
      userId = login.userId;
      return answer(login.response);
    }
    if (!caller) return answer(keystoneError(401, UNAUTHORIZED));
    if (parts[1] === 'auth' && parts[2] === 'tokens' && method === 'GET') {
      const subject = this.state.valid(headers.get('x-subject-token') ?? '');
      return answer(subject ? json(200, this.state.tokenBody(subject)) : keystoneError(404, 'Failed to validate token'));
    }
    if (parts[1] === 'users' && parts[3] === 'application_credentials') {
      return answer(credentialsApi(this.state, { method, userId: parts[2], ...(parts[4] !== undefined ? { id: parts[4] } : {}), params: new URLSearchParams(query), body }, caller, this.onDeleteCredential));
    }
    if (!this.state.isAdmin(caller)) return answer(keystoneError(403, FORBIDDEN));
    return answer(adminApi(this.state, method, parts.slice(1), new URLSearchParams(query), body));
  }

  /** `POST /v3/auth/tokens`: the reply, and the user it names when it names one. */
  private login(body: unknown): { response: Response; userId?: string } {
    const auth = (body as { auth?: { identity?: Record<string, unknown>; scope?: { project?: Ref } } } | undefined)?.auth;
    const methods = (auth?.identity?.methods as string[] | undefined) ?? [];
    const now = this.state.now();
    if (methods[0] === 'application_credential') {
      const given = auth?.identity?.application_credential as { id?: string; name?: string; user?: Ref; secret?: string } | undefined;
      const user = given?.user ? this.state.findUser(given.user) : undefined;
      const credential = given?.id !== undefined ? this.state.credentials.get(given.id) : user && this.state.credentials.ofUser(user.id).find((c) => c.name === given?.name);
      if (!credential) return { response: keystoneError(404, `Could not find Application Credential: ${given?.id ?? given?.name ?? ''}.`) };
      if (credential.secret !== given?.secret || (credential.expiresAt !== undefined && credential.expiresAt <= now)) return { response: keystoneError(401, UNAUTHORIZED), userId: credential.userId };
      const expiry = new Date(now.getTime() + this.ttl);
      const expiresAt = credential.expiresAt !== undefined && credential.expiresAt < expiry ? credential.expiresAt : expiry;
      return this.issue({ userId: credential.userId, projectId: credential.projectId, credentialId: credential.id, expiresAt, issuedAt: now });
    }
    if (methods[0] !== 'password') return { response: keystoneError(400, 'Expecting to find identity in auth.') };
    const password = (auth?.identity?.password as { user?: Ref & { password?: string } } | undefined)?.user;
    const user = password ? this.state.findUser(password) : undefined;
    if (!user) return { response: keystoneError(401, UNAUTHORIZED) };
    const project = auth?.scope?.project ? this.state.findProject(auth.scope.project) : undefined;
    if (user.password !== password?.password || !project || this.state.rolesOf(user.id, project.id).length === 0) return { response: keystoneError(401, UNAUTHORIZED), userId: user.id };
    return this.issue({ userId: user.id, projectId: project.id, expiresAt: new Date(now.getTime() + this.ttl), issuedAt: now });
  }

  private issue(token: Token): { response: Response; userId: string } {
    const value = `gAAAAA${this.state.next('token')}`;
    this.state.tokens.set(value, token);
    return { response: json(201, this.state.tokenBody(token), { 'x-subject-token': value }), userId: token.userId };
  }
}
