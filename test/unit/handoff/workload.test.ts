/**
 * A workload's rollout state, as the handoff reads it from a Deployment's, StatefulSet's or DaemonSet's status: finished
 * only when every pod runs the current template and is available, stricter than `kubectl rollout status` where that
 * would leave pods on the old credential.
 */
import { OPT_IN, TEMPLATE_GENERATIONS, rolloutOf, workloadOf, type RawWorkload } from '../../../src/handoff';

const meta = (generation = 2) => ({ name: 'api', namespace: 'team-a', uid: 'u-1', resourceVersion: '7', generation });

describe('a workload, normalized', () => {
  it('carries its opt-in, its template generations and its rollout', () => {
    const w = workloadOf({
      kind: 'Deployment',
      metadata: { ...meta(), annotations: { [OPT_IN]: 'app-credentials' } },
      spec: { replicas: 1, template: { metadata: { annotations: { [TEMPLATE_GENERATIONS]: 'app-credentials=3' } } } },
      status: { observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
    });
    expect(w).toMatchObject({ kind: 'Deployment', namespace: 'team-a', name: 'api', uid: 'u-1', resourceVersion: '7', optIn: ['app-credentials'], templateValue: 'app-credentials=3', rollout: { finished: true }, deleting: false });
    expect(w?.generations.get('app-credentials')).toBe(3);
  });

  it('is undefined for a kind the handoff does not roll', () => {
    expect(workloadOf({ kind: 'ReplicaSet', metadata: meta() })).toBeUndefined();
  });

  it('is being deleted when it has a deletionTimestamp', () => {
    expect(workloadOf({ kind: 'DaemonSet', metadata: { ...meta(), deletionTimestamp: '2026-12-01T00:00:00Z' } })?.deleting).toBe(true);
  });
});

describe('a Deployment\'s rollout', () => {
  const deployment = (spec: RawWorkload['spec'], status: RawWorkload['status']): RawWorkload => ({ kind: 'Deployment', metadata: meta(), spec, status });
  const rollout = (spec: RawWorkload['spec'], status: RawWorkload['status']) => rolloutOf('Deployment', deployment(spec, status));

  it('has finished when observed, all updated and available, no old pod left (0 replicas too)', () => {
    expect(rollout({ replicas: 3 }, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3 })).toEqual({ finished: true });
    expect(rollout({ replicas: 0 }, { observedGeneration: 2 })).toEqual({ finished: true });
  });

  it('has not finished, and says why', () => {
    expect(rollout({ replicas: 3, paused: true }, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3 })).toEqual({ finished: false, why: 'its rollout is paused (spec.paused)' });
    expect(rollout({ replicas: 3 }, { observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3 })).toMatchObject({ finished: false, why: expect.stringContaining('has not observed generation 2') });
    expect(rollout({ replicas: 3 }, { observedGeneration: 2, replicas: 4, updatedReplicas: 2, availableReplicas: 3 })).toMatchObject({ why: '2 of 3 replicas updated' });
    expect(rollout({ replicas: 3 }, { observedGeneration: 2, replicas: 4, updatedReplicas: 3, availableReplicas: 3 })).toMatchObject({ why: '1 old replicas are still running' });
    expect(rollout({ replicas: 3 }, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 1 })).toMatchObject({ why: '1 of 3 updated replicas available' });
    expect(rollout({}, { observedGeneration: 2 })).toMatchObject({ why: '0 of 1 replicas updated' });
    const stuck = { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] };
    expect(rollout({ replicas: 3 }, stuck)).toMatchObject({ why: expect.stringContaining('ProgressDeadlineExceeded') });
  });
});

describe('a StatefulSet\'s rollout', () => {
  const rollout = (spec: RawWorkload['spec'], status: RawWorkload['status']) => rolloutOf('StatefulSet', { kind: 'StatefulSet', metadata: meta(), spec, status });
  const done = { observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 2, currentRevision: 'r2', updateRevision: 'r2' };

  it('has finished when every pod is updated and ready and the revision is current', () => {
    expect(rollout({ replicas: 2 }, done)).toEqual({ finished: true });
    expect(rollout({ replicas: 0 }, { observedGeneration: 2, currentRevision: 'r2', updateRevision: 'r2' })).toEqual({ finished: true });
  });

  it('has not finished with OnDelete or a partition (pods would stay on the old credential), or while rolling', () => {
    expect(rollout({ replicas: 2, updateStrategy: { type: 'OnDelete' } }, done)).toMatchObject({ why: expect.stringContaining('OnDelete') });
    expect(rollout({ replicas: 2, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } }, done)).toMatchObject({ why: expect.stringContaining('partition 1') });
    expect(rollout({ replicas: 2 }, { ...done, updatedReplicas: 1 })).toMatchObject({ why: '1 of 2 replicas updated' });
    expect(rollout({ replicas: 2 }, { ...done, readyReplicas: 1 })).toMatchObject({ why: '1 of 2 replicas ready' });
    expect(rollout({ replicas: 2 }, { ...done, currentRevision: 'r1' })).toMatchObject({ why: 'revision r2 is not the current one yet' });
  });
});

describe('a DaemonSet\'s rollout', () => {
  const rollout = (spec: RawWorkload['spec'], status: RawWorkload['status']) => rolloutOf('DaemonSet', { kind: 'DaemonSet', metadata: meta(), spec, status });

  it('has finished when every scheduled pod is updated and available (none scheduled too)', () => {
    expect(rollout({}, { observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3 })).toEqual({ finished: true });
    expect(rollout({}, { observedGeneration: 2 })).toEqual({ finished: true });
  });

  it('has not finished with OnDelete or while rolling', () => {
    expect(rollout({ updateStrategy: { type: 'OnDelete' } }, { observedGeneration: 2 })).toMatchObject({ why: expect.stringContaining('OnDelete') });
    expect(rollout({}, { observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 2, numberAvailable: 3 })).toMatchObject({ why: '2 of 3 scheduled pods updated' });
    expect(rollout({}, { observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2 })).toMatchObject({ why: '2 of 3 scheduled pods available' });
  });
});
