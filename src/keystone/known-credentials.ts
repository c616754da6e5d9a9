/**
 * What a process knows of a session user's application credentials: one list from Keystone, kept current by the
 * process's own creates and deletes, shared by every pass of that user's orders for a while (`maxAgeMs`).
 *
 * Why: a pass observes Keystone once (the lifecycle's one list, its crash-safety), and at Keystone's cheap bcrypt costs
 * that list costs as much as the create it guards. Passes of one process need not ask Keystone again what the process
 * itself did: every credential it created or deleted since the list was sent is applied to the list's reply, so a pass
 * sees its own earlier actions as a fresh list would show them (the crash-safety of the observation holds; issue 20).
 *
 * What keeps the reply honest:
 * - A process only ever trusts a list it sent itself, so what an earlier process created before a crash, a restart or
 *   a failover is in it: the first pass of each session after a start lists.
 * - Any outcome the process cannot be sure of (a create or delete that failed, a 409 because the name exists) forgets
 *   the whole view: the next pass lists again and finds the credential under its deterministic name, as after a crash.
 *   A credential somebody else creates under an order's name (a former leader finishing a pass) is found that way: the
 *   create answers 409, the view is forgotten, and the next list shows it.
 * - A view older than `maxAgeMs` is listed again, so what only Keystone can show (a credential deleted there by hand)
 *   is noticed by the first pass after that.
 * - A `fresh` list never reuses anything: it is sent after it was asked for (Pulumi's `read`, a refresh, wants Keystone
 *   as it is now).
 * Nothing here holds a secret: Keystone never reports one back.
 */
import { ApplicationCredentials, type ApplicationCredential } from './application-credentials';
import type { KeystoneSession } from './session';

/** Options of {@link knownCredentials}; the first caller of a session sets them. */
export interface KnownCredentialsOptions {
  /**
   * How long a list, with the process's own actions applied, serves later passes.
   * @default 60000 (a burst of new orders, a mass rotation or a `pulumi up` shares one list per user)
   */
  readonly maxAgeMs?: number;
  /**
   * Milliseconds a list waits for other passes to join it before it is sent.
   * @default 0 (passes that ask in the same turn of the event loop share one request)
   */
  readonly listWindowMs?: number;
  /** Clock in epoch milliseconds (tests). @default Date.now */
  readonly now?: () => number;
}

/** A change the process made: applied to a list's reply when the list was on its way. */
type Change = { readonly created: ApplicationCredential } | { readonly deleted: string };

/** A list asked for and not answered yet. */
interface PendingList {
  readonly reply: Promise<ApplicationCredential[]>;
  /** The view's epoch when the list was asked for; a forgotten view's lists are never joined nor kept. */
  readonly epoch: number;
  /** The changes the process made since the list was asked for. */
  readonly changes: Change[];
  sent: boolean;
}

/** A session user's credentials as last listed, with the process's own changes since. */
export class KnownCredentials {
  private readonly maxAgeMs: number;
  private readonly listWindowMs: number;
  private readonly now: () => number;
  private view: { readonly byId: Map<string, ApplicationCredential>; readonly listedAt: number } | undefined;
  private readonly pending = new Set<PendingList>();
  private epoch = 0;

  constructor(
    private readonly session: KeystoneSession,
    options: KnownCredentialsOptions = {},
  ) {
    this.maxAgeMs = options.maxAgeMs ?? 60_000;
    this.listWindowMs = options.listWindowMs ?? 0;
    this.now = options.now ?? Date.now;
  }

  /**
   * The user's credentials: the view while it is younger than `maxAgeMs`; else a list not sent yet or on its way in
   * this epoch (`fresh`: only one not sent yet); else a new list. `requested` is called when the reply comes from
   * Keystone (a list of its own or one it joined), not from the view.
   */
  async list(options: { readonly fresh?: boolean; readonly requested?: () => void } = {}): Promise<ApplicationCredential[]> {
    if (!options.fresh && this.view && this.now() - this.view.listedAt < this.maxAgeMs) return [...this.view.byId.values()];
    options.requested?.();
    for (const p of this.pending) if (p.epoch === this.epoch && (!p.sent || !options.fresh)) return p.reply;
    return this.send();
  }

  /** Records a credential the process created. */
  created(credential: ApplicationCredential): void {
    this.change({ created: credential });
  }

  /** Records a credential the process deleted (or found gone). */
  deleted(id: string): void {
    this.change({ deleted: id });
  }

  /** Forgets the view after an outcome the process cannot be sure of: the next pass lists. */
  forget(): void {
    this.epoch++;
    this.view = undefined;
  }

  private change(change: Change): void {
    if (this.view) apply(this.view.byId, change);
    for (const p of this.pending) p.changes.push(change);
  }

  private send(): Promise<ApplicationCredential[]> {
    const epoch = this.epoch;
    const changes: Change[] = [];
    const entry: { reply?: Promise<ApplicationCredential[]>; epoch: number; changes: Change[]; sent: boolean } = { epoch, changes, sent: false };
    const askedAt = this.now();
    entry.reply = new Promise<void>((resolve) => setTimeout(resolve, this.listWindowMs))
      .then(() => {
        entry.sent = true;
        return new ApplicationCredentials(this.session).list();
      })
      .then(
        (listed) => {
          this.pending.delete(entry as PendingList);
          const byId = new Map(listed.map((c) => [c.id, c]));
          for (const change of changes) apply(byId, change);
          if (epoch === this.epoch) this.view = { byId, listedAt: askedAt };
          return [...byId.values()];
        },
        (error: unknown) => {
          this.pending.delete(entry as PendingList);
          throw error;
        },
      );
    this.pending.add(entry as PendingList);
    return entry.reply;
  }
}

function apply(byId: Map<string, ApplicationCredential>, change: Change): void {
  if ('created' in change) byId.set(change.created.id, change.created);
  else byId.delete(change.deleted);
}

const known = new WeakMap<KeystoneSession, KnownCredentials>();

/** The {@link KnownCredentials} of `session`, made on first use with `options`. */
export function knownCredentials(session: KeystoneSession, options: KnownCredentialsOptions = {}): KnownCredentials {
  let found = known.get(session);
  if (!found) known.set(session, (found = new KnownCredentials(session, options)));
  return found;
}
