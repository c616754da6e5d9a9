/**
 * Named cases of the schedules seed 460001's draw broke (`npm run soak -- --schedules 80 --seed 460001 --keep-going`:
 * #25, #35, #40, #70), each shrunk by hand to the steps that break it (`--from N --schedules 1` replays one alone). One
 * was a defect of the operator; three were the simulation's model judging what the operator could not know: each case
 * failed before its fix, in src/ or in the invariant it names (./cases.test.ts holds the cases of other draws).
 */
import { CASE_TIMEOUT_MS, expectClean } from './replay';

describe('seed 460001: a defect of the operator, fixed', () => {
  // #40 (its first two steps, one order); it broke admin-expiry-kept: the ControlPlane's status.adminCredentialExpiresAt
  // is gone (and the leader exported no expiry series for it). Keystone answers 503 when the watches resume 19 changes
  // further back: the cache holds the ControlPlane as it was before its first status for a moment, and the pass on that
  // copy (its login failing, the expiry kept from the copy: none) wrote its status conditioned on the newer copy's
  // resourceVersion, which the cache held again by then, dropping the expiry until Keystone answered 6.5 minutes later.
  // Fixed in src/plane/driver/control-plane.ts: the write is conditioned on the copy the pass decided from
  // (ClusterPort.writeStatus `basis`), so it loses with 409 and the next pass reads the newer copy.
  it('seed 2147483630: a ControlPlane pass on a replayed older copy keeps the admin expiry through a Keystone outage', async () => {
    await expectClean({
      setup: { seed: 2147483630, orders: [{ tenant: 'tenant-a', name: 'app-1', interval: '10m', gracePeriod: '2m' }], replicas: 2, consumerHandoff: false, secretAccess: 'cluster-wide', admin: 'application-credential', targetCluster: false, keystone: { workers: 3, inFlight: 8, fleet: 0 } },
      steps: [
        { wait: 4, event: { kind: 'outage', dependency: 'keystone', fault: '503', seconds: 395 } },
        { wait: 5, event: { kind: 'watch', how: 'replay', changes: 19 } },
      ],
    });
  }, CASE_TIMEOUT_MS);
});

describe('seed 460001: the model judged what the operator could not know, fixed in the simulation', () => {
  // #70 (its first six steps); it broke outage-calls-bounded: "keystone status: 17 passes reached it in the minute from
  // 08:52:26, with 2 objects failing, 1 of them new (allowed: 14)". The API server answers 503 for 20 minutes: the leader
  // loses its lease and exits, and the standby becomes the leader only once the API answers, at 08:52:55. Its first
  // passes of the two orders Keystone refuses (401: their own failure, backed off per object from 200 ms) are a new
  // leader's, which the invariant leaves out after a process start but did not after a takeover with no start before
  // it. test/sim/sim-world.ts: restartedBetween counts a process becoming the leader.
  it('seed 39621969: a standby that takes over after an API outage is judged as a restarted leader', async () => {
    await expectClean({
      setup: { seed: 39621969, orders: [{ tenant: 'tenant-a', name: 'app-4', interval: '10m', gracePeriod: '5m' }], replicas: 2, consumerHandoff: false, secretAccess: 'cluster-wide', admin: 'password', targetCluster: false, keystone: { workers: 4, inFlight: 4, fleet: 12 } },
      steps: [
        { wait: 1408, event: { kind: 'stale-status', tenant: 'tenant-b', name: 'app-3', back: 0 } },
        { wait: 9, event: { kind: 'create-order', tenant: 'tenant-a', name: 'app-4', interval: '20m', gracePeriod: '5m', window: 'refused', jitterPercent: 0 } },
        { wait: 40, event: { kind: 'raise', tenant: 'tenant-a', name: 'app-1' } },
        { wait: 473, event: { kind: 'outage', dependency: 'keystone', fault: '401', seconds: 5568 } },
        { wait: 22, event: { kind: 'adopt-order', tenant: 'tenant-b', name: 'app-3', proof: 'hand-made', interval: '10m', gracePeriod: '5m' } },
        { wait: 45, event: { kind: 'outage', dependency: 'api', fault: '503', seconds: 1177 } },
      ],
    });
  }, CASE_TIMEOUT_MS);

  // #25 (its first two steps, one order); it broke restart-costs-nothing: "tenant-b/app-2 was converged when
  // keystone-appcred-operator-3 took over and cost 1 OpenBao request in its first 60 s". The API server answers 403 for
  // 41 s in the namespaced Secret access mode: the standby reads it as the Role missing in tenant-b (and in the
  // ControlPlane's namespace), takes over 0.6 s after the 403s end, before its probe of the namespace is due, and
  // records SecretAccessNotGranted; once the namespace lists, the order's full pass reads its backup. To the operator the
  // 403 is the `secret-access` event's change, which the invariant leaves out: test/sim/invariants/restart.ts.
  it('seed 9: a takeover right after the API server answered 403 to a namespaced operator reacts to a refusal', async () => {
    await expectClean({
      setup: { seed: 9, orders: [{ tenant: 'tenant-b', name: 'app-2', interval: '20m', gracePeriod: '2m' }], replicas: 2, consumerHandoff: false, secretAccess: 'namespaced', admin: 'application-credential', targetCluster: false, keystone: { workers: 3, inFlight: 4, fleet: 0 } },
      steps: [
        { wait: 56, event: { kind: 'upgrade', successor: { tenant: 'tenant-b', name: 'app-3' } } },
        { wait: 57, event: { kind: 'outage', dependency: 'api', fault: '403', seconds: 41 } },
      ],
    });
  }, CASE_TIMEOUT_MS);

  // #35 (four of its steps, the adoption moved earlier); it broke defaults-resolved: "tenant-b/app-2: status.policy is
  // missing while fleet defaults are set for it". The refused adoption's pass began before the raise of every order and
  // the fleet defaults of tenant-b, waited 190 s on OpenBao (answering too late) and Keystone (429, Retry-After 30 s), and
  // wrote what it decided from what it had read (observedGeneration 1, no defaults); the pass after it records the
  // policy. test/sim/invariants/policy.ts judges a write by the start of the pass that wrote it.
  it('seed 1389435411: a pass that began before new fleet defaults is not held to them', async () => {
    await expectClean({
      setup: { seed: 1389435411, orders: [{ tenant: 'tenant-b', name: 'app-4', interval: '20m', gracePeriod: '2m' }], replicas: 2, consumerHandoff: true, secretAccess: 'namespaced', admin: 'password', targetCluster: false, keystone: { workers: 3, inFlight: 2, fleet: 0 } },
      steps: [
        { wait: 588, event: { kind: 'adopt-order', tenant: 'tenant-b', name: 'app-2', proof: 'wrong-secret', interval: '20m', gracePeriod: '2m' } },
        { wait: 600, event: { kind: 'outage', dependency: 'openbao', fault: 'slow', seconds: 4001 } },
        { wait: 50, event: { kind: 'raise-all' } },
        { wait: 5, event: { kind: 'keystone-overload', status: 429, retryAfterSeconds: 30, seconds: 6972 } },
        { wait: 8, event: { kind: 'fleet-defaults', at: 'tenant-b', defaults: {} } },
      ],
    });
  }, CASE_TIMEOUT_MS);
});
