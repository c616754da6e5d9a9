/**
 * The spec's Rotation section, rule by rule. Pure functions of the order, one generation record and the clock.
 *
 * Each rotation creates generation N+1 (or the raised generation) beside the delivered generation N; the order switches
 * once Keystone holds it; the superseded one is deleted after the grace period. `decide` composes these rules.
 */
import { formatDeadline, formatTime, scheduleOn, type KeystoneApplicationCredentialStatus, type ResolvedRotation } from '../api';
import type { GenerationRecord, LifecycleOrder, Trigger } from './model';
import { privilegesDiffer } from './privileges';

const time = (value: string | undefined): Date | undefined => (value === undefined ? undefined : new Date(value));

/** The delivered generation, or 0 before the first credential. */
export function liveGeneration(status: KeystoneApplicationCredentialStatus): number {
  return status.credentialGeneration ?? 0;
}

/**
 * Revoke now (issue 49, not the reference's). A request is a value (the `c5c3.io/revoke-previous` annotation's, the
 * Pulumi input `revokePrevious`) other than `status.lastRevokeRequest`. The order accepts it once ({@link acceptRevoke}):
 * it records the value, and in `status.revokeGeneration` the generation above the delivered one, and from then on:
 *
 * - a rotation to that generation starts at once ({@link trigger}: `revoke-requested`), or the one under way is
 *   continued (a successor never delivered was never handed out);
 * - the rule "No rotation starts while a grace period runs" still holds, so the order never holds more than two
 *   credentials: a credential below the revoke generation in its grace period is deleted at once ({@link sweepDue}),
 *   which ends the grace period;
 * - the successor's switch skips the grace period of the credential it supersedes (`previousCredentialDeleteAt` is the
 *   switch itself: {@link graceDeadline}), so that credential is deleted right after the switch, which writes the
 *   backup first and the Secret then: as soon as the successor is delivered and backed up.
 *
 * `status.revokeGeneration` is cleared once the order holds nothing below it. Recording the request in the status
 * (also by a pass that fails half-way) makes each value fire once: a pass that finds the Secret already switched does
 * not rotate again, it only deletes what is below the revoke generation.
 */
export function revokePending(order: Pick<LifecycleOrder, 'revokeRequest' | 'status'>): boolean {
  return order.revokeRequest !== undefined && order.revokeRequest !== order.status.lastRevokeRequest;
}

/** The status with a pending revoke request accepted (see {@link revokePending}); the status as it is without one. */
export function acceptRevoke(order: Pick<LifecycleOrder, 'revokeRequest' | 'status'>, status: KeystoneApplicationCredentialStatus): KeystoneApplicationCredentialStatus {
  if (!revokePending({ revokeRequest: order.revokeRequest, status })) return status;
  return { ...status, lastRevokeRequest: order.revokeRequest, revokeGeneration: liveGeneration(status) + 1 };
}

/** Whether a revoke request being carried out deletes `generation` at once (it is below `status.revokeGeneration`). */
export function revoked(status: KeystoneApplicationCredentialStatus, generation: number | undefined): boolean {
  return status.revokeGeneration !== undefined && generation !== undefined && generation < status.revokeGeneration;
}

/** A grace period runs while the superseded credential is still recorded. */
export function graceRunning(status: KeystoneApplicationCredentialStatus): boolean {
  return status.previousCredentialGeneration !== undefined;
}

/**
 * The superseded credential is due for deletion once `previousCredentialDeleteAt` has passed, or at once when a revoke
 * request revokes it ({@link revoked}).
 */
export function sweepDue(status: KeystoneApplicationCredentialStatus, now: Date): boolean {
  const deleteAt = time(status.previousCredentialDeleteAt);
  return graceRunning(status) && (revoked(status, status.previousCredentialGeneration) || deleteAt === undefined || now >= deleteAt);
}

