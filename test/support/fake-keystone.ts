/**
 * A fake Keystone for unit tests of the runner: credentials by name with expiry and secret, on an injected clock. Only
 * for speed in unit tests; every behaviour here is also proven against the real Keystone in test/integration.
 */
import { generationOf } from '../../src/api';
import type { AccessRule } from '../../src/api';
import {
  describeCredential,
  markOf,
  type CreateRequest,
  type CredentialPort,
  type CredentialScope,
  type DescribedCredential,
  type HeldCredential,
  type HeldPrivileges,
  type KeystoneCredential,
} from '../../src/lifecycle';

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
  /** Another user's (issue 49: an adoption must refuse it). @default the fake's user */
  userId?: string;
  /** @default the fake's project */
  projectId?: string;
  /** A hand-made credential may be unrestricted. @default false */
  unrestricted?: boolean;
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

  async list(adopted?: ReadonlyMap<string, number>): Promise<KeystoneCredential[]> {
    this.calls.push('list');
    this.fault('list');
    const out: KeystoneCredential[] = [];
    for (const c of this.credentials.values()) {
      if (c.userId !== undefined && c.userId !== FAKE_USER) continue;
      const generation = adopted?.get(c.id) ?? generationOf(this.prefix, c.name);
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

  /** As the real port (issue 49): the user's credential `id`, as Keystone shows it; none of another user's. */
  async describe(id: string): Promise<DescribedCredential | undefined> {
    this.calls.push('describe');
    const c = this.credentials.get(id);
    if (c === undefined || (c.userId ?? FAKE_USER) !== FAKE_USER) return undefined;
    const mark = markOf(c.description);
    return {
      id,
      name: c.name,
      projectId: c.projectId ?? FAKE_PROJECT,
      unrestricted: c.unrestricted === true,
      mark,
      ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}),
      privileges: privilegesOf(c, mark.subset === true),
    };
  }

  async scope(): Promise<CredentialScope> {
    return { userId: FAKE_USER, projectId: FAKE_PROJECT, projectName: 'fake-project', projectDomainName: 'Default' };
  }

  /** Adds a credential made by hand (issue 49: one to adopt), with no marks; returns its id. */
  handMade(secret: string, extra: Partial<Stored> = {}): string {
    const id = `id-${this.user.next++}`;
    this.credentials.set(id, { id, name: `hand-made-${id}`, secret, roles: [...this.user.roles], ...extra });
    return id;
  }

  /** Whether `id` + `secret` would authenticate now (exists, not expired, right secret). */
  authenticates(id: string | undefined, secret: string | undefined): boolean {
    const c = id === undefined ? undefined : this.credentials.get(id);
    return c !== undefined && c.secret === secret && (c.expiresAt === undefined || c.expiresAt > this.clock());
  }
}

/** The user and project every fake credential belongs to unless it says otherwise. */
export const FAKE_USER = 'fake-user';
export const FAKE_PROJECT = 'fake-project';

function privilegesOf(c: Stored, subset: boolean): HeldPrivileges {
  return { roles: c.roles ?? ['member', 'reader'], subset, accessRules: c.accessRules ?? [] };
}
