/**
 * The rules of the rotation policy's extension fields (issue 48), written once for every place they sit: an order's
 * `spec.rotation` (`window`, `jitterPercent`) and a ControlPlane's fleet defaults (`applicationCredentialDefaults`,
 * for the whole ControlPlane and per namespace assignment). Each is a CEL rule the CRD carries with its TypeScript
 * twin, or a schema bound, as in `rules.ts`.
 *
 * What the API server can tell is refused at admission: a schedule of the wrong shape (not five fields or a named
 * schedule), a time zone that is no IANA-style name, a window duration that is malformed, under `1m` or over
 * `87600h`, a jitter outside 0–50 %. What only a cron library and the time zone database can tell (a field out of
 * range, a zone that does not exist, a window that cannot open before the credential's expiry) is the lifecycle's:
 * src/lifecycle/schedule.ts refuses it by a condition on the order and at `pulumi preview`.
 */
import { Duration, durationOf } from './duration';
import type { FieldBound, Rule } from './field-rules';

/** Bounds of the policy fields. */
export const PolicyLimits = {
  /** `window.schedule`: far longer than any five-field schedule a person writes. */
  scheduleMaxLength: 128,
  /** `window.timeZone`: the longest IANA name is 32 characters. */
  timeZoneMaxLength: 64,
  /** `window.duration`: shorter than a minute opens no window a cron schedule (minutes) can name. */
  windowDurationMinimum: '1m',
  /** `window.duration`: the interval's own maximum. */
  windowDurationMaximum: '87600h',
  /** `jitterPercent`: at most half the interval, so an order rotates at least every half interval. */
  jitterPercentMaximum: 50,
  /** A Go duration string (as `Limits.durationMaxLength`). */
  durationMaxLength: 64,
} as const;

/** The named schedules a window accepts (Kubernetes CronJob's, but `@reboot`). */
export const NAMED_SCHEDULES = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'] as const;

/** A cron field: digits, names (`MON`, `JAN`), `*`, `?`, lists, ranges, steps and the `L W #` extensions. */
const CRON_FIELD = '[0-9A-Za-z*?,/#-]+';
/** Five cron fields separated by single spaces, or a named schedule. */
export const SCHEDULE_PATTERN = `^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|${CRON_FIELD}( ${CRON_FIELD}){4})$`;
/** An IANA time zone name: `UTC`, `Europe/Berlin`, `America/Argentina/Buenos_Aires`, `Etc/GMT+2`. */
export const TIME_ZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$';

const SCHEDULE = new RegExp(SCHEDULE_PATTERN);
const TIME_ZONE = new RegExp(TIME_ZONE_PATTERN);
const MIN_WINDOW = Duration.parse(PolicyLimits.windowDurationMinimum);
const MAX_WINDOW = Duration.parse(PolicyLimits.windowDurationMaximum);

/** A rule placed at `path`, the shape `dnsLabelRule` has. */
type PlacedAt<P extends string> = Omit<Rule, 'path'> & { readonly path: P };

/**
 * The CRD rules of a rotation block's policy fields, under `rotation` (a dotted path: `spec.rotation`,
 * `spec.applicationCredentialDefaults.rotation`); messages name the fields from `rotation.` on, as the spec's do.
 */
export function rotationPolicyRules<P extends string>(rotation: P): PlacedAt<`${P}.window.schedule` | `${P}.window.timeZone` | `${P}.window.duration`>[] {
  return [
    {
      path: `${rotation}.window.schedule`,
      cel: `self.matches('${SCHEDULE_PATTERN}')`,
      message: `rotation.window.schedule must be a cron schedule of five fields (minute hour day-of-month month day-of-week) or one of ${NAMED_SCHEDULES.join(', ')}`,
      transition: false,
      holds: (self) => typeof self !== 'string' || SCHEDULE.test(self),
    },
    {
      path: `${rotation}.window.timeZone`,
      cel: `self.matches('${TIME_ZONE_PATTERN}')`,
      message: 'rotation.window.timeZone must be an IANA time zone name (UTC, Europe/Berlin)',
      transition: false,
      holds: (self) => typeof self !== 'string' || TIME_ZONE.test(self),
    },
    {
      path: `${rotation}.window.duration`,
      cel: `duration(self) >= duration('${PolicyLimits.windowDurationMinimum}') && duration(self) <= duration('${PolicyLimits.windowDurationMaximum}')`,
      message: `rotation.window.duration is at least ${PolicyLimits.windowDurationMinimum} and at most ${PolicyLimits.windowDurationMaximum}`,
      transition: false,
      holds: (self) => {
        const d = durationOf(self);
        return d !== undefined && d.compare(MIN_WINDOW) >= 0 && d.compare(MAX_WINDOW) <= 0;
      },
    },
  ];
}

/** The schema bounds of a rotation block's policy fields under `rotation` (the CRD states the same). */
export function rotationPolicyBounds(rotation: string): FieldBound[] {
  return [
    { path: `${rotation}.window.schedule`, required: true, type: 'string', maxLength: PolicyLimits.scheduleMaxLength },
    { path: `${rotation}.window.timeZone`, type: 'string', maxLength: PolicyLimits.timeZoneMaxLength },
    { path: `${rotation}.window.duration`, required: true, type: 'duration', maxLength: PolicyLimits.durationMaxLength },
    { path: `${rotation}.jitterPercent`, type: 'integer', minimum: 0, maximum: PolicyLimits.jitterPercentMaximum },
  ];
}
