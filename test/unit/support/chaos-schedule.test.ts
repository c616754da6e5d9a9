/**
 * The chaos run's schedules (test/support/chaos/schedule.ts): a seed gives one schedule, every event fits between the
 * first interval and the quiet tail, kinds come each once before any comes again, and a schedule file is read back
 * as it was written, or refused naming the field.
 */
import { describeStep, drawSchedule, durationOf, parseSchedule, tailSecondsOf, type ChaosEvent } from '../../support/chaos/schedule';

/** The kind as the seeded order cycles them (the outages by their fault class). */
const classOf = (e: ChaosEvent) => (e.kind === 'keystone' ? (e.fault === 'down' ? 'keystone-down' : 'keystone-status') : e.kind === 'openbao' ? (e.fault === 'down' ? 'openbao-down' : 'openbao-denies') : e.kind);

describe('chaos schedules', () => {
  const long = { seed: 7, minutes: 30, intervalSeconds: 120 };

  it('a seed gives the same schedule every time; another seed another one', () => {
    expect(drawSchedule(long)).toEqual(drawSchedule(long));
    expect(drawSchedule({ ...long, seed: 8 })).not.toEqual(drawSchedule(long));
  });

  it.each([1, 2, 3, 46_046])('seed %d: every event between the first interval and the quiet tail, each kind once before any again', (seed) => {
    for (const setup of [{ ...long, seed }, { seed, minutes: 7, intervalSeconds: 60 }]) {
      const { steps } = drawSchedule(setup);
      expect(steps.length).toBeGreaterThanOrEqual(setup.minutes === 7 ? 3 : 12);
      for (const step of steps) {
        expect(step.at).toBeGreaterThanOrEqual(setup.intervalSeconds);
        expect(step.at + durationOf(step.event)).toBeLessThanOrEqual(setup.minutes * 60 - tailSecondsOf(setup));
        if ('seconds' in step.event) expect(step.event.seconds).toBeGreaterThanOrEqual(10);
      }
      const first = steps.slice(0, 10).map((s) => classOf(s.event));
      // An outage cut below 10 s by the tail is left out: the rest are distinct.
      expect(new Set(first).size).toBeGreaterThanOrEqual(first.length - 1);
    }
  });

  it('the long run meets every kind of event', () => {
    const kinds = new Set(drawSchedule(long).steps.map((s) => classOf(s.event)));
    expect([...kinds].sort()).toEqual(['apiserver-restart', 'consent', 'handover', 'keystone-down', 'keystone-status', 'kill', 'openbao-denies', 'openbao-down', 'raise', 'tenant-edit']);
  });

  it('a schedule file is read back as it was written; a bad one names the field', () => {
    const schedule = drawSchedule(long);
    expect(parseSchedule(JSON.stringify(schedule))).toEqual(schedule);
    expect(() => parseSchedule(JSON.stringify({ ...schedule, setup: { ...schedule.setup, intervalSeconds: 30 } }))).toThrow('schedule: setup.intervalSeconds (30) must be a whole number, 60 or more');
    expect(() => parseSchedule(JSON.stringify({ ...schedule, steps: [{ at: 60, event: { kind: 'raise', order: 'nope' } }] }))).toThrow('schedule: steps[0].event.order ("nope") must be one of r1, r2, s1');
    expect(() => parseSchedule(JSON.stringify({ ...schedule, steps: [{ at: 60, event: { kind: 'reboot' } }] }))).toThrow('schedule: steps[0].event.kind ("reboot") is not an event of the chaos run');
  });

  it('describes each step in a line', () => {
    expect(describeStep({ at: 95, event: { kind: 'keystone', fault: '503', seconds: 40 } })).toBe('+95 s keystone 503 for 40 s');
    expect(describeStep({ at: 100, event: { kind: 'tenant-edit', order: 'r1', edit: 'swap' } })).toBe('+100 s tenant edit of r1-credentials: swap');
  });
});
