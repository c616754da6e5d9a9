/**
 * A rotation window as a cron library reads it (issue 48): it opens at each time its five-field schedule names in its
 * IANA time zone and stays open for its duration (elapsed time). `croner` reads the schedule and the zone (Node's
 * `Intl` holds the zones): Vixie cron's rules, a day of month and a day of week both restricted match either; a time a
 * daylight-saving change skips opens the window at the first time after the gap, a time it repeats opens it once.
 *
 * Pure: the same window and instant give the same answer. Parsed schedules are kept in a small bounded memo, as a fleet
 * shares a few windows.
 */
import { Cron } from 'croner';
import type { ResolvedWindow } from '../api';

/** A window's schedule or time zone that the cron library or the zone database refuses. */
export class WindowError extends Error {
  constructor(
    /** The field, from `rotation.` on: `rotation.window.schedule` or `rotation.window.timeZone`. */
    readonly field: 'rotation.window.schedule' | 'rotation.window.timeZone',
    /** The value as written. */
    readonly value: string,
    /** Why, in the library's words. */
    readonly rule: string,
  ) {
    super(`${field} (${JSON.stringify(value)}): ${rule}`);
    this.name = 'WindowError';
  }
}

/** The half-open interval `[opens, closes)` of one opening of a window. */
export interface Opening {
  readonly opens: Date;
  readonly closes: Date;
}

const MEMO_SIZE = 256;
const parsed = new Map<string, Cron>();

/** The schedule in its zone; throws a {@link WindowError} naming the field for one the library or `Intl` refuses. */
function cronOf(window: ResolvedWindow): Cron {
  const key = `${window.timeZone}\u0000${window.schedule}`;
  const known = parsed.get(key);
  if (known) return known;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: window.timeZone });
  } catch {
    throw new WindowError('rotation.window.timeZone', window.timeZone, 'is not a time zone this platform knows (an IANA name such as UTC or Europe/Berlin)');
  }
  let cron: Cron;
  try {
    cron = new Cron(window.schedule, { timezone: window.timeZone, mode: '5-part', domAndDow: false, fixedTimeRule: 'no-wildcard', paused: true });
  } catch (error) {
    throw new WindowError('rotation.window.schedule', window.schedule, (error instanceof Error ? error.message : String(error)).replace(/^CronPattern: /, ''));
  }
  if (parsed.size >= MEMO_SIZE) parsed.delete(parsed.keys().next().value as string);
  parsed.set(key, cron);
  return cron;
}

/** Throws a {@link WindowError} when the window's schedule or time zone cannot be read. */
export function assertReadable(window: ResolvedWindow): void {
  cronOf(window);
}

/** The latest opening at or before `time`, if the schedule ever opened before it. */
export function lastOpening(window: ResolvedWindow, time: Date): Opening | undefined {
  const [opens] = cronOf(window).previousRuns(1, new Date(time.getTime() + 1));
  return opens ? opening(window, opens) : undefined;
}

/** The first opening strictly after `time`, or undefined when the schedule never opens again. */
export function nextOpening(window: ResolvedWindow, time: Date): Opening | undefined {
  const opens = cronOf(window).nextRun(time);
  return opens ? opening(window, opens) : undefined;
}

/** The opening the window is open in at `time`, if it is open then. */
export function openAt(window: ResolvedWindow, time: Date): Opening | undefined {
  const last = lastOpening(window, time);
  return last && last.closes > time ? last : undefined;
}

function opening(window: ResolvedWindow, opens: Date): Opening {
  return { opens, closes: window.duration.after(opens) };
}

/** The longest stretch the window stays closed in a look ahead, or that it never opens again. */
export type ClosedStretch = { readonly never: true; readonly from: Date } | { readonly never: false; readonly milliseconds: number };

/**
 * The longest time the window stays closed between `from` and `from + horizonMs` (the time before its first opening
 * counts, from `from` on), looking at no more than `budget` openings; `never` when, from some time on, it never opens
 * again (a schedule such as `0 0 30 2 *`). Openings that overlap or touch form one open stretch.
 */
export function longestClosed(window: ResolvedWindow, from: Date, horizonMs: number, budget: number): ClosedStretch {
  const until = from.getTime() + horizonMs;
  const span = window.duration.milliseconds;
  let end = openAt(window, from)?.closes.getTime() ?? from.getTime();
  let longest = 0;
  for (let step = 0; step < budget && end < until; step++) {
    // The first opening whose window reaches past `end`: it opens after `end - duration`.
    const next = nextOpening(window, new Date(end - span));
    if (!next) return { never: true, from: new Date(end) };
    const opens = next.opens.getTime();
    if (opens > end) longest = Math.max(longest, opens - end);
    end = Math.max(end, next.closes.getTime());
  }
  return { never: false, milliseconds: longest };
}
