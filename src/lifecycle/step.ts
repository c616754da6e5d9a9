/**
 * One step of an admitted order: what `decide` does between consent and teardown.
 */
import { alternateCredentialName, credentialName, formatTime, type KeystoneApplicationCredentialStatus } from '../api';
import { report } from './conditions';
import type { Action, Failure, GenerationRecord, LifecycleOrder, Observations, Plan } from './model';
import { migration, recordMigration } from './migration';
import { shownCredentialId } from './ownership';
import { carriedGenerations, rebuild } from './recorded';
import * as rotation from './rotation';

type Status = KeystoneApplicationCredentialStatus;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * One step of an admitted order: the spec's Rotation and Delivered Secret rules, in the order they apply (sweep,
 * strays, switch or repair, continue or start a rotation, reschedule), and the conditions they leave (conditions.ts).
 */
export class Step {
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
  /** A change of roles or access rules that waits for the running grace period (issue 42). */
  private deferred?: boolean;

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
    // A revoke request is accepted before anything else (rotation.ts, acceptRevoke), so a pass that fails records it too.
    this.status = { ...rotation.acceptRevoke(order, rebuild(observed, world, this.records, order.spec, now)) };
    // Fleet defaults (issue 48): the policy in force and its sources, only while some apply; a pass that fails records it too.
    if (order.policy?.status) this.status.policy = order.policy.status;
    else delete this.status.policy;
    this.graceFromSwitch();
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
      this.settle();
    }
    this.migrate();
    this.report();
    return {
      status: this.status,
      actions: this.actions,
      ...(this.world.gate || !this.keystoneKnown ? {} : { wakeAt: rotation.wakeAt(this.status, this.now, this.successorDeadline()) }),
    };
  }

  /**
   * The status of a pass whose action failed: the observed state, with conditions that say what is wrong. The status
   * rebuilt from what was observed may record a switch the Secret has not seen yet (the backup holds the successor:
   * recorded.ts); `nextRotation` follows its `lastRotation` and `credentialExpiresAt` as in a plan (spec, Rotation).
   */
  failed(): Status {
    if (!this.world.gate && this.status.credentialGeneration !== undefined) this.reschedule();
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

  /**
   * The grace period runs from the switch as consumers see it: from when this pass's write that switched the Secret
   * from the superseded credential was confirmed (spec, Rotation: "the previous credential stays valid for the grace
   * period after the switch"; consumers read the successor only once the Secret holds it). The step that decided the
   * switch counted from its own clock; a write that landed later (a target cluster that answers slowly) moves
   * previousCredentialDeleteAt later, never earlier. Before anything is swept.
   */
  private graceFromSwitch(): void {
    const delivery = this.world.delivery;
    if (delivery.state === 'delivered' && delivery.switchedAt !== undefined && delivery.credentialId === this.status.credentialID) this.graceFrom(delivery.switchedAt);
  }

  /** previousCredentialDeleteAt as a switch at `switchedAt` sets it, when that is later than the recorded one. */
  private graceFrom(switchedAt: Date): void {
    const generation = this.status.previousCredentialGeneration;
    if (generation === undefined) return;
    const until = rotation.graceDeadline(switchedAt, this.order.spec, this.records.get(generation)?.credential?.expiresAt, rotation.revoked(this.status, generation));
    const recorded = this.status.previousCredentialDeleteAt;
    if (recorded === undefined || new Date(recorded) < new Date(until)) this.status.previousCredentialDeleteAt = until;
  }

  /**
   * Step 3 of a rotation: once previousCredentialDeleteAt has passed, the superseded credential is deleted, then
   * forgotten; at once when a revoke request revokes it (rotation.ts, revokePending).
   */
  private sweep(): void {
    if (!rotation.sweepDue(this.status, this.now)) return;
    const generation = this.status.previousCredentialGeneration as number;
    if (this.carried.has(generation)) return; // still carried by the Secret or the backup: the repair comes first
    this.swept = generation;
    const why = rotation.revoked(this.status, generation) ? `revoke requested (${this.status.lastRevokeRequest ?? ''}): grace period skipped` : 'grace period over';
    this.remove(this.records.get(generation), why);
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

  /**
   * Starts a rotation when a trigger holds and no grace period runs. The first credential of an order that names one
   * to adopt (issue 49, adoption.ts) is adopted instead of minted, once: an order that holds anything mints.
   */
  private maybeStartRotation(): void {
    const why = rotation.trigger({ ...this.order, status: this.status }, this.records.get(this.live), this.now);
    if (why === 'privileges-changed' && !rotation.mayStart(this.status)) this.deferred = true;
    if (why === undefined || !rotation.mayStart(this.status)) return;
    const highest = Math.max(0, ...this.records.keys());
    const g = rotation.targetGeneration({ ...this.order, status: this.status }, highest);
    const adopting = why === 'first' && this.order.spec.adopt !== undefined && this.records.size === 0;
    this.started = { generation: g, why: adopting ? `adopt application credential ${this.order.spec.adopt}` : rotation.describe(why, { ...this.order, status: this.status }) };
    if (adopting) this.actions.push({ type: 'adopt', generation: g, credentialId: this.order.spec.adopt as string, why: this.started.why });
    else this.mint(g, this.started.why);
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
   * Secret, then the status switches; the superseded credential stays for the grace period, counted from now and, once
   * the Secret's write is confirmed, from then ({@link graceFromSwitch}).
   */
  private switchTo(next: GenerationRecord): void {
    const credential = next.credential as { id: string; expiresAt?: Date };
    this.writeDocument(next.generation, credential.id, 'switch', true, this.unowned());
    const superseded = this.records.get(this.live);
    if (superseded?.credential) {
      this.status.previousCredentialID = superseded.credential.id;
      this.status.previousCredentialGeneration = superseded.generation;
      this.status.previousCredentialDeleteAt = rotation.graceDeadline(this.now, this.order.spec, superseded.credential.expiresAt, rotation.revoked(this.status, superseded.generation));
    }
    if (next.adopted !== undefined) this.status.adoptedCredentialID = next.adopted;
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
   * and its consumers need it now. A write that replaces the superseded credential in the Secret (a switch, or the
   * repair of one that crashed half-way) is marked `switching`: the grace period runs from when it is confirmed.
   */
  private writeDocument(generation: number, credentialId: string, why: string, switching: boolean, unowned?: string): void {
    const backup = this.world.backup;
    if (backup && backup.error === undefined && backup.credentialId !== credentialId) {
      this.actions.push({ type: 'backup', generation, credentialId, why });
      this.backedUp = generation;
    }
    if (switching && backup?.error !== undefined) return;
    const delivery = this.world.delivery;
    const handsOver = switching || (delivery.state === 'delivered' && this.status.previousCredentialID !== undefined && delivery.credentialId === this.status.previousCredentialID);
    this.actions.push({ type: 'deliver', generation, credentialId, why, ...(unowned !== undefined ? { unowned } : {}), ...(handsOver ? { switching: true as const } : {}) });
    this.delivered = generation;
  }

  /**
   * What the step leaves of the issue-49 status fields: the adopted credential's id while the order holds it (delivered
   * or in its grace period), and the revoke generation until nothing below it is held.
   */
  private settle(): void {
    const adopted = this.status.adoptedCredentialID;
    if (adopted !== undefined && adopted !== this.status.credentialID && adopted !== this.status.previousCredentialID) delete this.status.adoptedCredentialID;
    if (this.status.revokeGeneration === undefined || rotation.revoked(this.status, this.status.credentialGeneration ?? 0)) return;
    if (!rotation.graceRunning(this.status) || !rotation.revoked(this.status, this.status.previousCredentialGeneration)) delete this.status.revokeGeneration;
  }

  private reschedule(): void {
    const next = rotation.scheduledRotation({ ...this.order, status: this.status }, this.now);
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
    const unowned = this.unowned();
    const why = delivery.state === 'absent' ? 'Secret missing' : unowned !== undefined ? `Secret repaired: it named credential ${shownCredentialId(unowned)}, which is not this order's` : 'Secret repaired';
    if (backupStale || deliveryStale) this.writeDocument(live.generation, id, why, false, unowned);
    // The Secret switches from the superseded credential only now (a switch that crashed half-way, a status rebuilt from
    // the backup): its grace period runs from this switch, as the Delivered Secret contract has it, and from when the
    // write is confirmed once it is (graceFromSwitch).
    if (this.delivered === live.generation && delivery.state === 'delivered' && delivery.credentialId === this.status.previousCredentialID) this.graceFrom(this.now);
  }

  /**
   * After an upgrade from 0.1.0 (migration.ts): the own path gets the delivered document when nothing above wrote it
   * (a gated order), and the order's document leaves the path 0.1.0 wrote once the own path holds it. OpenBao only.
   * Once that is done, the status records it (`backupPath`).
   */
  private migrate(): void {
    if (this.world.backup === undefined) return;
    const live = this.status.credentialGeneration;
    const writes = this.backedUp !== undefined && this.backedUp === live;
    const { actions, done } = migration({
      status: this.status,
      deliveredParked: live !== undefined && this.records.get(live)?.parked === true,
      backup: this.world.backup,
      ...(this.world.formerBackup ? { former: this.world.formerBackup } : {}),
      ownCredentialIds: this.keystoneKnown ? [...this.records.values()].flatMap((r) => (r.credential ? [r.credential.id] : [])) : [],
      // A write this step makes for another generation (a switch it could not finish) does not count.
      writesBackup: writes,
      deliverable: this.world.undeliverable === undefined,
    });
    // The own path is written by the rules above whenever they run; the migration adds it only where they did not.
    const backupWritten = this.actions.some((a) => a.type === 'backup');
    this.actions.push(...actions.filter((a) => !(a.type === 'backup' && backupWritten)));
    const recorded = recordMigration(this.status, this.order.backupPath, done).backupPath;
    if (recorded !== undefined) this.status.backupPath = recorded;
  }

  /**
   * The id the delivered Secret names when it is none of the order's credentials (neither a generation it holds in
   * Keystone nor one its status records): somebody else wrote it (a tenant may edit the Secret). It was never counted
   * (observe.ts), and the write that repairs the Secret reports it.
   */
  private unowned(): string | undefined {
    const delivery = this.world.delivery;
    if (delivery.state !== 'delivered' || delivery.credentialId === '') return undefined;
    const id = delivery.credentialId;
    if (id === this.status.credentialID || id === this.status.previousCredentialID) return undefined;
    return [...this.records.values()].some((r) => r.credential?.id === id) ? undefined : id;
  }

  /** The conditions and the Secret's status fields, as this step leaves them. */
  private report(): void {
    report(
      {
        order: this.order,
        world: this.world,
        records: this.records,
        status: this.status,
        keystoneKnown: this.keystoneKnown,
        ...(this.failure ? { failure: this.failure } : {}),
        ...(this.started ? { started: this.started.generation } : {}),
        ...(this.successor ? { successor: this.successor } : {}),
        ...(this.delivered !== undefined ? { delivered: this.delivered } : {}),
        ...(this.backedUp !== undefined ? { backedUp: this.backedUp } : {}),
        ...(this.blocked !== undefined ? { blocked: this.blocked } : {}),
        ...(this.deferred ? { deferred: true } : {}),
      },
      this.now,
    );
  }
}
