/**
 * What the fake Keystone holds (./server.ts): domains, users, projects, roles with their implications, role grants,
 * application credentials with their secrets, and the tokens it issued; with Keystone's reply shapes for each.
 * Deterministic: ids and tokens derive from the seed and a counter, times from the clock.
 */
import { createHash } from 'node:crypto';

/** An application credential as stored, its secret included (the fake is the only one that sees it). */
export interface StoredCredential {
  readonly id: string;
  readonly name: string;
  readonly userId: string;
  readonly projectId: string;
  readonly secret: string;
  readonly description?: string;
  readonly expiresAt?: Date;
  readonly roles: readonly string[];
  readonly accessRules: readonly { service: string; method: string; path: string }[];
  readonly unrestricted: boolean;
}

export interface StoredUser {
  readonly id: string;
  readonly name: string;
  readonly domainId: string;
  password: string;
  readonly description?: string;
}

export interface StoredProject {
  readonly id: string;
  readonly name: string;
  readonly domainId: string;
  readonly description?: string;
  readonly tags: readonly string[];
}

export interface Token {
  readonly userId: string;
  readonly projectId: string;
  readonly expiresAt: Date;
  readonly issuedAt: Date;
  readonly credentialId?: string;
}

/** A user or project as a request names it: by id, or by name in a domain. */
export interface Ref {
  readonly id?: string;
  readonly name?: string;
  readonly domain?: { id?: string; name?: string };
}

/** The roles `keystone-manage bootstrap` creates, each with the ones it implies. */
const IMPLIED: Readonly<Record<string, readonly string[]>> = { admin: ['member', 'reader'], member: ['reader'], reader: [] };

/** A JSON reply (no body for 204). */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(status === 204 ? null : JSON.stringify(body), { status, headers: status === 204 ? headers : { 'content-type': 'application/json', ...headers } });
}

/** Keystone's error reply: `{"error": {"code", "message", "title"}}`. */
export function keystoneError(status: number, message: string): Response {
  const titles: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict' };
  return json(status, { error: { code: status, message, title: titles[status] ?? 'Internal Server Error' } });
}

export const UNAUTHORIZED = 'The request you have made requires authentication.';
export const FORBIDDEN = 'You are not authorized to perform the requested action.';
export const NOT_FOUND = 'The resource could not be found.';
export const notAllowed = (): Response => keystoneError(405, 'The requested method is not supported.');

/** Naive UTC with microseconds, as Keystone renders times in replies. */
export const replyTime = (date: Date): string => date.toISOString().replace(/\.(\d{3})Z$/, '.$1000');
/** A token's times: `…Z` with microseconds. */
export const tokenTime = (date: Date): string => date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/**
 * The application credentials by id, as a Map, with each user's at hand: a list or a create names one user, and a scan
 * of every user's credentials per request made a fleet of 20,000 orders quadratic in the simulation.
 */
export class Credentials extends Map<string, StoredCredential> {
  private readonly byUser = new Map<string, Set<string>>();

  /** The user's credentials, in the order they were created (the order of the whole Map). */
  ofUser(userId: string): StoredCredential[] {
    return [...(this.byUser.get(userId) ?? [])].flatMap((id) => this.get(id) ?? []);
  }

  override set(id: string, credential: StoredCredential): this {
    const old = this.get(id);
    if (old && old.userId !== credential.userId) this.byUser.get(old.userId)?.delete(id);
    super.set(id, credential);
    this.byUser.set(credential.userId, (this.byUser.get(credential.userId) ?? new Set()).add(id));
    return this;
  }

  override delete(id: string): boolean {
    const old = this.get(id);
    if (old) this.byUser.get(old.userId)?.delete(id);
    return super.delete(id);
  }

  override clear(): void {
    this.byUser.clear();
    super.clear();
  }
}

/** The role grants as `project/user/role` ids, with each user's roles on a project at hand (every token and create reads them). */
export class Grants extends Set<string> {
  private readonly byPair = new Map<string, Set<string>>();

  /** The role ids the user holds on the project. */
  roleIds(projectId: string, userId: string): ReadonlySet<string> {
    return this.byPair.get(`${projectId}/${userId}`) ?? new Set();
  }

  override add(grant: string): this {
    super.add(grant);
    const [pair, role] = split(grant);
    this.byPair.set(pair, (this.byPair.get(pair) ?? new Set()).add(role));
    return this;
  }

  override delete(grant: string): boolean {
    const [pair, role] = split(grant);
    this.byPair.get(pair)?.delete(role);
    return super.delete(grant);
  }

  override clear(): void {
    this.byPair.clear();
    super.clear();
  }
}

/** A grant's `project/user` and its role id. */
const split = (grant: string): [string, string] => {
  const at = grant.lastIndexOf('/');
  return [grant.slice(0, at), grant.slice(at + 1)];
};

export class KeystoneState {
  readonly credentials = new Credentials();
  readonly users = new Map<string, StoredUser>();
  readonly projects = new Map<string, StoredProject>();
  /** Role id → name. */
  readonly roles = new Map<string, string>();
  /** Domain id → name. */
  readonly domains = new Map<string, string>([['default', 'Default']]);
  /** `project/user/role` (ids). */
  readonly grants = new Grants();
  readonly tokens = new Map<string, Token>();
  private counter = 0;

