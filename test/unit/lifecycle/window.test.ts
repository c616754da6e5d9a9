import { Duration } from '../../../src/api/duration';
import { lastOpening, nextOpening, openAt, WindowError } from '../../../src/lifecycle/window';

const berlin = (schedule: string, duration = '1h') => ({ schedule, timeZone: 'Europe/Berlin', duration: Duration.parse(duration) });
const opensAfter = (schedule: string, iso: string) => nextOpening(berlin(schedule), new Date(iso))?.opens.toISOString();

describe('a rotation window read by croner in an IANA zone (docs/operate/fleet.md, Rotation windows)', () => {
  it('opens at the local time the schedule names, on both sides of a daylight-saving change', () => {
    expect(opensAfter('0 2 * * *', '2026-03-27T12:00:00Z')).toBe('2026-03-28T01:00:00.000Z'); // CET, UTC+1
    expect(opensAfter('0 2 * * *', '2026-03-30T12:00:00Z')).toBe('2026-03-31T00:00:00.000Z'); // CEST, UTC+2
  });

  it('a time the spring change skips (02:30 on 29 March 2026 in Berlin) opens at the first time after the gap', () => {
    expect(opensAfter('30 2 * * *', '2026-03-28T12:00:00Z')).toBe('2026-03-29T01:00:00.000Z'); // 03:00 CEST
  });

  it('a time the autumn change repeats (02:30 on 25 October 2026 in Berlin) opens once', () => {
    const first = opensAfter('30 2 * * *', '2026-10-24T12:00:00Z');
    expect(first).toBe('2026-10-25T00:30:00.000Z'); // 02:30 CEST, the first of the two
    expect(opensAfter('30 2 * * *', first as string)).toBe('2026-10-26T01:30:00.000Z'); // the next day, 02:30 CET
  });

  it('a day of month and a day of week both restricted match either (Vixie cron)', () => {
    // The 1st of the month or a Monday: 1 June 2026 is a Monday, 8 June the next Monday, 1 July a Wednesday.
    const window = { schedule: '0 2 1 * 1', timeZone: 'UTC', duration: Duration.parse('1h') };
    const opens: string[] = [];
    let at = new Date('2026-05-31T12:00:00Z');
    for (let i = 0; i < 6; i++) {
      const next = nextOpening(window, at);
      if (!next) break;
      opens.push(next.opens.toISOString().slice(0, 10));
      at = next.opens;
    }
    expect(opens).toEqual(['2026-06-01', '2026-06-08', '2026-06-15', '2026-06-22', '2026-06-29', '2026-07-01']);
  });

  it('is open for its duration in elapsed time after each opening, and not at its closing', () => {
    const window = berlin('0 2 * * *', '2h');
    expect(openAt(window, new Date('2026-06-10T00:00:00Z'))?.opens.toISOString()).toBe('2026-06-10T00:00:00.000Z');
    expect(openAt(window, new Date('2026-06-10T01:59:59Z'))).toBeDefined();
    expect(openAt(window, new Date('2026-06-10T02:00:00Z'))).toBeUndefined();
    expect(lastOpening(window, new Date('2026-06-10T05:00:00Z'))?.closes.toISOString()).toBe('2026-06-10T02:00:00.000Z');
  });

  it('refuses a schedule or a zone it cannot read, naming the field', () => {
    expect(() => nextOpening(berlin('99 2 * * *'), new Date())).toThrow(WindowError);
    expect(() => nextOpening({ ...berlin('0 2 * * *'), timeZone: 'Europe/Atlantis' }, new Date())).toThrow(/rotation\.window\.timeZone \("Europe\/Atlantis"\)/);
  });
});
