/**
 * The handoff's rules: what the delivered Secret carries (from the order's status), which workloads a pass rolls and
 * with which value, when an unfinished rollout is overdue, and when to look again. Examples first, then properties over
 * any mix of workloads, statuses and times (fast-check).
 */
import fc from 'fast-check';
import type { KeystoneApplicationCredential, KeystoneApplicationCredentialStatus } from '../../../src/api';
import { decide, deliveredOf, orderOfSecret, safetyMargin, templateGenerations, warningKey, withGeneration, type Delivered, type Workload } from '../../../src/handoff';

const NS = 'team-a';
const SECRET = 'app-credentials';
const T0 = new Date('2026-12-01T00:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const H = 3_600_000;

function order(status: KeystoneApplicationCredentialStatus | undefined, gracePeriod = '24h', deleting = false): KeystoneApplicationCredential {
  return {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneApplicationCredential',
    metadata: { name: 'app', namespace: NS, ...(deleting ? { deletionTimestamp: T0.toISOString() } : {}) },
    spec: { controlPlaneRef: { name: 'cp', namespace: 'cp' }, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, rotation: { interval: '720h', gracePeriod } },
    ...(status ? { status } : {}),
  };
}

function workload(name: string, options: { namespace?: string; optIn?: string[]; value?: string; finished?: boolean; deleting?: boolean; annotations?: Record<string, string>; kind?: Workload['kind'] } = {}): Workload {
  return {
    kind: options.kind ?? 'Deployment',
    namespace: options.namespace ?? NS,
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    annotations: options.annotations ?? {},
    optIn: options.optIn ?? [SECRET],
    ...(options.value !== undefined ? { templateValue: options.value } : {}),
    generations: templateGenerations(options.value),
    rollout: options.finished === false ? { finished: false, why: 'its rollout is paused (spec.paused)' } : { finished: true },
    deleting: options.deleting ?? false,
  };
}

describe('what the delivered Secret carries', () => {
  it('is the current generation while status.secretName is set', () => {
    expect(deliveredOf(order({ credentialGeneration: 3, secretName: SECRET }))).toEqual({ secretName: SECRET, generation: 3 });
  });

  it('is nothing before the Secret carries the current generation, without a status, and while the order is deleted', () => {
    expect(deliveredOf(order({ credentialGeneration: 3 }))).toBeUndefined();
    expect(deliveredOf(order(undefined))).toBeUndefined();
    expect(deliveredOf(order({ credentialGeneration: 3, secretName: SECRET }, '24h', true))).toBeUndefined();
  });

  it('carries the grace period: the warning is due half the grace period before previousCredentialDeleteAt', () => {
    const deleteAt = at(24 * H);
    const d = deliveredOf(order({ credentialGeneration: 3, secretName: SECRET, previousCredentialGeneration: 2, previousCredentialDeleteAt: deleteAt.toISOString() }));
    expect(d?.grace).toEqual({ previousGeneration: 2, deleteAt, warnAt: at(12 * H) });
    const short = deliveredOf(order({ credentialGeneration: 3, secretName: SECRET, previousCredentialGeneration: 2, previousCredentialDeleteAt: at(40_000).toISOString() }, '40s'));
    expect(short?.grace?.warnAt).toEqual(at(20_000));
    expect(safetyMargin(-5)).toBe(0);
  });
});

describe('the order of a delivered Secret', () => {
  it('is the name before -credentials', () => {
    expect(orderOfSecret('app-credentials')).toBe('app');
    expect(orderOfSecret('my.app-credentials')).toBe('my.app');
    expect(orderOfSecret('-credentials')).toBeUndefined();
    expect(orderOfSecret('app-password')).toBeUndefined();
  });
});

describe('a pass', () => {
  const delivered: Delivered = { secretName: SECRET, generation: 3 };

  it('rolls the opted-in workloads of the namespace that do not record the generation, keeping other Secrets\' entries', () => {
    const plan = decide({
      namespace: NS,
      delivered,
      now: T0,
      warned: new Set(),
      workloads: [
        workload('fresh'),
        workload('behind', { value: 'app-credentials=2,db-credentials=7' }),
        workload('current', { value: 'app-credentials=3' }),
        workload('elsewhere', { namespace: 'team-b' }),
        workload('other-secret', { optIn: ['db-credentials'] }),
        workload('going', { deleting: true }),
      ],
    });
    expect(plan.rolls.map((r) => [r.workload.name, r.value, r.from])).toEqual([
      ['fresh', 'app-credentials=3', undefined],
      ['behind', 'app-credentials=3,db-credentials=7', 2],
    ]);
    expect(plan.pending).toBe(2);
    expect(plan.overdue).toEqual([]);
    expect(plan.wakeAt).toBeUndefined();
  });

  it('rolls a workload that records a higher generation too (a new order of the same name)', () => {
    expect(decide({ namespace: NS, delivered: { secretName: SECRET, generation: 1 }, now: T0, warned: new Set(), workloads: [workload('w', { value: 'app-credentials=5' })] }).rolls).toHaveLength(1);
  });

  it('names the Reloader annotation that would roll the workload too', () => {
    const plan = decide({ namespace: NS, delivered, now: T0, warned: new Set(), workloads: [workload('w', { annotations: { 'reloader.stakater.com/auto': 'true' } })] });
    expect(plan.rolls[0].reloader).toBe('reloader.stakater.com/auto');
  });

  it('does nothing while nothing current is delivered', () => {
    expect(decide({ namespace: NS, delivered: undefined, now: T0, warned: new Set(), workloads: [workload('w')] })).toEqual({ rolls: [], pending: 0, overdue: [], warnings: [] });
  });

  describe('during a grace period', () => {
    const grace = { previousGeneration: 2, deleteAt: at(24 * H), warnAt: at(12 * H) };
    const inGrace: Delivered = { ...delivered, grace };
    const stuck = workload('stuck', { value: 'app-credentials=3', finished: false });
    const fine = workload('fine', { value: 'app-credentials=3' });

    it('wakes at the warning time while a rollout is pending, and warns about none before it', () => {
      const plan = decide({ namespace: NS, delivered: inGrace, now: at(H), warned: new Set(), workloads: [stuck, fine] });
      expect(plan).toMatchObject({ rolls: [], pending: 1, overdue: [], warnings: [], wakeAt: grace.warnAt });
    });

    it('warns from the warning time about every unfinished rollout, once', () => {
      const late = workload('late', { value: 'app-credentials=2' });
      const plan = decide({ namespace: NS, delivered: inGrace, now: at(12 * H), warned: new Set(), workloads: [stuck, fine, late] });
      expect(plan.overdue.map((o) => [o.workload.name, o.why])).toEqual([
        ['stuck', 'its rollout is paused (spec.paused)'],
        ['late', 'it is rolled from generation 2 only now'],
      ]);
      expect(plan.warnings).toEqual(plan.overdue);
      expect(plan.wakeAt).toBeUndefined();
      const again = decide({ namespace: NS, delivered: inGrace, now: at(13 * H), warned: new Set([warningKey(stuck, SECRET, 3)]), workloads: [stuck, fine] });
      expect(again.overdue).toHaveLength(1);
      expect(again.warnings).toEqual([]);
    });

    it('needs no wake-up when every rollout has finished', () => {
      expect(decide({ namespace: NS, delivered: inGrace, now: at(H), warned: new Set(), workloads: [fine] }).wakeAt).toBeUndefined();
    });
  });
});

describe('properties of a pass', () => {
  const name = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
  const arbWorkload = fc
    .record({
      name,
      kind: fc.constantFrom('Deployment' as const, 'StatefulSet' as const, 'DaemonSet' as const),
      namespace: fc.constantFrom(NS, NS, 'team-b'),
      optIn: fc.subarray([SECRET, 'db-credentials', 'x-credentials']),
      recorded: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
      others: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
      finished: fc.boolean(),
      deleting: fc.boolean(),
    })
    .map((w) => {
      const parts = [...(w.recorded !== undefined ? [`${SECRET}=${w.recorded}`] : []), ...(w.others !== undefined ? [`db-credentials=${w.others}`] : [])];
      return workload(`${w.name}-${w.kind}-${w.namespace}`, { kind: w.kind, namespace: w.namespace, optIn: w.optIn, ...(parts.length ? { value: parts.join(',') } : {}), finished: w.finished, deleting: w.deleting });
    });
  const arbWorkloads = fc.uniqueArray(arbWorkload, { selector: (w) => `${w.kind}/${w.namespace}/${w.name}`, maxLength: 8 });
  const arbDelivered = fc.record({
    generation: fc.integer({ min: 1, max: 6 }),
    graceMs: fc.option(fc.integer({ min: 0, max: 48 * H }), { nil: undefined }),
  });
  const input = fc.record({ workloads: arbWorkloads, delivered: arbDelivered, nowMs: fc.integer({ min: 0, max: 50 * H }) }).map(({ workloads, delivered, nowMs }) => {
    const grace = delivered.graceMs !== undefined ? { previousGeneration: delivered.generation - 1, deleteAt: at(delivered.graceMs), warnAt: at(delivered.graceMs - safetyMargin(delivered.graceMs)) } : undefined;
    return { workloads, delivered: { secretName: SECRET, generation: delivered.generation, ...(grace ? { grace } : {}) } as Delivered, now: at(nowMs) };
  });
  const consumes = (w: Workload) => w.namespace === NS && w.optIn.includes(SECRET) && !w.deleting;

  it('rolls exactly the consumers in the order\'s namespace that do not record the delivered generation', () => {
    fc.assert(
      fc.property(input, ({ workloads, delivered, now }) => {
        const plan = decide({ namespace: NS, delivered, workloads, now, warned: new Set() });
        const expected = workloads.filter((w) => consumes(w) && w.generations.get(SECRET) !== delivered.generation);
        expect(plan.rolls.map((r) => r.workload)).toEqual(expected);
        for (const roll of plan.rolls) {
          const written = templateGenerations(roll.value);
          expect(written.get(SECRET)).toBe(delivered.generation);
          for (const [secret, g] of roll.workload.generations) if (secret !== SECRET) expect(written.get(secret)).toBe(g);
        }
        // Nothing outside the namespace, nothing not opted in, is ever rolled or warned about.
        for (const w of [...plan.rolls.map((r) => r.workload), ...plan.overdue.map((o) => o.workload)]) expect(consumes(w)).toBe(true);
      }),
    );
  });

  it('is idempotent: once the rolls are written, a second pass writes nothing', () => {
    fc.assert(
      fc.property(input, ({ workloads, delivered, now }) => {
        const first = decide({ namespace: NS, delivered, workloads, now, warned: new Set() });
        const after = workloads.map((w) => {
          const roll = first.rolls.find((r) => r.workload === w);
          return roll ? { ...w, templateValue: roll.value, generations: templateGenerations(roll.value) } : w;
        });
        expect(decide({ namespace: NS, delivered, workloads: after, now, warned: new Set() }).rolls).toEqual([]);
        expect(withGeneration(first.rolls[0]?.value, SECRET, delivered.generation)).toBe(first.rolls[0]?.value ?? `${SECRET}=${delivered.generation}`);
      }),
    );
  });

  it('warns only during the grace period, from the warning time, about every unfinished consumer, once each', () => {
    fc.assert(
      fc.property(input, fc.boolean(), ({ workloads, delivered, now }, someWarned) => {
        const unfinished = workloads.filter((w) => consumes(w) && (w.generations.get(SECRET) !== delivered.generation || !w.rollout.finished));
        const warned = new Set(someWarned ? unfinished.slice(0, 1).map((w) => warningKey(w, SECRET, delivered.generation)) : []);
        const plan = decide({ namespace: NS, delivered, workloads, now, warned });
        expect(plan.pending).toBe(unfinished.length);
        const due = delivered.grace !== undefined && now >= delivered.grace.warnAt;
        expect(plan.overdue.map((o) => o.workload)).toEqual(due ? unfinished : []);
        expect(plan.warnings.map((o) => o.key)).toEqual(plan.overdue.map((o) => o.key).filter((k) => !warned.has(k)));
        if (plan.wakeAt) {
          expect(plan.wakeAt.getTime()).toBeGreaterThan(now.getTime());
          expect(plan.wakeAt.getTime()).toBeLessThanOrEqual((delivered.grace as { deleteAt: Date }).deleteAt.getTime());
        } else {
          expect(!due && delivered.grace !== undefined && unfinished.length > 0).toBe(false);
        }
      }),
    );
  });
});