  constructor(
    readonly now: () => Date,
    private readonly seed: string,
  ) {
    for (const role of Object.keys(IMPLIED)) this.roles.set(this.id(`role-${role}`), role);
  }

  /** A fresh 32-hex id, as Keystone's. */
  next(kind: string): string {
    return this.id(`${kind}-${++this.counter}`);
  }

  /** A 32-hex id derived from the seed and `what`. */
  id(what: string): string {
    return createHash('sha256').update(`${this.seed}/${what}`).digest('hex').slice(0, 32);
  }

  roleId(name: string): string {
    return [...this.roles].find(([, n]) => n === name)?.[0] ?? this.id(`role-${name}`);
  }

  /** The user's role names on the project, implied ones included, sorted. */
  rolesOf(userId: string, projectId: string): string[] {
    const names = new Set<string>();
    for (const r of this.grants.roleIds(projectId, userId)) {
      const name = this.roles.get(r);
      if (name === undefined) continue;
      names.add(name);
      for (const implied of IMPLIED[name] ?? []) names.add(implied);
    }
    return [...names].sort();
  }

  /** The token, when it is known, unexpired and not revoked. */
  valid(token: string): Token | undefined {
    const found = this.tokens.get(token);
    if (!found || found.expiresAt <= this.now()) return undefined;
    if (found.credentialId !== undefined && !this.credentials.has(found.credentialId)) return undefined;
    return this.users.has(found.userId) ? found : undefined;
  }

  revoke(match: (token: Token) => boolean): void {
    for (const [value, token] of this.tokens) if (match(token)) this.tokens.delete(value);
  }

  isAdmin(token: Token): boolean {
    const roles = token.credentialId === undefined ? this.rolesOf(token.userId, token.projectId) : (this.credentials.get(token.credentialId)?.roles ?? []);
    return roles.includes('admin');
  }

  findUser(ref: Ref): StoredUser | undefined {
    if (ref.id !== undefined) return this.users.get(ref.id);
    const domainId = this.domainOf(ref.domain);
    return [...this.users.values()].find((u) => u.name === ref.name && u.domainId === domainId);
  }

  findProject(ref: Ref): StoredProject | undefined {
    if (ref.id !== undefined) return this.projects.get(ref.id);
    const domainId = this.domainOf(ref.domain);
    return [...this.projects.values()].find((p) => p.name === ref.name && p.domainId === domainId);
  }

  private domainOf(domain: { id?: string; name?: string } | undefined): string | undefined {
    if (domain === undefined) return 'default';
    if (domain.id !== undefined) return domain.id;
    return [...this.domains].find(([, name]) => name === domain.name)?.[0];
  }

  tokenBody(token: Token) {
    const user = this.users.get(token.userId);
    const project = this.projects.get(token.projectId);
    const credential = token.credentialId !== undefined ? this.credentials.get(token.credentialId) : undefined;
    const roles = credential ? credential.roles : this.rolesOf(token.userId, token.projectId);
    return {
      token: {
        methods: [credential ? 'application_credential' : 'password'],
        user: { domain: { id: 'default', name: 'Default' }, id: token.userId, name: user?.name ?? '', password_expires_at: null },
        audit_ids: [this.id(`audit-${token.issuedAt.getTime()}`).slice(0, 22)],
        expires_at: tokenTime(token.expiresAt),
        issued_at: tokenTime(token.issuedAt),
        project: { domain: { id: 'default', name: 'Default' }, id: token.projectId, name: project?.name ?? '' },
        is_domain: false,
        roles: roles.map((name) => ({ id: this.roleId(name), name })),
        ...(credential ? { application_credential: { id: credential.id, name: credential.name, restricted: !credential.unrestricted } } : {}),
      },
    };
  }

  credentialBody(c: StoredCredential) {
    return {
      id: c.id,
      name: c.name,
      description: c.description ?? null,
      user_id: c.userId,
      project_id: c.projectId,
      system: null,
      expires_at: c.expiresAt ? replyTime(c.expiresAt) : null,
      unrestricted: c.unrestricted ? true : null,
      roles: c.roles.map((name) => ({ id: this.roleId(name), name, domain_id: null })),
      access_rules: c.accessRules.map((r) => ({ ...r, id: this.id(`rule-${r.service}-${r.method}-${r.path}`) })),
      links: { self: `/v3/application_credentials/${c.id}` },
    };
  }

  userBody(u: StoredUser) {
    return { id: u.id, name: u.name, domain_id: u.domainId, enabled: true, password_expires_at: null, options: {}, ...(u.description !== undefined ? { description: u.description } : {}), links: { self: `/v3/users/${u.id}` } };
  }

  projectBody(p: StoredProject) {
    return { id: p.id, name: p.name, domain_id: p.domainId, description: p.description ?? '', enabled: true, parent_id: p.domainId, is_domain: false, tags: p.tags, options: {}, links: { self: `/v3/projects/${p.id}` } };
  }
}
