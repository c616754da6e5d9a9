/**
 * `decide(order, observations, now)`: the whole credential lifecycle as one pure function.
 *
 * It never performs I/O and never reads the clock. Given what one pass observed it returns the next status, the ordered
 * idempotent actions that make that status true, and the time to look again. A driver runs the actions, records the
 * status, observes again and calls `decide` again until no action is left; if it dies between two actions, the next pass
 * picks up where it stopped, because every fact `decide` needs is observed, not remembered.
 */
import {
  AdmissionReason,
  ConditionType,
  CredentialReason,
  DeliveryReason,
  ReadyReason,
  SECRET_KEYS,
  alternateCredentialName,
  credentialName,
  formatTime,
  setCondition,
  type Condition,
  type KeystoneApplicationCredentialStatus,
} from '../api';
import type { Action, ForeignCredential, GenerationRecord, LifecycleOrder, Observations, Plan } from './model';
import { carriedGenerations, rebuild } from './recorded';
import * as rotation from './rotation';

type Status = KeystoneApplicationCredentialStatus;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Decides the next step of `order`; see the module comment. */
export function decide(order: LifecycleOrder, observations: Observations, now: Date): Plan {
  const observed = observedStatus(order);
  if (order.deleting) return teardown(observed, observations);
  if (observations.admission) return frozen(observed, observations.admission.reason, observations.admission.message, now);
  return new Step(order, observations, now, observed).plan();
}

/** One action of a pass failed: what went wrong, for the conditions. Carries the error text, never a secret. */
export interface Failure {
  readonly action: Action;
  readonly message: string;
}

/**
 * The status to record when an action of the pass failed: what was observed before the pass acted (the status rebuilt
 * from it), with conditions that say what is wrong: `CredentialError` for a Keystone or parked-secret step,
 * `BackupNotSynced` for the backup, `DeliveryError` for the Secret. `secretName` stays only while the observed Secret
 * carries the delivered credential. The next pass observes again and continues from there.
 */
export function decideFailure(order: LifecycleOrder, observations: Observations, failure: Failure, now: Date): KeystoneApplicationCredentialStatus {
  const observed = observedStatus(order);
  if (order.deleting || observations.admission) return observed;
  return new Step(order, observations, now, observed, failure).failed();
}

function observedStatus(order: LifecycleOrder): Status {
  return { ...order.status, observedGeneration: order.generation ?? order.status.observedGeneration };
}

/**
 * Consent missing (or the order otherwise not admitted): frozen. Nothing is created, rotated, delivered, repaired or
 * swept, and the schedule pauses; what the order has stays (spec, Consent).
 */
function frozen(status: Status, reason: AdmissionReason, message: string, now: Date): Plan {
  let conditions = status.conditions;
  for (const type of [ConditionType.CredentialReady, ConditionType.DeliveryReady]) {
    conditions = setCondition(conditions, { type, status: 'False', reason, message }, now, status.observedGeneration);
  }
  conditions = setCondition(conditions, { type: ConditionType.Ready, status: 'False', reason: ReadyReason.NotAllReady, message }, now, status.observedGeneration);
  return { status: { ...status, conditions }, actions: [] };
}

/**
 * Deletion: every generation the order holds is deleted in Keystone, then the backup (its metadata and every version,
 * whatever the latest version reads: a soft-deleted one reads as empty), the parked secrets, the Secret. While Keystone
 * cannot be listed nothing is deleted and the order is not released: what it holds there is unknown.
 */
function teardown(status: Status, world: Observations): Plan {
  if (world.keystoneError !== undefined) return { status, actions: [] };
  const actions: Action[] = [];
  for (const record of world.generations) {
    if (record.credential) actions.push({ type: 'delete', generation: record.generation, id: record.credential.id, why: 'teardown' });
  }
  if (world.backup !== undefined) actions.push({ type: 'remove-backup', why: 'teardown' });
  for (const record of world.generations) {
    if (record.parked || record.failure !== undefined) actions.push({ type: 'discard', generation: record.generation, why: 'teardown' });
  }
  if (world.delivery.state === 'delivered') actions.push({ type: 'withdraw', why: 'teardown' });
  actions.push({ type: 'release', why: 'teardown done' });
  return { status, actions };
}

