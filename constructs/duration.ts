/**
 * A Go-format duration for the constructs' props (`rotation.interval`, `rotation.gracePeriod`): the engine's parser
 * (src/api/duration.ts, Go's grammar and int64-nanosecond range, written once), behind a class every jsii language can
 * hold. The engine's own `Duration` keeps its nanoseconds as a `bigint`, which jsii cannot carry; this one keeps it
 * private and offers what a cdk8s app needs: parse, the canonical string, and whole milliseconds.
 */
import { Duration as GoDuration } from '../src/api/duration';

/** A signed span of time as Go's `time.Duration` holds it, e.g. `Duration.parse('168h')`. */
export class Duration {
  /**
   * Parses a Go-format duration: an optional sign, then decimal numbers each with a unit (`ns`, `us`, `µs`, `ms`, `s`,
   * `m`, `h`), like `300ms`, `1.5h` or `2h45m30.5s`; a lone `0` needs no unit.
   * @param text the duration
   * @throws an error naming the value and the rule for an empty string, a number without unit, an unknown unit, or a
   *   value beyond Go's int64 nanoseconds
   */
  public static parse(text: string): Duration {
    return new Duration(GoDuration.parse(text));
  }

  private constructor(private readonly value: GoDuration) {}

  /** Whole milliseconds (sub-millisecond precision is dropped). */
  public toMilliseconds(): number {
    return this.value.milliseconds;
  }

  /** Go's canonical form, as `time.Duration.String()` writes it and a Go client stores it: `168h0m0s`, `1.5s`, `0s`. */
  public toString(): string {
    return this.value.toString();
  }
}

/** The string the CRD stores for a duration prop: a string as written (the rules check it), a Duration canonical. */
export function durationString(input: string | Duration | undefined): string | undefined {
  if (input === undefined) return undefined;
  return typeof input === 'string' ? input : input.toString();
}
