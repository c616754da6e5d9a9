/**
 * bench/fleet-rotation.ts's logic at a tiny size, so it cannot rot: the window's hand-written model, the invariants'
 * verdicts on a made-up run, and a 50-order fleet through a four-day rotation period (interval 96h, grace 4h: the
 * bench's 720h would cost this test a month of virtual time) with every invariant holding.
 */
import { FORCED_WITHIN_MS, inFleetWindow, massRotation, violationsOf, type MassRotation } from './fleet-rotation';

const at = (iso: string) => Date.parse(iso);

describe('the fleet rotation bench', () => {
  it('reads the window as weekdays 02:00–04:00 Berlin time', () => {
    expect(inFleetWindow(at('2027-01-04T01:00:00Z'))).toBe(true); // Monday 02:00 in Berlin (CET)
    expect(inFleetWindow(at('2027-01-04T02:59:59Z'))).toBe(true);
    expect(inFleetWindow(at('2027-01-04T03:00:00Z'))).toBe(false); // 04:00
    expect(inFleetWindow(at('2027-01-04T00:59:59Z'))).toBe(false);
    expect(inFleetWindow(at('2027-01-08T01:30:00Z'))).toBe(true); // Friday
    expect(inFleetWindow(at('2027-01-09T01:30:00Z'))).toBe(false); // Saturday
    expect(inFleetWindow(at('2027-01-10T01:30:00Z'))).toBe(false); // Sunday
  });

  it('names each broken invariant of a run', () => {
    const due = at('2027-02-03T08:00:00Z');
    const raisedAt = at('2027-02-01T12:00:00Z');
    const run: MassRotation = {
      options: { orders: 3, policy: true, raise: 1 },
      createdAt: at('2027-01-04T08:00:00Z'),
      filledAt: at('2027-01-04T08:01:00Z'),
      raisedAt,
      raised: new Map([['tenant-a/o2', raisedAt]]),
      endAt: due + 25 * 3_600_000,
      due: new Map([
        ['tenant-a/o0', { due, next: due, credentialId: 'a' }],
        ['tenant-a/o1', { due, next: due, credentialId: 'b' }],
        ['tenant-a/o2', { due, next: due, credentialId: 'c' }],
      ]),
      mints: [
        { at: at('2027-02-01T12:00:00Z'), key: 'tenant-a/o0', why: 'schedule due' },
        { at: at('2027-02-03T09:00:00Z'), key: 'tenant-a/o1', why: 'schedule due' },
        { at: raisedAt + FORCED_WITHIN_MS + 1000, key: 'tenant-a/o2', why: 'spec.credentialGeneration raised to 2' },
      ],
      converged: new Map([
        ['tenant-a/o0', at('2027-02-01T12:00:01Z')],
        ['tenant-a/o1', at('2027-02-03T09:00:01Z')],
        ['tenant-a/o2', raisedAt + FORCED_WITHIN_MS + 2000],
      ]),
      notConverged: ['tenant-a/o1'],
      mostCredentials: { count: 3, key: 'u/o0' },
      keystone: { peakInFlight: 1, peakPerSecondFill: 20, peakPerSecondRun: 5, requests: 100, requestsBetween: () => 0 },
      inFlightLimit: 8,
      rateLimit: 20,
      peakRss: 0,
    };
    const violations = violationsOf(run).join('\n');
    expect(violations).toContain('tenant-a/o0: a scheduled rotation started at 2027-02-01T12:00:00.000Z, outside the window');
    expect(violations).toContain('tenant-a/o1: a scheduled rotation started at 2027-02-03T09:00:00.000Z, outside the window');
    expect(violations).toContain('tenant-a/o1: converged at its new credential at 2027-02-03T09:00:01.000Z, past its due time');
    expect(violations).toContain('tenant-a/o1: not converged at the end');
    expect(violations).toContain('u/o0: held 3 credentials at the fake Keystone at once');
    expect(violations).toContain('tenant-a/o2: the raised generation minted at 2027-02-01T12:01:01.000Z');
    // In a grace period at the raise, the order may mint only once it ends: then 61 s after the raise is in time.
    expect(violationsOf({ ...run, raised: new Map([['tenant-a/o2', raisedAt + 30_000]]) }).join('\n')).not.toContain('tenant-a/o2: the raised');
    expect(violationsOf({ ...run, options: { ...run.options, policy: false } }).join('\n')).not.toContain('outside the window');
    // A raise of many orders is paced: a mint 200 s after the raise is in time when Keystone was kept at --keystone-rate
    // meanwhile (200 s of requests at 20 a second, or 150: 50 s beyond), not when it idled for more than 60 s of it.
    const late = { ...run, mints: run.mints.map((m) => (m.key === 'tenant-a/o2' ? { ...m, at: raisedAt + 200_000 } : m)) };
    const paced = (requests: number) => violationsOf({ ...late, keystone: { ...run.keystone, requestsBetween: () => requests } }).join('\n');
    expect(paced(200 * 20)).not.toContain('tenant-a/o2: the raised');
    expect(paced(150 * 20)).not.toContain('tenant-a/o2: the raised');
    expect(paced(130 * 20)).toContain('tenant-a/o2: the raised generation minted at 2027-02-01T12:03:20.000Z');
  });

  it('rotates 50 orders inside the windows, before their due times, and lets a raise through at once', async () => {
    const run = await massRotation({ orders: 50, policy: true, raise: 5, intervalHours: 96, graceHours: 4 });
    expect(violationsOf(run)).toEqual([]);
    const scheduled = run.mints.filter((m) => m.why === 'schedule due');
    expect(scheduled.length).toBeGreaterThanOrEqual(45);
    expect(run.mints.length - scheduled.length).toBe(5);
    // Jitter and the window's second fraction spread the starts: not one second for the fleet.
    expect(new Set(scheduled.map((m) => Math.floor(m.at / 1000))).size).toBeGreaterThan(10);
    expect(run.converged.size).toBe(50);
  }, 600_000);
});
