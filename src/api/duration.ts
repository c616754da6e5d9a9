/**
 * Go-format durations (`time.ParseDuration` / `time.Duration.String`).
 *
 * The API server stores `rotation.interval` and `rotation.gracePeriod` as the strings users and Go clients write: the CRD
 * default `720h`, a Go client's `720h0m0s`, a hand-written `1h30m`. Every face of this project must read them exactly as
 * Go (and CEL's `duration()`) does, so this module implements Go's grammar and its int64-nanosecond range, and formats
 * back in Go's canonical form. Written by hand because no npm library implements Go's exact grammar and overflow rules.
 */

/** Nanoseconds per unit, as Go's `time` package defines them. */
const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n], // U+00B5 micro sign
  ['\u03bcs', 1_000n], // U+03BC Greek mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

/** The largest duration Go can hold: 2^63 − 1 nanoseconds (about 292 years). */
export const MAX_NANOSECONDS = (1n << 63n) - 1n;
const MIN_NANOSECONDS = -(1n << 63n);

/** A malformed or out-of-range duration; the message names the field and the value. */
export class DurationError extends Error {
  constructor(
    readonly field: string,
    readonly value: string,
    readonly rule: string,
  ) {
    super(`${field} (${JSON.stringify(value)}) ${rule}`);
    this.name = 'DurationError';
  }
}

/** A signed span of time with nanosecond precision, as Go's `time.Duration`. */
export class Duration {
  static readonly ZERO = new Duration(0n);

  private constructor(readonly nanoseconds: bigint) {}

  /** A duration of the given nanoseconds; throws a RangeError outside Go's int64 range. */
  static ofNanoseconds(ns: bigint): Duration {
    if (ns > MAX_NANOSECONDS || ns < MIN_NANOSECONDS) throw new RangeError(`duration ${ns}ns is outside Go's int64 range`);
    return ns === 0n ? Duration.ZERO : new Duration(ns);
  }

  static ofMilliseconds(ms: number): Duration {
    return Duration.ofNanoseconds(BigInt(Math.round(ms)) * 1_000_000n);
  }

  /**
   * Parses a Go-format duration: an optional sign, then one or more decimal numbers each with a unit (`ns`, `us`, `µs`,
   * `ms`, `s`, `m`, `h`), like `300ms`, `1.5h` or `2h45m30.5s`. As in Go, a lone `0` needs no unit.
   * @param field the field the value came from, named in the error
   * @throws DurationError for an empty string, a number without unit, an unknown unit, or a value beyond int64 nanoseconds
   */
  static parse(value: string, field = 'duration'): Duration {
    let rest = value;
    let negative = false;
    if (rest.startsWith('-') || rest.startsWith('+')) {
      negative = rest.startsWith('-');
      rest = rest.slice(1);
    }
    if (rest === '0') return Duration.ZERO;
    if (rest === '') throw new DurationError(field, value, 'is not a duration: it is empty');
    let total = 0n;
    while (rest !== '') {
      const number = /^(\d*)(?:\.(\d*))?/.exec(rest);
      const whole = number?.[1] ?? '';
      const fraction = number?.[2];
      if (whole === '' && (fraction === undefined || fraction === '')) {
        throw new DurationError(field, value, 'is not a duration: expected a number like 720h, 1h30m or 300ms');
      }
      rest = rest.slice(number?.[0].length ?? 0);
      const unitText = /^[^\d.]*/.exec(rest)?.[0] ?? '';
      if (unitText === '') throw new DurationError(field, value, 'is not a duration: a number has no unit (ns, us, ms, s, m, h)');
      const unit = UNITS.get(unitText);
      if (unit === undefined) {
        throw new DurationError(field, value, `is not a duration: unknown unit ${JSON.stringify(unitText)} (use ns, us, ms, s, m, h)`);
      }
      rest = rest.slice(unitText.length);
      let part = BigInt(whole === '' ? '0' : whole) * unit;
      if (fraction) part += (BigInt(fraction) * unit) / 10n ** BigInt(fraction.length);
      total += part;
      if (total > MAX_NANOSECONDS + (negative ? 1n : 0n)) {
        throw new DurationError(field, value, 'is out of range: at most 2562047h47m16.854775807s');
      }
    }
    return Duration.ofNanoseconds(negative ? -total : total);
  }

  /** Milliseconds, for Date arithmetic (sub-millisecond precision is dropped). */
  get milliseconds(): number {
    return Number(this.nanoseconds / 1_000_000n);
  }

  isZero(): boolean {
    return this.nanoseconds === 0n;
  }

  isNegative(): boolean {
    return this.nanoseconds < 0n;
  }

  compare(other: Duration): number {
    return this.nanoseconds < other.nanoseconds ? -1 : this.nanoseconds > other.nanoseconds ? 1 : 0;
  }

  /** The time this duration after `time`. */
  after(time: Date): Date {
    return new Date(time.getTime() + this.milliseconds);
  }

  /** The time this duration before `time`. */
  before(time: Date): Date {
    return new Date(time.getTime() - this.milliseconds);
  }

  /** Go's canonical form, as `time.Duration.String()`: `720h0m0s`, `1.5s`, `300ms`, `0s`. */
  toString(): string {
    const ns = this.nanoseconds;
    if (ns === 0n) return '0s';
    const sign = ns < 0n ? '-' : '';
    const abs = ns < 0n ? -ns : ns;
    if (abs < 1_000n) return `${sign}${abs}ns`;
    if (abs < 1_000_000n) return `${sign}${decimal(abs, 1_000n)}\u00b5s`;
    if (abs < 1_000_000_000n) return `${sign}${decimal(abs, 1_000_000n)}ms`;
    const hours = abs / 3_600_000_000_000n;
    const minutes = (abs / 60_000_000_000n) % 60n;
    const seconds = decimal(abs % 60_000_000_000n, 1_000_000_000n);
    if (hours > 0n) return `${sign}${hours}h${minutes}m${seconds}s`;
    if (minutes > 0n) return `${sign}${minutes}m${seconds}s`;
    return `${sign}${seconds}s`;
  }

  toJSON(): string {
    return this.toString();
  }
}

/** `value / unit` as a decimal without trailing zeros, e.g. decimal(1500n, 1000n) = "1.5". */
function decimal(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const fraction = value % unit;
  if (fraction === 0n) return whole.toString();
  const digits = unit.toString().length - 1;
  return `${whole}.${fraction.toString().padStart(digits, '0').replace(/0+$/, '')}`;
}

/** A duration as users write it: a Go-format string or a Duration value. */
export type DurationInput = string | Duration;

/** Parses a string or passes a Duration through. */
export function toDuration(input: DurationInput, field: string): Duration {
  return typeof input === 'string' ? Duration.parse(input, field) : input;
}

/** The duration a value holds, or undefined when it is no Go-format string: for rules that hold only of a duration. */
export function durationOf(value: unknown): Duration | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return Duration.parse(value);
  } catch {
    return undefined;
  }
}
