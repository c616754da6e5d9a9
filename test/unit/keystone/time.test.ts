import { formatKeystoneTime, parseKeystoneTime } from '../../../src/keystone';

describe('Keystone timestamps', () => {
  test('a naive time is UTC, never local time', () => {
    expect(parseKeystoneTime('2026-12-02T13:56:48.697000')?.toISOString()).toBe('2026-12-02T13:56:48.697Z');
  });

  test('microseconds are truncated to milliseconds', () => {
    expect(parseKeystoneTime('2026-12-02T13:56:48.697999Z')?.toISOString()).toBe('2026-12-02T13:56:48.697Z');
    expect(parseKeystoneTime('2026-12-02T13:56:48.5')?.toISOString()).toBe('2026-12-02T13:56:48.500Z');
    expect(parseKeystoneTime('2026-12-02T13:56:48')?.toISOString()).toBe('2026-12-02T13:56:48.000Z');
  });

  test('explicit zones are honoured', () => {
    expect(parseKeystoneTime('2026-12-02T13:56:48.000000Z')?.toISOString()).toBe('2026-12-02T13:56:48.000Z');
    expect(parseKeystoneTime('2026-12-02T15:56:48+02:00')?.toISOString()).toBe('2026-12-02T13:56:48.000Z');
    expect(parseKeystoneTime('2026-12-02T11:26:48-0230')?.toISOString()).toBe('2026-12-02T13:56:48.000Z');
  });

  test('null and undefined mean "no time"; garbage throws', () => {
    expect(parseKeystoneTime(null)).toBeUndefined();
    expect(parseKeystoneTime(undefined)).toBeUndefined();
    expect(() => parseKeystoneTime('tomorrow')).toThrow('not a Keystone timestamp: "tomorrow"');
  });

  test('requests carry UTC with Z (Keystone rejects +hh:mm offsets)', () => {
    expect(formatKeystoneTime(new Date(Date.UTC(2026, 11, 2, 13, 56, 48, 697)))).toBe('2026-12-02T13:56:48.697Z');
    expect(() => formatKeystoneTime(new Date('nope'))).toThrow('expiresAt is not a valid date');
  });
});
