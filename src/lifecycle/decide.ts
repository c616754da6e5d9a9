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
  credentialName,
  formatDeadline,
  formatTime,
  setCondition,
  type Condition,
  type KeystoneApplicationCredentialStatus,
} from '../api';
import type { Action, GenerationRecord, LifecycleOrder, Observations, Plan } from './model';
import * as rotation from './rotation';

type Status = KeystoneApplicationCredentialStatus;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Decides the next step of `order`; see the module comment. */
export function decide(order: LifecycleOrder, observations: Observations, now: Date): Plan {
  const observed: Status = { ...order.status, observedGeneration: order.generation ?? order.status.observedGeneration };
  if (order.deleting) return teardown(observed, observations);
  if (observations.admission) return frozen(observed, observations.admission.reason, observations.admission.message, now);
  return new Step(order, observations, now, observed).plan();
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

/** Deletion: every generation the order holds is deleted in Keystone, then the backup, the parked secrets, the Secret. */
function teardown(status: Status, world: Observations): Plan {
  const actions: Action[] = [];
  for (const record of world.generations) {
    if (record.credential) actions.push({ type: 'delete', generation: record.generation, id: record.credential.id, why: 'teardown' });
  }
  if (world.backup?.credentialId !== undefined) actions.push({ type: 'remove-backup', why: 'teardown' });
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
  /** The successor this step continues, if a rotation is under way. */
  private successor?: GenerationRecord;
  /** Why a new rotation started in this step, if one did. */
  private started?: { generation: number; why: string };
  /** The generation whose document this step writes to the backup / the Secret. */
  private backedUp?: number;
  private delivered?: number;

  constructor(
    private readonly order: LifecycleOrder,
    private readonly world: Observations,
    private readonly now: Date,
    observed: Status,
  ) {
    this.status = { ...observed };
    this.records = new Map(world.generations.map((r) => [r.generation, r]));
  }

  plan(): Plan {
    if (!this.world.gate) {
      this.sweep();
      this.clearStrays();
      if (this.successor) this.continueRotation(this.successor);
      else this.maybeStartRotation();
      if (this.delivered === undefined && this.started === undefined) this.repair();
      if (this.status.credentialGeneration !== undefined) this.reschedule();
    }
    this.report();
    return {
      status: this.status,
      actions: this.actions,
      ...(this.world.gate ? {} : { wakeAt: rotation.wakeAt(this.status) }),
    };
  }

  private get live(): number {
    return rotation.liveGeneration(this.status);
  }

  /** Step 3 of a rotation: once previousCredentialDeleteAt has passed, the superseded credential is deleted, then forgotten. */
  private sweep(): void {
    if (!rotation.sweepDue(this.status, this.now)) return;
    const generation = this.status.previousCredentialGeneration as number;
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
      if (record.generation === this.order.status.previousCredentialGeneration) continue; // swept above
      const why = record.generation > this.live ? (record.failure !== undefined ? 'failed successor superseded by a raised generation' : 'stale successor') : 'stray generation';
      this.remove(record, why);
    }
  }

  private remove(record: GenerationRecord | undefined, why: string): void {
    if (!record) return;
    if (record.credential) this.actions.push({ type: 'delete', generation: record.generation, id: record.credential.id, why });
    if (record.parked || record.failure !== undefined) this.actions.push({ type: 'discard', generation: record.generation, why });
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
      this.actions.push({ type: 'mint', generation: g, name: credentialName(this.order.prefix, g), ...this.expiry(), why: 'continue rotation' });
      return;
    }
    this.switchTo(next);
  }

  /** Starts a rotation when a trigger holds and no grace period runs. */
  private maybeStartRotation(): void {
    const why = rotation.trigger(this.order, this.records.get(this.live), this.now);
    if (why === undefined || !rotation.mayStart(this.status)) return;
    const highest = Math.max(0, ...this.records.keys());
    const g = rotation.targetGeneration(this.order, highest);
    this.started = { generation: g, why: rotation.describe(why, this.order) };
    this.mint(g, this.started.why);
  }

  /** The crash-safe minting order: the secret is generated and parked before Keystone sees it. */
  private mint(generation: number, why: string): void {
    this.actions.push({ type: 'park', generation, why });
    this.actions.push({ type: 'mint', generation, name: credentialName(this.order.prefix, generation), ...this.expiry(), why });
  }

  private expiry(): { expiresAt?: Date } {
    const expiresAt = rotation.expiryFor(this.now, this.order.spec);
    return expiresAt ? { expiresAt } : {};
  }

  /**
   * Step 2 of a rotation, once Keystone holds the successor: the backup takes the new document first, then the delivered
   * Secret, then the status switches; the superseded credential stays for the grace period.
   */
  private switchTo(next: GenerationRecord): void {
    const credential = next.credential as { id: string; expiresAt?: Date };
    if (this.world.delivery.state === 'foreign') return; // DeliveryRefused: never taken over, so never switched
    this.writeDocument(next.generation, 'switch');
    const superseded = this.records.get(this.live);
    if (superseded?.credential) {
      this.status.previousCredentialID = superseded.credential.id;
      this.status.previousCredentialGeneration = superseded.generation;
      this.status.previousCredentialDeleteAt = formatDeadline(rotation.deleteAt(this.now, this.order.spec));
    }
    this.status.credentialID = credential.id;
    this.status.credentialGeneration = next.generation;
    if (credential.expiresAt) this.status.credentialExpiresAt = formatTime(credential.expiresAt);
    else delete this.status.credentialExpiresAt;
    this.status.lastRotation = formatTime(this.now);
    this.reschedule();
  }

  private writeDocument(generation: number, why: string): void {
    const id = this.records.get(generation)?.credential?.id;
    if (this.world.backup && this.world.backup.credentialId !== id) {
      this.actions.push({ type: 'backup', generation, why });
      this.backedUp = generation;
    }
    this.actions.push({ type: 'deliver', generation, why });
    this.delivered = generation;
  }

  private reschedule(): void {
    const next = rotation.scheduledRotation({ ...this.order, status: this.status });
    if (next) this.status.nextRotation = formatDeadline(next);
    else delete this.status.nextRotation;
  }

  /**
   * The delivered credential is kept whole: the backup and the Secret are rewritten when they do not carry it (an edited
   * key is rewritten, a deleted Secret is written again, backup first).
   */
  private repair(): void {
    const live = this.records.get(this.live);
    if (!live?.parked || !live.credential) return;
    const delivery = this.world.delivery;
    if (delivery.state === 'foreign') return;
    const backupStale = this.world.backup !== undefined && this.world.backup.credentialId !== live.credential.id;
    const deliveryStale = delivery.state === 'absent' || delivery.credentialId !== live.credential.id || !delivery.intact;
    if (backupStale || deliveryStale) this.writeDocument(live.generation, delivery.state === 'absent' ? 'Secret missing' : 'Secret repaired');
  }

  /** The conditions, as they will read once this step's actions succeeded. */
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
    if (delivery.reason === DeliveryReason.Delivered && this.order.secretName !== undefined) {
      this.status.secretName = this.order.secretName;
      this.status.secretKeys = [...SECRET_KEYS];
    } else {
      delete this.status.secretName;
      delete this.status.secretKeys;
    }
  }

  private credentialCondition(): { status: 'True' | 'False'; reason: string; message: string } {
    if (this.world.gate) return { status: 'False', reason: this.world.gate.reason, message: this.world.gate.message };
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
    if (live > 0 && exists) {
      const message = pending !== undefined ? `generation ${live} is delivered; generation ${pending} is being created` : `generation ${live} exists in Keystone`;
      return { status: 'True', reason: CredentialReason.CredentialMinted, message };
    }
    const message = live === 0 ? `waiting for the first credential (generation ${pending ?? this.order.spec.credentialGeneration})` : `generation ${live} is gone from Keystone${pending !== undefined ? `; generation ${pending} is being created` : ''}`;
    return { status: 'False', reason: CredentialReason.WaitingForCredential, message };
  }

  private deliveryCondition(): { status: 'True' | 'False'; reason: string; message: string } {
    const delivery = this.world.delivery;
    if (delivery.state === 'foreign') {
      const name = this.order.secretName !== undefined ? `a Secret ${this.order.secretName}` : 'a Secret of the delivered name';
      return { status: 'False', reason: DeliveryReason.DeliveryRefused, message: `${name} exists that this order does not own; it is never taken over` };
    }
    const liveId = this.status.credentialID;
    const carries = this.delivered === this.live || (delivery.state === 'delivered' && delivery.intact && delivery.credentialId === liveId);
    if (this.live > 0 && carries) return { status: 'True', reason: DeliveryReason.Delivered, message: `the Secret carries generation ${this.live}` };
    const backupHoldsLive = this.backedUp === this.live || this.world.backup === undefined || this.world.backup.credentialId === liveId;
    if (this.live > 0 && !backupHoldsLive) return { status: 'False', reason: DeliveryReason.BackupNotSynced, message: `the backup does not hold generation ${this.live} yet` };
    return { status: 'False', reason: DeliveryReason.WaitingForCredential, message: this.live === 0 ? 'no credential exists yet' : `the Secret does not carry generation ${this.live} yet` };
  }
}

function notReady(...conditions: { status: string; reason: string }[]): string {
  return conditions
    .filter((c) => c.status !== 'True')
    .map((c) => c.reason)
    .join(', ');
}
