/**
 * The rotation window and jitter rules (issue 48, src/lifecycle/schedule.ts) as properties over random policies,
 * zones, owners and clocks: off by default the reference's nextRotation exactly; a scheduled start never before the
 * grace period ends and never after due; inside an open window whenever the window is not refused; the jittered time
 * within the span and stable across restarts; the late rule; refusal; forced rotations never wait.
 */
import fc from 'fast-check';
import { Duration, resolveSpec, type RotationSpec } from '../../../src/api';
import { decide, rotation } from '../../../src/lifecycle';
import { jitterFractions, jitterSpan, plannedStart, scheduledStart, windowRefusal } from '../../../src/lifecycle/schedule';
import { nextOpening, openAt } from '../../../src/lifecycle/window';
import { T0, held, hours, kinds, liveStatus, order, plus, world } from './builders';

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'America/Santiago'];
const DAY = hours(24);

/** A daily or weekday window at a random time in a random zone, open 30 minutes to 6 hours. */
const windowArb = fc.record({
  minute: fc.integer({ min: 0, max: 59 }),
  hour: fc.integer({ min: 0, max: 23 }),
  days: fc.constantFrom('*', '1-5', '0,3', '*/2'),
  timeZone: fc.constantFrom(...ZONES),
  minutes: fc.integer({ min: 30, max: 360 }),
}).map((w) => ({ schedule: `${w.minute} ${w.hour} * * ${w.days}`, timeZone: w.timeZone, duration: `${w.minutes}m` }));

/** A policy whose window always fits: an interval of 10 to 60 days and a grace period of an hour to 3 days. */
const policyArb = fc.record({
  intervalHours: fc.integer({ min: 240, max: 1440 }),
  graceHours: fc.integer({ min: 1, max: 72 }),
  jitterPercent: fc.integer({ min: 0, max: 50 }),
  window: fc.option(windowArb, { nil: undefined }),
});
const toSpec = (p: { intervalHours: number; graceHours: number; jitterPercent: number; window: RotationSpec['window'] }): RotationSpec => ({
  interval: `${p.intervalHours}h`,
  gracePeriod: `${p.graceHours}h`,
  jitterPercent: p.jitterPercent,
  ...(p.window ? { window: p.window } : {}),
});
const lastArb = fc.integer({ min: 0, max: 2 * 365 }).map((d) => plus(T0, d * DAY + 13 * 60_000));
const uidArb = fc.uuid();

function input(spec: RotationSpec, last: Date, uid: string) {
  const resolved = resolveSpec({ rotation: spec });
  const due = rotation.nextRotation(last, undefined, resolved) as Date;
  return { due, lastRotation: last, rotation: resolved, fractions: jitterFractions(uid) };
}