/**
 * Why a rotation should start now, if it should. The triggers, in the order they are reported: no credential yet;
 * `spec.credentialGeneration` above `status.credentialGeneration`; the live credential gone from or expired in Keystone;
 * its secret lost; its roles or access rules not the spec's (issue 42: Keystone keeps both immutable, so a change is a
 * successor, as a raised generation is; privileges.ts); the schedule due (`now >= status.nextRotation`). Whether one
 * may start is {@link mayStart}'s call: a change of roles or rules waits for a running grace period, as any trigger.
 */
export function trigger(order: LifecycleOrder, live: GenerationRecord | undefined, now: Date): Trigger | undefined {
  const status = order.status;
  if (status.credentialGeneration === undefined) return 'first';
  if (order.spec.credentialGeneration > status.credentialGeneration) return 'generation-raised';
  if (!live?.credential) return 'gone';
  if (live.credential.expiresAt !== undefined && now >= live.credential.expiresAt) return 'expired';
  if (!live.parked) return 'secret-lost';
  if (privilegesDiffer(order.spec, live.credential.privileges)) return 'privileges-changed';
  if (revoked(status, status.credentialGeneration)) return 'revoke-requested';
  const next = dueAt(order);
  if (next !== undefined && now >= next) return 'schedule';
  return undefined;
}

/**
 * When the schedule is due: "the clock has reached status.nextRotation". The recorded value rules while it agrees with
 * the current settings up to the rounding of whole seconds (a status written elsewhere may round differently); a value
 * further off was recorded under other rotation settings, and the schedule of the current ones rules.
 */
export function dueAt(order: LifecycleOrder): Date | undefined {
  const computed = scheduledRotation(order);
  const recorded = time(order.status.nextRotation);
  if (computed === undefined || recorded === undefined || Number.isNaN(recorded.getTime())) return computed;
  return recorded > computed && recorded.getTime() - computed.getTime() <= 1000 ? recorded : computed;
}

/**
 * When the schedule rotates the delivered credential, by the order's current rotation settings: `status.nextRotation`
 * exactly as `decide` records it (a deadline, rounded up to the whole second), so "the clock has reached
 * status.nextRotation" compares with the recorded value and never fires up to a second early. Absent with the schedule
 * off or before the first credential.
 */
export function scheduledRotation(order: LifecycleOrder): Date | undefined {
  const last = time(order.status.lastRotation);
  if (last === undefined) return undefined;
  const next = nextRotation(last, time(order.status.credentialExpiresAt), order.spec);
  return next === undefined ? undefined : new Date(formatDeadline(next));
}

/** No rotation starts while a grace period runs, whatever the trigger: the order never holds more than two credentials. */
export function mayStart(status: KeystoneApplicationCredentialStatus): boolean {
  return !graceRunning(status);
}

/**
 * The generation a new rotation creates: N+1, or `spec.credentialGeneration` when that is higher, which creates that
 * generation directly (1 → 5 mints 5). Never at or below a generation already used.
 */
export function targetGeneration(order: LifecycleOrder, highestUsed: number): number {
  return Math.max(order.spec.credentialGeneration, liveGeneration(order.status) + 1, highestUsed + 1);
}

/**
 * The Keystone expiry of a credential minted at `mintedAt`: creation + interval + grace while the schedule is on, so a
 * credential the operator fails to delete stops working on its own; none with `interval: 0s`.
 */
export function expiryFor(mintedAt: Date, rotation: ResolvedRotation): Date | undefined {
  if (!scheduleOn(rotation)) return undefined;
  return rotation.gracePeriod.after(rotation.interval.after(mintedAt));
}

/**
 * `nextRotation = min(lastRotation + interval, credentialExpiresAt − gracePeriod)`: a lengthened interval never lets the
 * delivered credential run into its expiry. Absent with the schedule off.
 */
