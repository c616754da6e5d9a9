/**
 * When a scheduled rotation starts, with the two policies issue 48 adds to the spec's Rotation section: a rotation
 * window (`spec.rotation.window`) and jitter (`spec.rotation.jitterPercent`). Off by default: with neither, a scheduled
 * rotation starts at the reference's `nextRotation` exactly (rotation.ts). Only the schedule ever waits: "A rotation
 * starts when one of these holds", and a raised `spec.credentialGeneration`, an expired or lost credential, a lost
 * secret (and a change of roles or access rules, issue 42) start one at once, window or not.
 *
 * The rules, each bound by the spec's guarantees:
 * - **Due**: "status.nextRotation is the earlier of status.lastRotation plus the interval and
 *   status.credentialExpiresAt minus the grace period". Nothing here starts a rotation later: the delivered credential
 *   expires in Keystone at its creation plus the interval plus the grace period, and a successor switched to after
 *   `expiry − grace` would leave the superseded credential less than its grace period, or none ("the delivered
 *   credential is never invalid"). A policy moves a rotation earlier, never later.
 * - **Earliest**: "No rotation starts while a grace period runs": never before `lastRotation + gracePeriod`.
 * - **Jitter**: the rotation starts earlier than due by the order's own fraction of the jitter span, `jitterPercent` %
 *   of the interval, never before the earliest. The fraction is a hash of the order's owner id (its uid; a Pulumi
 *   resource's owner id), so a restart never moves it and `status.nextRotation` says the real time.
 * - **Window**: the rotation starts in the latest window that opens at or before the jittered time and is still open
 *   after the earliest, at its opening (or the earliest, if later); with jitter, later in it by the order's own second
 *   fraction of the open time left before the window closes or the rotation falls due, so a fleet does not start at
 *   the window's first second. When no window opens between the earliest and the jittered time, the first window
 *   after it that opens before due; when none opens before due either, at the jittered time: the deadline wins.
 * - **Late**: a pass that finds the planned start passed while no window is open (the operator was down through the
 *   window; a `pulumi up` outside it) waits for the next window that opens before due, or rotates now when none does.
 * - **Refused**: a window that cannot open between the earliest and due of every rotation (it stays closed longer than
 *   the interval minus the grace period, never opens, or its schedule or zone cannot be read) is refused
 *   ({@link windowRefusal}): not applied, so scheduled rotations follow the schedule and the jitter alone, and the
 *   order says so (`CredentialReady=False/RotationWindowRefused`; `pulumi preview` fails naming the fields).
 */
import { createHash } from 'node:crypto';
import type { ResolvedRotation, ResolvedWindow } from '../api';
import { WindowError, lastOpening, longestClosed, nextOpening, openAt, type Opening } from './window';

/** The order's two fractions in [0, 1): of the jitter span, and of a window's open time. */
export interface JitterFractions {
  readonly span: number;
  readonly window: number;
}

/**
 * The order's own fractions, from its owner id (or, for a face without one, its credential prefix): the first twelve
 * hex digits of SHA-256 of `<use>/<seed>` over 2^48, uniform and the same on every process and restart.
 */
export function jitterFractions(seed: string): JitterFractions {
  const fraction = (use: string) => parseInt(createHash('sha256').update(`${use}/${seed}`).digest('hex').slice(0, 12), 16) / 2 ** 48;
  return { span: fraction('jitter'), window: fraction('window') };
}

/** The jitter span of `rotation`: `jitterPercent` % of the interval, in milliseconds. */
export function jitterSpan(rotation: ResolvedRotation): number {
  return (rotation.interval.milliseconds * rotation.jitterPercent) / 100;
}

/** What the planned start is computed from. */
export interface ScheduleInput {
  /** The reference's `nextRotation`: the latest a scheduled rotation may start. */
  readonly due: Date;
  /** `status.lastRotation`. */
  readonly lastRotation: Date;
  readonly rotation: ResolvedRotation;
  /** The order's fractions ({@link jitterFractions}). */
  readonly fractions: JitterFractions;
}

/** The window a rotation applies: the rotation's, unless it is refused. */
function applied(rotation: ResolvedRotation, now: Date): ResolvedWindow | undefined {
  return rotation.window && windowRefusal(rotation, now) === undefined ? rotation.window : undefined;
}

/**
 * The planned start of the next scheduled rotation, by the rules of the module comment (without the late rule): a pure
 * function of the recorded rotation, the policy and the order's fractions, so every pass and every process computes the
 * same time. `now` only decides whether the window is refused.
 */