/** One pass of an admitted order. */
class Step {
  private readonly actions: Action[] = [];
  private readonly status: Mutable<Status>;
  private readonly records: ReadonlyMap<number, GenerationRecord>;
  /** Generations whose credential the Secret or the backup carries: never deleted outside teardown. */
  private readonly carried: ReadonlySet<number>;
  /** Whether this pass knows what Keystone holds. */
  private readonly keystoneKnown: boolean;
  /** The successor this step continues, if a rotation is under way. */
  private successor?: GenerationRecord;
  /** Why a new rotation started in this step, if one did. */
  private started?: { generation: number; why: string };
  /** The superseded generation this step sweeps, if it does. */
  private swept?: number;
  /** The generation whose document this step writes to the backup / the Secret. */
  private backedUp?: number;
  private delivered?: number;
  /** A generation this step could not mint: foreign credentials hold every name it may take. */
  private blocked?: number;

  constructor(
    private readonly order: LifecycleOrder,
    private readonly world: Observations,
    private readonly now: Date,
    observed: Status,
    private readonly failure?: Failure,
  ) {
    this.records = new Map(world.generations.map((r) => [r.generation, r]));
    this.keystoneKnown = world.keystoneError === undefined;
    this.carried = new Set(carriedGenerations(world, this.records));
    this.status = rebuild(observed, world, this.records, order.spec, now);
  }

  plan(): Plan {
    if (!this.world.gate) {
      if (this.keystoneKnown) {
        this.sweep();
        this.clearStrays();
      }
      // The delivered credential is repaired before anything that needs Keystone, so a failing mint cannot keep a
      // deleted Secret absent; a switch in this step rewrites the Secret anyway.
      const next = this.successor;
      if (this.world.undeliverable) {
        // Nothing to hand a credential to where the order lives: none is created, switched to, delivered or repaired.
      } else if (next && this.switchable(next)) this.switchTo(next);
      else {
        this.repair();
        if (!this.keystoneKnown) {
          // nothing that needs Keystone this pass
        } else if (next) this.continueRotation(next);
        else this.maybeStartRotation();
      }
      if (this.status.credentialGeneration !== undefined) this.reschedule();
    }
    this.report();
    return {
      status: this.status,
      actions: this.actions,
      ...(this.world.gate || !this.keystoneKnown ? {} : { wakeAt: rotation.wakeAt(this.status, this.now, this.successorDeadline()) }),
    };
  }

  /** The status of a pass whose action failed: the observed state, with conditions that say what is wrong. */
  failed(): Status {
    this.report();
    return this.status;
  }

  private get live(): number {
    return rotation.liveGeneration(this.status);
  }

  /** The delivered credential's id: from Keystone when it could be listed, else as recorded. */
  private get liveCredentialId(): string | undefined {
    if (this.keystoneKnown) return this.records.get(this.live)?.credential?.id;
    return this.status.credentialID;
  }

  /** Step 3 of a rotation: once previousCredentialDeleteAt has passed, the superseded credential is deleted, then forgotten. */
  private sweep(): void {
    if (!rotation.sweepDue(this.status, this.now)) return;
    const generation = this.status.previousCredentialGeneration as number;
    if (this.carried.has(generation)) return; // still carried by the Secret or the backup: the repair comes first
    this.swept = generation;
    this.remove(this.records.get(generation), 'grace period over');
    delete this.status.previousCredentialID;
    delete this.status.previousCredentialGeneration;
    delete this.status.previousCredentialDeleteAt;
  }

