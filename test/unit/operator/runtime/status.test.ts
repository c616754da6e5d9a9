import type { Condition } from '../../../../src/api/conditions';
import type { ControlPlane } from '../../../../src/api/identity-plane';
import { Kinds } from '../../../../src/kube/kinds';
import { MemoryCluster } from '../../../../src/kube/memory';
import { conditionTransitions, EventRecorder } from '../../../../src/operator/runtime/events';
import { applyConditions, sameConditions, sameStatus, StatusWriter } from '../../../../src/operator/runtime/status';

const T0 = new Date('2026-12-01T10:00:00Z');
const T1 = new Date('2026-12-01T11:00:00Z');
const cond = (type: string, status: Condition['status'], reason: string, time = '2026-12-01T10:00:00Z', generation?: number): Condition => ({
  type, status, reason, message: `${reason}.`, lastTransitionTime: time, ...(generation !== undefined ? { observedGeneration: generation } : {}),
});

function setup() {
  const cluster = new MemoryCluster(() => T1);
  const object = cluster.put(Kinds.ControlPlane, { apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name: 'cp', namespace: 'openstack' }, spec: {} as ControlPlane['spec'] });
  const writer = new StatusWriter(cluster, new EventRecorder(cluster));
  return { cluster, object, writer };
}

describe('status comparison', () => {
  it('ignores lastTransitionTime and order, and nothing else', () => {
    expect(sameConditions([cond('A', 'True', 'R'), cond('B', 'False', 'S')], [cond('B', 'False', 'S', 'later'), cond('A', 'True', 'R', 'later')])).toBe(true);
    expect(sameConditions([cond('A', 'True', 'R')], [cond('A', 'True', 'Other')])).toBe(false);
    expect(sameConditions([cond('A', 'True', 'R', 't', 1)], [cond('A', 'True', 'R', 't', 2)])).toBe(false);
    expect(sameStatus({ conditions: [cond('A', 'True', 'R')], keystoneVersion: 'v3' }, { keystoneVersion: 'v3', conditions: [cond('A', 'True', 'R', 'x')] })).toBe(true);
    expect(sameStatus({ keystoneVersion: 'v3' }, { keystoneVersion: 'v3.1' })).toBe(false);
    expect(sameStatus(undefined, {})).toBe(true);
  });

  it('applies conditions with observedGeneration, moving lastTransitionTime only with the status', () => {
    const object = { apiVersion: 'v', kind: 'K', metadata: { name: 'x', generation: 4 } };
    const once = applyConditions(object, [], [{ type: 'Ready', status: 'False', reason: 'Waiting', message: 'w' }], T0);
    expect(once).toEqual([{ type: 'Ready', status: 'False', reason: 'Waiting', message: 'w', lastTransitionTime: '2026-12-01T10:00:00Z', observedGeneration: 4 }]);
    const sameStatusLater = applyConditions(object, once, [{ type: 'Ready', status: 'False', reason: 'Other', message: 'o' }], T1);
    expect(sameStatusLater[0].lastTransitionTime).toBe('2026-12-01T10:00:00Z');
    const flipped = applyConditions(object, once, [{ type: 'Ready', status: 'True', reason: 'AllReady', message: 'r' }], T1);
    expect(flipped[0].lastTransitionTime).toBe('2026-12-01T11:00:00Z');
  });
});