export function plannedStart(input: ScheduleInput, now: Date): Date {
  const { due, lastRotation, rotation, fractions } = input;
  const earliest = new Date(Math.min(due.getTime(), rotation.gracePeriod.after(lastRotation).getTime()));
  const jittered = new Date(Math.max(earliest.getTime(), due.getTime() - fractions.span * jitterSpan(rotation)));
  const window = applied(rotation, now);
  if (!window) return jittered;
  let chosen: Opening | undefined = lastOpening(window, jittered);
  if (!chosen || chosen.closes <= earliest) {
    const after = nextOpening(window, jittered);
    chosen = after && after.opens <= due ? after : undefined;
  }
  return chosen ? within(chosen, earliest, due, rotation, fractions) : jittered;
}

/** A start inside `opening`, not before `earliest` and not after `due`: its first moment, or with jitter spread over it. */
function within(opening: Opening, earliest: Date, due: Date, rotation: ResolvedRotation, fractions: JitterFractions): Date {
  const from = Math.max(opening.opens.getTime(), earliest.getTime());
  const to = Math.min(opening.closes.getTime(), due.getTime());
  if (rotation.jitterPercent === 0 || to <= from) return new Date(from);
  return new Date(from + Math.floor(fractions.window * (to - from)));
}

/**
 * When the scheduled rotation starts, seen at `now`: the planned start while it lies ahead; once it has passed, now
 * when a window is open (or none applies), else the next window that opens before due, else now (the late rule).
 */
export function scheduledStart(input: ScheduleInput, now: Date): Date {
  const planned = plannedStart(input, now);
  if (now < planned) return planned;
  const window = applied(input.rotation, now);
  if (!window || now >= input.due || openAt(window, now)) return planned;
  const next = nextOpening(window, now);
  if (!next || next.opens > input.due) return planned;
  return within(next, next.opens, input.due, input.rotation, input.fractions);
}

/** How far ahead {@link windowRefusal} looks: a year of the schedule, plus one rotation's span. */
const LOOK_AHEAD_MS = 366 * 24 * 3600 * 1000;
/** The most openings it reads (a window that opens every minute of a month would otherwise cost seconds). */
const OPENINGS_BUDGET = 4096;
const refusals = new Map<string, string | undefined>();
const HOUR_MS = 3600 * 1000;

/**
 * Why the rotation window is refused, or undefined when it is not (or there is none, or the schedule is off). A window
 * must open, for every rotation, between the earliest start (`lastRotation + gracePeriod`) and due
 * (`lastRotation + interval`): it must never stay closed longer than `interval − gracePeriod`, looking a year plus that
 * span ahead of `now` (4,096 openings at most). The message names the fields, the value and the rule, and carries no
 * date, so it stays the same from pass to pass.
 */
export function windowRefusal(rotation: ResolvedRotation, now: Date): string | undefined {
  const window = rotation.window;
  if (!window || rotation.interval.isZero()) return undefined;
  const span = rotation.interval.milliseconds - rotation.gracePeriod.milliseconds;
  const key = `${window.schedule}\u0000${window.timeZone}\u0000${window.duration.toString()}\u0000${span}\u0000${Math.floor(now.getTime() / HOUR_MS)}`;
  if (refusals.has(key)) return refusals.get(key);
  const verdict = refusal(window, span, now);
  if (refusals.size >= 1024) refusals.clear();
  refusals.set(key, verdict);
  return verdict;
}

function refusal(window: ResolvedWindow, span: number, now: Date): string | undefined {
  let closed;
  try {
    closed = longestClosed(window, now, LOOK_AHEAD_MS + span, OPENINGS_BUDGET);
  } catch (error) {
    if (error instanceof WindowError) return error.message;
    throw error;
  }
  const shown = `rotation.window (${JSON.stringify({ schedule: window.schedule, timeZone: window.timeZone, duration: window.duration.toString() })})`;
  const limit = `rotation.interval minus rotation.gracePeriod (${hours(span)})`;
  if (closed.never) return `${shown}: never opens, so no scheduled rotation could wait for it before the delivered credential's expiry`;
  if (closed.milliseconds <= span) return undefined;
  return `${shown}: stays closed for up to ${hours(closed.milliseconds)}, longer than ${limit}: a scheduled rotation waiting for it would let the delivered credential run into its expiry`;
}

/** A span as a Go duration in whole minutes (`696h`, `1h30m`). */
function hours(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h === 0 ? `${m}m` : m === 0 ? `${h}h` : `${h}h${m}m`;
}