  /**
   * Generations that are neither live, nor superseded in grace, nor the successor under way were never delivered or are
   * done: delete them. A successor with a terminal error is continued until spec.credentialGeneration is raised above it;
   * then it is deleted here and the raised generation is created.
   */
  private clearStrays(): void {
    const previous = this.status.previousCredentialGeneration;
    const successors = [...this.records.values()].filter((r) => r.generation > this.live).sort((a, b) => b.generation - a.generation);
    const head = successors[0];
    if (head && !(head.failure !== undefined && this.order.spec.credentialGeneration > head.generation)) this.successor = head;
    for (const record of this.records.values()) {
      if (record.generation === this.live || record.generation === previous || record === this.successor) continue;
      if (record.generation === this.swept) continue; // swept above
      const why = record.generation > this.live ? (record.failure !== undefined ? 'failed successor superseded by a raised generation' : 'stale successor') : 'stray generation';
      this.remove(record, why);
    }
  }

  /** Deletes a generation's credential and forgets its secret; never one the Secret or the backup carries. */
  private remove(record: GenerationRecord | undefined, why: string): void {
    if (!record || this.carried.has(record.generation)) return;
    if (record.credential) this.actions.push({ type: 'delete', generation: record.generation, id: record.credential.id, why });
    if (record.parked || record.failure !== undefined) this.actions.push({ type: 'discard', generation: record.generation, why });
  }

  /**
   * A successor is switched to once Keystone holds it, its secret is parked, it stays valid long enough, the backup is
   * known, and the Secret is the order's to write.
   */
  private switchable(next: GenerationRecord): boolean {
    if (!next.parked || !next.credential) return false;
    if (!rotation.successorUsable(next.credential.expiresAt, this.order.spec, this.now)) return false;
    if (this.world.backup?.error !== undefined) return false; // the backup comes first, and it cannot be reached
    return this.world.delivery.state !== 'foreign'; // DeliveryRefused: never taken over, so never switched
  }

  /** A rotation already under way is continued, never restarted. */
  private continueRotation(next: GenerationRecord): void {
    const g = next.generation;
    if (next.failure !== undefined && !next.credential) return; // reported CredentialFailed; waits for a raised generation
    if (!next.parked) {
      // Its secret is lost, so it was never delivered: delete it and create it again.
      if (next.credential) this.actions.push({ type: 'delete', generation: g, id: next.credential.id, why: 'secret of the successor lost' });
      this.mint(g, 'secret of the successor lost; re-created');
      return;
    }
    if (!next.credential) {
      const name = this.nameFor(g);
      if (name === undefined) this.blocked = g;
      else this.actions.push({ type: 'mint', generation: g, name, ...this.expiry(), why: 'continue rotation' });
      return;
    }
    if (!rotation.successorUsable(next.credential.expiresAt, this.order.spec, this.now)) {
      // Its switch was held up until it (nearly) expired: it was never delivered, so it is replaced.
      this.actions.push({ type: 'delete', generation: g, id: next.credential.id, why: 'successor expired before its switch' });
      this.mint(g, 'successor expired before its switch; re-created');
    }
    // Otherwise the switch waits: for the backup, or for a Secret the order may write (DeliveryRefused).
  }

  /** Starts a rotation when a trigger holds and no grace period runs. */
  private maybeStartRotation(): void {
    const why = rotation.trigger({ ...this.order, status: this.status }, this.records.get(this.live), this.now);
    if (why === undefined || !rotation.mayStart(this.status)) return;
    const highest = Math.max(0, ...this.records.keys());
    const g = rotation.targetGeneration({ ...this.order, status: this.status }, highest);
    this.started = { generation: g, why: rotation.describe(why, this.order) };
    this.mint(g, this.started.why);
  }

  /** The crash-safe minting order: the secret is generated and parked before Keystone sees it. */
  private mint(generation: number, why: string): void {
    const name = this.nameFor(generation);
    if (name === undefined) {
      this.blocked = generation;
      return;
    }
    this.actions.push({ type: 'park', generation, why });
    this.actions.push({ type: 'mint', generation, name, ...this.expiry(), why });
  }

