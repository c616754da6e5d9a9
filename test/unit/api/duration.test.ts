import { Duration, DurationError } from '../../../src/api';

describe('Go-format durations', () => {
  it.each([
    ['0s', 0n, '0s'],
    ['0', 0n, '0s'],
    ['1m', 60_000_000_000n, '1m0s'],
    ['720h', 2_592_000_000_000_000n, '720h0m0s'],
    ['720h0m0s', 2_592_000_000_000_000n, '720h0m0s'],
    ['1h30m', 5_400_000_000_000n, '1h30m0s'],
    ['1.5h', 5_400_000_000_000n, '1h30m0s'],
    ['300ms', 300_000_000n, '300ms'],
    ['2h45m30.5s', 9_930_500_000_000n, '2h45m30.5s'],
    ['-1h', -3_600_000_000_000n, '-1h0m0s'],
    ['1.5s', 1_500_000_000n, '1.5s'],
    ['1us', 1_000n, '1µs'],
    ['1µs', 1_000n, '1µs'],
    ['1μs', 1_000n, '1µs'],
    ['1.5µs', 1_500n, '1.5µs'],
    ['7ns', 7n, '7ns'],
    ['+5m', 300_000_000_000n, '5m0s'],
    ['.5h', 1_800_000_000_000n, '30m0s'],
    ['87600h', 315_360_000_000_000_000n, '87600h0m0s'],
    ['2562047h47m16.854775807s', (1n << 63n) - 1n, '2562047h47m16.854775807s'],
  ])('parses %s as Go does and formats it back canonically', (text, ns, canonical) => {
    const d = Duration.parse(text);
    expect(d.nanoseconds).toBe(ns);
    expect(d.toString()).toBe(canonical);
    expect(Duration.parse(d.toString()).nanoseconds).toBe(ns);
  });

  it.each([
    ['', 'empty'],
    ['-', 'empty'],
    ['10', 'no unit'],
    ['1h30', 'no unit'],
    ['5d', 'unknown unit "d"'],
    ['1x', 'unknown unit "x"'],
    ['.', 'expected a number'],
    ['h', 'expected a number'],
    ['1h 30m', 'unknown unit "h "'],
    ['2562047h47m16.854775808s', 'out of range'],
    ['9999999999h', 'out of range'],
  ])('rejects %j with an error naming the field and the value (%s)', (text, why) => {
    let error: unknown;
    try {
      Duration.parse(text, 'spec.rotation.interval');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DurationError);
    expect((error as Error).message).toContain('spec.rotation.interval');
    expect((error as Error).message).toContain(JSON.stringify(text));
    expect((error as Error).message).toContain(why);
  });

  it('does date arithmetic in milliseconds', () => {
    const t = new Date('2026-01-01T00:00:00Z');
    expect(Duration.parse('1h30m').after(t).toISOString()).toBe('2026-01-01T01:30:00.000Z');
    expect(Duration.parse('24h').before(t).toISOString()).toBe('2025-12-31T00:00:00.000Z');
  });
});