describe('StatusWriter and EventRecorder', () => {
  it('writes a changed status once, with an Event per transitioned condition, and nothing for a steady object', async () => {
    const { cluster, object, writer } = setup();
    const status = { conditions: [cond('AdminCredentialReady', 'False', 'AuthenticationFailed'), cond('Ready', 'False', 'NotAllReady')] };
    const first = await writer.write(Kinds.ControlPlane, object, status as never);
    expect(first.written).toBe(true);
    expect(cluster.events.map((e) => [e.type, e.reason, e.note])).toEqual([
      ['Warning', 'AuthenticationFailed', 'AdminCredentialReady is False: AuthenticationFailed.'],
      ['Warning', 'NotAllReady', 'Ready is False: NotAllReady.'],
    ]);
    cluster.clear();
    // The same facts an hour later: lastTransitionTime of a fresh computation differs, nothing is written.
    const again = { conditions: status.conditions.map((c) => ({ ...c, lastTransitionTime: '2026-12-01T11:00:00Z' })) };
    const second = await writer.write(Kinds.ControlPlane, first.object, again as never);
    expect([second.written, cluster.writes, cluster.events]).toEqual([false, [], []]);
    // One condition turns True: one write and no Event; the unchanged condition keeps its lastTransitionTime.
    const fixed = { conditions: [cond('AdminCredentialReady', 'True', 'Authenticated', '2026-12-01T11:00:00Z'), cond('Ready', 'False', 'NotAllReady', '2026-12-01T11:00:00Z')] };
    const third = await writer.write(Kinds.ControlPlane, second.object, fixed as never);
    expect(third.written).toBe(true);
    expect(cluster.writes.map((w) => w.verb)).toEqual(['patchStatus']); // a condition turning True on the way: no Event
    const conditions = (third.object.status as { conditions: Condition[] }).conditions;
    expect(conditions.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('2026-12-01T10:00:00Z');
    // Ready comes back: one Normal Event; a condition turning False again: a Warning.
    cluster.clear();
    const recovered = await writer.write(Kinds.ControlPlane, third.object, { conditions: [fixed.conditions[0], cond('Ready', 'True', 'AllReady', '2026-12-01T11:00:00Z')] } as never);
    expect(cluster.events.map((e) => [e.type, e.reason])).toEqual([['Normal', 'AllReady']]);
    cluster.clear();
    await writer.write(Kinds.ControlPlane, recovered.object, { conditions: [cond('AdminCredentialReady', 'False', 'AuthenticationFailed'), cond('Ready', 'False', 'NotAllReady')] } as never);
    expect(cluster.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'AuthenticationFailed'], ['Warning', 'NotAllReady']]);
  });

  it('a new object whose conditions are all True on its first status records no Event', async () => {
    const { cluster, object, writer } = setup();
    await writer.write(Kinds.ControlPlane, object, { conditions: [cond('AdminCredentialReady', 'True', 'Authenticated'), cond('Ready', 'True', 'AllReady')] } as never);
    expect(cluster.writes.map((w) => w.verb)).toEqual(['patchStatus']);
  });

  it('lets a stale object fail with a conflict (the queue retries with a fresh read)', async () => {
    const { cluster, object, writer } = setup();
    await writer.write(Kinds.ControlPlane, object, { keystoneVersion: 'v3.14' } as never);
    await expect(writer.write(Kinds.ControlPlane, object, { keystoneVersion: 'v3.15' } as never)).rejects.toThrow('409 Conflict');
    expect(cluster.events).toEqual([]);
  });

  it('finds transitions by status or reason, and events failing are logged, not thrown', async () => {
    expect(conditionTransitions([cond('A', 'True', 'R'), cond('B', 'False', 'S')], [cond('A', 'True', 'R'), cond('B', 'False', 'T'), cond('C', 'True', 'U')]).map((t) => t.to.type)).toEqual(['B', 'C']);
    const { cluster, object } = setup();
    const warnings: string[] = [];
    const logger = { debug: () => undefined, info: () => undefined, warn: (m: string) => warnings.push(m), error: () => undefined, child: () => logger };
    cluster.failNext('event', new Error('forbidden'));
    const recorder = new EventRecorder(cluster, { logger, types: ['Ready'] });
    expect(await recorder.conditionsChanged(object, [], [cond('Ready', 'False', 'NotAllReady'), cond('Other', 'False', 'X')])).toBe(0);
    expect(warnings).toEqual(['recording an event failed']);
  });
});