  /**
   * The Keystone name generation N is minted under: its deterministic name, or, when a foreign credential holds that
   * (Keystone keeps one name per user), the alternate name of the order's owner (ownership.ts). Undefined when foreign
   * credentials hold both, or the order has no owner id to form the alternate name from: nothing is minted then.
   */
  private nameFor(generation: number): string | undefined {
    const taken = new Set((this.world.foreign ?? []).map((f) => f.name));
    const name = credentialName(this.order.prefix, generation);
    if (!taken.has(name)) return name;
    const alternate = this.order.owner === undefined ? undefined : alternateCredentialName(this.order.prefix, generation, this.order.owner);
    return alternate === undefined || taken.has(alternate) ? undefined : alternate;
  }

  private expiry(): { expiresAt?: Date } {
    const expiresAt = rotation.expiryFor(this.now, this.order.spec);
    return expiresAt ? { expiresAt } : {};
  }

  /** When a successor waiting for its switch must be replaced, if one waits. */
  private successorDeadline(): Date | undefined {
    const expiresAt = this.successor?.credential?.expiresAt;
    if (expiresAt === undefined || this.delivered === this.successor?.generation) return undefined;
    return rotation.replaceAt(expiresAt, this.order.spec);
  }

  /**
   * Step 2 of a rotation, once Keystone holds the successor: the backup takes the new document first, then the delivered
   * Secret, then the status switches; the superseded credential stays for the grace period.
   */
  private switchTo(next: GenerationRecord): void {
    const credential = next.credential as { id: string; expiresAt?: Date };
    this.writeDocument(next.generation, credential.id, 'switch', true);
    const superseded = this.records.get(this.live);
    if (superseded?.credential) {
      this.status.previousCredentialID = superseded.credential.id;
      this.status.previousCredentialGeneration = superseded.generation;
      this.status.previousCredentialDeleteAt = rotation.graceDeadline(this.now, this.order.spec, superseded.credential.expiresAt);
    }
    this.status.credentialID = credential.id;
    this.status.credentialGeneration = next.generation;
    if (credential.expiresAt) this.status.credentialExpiresAt = formatTime(credential.expiresAt);
    else delete this.status.credentialExpiresAt;
    this.status.lastRotation = formatTime(this.now);
    this.reschedule();
  }

  /**
   * The backup first, then the Secret (spec, Delivered Secret: "The backup comes first"). A repair of the delivered
   * generation while the backup cannot be read still rewrites the Secret: that document was backed up at its switch,
   * and its consumers need it now.
   */
  private writeDocument(generation: number, credentialId: string, why: string, switching: boolean): void {
    const backup = this.world.backup;
    if (backup && backup.error === undefined && backup.credentialId !== credentialId) {
      this.actions.push({ type: 'backup', generation, credentialId, why });
      this.backedUp = generation;
    }
    if (switching && backup?.error !== undefined) return;
    this.actions.push({ type: 'deliver', generation, credentialId, why });
    this.delivered = generation;
  }

  private reschedule(): void {
    const next = rotation.scheduledRotation({ ...this.order, status: this.status });
    if (next) this.status.nextRotation = formatTime(next);
    else delete this.status.nextRotation;
  }

  /**
   * The delivered credential is kept whole: the backup and the Secret are rewritten when they do not carry it (an edited
   * key is rewritten, a deleted Secret is written again, backup first). It needs only the parked secret and the
   * credential's id, so it runs while Keystone is unreachable too.
   */
  private repair(): void {
    const id = this.liveCredentialId;
    const live = this.records.get(this.live);
    if (id === undefined || !live?.parked) return;
    const delivery = this.world.delivery;
    if (delivery.state === 'foreign') return;
    const backupStale = this.world.backup !== undefined && this.world.backup.error === undefined && this.world.backup.credentialId !== id;
    const deliveryStale = delivery.state === 'absent' || delivery.credentialId !== id || !delivery.intact;
    if (backupStale || deliveryStale) this.writeDocument(live.generation, id, delivery.state === 'absent' ? 'Secret missing' : 'Secret repaired', false);
    // The Secret switches from the superseded credential only now (a switch that crashed half-way, a status rebuilt from
    // the backup): its grace period runs from this switch, as the Delivered Secret contract has it.
    if (this.delivered === live.generation && delivery.state === 'delivered' && delivery.credentialId === this.status.previousCredentialID) {
      const superseded = this.status.previousCredentialGeneration === undefined ? undefined : this.records.get(this.status.previousCredentialGeneration);
      const until = rotation.graceDeadline(this.now, this.order.spec, superseded?.credential?.expiresAt);
      if (this.status.previousCredentialDeleteAt === undefined || new Date(this.status.previousCredentialDeleteAt) < new Date(until)) this.status.previousCredentialDeleteAt = until;
    }
  }