describe('the schedule with a window and jitter', () => {
  it('is off by default: no window and no jitter is the reference\'s nextRotation = lastRotation + interval', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 87600 }), lastArb, uidArb, (intervalHours, last, uid) => {
        const o = order(liveStatus(1, last), { rotation: { interval: `${intervalHours}h`, gracePeriod: '0s' } }, { owner: uid });
        expect(rotation.scheduledRotation(o, last)).toEqual(plus(last, hours(intervalHours)));
      }),
    );
  });

  it('never starts before the grace period ends or after due, and starts inside an open window that is not refused', () => {
    fc.assert(
      fc.property(policyArb, lastArb, uidArb, (policy, last, uid) => {
        const i = input(toSpec(policy), last, uid);
        const start = plannedStart(i, last);
        expect(start.getTime()).toBeGreaterThanOrEqual(i.rotation.gracePeriod.after(last).getTime());
        expect(start.getTime()).toBeLessThanOrEqual(i.due.getTime());
        if (i.rotation.window) {
          expect(windowRefusal(i.rotation, last)).toBeUndefined(); // a daily or every-other-day window fits 10 days
          expect(openAt(i.rotation.window, start)).toBeDefined();
        } else {
          // Jitter alone: earlier than due by at most the span.
          expect(i.due.getTime() - start.getTime()).toBeLessThanOrEqual(Math.ceil(jitterSpan(i.rotation)));
        }
      }),
      { numRuns: 80 },
    );
  });

  it('is the same on every pass and process before it: a restart never moves it (status.nextRotation says the real time)', () => {
    fc.assert(
      fc.property(policyArb, lastArb, uidArb, fc.double({ min: 0, max: 1, noNaN: true }), (policy, last, uid, f) => {
        const i = input(toSpec(policy), last, uid);
        const planned = plannedStart(i, last);
        const before = new Date(last.getTime() + Math.floor(f * (planned.getTime() - last.getTime())));
        expect(scheduledStart({ ...i, fractions: jitterFractions(uid) }, before)).toEqual(planned);
      }),
      { numRuns: 60 },
    );
  });

  it('late (the planned start passed with the window closed): the next window that opens before due, else now', () => {
    fc.assert(
      fc.property(policyArb.filter((p) => p.window !== undefined), lastArb, uidArb, fc.double({ min: 0, max: 1, noNaN: true }), (policy, last, uid, f) => {
        const i = input(toSpec(policy), last, uid);
        const planned = plannedStart(i, last);
        const now = new Date(planned.getTime() + Math.floor(f * (i.due.getTime() + DAY - planned.getTime())));
        const start = scheduledStart(i, now);
        const window = i.rotation.window as NonNullable<typeof i.rotation.window>;
        if (start > now) {
          expect(openAt(window, now)).toBeUndefined();
          expect(openAt(window, start)).toBeDefined();
          expect(start.getTime()).toBeLessThanOrEqual(i.due.getTime());
        } else {
          // Due now: a window is open, or none opens before due, or due has passed.
          const next = openAt(window, now) ?? undefined;
          expect(next !== undefined || now >= i.due || !opensBefore(window, now, i.due)).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('spreads 2,000 orders created in one second over the jitter span, none later than due', () => {
    const spec = resolveSpec({ rotation: { interval: '720h', gracePeriod: '24h', jitterPercent: 10 } });
    const starts = Array.from({ length: 2000 }, (_, n) => {
      const fractions = jitterFractions(`00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`);
      return plannedStart({ due: plus(T0, hours(720)), lastRotation: T0, rotation: spec, fractions }, T0).getTime();
    });
    const span = hours(72);
    expect(Math.max(...starts)).toBeLessThanOrEqual(plus(T0, hours(720)).getTime());
    expect(Math.min(...starts)).toBeGreaterThanOrEqual(plus(T0, hours(720)).getTime() - span);
    // Uniform: each tenth of the span holds 10 % ± 3 % of the orders, and hardly two share a second.
    for (let tenth = 0; tenth < 10; tenth++) {
      const lo = plus(T0, hours(720)).getTime() - span + (tenth * span) / 10;
      const count = starts.filter((s) => s >= lo && s < lo + span / 10).length;
      expect(count).toBeGreaterThan(140);
      expect(count).toBeLessThan(260);
    }
    expect(new Set(starts.map((s) => Math.floor(s / 1000))).size).toBeGreaterThan(1950);
  });

  it('spreads a fleet over the window\'s open time with jitter, and starts it at the opening without', () => {
    const window = { schedule: '0 2 * * *', timeZone: 'Europe/Berlin', duration: '2h' };
    const starts = (jitterPercent: number) =>
      Array.from({ length: 500 }, (_, n) => {
        const spec = resolveSpec({ rotation: { interval: '720h', gracePeriod: '24h', jitterPercent, window } });
        return plannedStart({ due: plus(T0, hours(720)), lastRotation: T0, rotation: spec, fractions: jitterFractions(`uid-${n}`) }, T0);
      });
    const plain = new Set(starts(0).map((d) => d.toISOString()));
    expect([...plain]).toEqual(['2026-12-30T01:00:00.000Z']); // 02:00 in Berlin, the last window before due (Dec 31 00:00 UTC)
    const spread = starts(10);
    const days = new Set(spread.map((d) => d.toISOString().slice(0, 10)));
    expect(days.size).toBe(4); // a 72 h span reaches back into the window before its first day: Dec 27 to Dec 30
    expect(spread.every((d) => openAt(resolveSpec({ rotation: { window } }).window as never, d) !== undefined)).toBe(true);
    expect(new Set(spread.map((d) => Math.floor(d.getTime() / 60_000))).size).toBeGreaterThan(200);
  });
});

/** Whether `window` opens in (now, due]. */
function opensBefore(window: Parameters<typeof openAt>[0], now: Date, due: Date): boolean {
  const next = nextOpening(window, now);
  return next !== undefined && next.opens <= due;
}

describe('a window that cannot open before the credential\'s expiry', () => {
  const spec = (window: RotationSpec['window'], interval = '168h', gracePeriod = '24h') => resolveSpec({ rotation: { interval, gracePeriod, window } });

  it('is refused when it stays closed longer than interval − gracePeriod, naming the fields and the rule', () => {
    const monthly = spec({ schedule: '0 2 1 * *', timeZone: 'UTC', duration: '2h' });
    expect(windowRefusal(monthly, T0)).toBe(
      'rotation.window ({"schedule":"0 2 1 * *","timeZone":"UTC","duration":"2h0m0s"}): stays closed for up to 742h, longer than rotation.interval minus rotation.gracePeriod (144h): a scheduled rotation waiting for it would let the delivered credential run into its expiry',
    );
    expect(windowRefusal(spec({ schedule: '0 2 * * 1-5', timeZone: 'Europe/Berlin', duration: '2h' }), T0)).toBeUndefined();
    // Weekdays only, with a 3-day span between grace and due: the weekend gap (Fri 04:00 → Mon 02:00, 70 h) fits.
    expect(windowRefusal(spec({ schedule: '0 2 * * 1-5', timeZone: 'UTC', duration: '2h' }, '96h', '24h'), T0)).toBeUndefined();
    expect(windowRefusal(spec({ schedule: '0 2 * * 1-5', timeZone: 'UTC', duration: '2h' }, '72h', '24h'), T0)).toMatch(/stays closed for up to 70h, longer than .* \(48h\)/);
  });

  it('is refused when it never opens, or its schedule or zone cannot be read; never with the schedule off', () => {
    expect(windowRefusal(spec({ schedule: '0 2 30 2 *', timeZone: 'UTC', duration: '2h' }), T0)).toMatch(/never opens/);
    expect(windowRefusal(spec({ schedule: '99 2 * * *', timeZone: 'UTC', duration: '2h' }), T0)).toBe('rotation.window.schedule ("99 2 * * *"): Invalid value for minute: 99');
    expect(windowRefusal(spec({ schedule: '0 2 * * *', timeZone: 'Mars/Olympus', duration: '2h' }), T0)).toMatch(/^rotation\.window\.timeZone \("Mars\/Olympus"\): is not a time zone/);
    expect(windowRefusal(spec({ schedule: '0 2 30 2 *', timeZone: 'UTC', duration: '2h' }, '0s', '24h'), T0)).toBeUndefined();
  });

  it('is not applied while refused: scheduled rotations follow the schedule and the jitter alone, and the order says so', () => {
    const rotationSpec = { interval: '168h', gracePeriod: '24h', window: { schedule: '0 2 1 * *', duration: '2h' } };
    const o = order(liveStatus(1, T0, plus(T0, hours(192))), { rotation: rotationSpec }, { owner: 'uid-1' });
    expect(rotation.scheduledRotation(o, T0)).toEqual(plus(T0, hours(168)));
    const plan = decide(o, world([held(1, plus(T0, hours(192)))]), plus(T0, hours(1)));
    const ready = plan.status.conditions?.find((c) => c.type === 'CredentialReady');
    expect(ready).toMatchObject({ status: 'False', reason: 'RotationWindowRefused' });
    expect(ready?.message).toMatch(/^generation 1 exists in Keystone; the rotation window is refused and not applied until it is fixed: rotation.window/);
    expect(plan.status.nextRotation).toBe('2026-12-08T00:00:00Z');
  });
});

describe('a window holds scheduled rotations only', () => {
  // Due 2026-12-31T00:00Z; the window opens daily 02:00–04:00 UTC, so the last window before due is Dec 30 02:00.
  const spec = { interval: '720h', gracePeriod: '24h', window: { schedule: '0 2 * * *', duration: '2h' } };
  const expiry = plus(T0, hours(744));
  const status = liveStatus(1, T0, expiry, new Date('2026-12-30T02:00:00Z'));
  const closed = new Date('2026-12-30T05:00:00Z'); // planned start passed, window closed, another window before due? no: next is Dec 31 02:00, after due

  it('starts the scheduled rotation inside the window, not at due', () => {
    const o = order({ ...status, nextRotation: undefined }, { rotation: spec }, { owner: 'uid-1' });
    expect(rotation.scheduledRotation(o, T0)).toEqual(new Date('2026-12-30T02:00:00Z'));
    expect(kinds(decide(o, world([held(1, expiry)]), new Date('2026-12-30T01:59:59Z')))).toEqual([]);
    expect(kinds(decide(o, world([held(1, expiry)]), new Date('2026-12-30T02:00:00Z')))).toEqual(['park:2', 'mint:2']);
  });

  it('late, with no window left before due, rotates now (the deadline wins)', () => {
    const o = order(status, { rotation: spec }, { owner: 'uid-1' });
    expect(kinds(decide(o, world([held(1, expiry)]), closed))).toEqual(['park:2', 'mint:2']);
  });

  it('late, with a window left before due, waits for it and records it as nextRotation', () => {
    // With jitter the planned start may fall in an earlier window; a pass after that window closed waits for the next.
    const jittered = { ...spec, jitterPercent: 10 };
    const owner = Array.from({ length: 50 }, (_, n) => `uid-${n}`).find(
      (uid) => (rotation.scheduledRotation(order(status, { rotation: jittered }, { owner: uid }), T0) as Date) < new Date('2026-12-29T00:00:00Z'),
    ) as string;
    const o = order(status, { rotation: jittered }, { owner });
    const planned = rotation.scheduledRotation(o, T0) as Date;
    const now = plus(planned, hours(3));
    const plan = decide(o, world([held(1, expiry)]), now);
    expect(kinds(plan)).toEqual([]);
    const next = new Date(plan.status.nextRotation as string);
    expect(next > now && next.getTime() - now.getTime() < DAY).toBe(true);
    expect(next.toISOString().slice(11, 13)).toMatch(/^0[23]$/); // inside the next 02:00–04:00 window
    expect(plan.wakeAt).toEqual(next);
    expect(kinds(decide({ ...o, status: plan.status }, world([held(1, expiry)]), next))).toEqual(['park:2', 'mint:2']);
  });

  it('never holds a forced rotation: a raised generation, an expired credential, a lost secret', () => {
    const now = new Date('2026-12-15T12:00:00Z'); // window closed, schedule far from due
    const o = order(status, { rotation: spec }, { owner: 'uid-1' });
    expect(kinds(decide(order(status, { rotation: spec, credentialGeneration: 5 }, { owner: 'uid-1' }), world([held(1, expiry)]), now))).toEqual(['park:5', 'mint:5']);
    expect(kinds(decide(o, world([held(1, plus(now, -1000))]), now))).toEqual(['park:2', 'mint:2']);
    expect(kinds(decide(o, world([{ generation: 1, parked: false, credential: { id: 'cred-1', expiresAt: expiry } }]), now))).toEqual(['park:2', 'mint:2']);
    expect(kinds(decide(o, world([held(1, expiry)]), now))).toEqual([]);
  });
});

describe('jitterFractions', () => {
  it('is a pure function of the seed, in [0, 1)', () => {
    fc.assert(
      fc.property(fc.string(), (seed) => {
        const a = jitterFractions(seed);
        expect(jitterFractions(seed)).toEqual(a);
        for (const f of [a.span, a.window]) expect(f >= 0 && f < 1).toBe(true);
      }),
    );
  });
  it('keeps Duration arithmetic exact for the span', () => {
    expect(jitterSpan(resolveSpec({ rotation: { interval: '720h', jitterPercent: 10 } }))).toBe(Duration.parse('72h').milliseconds);
  });
});
