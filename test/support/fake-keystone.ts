/**
 * A fake Keystone for unit tests of the runner: credentials by name with expiry and secret, on an injected clock. Only
 * for speed in unit tests; every behaviour here is also proven against the real Keystone in test/integration.
 */
import { generationOf } from '../../src/api';
import { describeCredential, markOf, type CredentialMark, type CredentialPort, type KeystoneCredential } from '../../src/lifecycle';

export interface Stored {
  id: string;
  name: string;
  secret: string;
  expiresAt?: Date;
  /** As the real port writes it: what it is for, then the marks. */
  description?: string;
}

/** One user's credentials in Keystone: what several orders of the user (each a {@link FakeKeystone} of its prefix) share. */
export class FakeUser {
  readonly credentials = new Map<string, Stored>();
  next = 1;
}

export class FakeKeystone implements CredentialPort {
  /** The user's credentials: this order's and, with a shared {@link FakeUser}, the other orders'. */
  readonly credentials: Map<string, Stored>;
  /** Every create and delete, for counting write calls. */
  readonly writes: string[] = [];
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
    this.fault('list');
    const out: KeystoneCredential[] = [];
    for (const c of this.credentials.values()) {
      const generation = generationOf(this.prefix, c.name);
      if (generation !== undefined) out.push({ generation, id: c.id, name: c.name, mark: markOf(c.description), ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}) });
    }
    return out;
  }

  async create(request: { name: string; secret: string; expiresAt?: Date; mark?: CredentialMark }): Promise<{ id: string; expiresAt?: Date }> {
    this.fault('create');
    if ([...this.credentials.values()].some((c) => c.name === request.name)) throw Object.assign(new Error(`409 name ${request.name} exists`), { status: 409 });
    if (request.expiresAt && request.expiresAt <= this.clock()) throw Object.assign(new Error("400 The 'expires_at' must not be before now."), { status: 400 });
    const id = `id-${this.user.next++}`;
    const description = describeCredential('managed by keystone-appcred', request.mark ?? {});
    this.credentials.set(id, { id, name: request.name, secret: request.secret, description, ...(request.expiresAt ? { expiresAt: request.expiresAt } : {}) });
    this.writes.push(`create ${request.name}`);
    this.fault('create-after');
    return { id, ...(request.expiresAt ? { expiresAt: request.expiresAt } : {}) };
  }

  async delete(id: string): Promise<void> {
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