  /** Whether the Secret carries the delivered credential once this step's actions succeeded. */
  private get secretCarriesLive(): boolean {
    if (this.live === 0) return false;
    if (this.delivered === this.live) return true;
    const delivery = this.world.delivery;
    return delivery.state === 'delivered' && delivery.intact && delivery.credentialId === this.status.credentialID;
  }

  /** The conditions, as they will read once this step's actions succeeded (or, for a failed step, as things stand). */
  private report(): void {
    const credential = this.credentialCondition();
    const delivery = this.deliveryCondition();
    const ready = credential.status === 'True' && delivery.status === 'True';
    const generation = this.status.observedGeneration;
    let conditions: Condition[] | undefined = this.status.conditions ? [...this.status.conditions] : undefined;
    conditions = setCondition(conditions, { type: ConditionType.CredentialReady, ...credential }, this.now, generation);
    conditions = setCondition(conditions, { type: ConditionType.DeliveryReady, ...delivery }, this.now, generation);
    conditions = setCondition(
      conditions,
      ready
        ? { type: ConditionType.Ready, status: 'True', reason: ReadyReason.AllReady, message: 'CredentialReady and DeliveryReady are True' }
        : { type: ConditionType.Ready, status: 'False', reason: ReadyReason.NotAllReady, message: notReady(credential, delivery) },
      this.now,
      generation,
    );
    this.status.conditions = conditions;
    // spec, Status: secretName and secretKeys appear once the Secret carries the current credential, and only then.
    if (this.secretCarriesLive && this.order.secretName !== undefined && this.world.delivery.state !== 'foreign' && !this.world.undeliverable) {
      this.status.secretName = this.order.secretName;
      this.status.secretKeys = [...SECRET_KEYS];
    } else {
      delete this.status.secretName;
      delete this.status.secretKeys;
    }
  }

  private credentialCondition(): { status: 'True' | 'False'; reason: string; message: string } {
    if (this.world.gate) return { status: 'False', reason: this.world.gate.reason, message: this.world.gate.message };
    const failure = this.failure;
    if (failure && ['park', 'mint', 'delete', 'discard'].includes(failure.action.type)) {
      return { status: 'False', reason: CredentialReason.CredentialError, message: failure.message };
    }
    if (this.world.keystoneError !== undefined) {
      return { status: 'False', reason: CredentialReason.CredentialError, message: `Keystone cannot be listed: ${this.world.keystoneError}` };
    }
    const pending = this.started?.generation ?? (this.successor && this.successor.generation !== this.delivered ? this.successor.generation : undefined);
    const failed = this.successor?.failure !== undefined && this.delivered === undefined ? this.successor : undefined;
    if (failed) {
      return {
        status: 'False',
        reason: CredentialReason.CredentialFailed,
        message: `generation ${failed.generation}: ${failed.failure}; raise spec.credentialGeneration above ${failed.generation} to replace it`,
      };
    }
    const live = this.live;
    const exists = this.delivered === live || this.records.get(live)?.credential !== undefined;
    const foreign = this.keystoneKnown ? (this.world.foreign ?? []) : [];
    if (this.blocked !== undefined && !(live > 0 && exists)) {
      return { status: 'False', reason: CredentialReason.ForeignCredential, message: `generation ${this.blocked} cannot be created: ${foreignNote(foreign)}` };
    }
    if (live > 0 && exists) {
      const message = pending !== undefined ? `generation ${live} is delivered; generation ${pending} is being created` : `generation ${live} exists in Keystone`;
      if (this.blocked !== undefined) return { status: 'True', reason: CredentialReason.ForeignCredential, message: `${message}; generation ${this.blocked} cannot be created: ${foreignNote(foreign)}` };
      if (foreign.length > 0) return { status: 'True', reason: CredentialReason.ForeignCredential, message: `${message}; ${foreignNote(foreign)}` };
      return { status: 'True', reason: CredentialReason.CredentialMinted, message };
    }
    const undeliverable = this.world.undeliverable ? `; none is created while it cannot be delivered: ${this.world.undeliverable.message}` : '';
    const message =
      live === 0
        ? `waiting for the first credential (generation ${pending ?? this.order.spec.credentialGeneration})${undeliverable}`
        : `generation ${live} is gone from Keystone${pending !== undefined ? `; generation ${pending} is being created` : ''}${undeliverable}`;
    return { status: 'False', reason: CredentialReason.WaitingForCredential, message };
  }

