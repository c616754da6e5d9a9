/**
 * A fake Keystone for unit tests of the runner: credentials by name with expiry and secret, on an injected clock. Only
 * for speed in unit tests; every behaviour here is also proven against the real Keystone in test/integration.
 */
import { generationOf } from '../../src/api';
import type { AccessRule } from '../../src/api';
import { describeCredential, markOf, type CreateRequest, type CredentialPort, type HeldCredential, type HeldPrivileges, type KeystoneCredential } from '../../src/lifecycle';

export interface Stored {
  id: string;
  name: string;
  secret: string;
  expiresAt?: Date;
  /** As the real port writes it: what it is for, then the marks. */
  description?: string;
  /** The roles it carries (issue 42): the ones asked for, else every role of the user. */
  roles?: readonly string[];
  accessRules?: readonly AccessRule[];
}

/** One user's credentials in Keystone: what several orders of the user (each a {@link FakeKeystone} of its prefix) share. */
export class FakeUser {
  readonly credentials = new Map<string, Stored>();
  next = 1;
  /** The roles the user holds on the project, as its token shows them. */
  roles: string[] = ['member', 'reader'];
}

export class FakeKeystone implements CredentialPort {
  /** The user's credentials: this order's and, with a shared {@link FakeUser}, the other orders'. */
  readonly credentials: Map<string, Stored>;
  /** Every create and delete, for counting write calls. */
  readonly writes: string[] = [];
  /** Every call, reads included. */
  readonly calls: string[] = [];
  /** Called before each call; may throw to simulate a crash or an outage. */
  fault: (call: 'list' | 'create' | 'create-after' | 'delete' | 'verify') => void = () => undefined;

  constructor(
    private readonly prefix: string,
    private readonly clock: () => Date,
    private readonly user: FakeUser = new FakeUser(),
  ) {
    this.credentials = user.credentials;
  }

  async list(): Promise<KeystoneCredential[]> {
    this.calls.push('list');
    this.fault('list');
    const out: KeystoneCredential[] = [];
    for (const c of this.credentials.values()) {
      const generation = generationOf(this.prefix, c.name);
      const mark = markOf(c.description);
      if (generation !== undefined) out.push({ generation, id: c.id, name: c.name, mark, ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}), privileges: privilegesOf(c, mark.subset === true) });
    }
    return out;
  }

  async create(request: Omit<CreateRequest, 'mark'> & Partial<Pick<CreateRequest, 'mark'>>): Promise<HeldCredential> {
    this.calls.push('create');
    this.fault('create');
    if ([...this.credentials.values()].some((c) => c.name === request.name)) throw Object.assign(new Error(`409 name ${request.name} exists`), { status: 409 });
    if (request.expiresAt && request.expiresAt <= this.clock()) throw Object.assign(new Error("400 The 'expires_at' must not be before now."), { status: 400 });
    if (request.roles?.some((r) => !this.user.roles.includes(r))) throw Object.assign(new Error('400 Cannot create an application credential with unassigned role'), { status: 400 });
    const id = `id-${this.user.next++}`;
    const description = describeCredential('managed by keystone-appcred', request.mark ?? {});
    const stored: Stored = {
      id,
      name: request.name,
      secret: request.secret,
      description,
      roles: request.roles ?? [...this.user.roles],
      ...(request.accessRules ? { accessRules: request.accessRules } : {}),
      ...(request.expiresAt ? { expiresAt: request.expiresAt } : {}),
    };
    this.credentials.set(id, stored);
    this.writes.push(`create ${request.name}`);
    this.fault('create-after');
    return { id, ...(request.expiresAt ? { expiresAt: request.expiresAt } : {}), privileges: privilegesOf(stored, request.mark?.subset === true) };
  }

  async roles(): Promise<readonly string[]> {
    this.calls.push('roles');
    return [...this.user.roles];
  }

  async delete(id: string): Promise<void> {
    this.calls.push('delete');
    this.fault('delete');
    this.credentials.delete(id);
    this.writes.push(`delete ${id}`);
  }

  /** As the real port: whether Keystone authenticates `id` with `secret` (see {@link authenticates}). */
  async verify(id: string, secret: string): Promise<boolean> {
    this.fault('verify');
    return this.authenticates(id, secret);
  }

  /** Whether `id` + `secret` would authenticate now (exists, not expired, right secret). */
  authenticates(id: string | undefined, secret: string | undefined): boolean {
    const c = id === undefined ? undefined : this.credentials.get(id);
    return c !== undefined && c.secret === secret && (c.expiresAt === undefined || c.expiresAt > this.clock());
  }
}

function privilegesOf(c: Stored, subset: boolean): HeldPrivileges {
  return { roles: c.roles ?? ['member', 'reader'], subset, accessRules: c.accessRules ?? [] };
}