export function nextRotation(lastRotation: Date, expiresAt: Date | undefined, rotation: ResolvedRotation): Date | undefined {
  if (!scheduleOn(rotation)) return undefined;
  const bySchedule = rotation.interval.after(lastRotation);
  if (expiresAt === undefined) return bySchedule;
  const byExpiry = rotation.gracePeriod.before(expiresAt);
  return byExpiry < bySchedule ? byExpiry : bySchedule;
}

/** `previousCredentialDeleteAt = switch + gracePeriod`. */
export function deleteAt(switchedAt: Date, rotation: ResolvedRotation): Date {
  return rotation.gracePeriod.after(switchedAt);
}

/**
 * `status.previousCredentialDeleteAt` of a superseded credential that expires at `expiresAt`: switch + gracePeriod
 * (rounded up, as every deadline), but never later than the credential's own expiry (rounded down). A grace period
 * exists so consumers can keep using the superseded credential; one Keystone already rejects (a rotation that came
 * late: the operator was down, or nobody ran `pulumi up` for a while) has nothing left to give, so it is swept at its
 * expiry, or at once when that has passed. A switch under a revoke request (`revoking`) skips the grace period: the
 * switch itself.
 */
export function graceDeadline(switchedAt: Date, rotation: ResolvedRotation, expiresAt: Date | undefined, revoking = false): string {
  if (revoking) return formatTime(switchedAt);
  const grace = deleteAt(switchedAt, rotation);
  return expiresAt !== undefined && expiresAt < grace ? formatTime(expiresAt) : formatDeadline(grace);
}

/**
 * A successor may be switched to only while it stays valid for two grace periods: the one that starts at its switch
 * (while the superseded credential is still delivered to slow readers) and the one after its own successor's switch,
 * which cannot come before the first has ended. A successor that expired, or would expire inside that window, while
 * its switch was held up is deleted and created again; switching to it would deliver a credential that dies before its
 * consumers have had a grace period to pick up the next one.
 */
export function successorUsable(expiresAt: Date | undefined, rotation: ResolvedRotation, now: Date): boolean {
  return expiresAt === undefined || now < replaceAt(expiresAt, rotation);
}

/** When a successor still waiting to be switched must be replaced instead: its expiry minus two grace periods. */
export function replaceAt(expiresAt: Date, rotation: ResolvedRotation): Date {
  return rotation.gracePeriod.before(rotation.gracePeriod.before(expiresAt));
}

/**
 * The time to look again: the earliest of nextRotation, previousCredentialDeleteAt, the live credential's expiry and
 * the extra deadlines given, that lies after `now`. A deadline already passed is one this pass could not act on (a
 * rotation due while a grace period runs, say): what unblocks it is a later deadline or an outside change, so it is
 * skipped and `wakeAt` is never in the past.
 */
export function wakeAt(status: KeystoneApplicationCredentialStatus, now: Date, ...extra: (Date | undefined)[]): Date | undefined {
  const candidates = [status.nextRotation, status.previousCredentialDeleteAt, status.credentialExpiresAt]
    .map(time)
    .concat(extra)
    .filter((d): d is Date => d !== undefined && d > now);
  if (candidates.length === 0) return undefined;
  return new Date(Math.min(...candidates.map((d) => d.getTime())));
}

/** Words for a trigger, for the timeline and the condition messages. */
export function describe(trigger: Trigger, order: LifecycleOrder): string {
  switch (trigger) {
    case 'first':
      return 'first credential';
    case 'schedule':
      return 'schedule due';
    case 'generation-raised':
      return `spec.credentialGeneration raised to ${order.spec.credentialGeneration}`;
    case 'expired':
      return 'live credential expired in Keystone';
    case 'gone':
      return 'live credential gone from Keystone';
    case 'secret-lost':
      return "live credential's secret lost";
    case 'privileges-changed':
      return "live credential's roles or access rules differ from the spec's";
    case 'revoke-requested':
      return `revoke requested (${order.status.lastRevokeRequest ?? ''})`;
  }
}