  private deliveryCondition(): { status: 'True' | 'False'; reason: string; message: string } {
    const delivery = this.world.delivery;
    if (delivery.state === 'foreign') {
      const name = this.order.secretName !== undefined ? `a Secret ${this.order.secretName}` : 'a Secret of the delivered name';
      return { status: 'False', reason: DeliveryReason.DeliveryRefused, message: `${name} exists that this order does not own; it is never taken over` };
    }
    if (this.world.undeliverable) return { status: 'False', ...this.world.undeliverable };
    const failure = this.failure;
    if (failure && (failure.action.type === 'backup' || failure.action.type === 'remove-backup')) {
      return { status: 'False', reason: DeliveryReason.BackupNotSynced, message: failure.message };
    }
    if (failure && (failure.action.type === 'deliver' || failure.action.type === 'withdraw')) {
      return { status: 'False', reason: DeliveryReason.DeliveryError, message: failure.message };
    }
    const backupError = this.world.backup?.error;
    if (this.live > 0 && backupError !== undefined) {
      const carries = this.secretCarriesLive ? `the Secret carries generation ${this.live}; ` : '';
      return { status: 'False', reason: DeliveryReason.BackupNotSynced, message: `${carries}the backup cannot be read: ${backupError}` };
    }
    if (this.secretCarriesLive) return { status: 'True', reason: DeliveryReason.Delivered, message: `the Secret carries generation ${this.live}` };
    const liveId = this.status.credentialID;
    const backupHoldsLive = this.backedUp === this.live || this.world.backup === undefined || this.world.backup.credentialId === liveId;
    if (this.live > 0 && !backupHoldsLive) return { status: 'False', reason: DeliveryReason.BackupNotSynced, message: `the backup does not hold generation ${this.live} yet` };
    return { status: 'False', reason: DeliveryReason.WaitingForCredential, message: this.live === 0 ? 'no credential exists yet' : `the Secret does not carry generation ${this.live} yet` };
  }
}

/**
 * What the conditions say of foreign credentials: each one's id, name and user, that it is left alone, and what to do.
 * Ids and names only: Keystone never shows a secret.
 */
export function foreignNote(foreign: readonly ForeignCredential[]): string {
  const each = foreign.map((f) => `${f.id} (${f.name}${f.userId !== undefined ? `, Keystone user ${f.userId}` : ''})`).join(', ');
  const one = foreign.length === 1;
  return (
    `${one ? 'credential' : 'credentials'} ${each} under this order's names ${one ? 'was' : 'were'} not minted by it and ${one ? 'is' : 'are'} left alone; ` +
    'if another installation (a cluster, a Pulumi stack in another backend) orders the same names for this user, give each its own Keystone user; ' +
    `a leftover nobody owns can be deleted with \`openstack application credential delete ${foreign[0]?.id ?? '<id>'}\``
  );
}

function notReady(...conditions: { status: string; reason: string }[]): string {
  return conditions
    .filter((c) => c.status !== 'True')
    .map((c) => c.reason)
    .join(', ');
}
