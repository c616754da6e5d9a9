/**
 * Named cases the simulation's search found where the operator was right and an invariant's model of the world was
 * wrong: each broke its invariant before the model was corrected (test/sim/invariants, test/sim/sim-world.ts), and holds
 * the operator to every invariant since. The cases of the operator's own defects are in ./cases.test.ts.
 */
import { CASE_TIMEOUT_MS, expectClean } from './replay';

describe("named cases: the simulation's model corrected (the operator was right)", () => {
  // npm run soak -- --schedules 80 --seed 460003 --keep-going, schedule 69 (its upgrade, the capacity and the raise, with
  // the three orders' 10m one left out), broke swept-in-time: "tenant-a/fleet-1: generation 1 is still in Keystone 146 s
  // after its sweep was due". Keystone's one worker served four times slower (a login 1.6 s) while the bystander logged
  // in every second for five minutes: its queue grew by 0.6 s a second, and from a minute into the raise every request
  // of the operator timed out at 30 s (one in flight) until the queue had drained, three minutes after the bystander
  // stopped. No sweep could be answered; the invariant counted only the schedule's faults as Keystone not answering.
  // Keystone answering a request of the operator too late now excuses a sweep's delay as a fault does.
  it("seed 2147483630: a sweep waits while others' load keeps Keystone from answering the operator in time", async () => {
    await expectClean({
      setup: { seed: 2147483630, orders: [{ tenant: 'tenant-a', name: 'app-4', interval: '1h', gracePeriod: '3m' }, { tenant: 'tenant-a', name: 'app-3', interval: '1h', gracePeriod: '2m' }], replicas: 2, consumerHandoff: false, secretAccess: 'cluster-wide', admin: 'application-credential', targetCluster: false, keystone: { workers: 2, inFlight: 8, fleet: 12 } },
      steps: [
        { wait: 60, event: { kind: 'upgrade' } },
        { wait: 60, event: { kind: 'keystone-capacity', workers: 1, slowdown: 4 } },
        { wait: 600, event: { kind: 'raise-all', bystanderEverySeconds: 1 } },
      ],
    });
  }, CASE_TIMEOUT_MS);

  // npm run soak -- --schedules 80 --seed 460004 --keep-going, schedule 25 (its raise and the Role taken away), broke
  // swept-in-time: "tenant-b/app-2: generation 1 is still in Keystone 128 s after its sweep was due". The operator's
  // watch of tenant-b's Secrets was renewed and refused 3.5 minutes after the Role went, before the sweep was due: the
  // order read SecretAccessNotGranted, frozen with what it has, nothing swept, as docs/install/namespaced.md says. The
  // invariant excused a frozen namespace (no consent), not a refused one.
  it('seed 573685387: an order whose Secrets are refused to the operator sweeps nothing until the Role is back', async () => {
    await expectClean({
      setup: { seed: 573685387, orders: [{ tenant: 'tenant-b', name: 'app-2', interval: '1h', gracePeriod: '5m' }], replicas: 1, consumerHandoff: false, secretAccess: 'namespaced', admin: 'password', targetCluster: false },
      steps: [
        { wait: 60, event: { kind: 'raise', tenant: 'tenant-b', name: 'app-2' } },
        { wait: 40, event: { kind: 'secret-access', tenant: 'tenant-b', granted: false } },
        { wait: 900, event: { kind: 'secret-access', tenant: 'tenant-b', granted: true } },
      ],
    });
  }, CASE_TIMEOUT_MS);

  // npm run soak -- --schedules 80 --seed 460003 --keep-going, schedule 2 (five of its ten steps, two of its four
  // orders), broke refused-costs-nothing: "tenant-a/app-2 (KeystoneApplicationCredential) had a pass 7 s after it
  // recorded SecretAccessNotGranted, with nothing changed since". The API server's 403s refused the Secrets of every
  // namespace; the refusal's status write failed with them and landed at the first retry after the outage, and the probe
  // of the ControlPlane's namespace, due within its 10 s plus jitter, found it readable and woke the orders. The outage's
  // end was the change; the invariant counted only a fault after the refusal was recorded.
  it('seed 20: the probe that finds the Secrets readable again after a 403 outage is no pass of a standing refusal', async () => {
    await expectClean({
      setup: { seed: 20, orders: [{ tenant: 'tenant-b', name: 'app-3', interval: '0s', gracePeriod: '5m' }, { tenant: 'tenant-a', name: 'app-2', interval: '20m', gracePeriod: '2m' }], replicas: 2, consumerHandoff: false, secretAccess: 'namespaced', admin: 'application-credential', targetCluster: true, keystone: { workers: 4, inFlight: 2, fleet: 0 } },
      steps: [
        { wait: 55, event: { kind: 'restart' } },
        { wait: 25, event: { kind: 'raise-all', bystanderEverySeconds: 1 } },
        { wait: 1, event: { kind: 'upgrade', successor: { tenant: 'tenant-a', name: 'app-2' } } },
        { wait: 912, event: { kind: 'raise-all', bystanderEverySeconds: 2 } },
        { wait: 23, event: { kind: 'outage', dependency: 'api', fault: '403', seconds: 119 } },
      ],
    });
  }, CASE_TIMEOUT_MS);

  // npm run soak -- --schedules 80 --seed 460004 --keep-going, schedule 69 (three of its nine steps, one of its orders,
  // its times rounded), broke waiters-recover-in-60s: "tenant-a/app-3 waited on OpenBao, which answered again at …, and
  // had no successful pass in the minute after (2 failed: … Keystone GET …)". The bystander's logins every second for an
  // hour kept Keystone's one worker, four times slower, busy past every request's timeout: the order, back from OpenBao,
  // waited on Keystone, which was not answering either. The invariant counted only the schedule's faults as another one.
  it('seed 2078587637: an order back from an OpenBao outage waits on a Keystone too busy to answer, as on a Keystone outage', async () => {
    await expectClean({
      setup: { seed: 2078587637, orders: [{ tenant: 'tenant-a', name: 'app-3', interval: '10m', gracePeriod: '5m' }], replicas: 1, consumerHandoff: false, secretAccess: 'cluster-wide', admin: 'password', targetCluster: false, keystone: { workers: 1, inFlight: 8, fleet: 0 } },
      steps: [
        { wait: 60, event: { kind: 'keystone-capacity', workers: 1, slowdown: 4 } },
        { wait: 60, event: { kind: 'outage', dependency: 'openbao', fault: 'down', seconds: 600 } },
        { wait: 90, event: { kind: 'bystander', everySeconds: 1, minutes: 60 } },
      ],
    });
  }, CASE_TIMEOUT_MS);
});
