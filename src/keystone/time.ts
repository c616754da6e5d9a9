/**
 * Keystone's timestamps. Replies render times as naive UTC with microseconds and no zone
 * (`2026-12-02T13:56:48.697000`); tokens carry `…Z`. Requests must use `…Z` or a naive UTC time: Keystone rejects any
 * `+hh:mm` offset with 400 "Timestamp not in expected format".
 */

const KEYSTONE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * Parses a Keystone timestamp. A time without a zone is UTC (never local time); fractions beyond milliseconds are
 * truncated. Returns `undefined` for `null`/`undefined`; throws on anything else that is not a timestamp.
 */
export function parseKeystoneTime(value: string | null | undefined): Date | undefined {
  if (value === null || value === undefined) return undefined;
  const match = KEYSTONE_TIME.exec(value);
  if (!match) throw new Error(`not a Keystone timestamp: ${JSON.stringify(value)}`);
  const [, y, mo, d, h, mi, s, fraction, zone] = match;
  const ms = Number((fraction ?? '0').padEnd(3, '0').slice(0, 3));
  let epoch = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    epoch -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  return new Date(epoch);
}

/** Formats a time the way Keystone accepts it in requests: ISO 8601 in UTC with `Z`. */
export function formatKeystoneTime(value: Date): string {
  if (Number.isNaN(value.getTime())) throw new Error('expiresAt is not a valid date');
  return value.toISOString();
}
