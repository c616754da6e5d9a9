import { KubeApi } from '../../../../src/kube/api';
import type { Lease } from '../../../../src/kube/kinds';
import { checkElectionDurations, LeaderElector, leaseClientOf } from '../../../../src/operator/runtime/leader';
import { FakeApiServer } from '../../kube/fake-api-server';
import { until } from './until';

const LEASES = '/apis/coordination.k8s.io/v1/leases';
const timing = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };

function candidate(server: FakeApiServer, identity: string) {
  const elector = new LeaderElector(leaseClientOf(new KubeApi(server, 'test'), 'ops', 'leader'), { identity, namespace: 'ops', name: 'leader', ...timing });
  const events: string[] = [];
  const running = elector.run({ onStartedLeading: () => events.push('started'), onStoppedLeading: () => events.push('stopped') });
  return { elector, events, running };
}

const lease = (server: FakeApiServer) => server.object(LEASES, 'ops', 'leader') as unknown as Lease | undefined;

describe('leader election', () => {
  it('creates the Lease when missing, leads, and renews it every retry period', async () => {
    const server = new FakeApiServer();
    const a = candidate(server, 'a');
    await until(() => a.elector.isLeader);
    expect(a.events).toEqual(['started']);
    expect(lease(server)?.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 1, leaseTransitions: 0 });
    const renewed = lease(server)?.spec?.renewTime;
    await until(() => lease(server)?.spec?.renewTime !== renewed);
    expect(lease(server)?.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    a.elector.stop();
    await a.running;
  });

  it('has exactly one leader among candidates; a standby takes over once the dead holder\'s lease expired', async () => {
    const server = new FakeApiServer();
    const a = candidate(server, 'a');
    await until(() => a.elector.isLeader);
    const b = candidate(server, 'b');
    const c = candidate(server, 'c');
    await new Promise((r) => setTimeout(r, 400));
    expect([a.elector.isLeader, b.elector.isLeader, c.elector.isLeader]).toEqual([true, false, false]);
    // a dies without a word (kill -9): it stops renewing and never releases.
    a.elector.stop();
    const died = Date.now();
    await until(() => b.elector.isLeader || c.elector.isLeader, 3000, 'a standby taking over');
    const took = Date.now() - died;
    expect(took).toBeGreaterThanOrEqual(timing.leaseDurationMs - 150);
    expect(took).toBeLessThan(timing.leaseDurationMs + 3 * timing.retryPeriodMs + 300);
    await new Promise((r) => setTimeout(r, 300));
    expect([b.elector.isLeader, c.elector.isLeader].filter(Boolean)).toHaveLength(1);
    expect(lease(server)?.spec?.leaseTransitions).toBe(1);
    b.elector.stop();
    c.elector.stop();
  });

  it('release clears holderIdentity so a standby takes over at once', async () => {
    const server = new FakeApiServer();
    const a = candidate(server, 'a');
    await until(() => a.elector.isLeader);
    const b = candidate(server, 'b');
    await new Promise((r) => setTimeout(r, 150));
    expect(await a.elector.release()).toBe(true);
    expect(lease(server)?.spec?.holderIdentity).toBeUndefined();
    const released = Date.now();
    await until(() => b.elector.isLeader);
    expect(Date.now() - released).toBeLessThan(timing.leaseDurationMs);
    expect(await a.elector.release()).toBe(false); // not leading any more
    b.elector.stop();
  });

  it('steps down when it cannot renew within the renew deadline', async () => {
    const server = new FakeApiServer();
    const a = candidate(server, 'a');
    await until(() => a.elector.isLeader);
    const original = server.request.bind(server);
    server.request = async (r) => (r.method === 'PUT' ? { status: 500, body: { reason: 'InternalError', message: 'etcd down' } } : original(r));
    await a.running;
    expect(a.events).toEqual(['started', 'stopped']);
    expect(a.elector.isLeader).toBe(false);
  });

  it('a candidate whose lease was taken by another stops leading', async () => {
    const server = new FakeApiServer();
    const a = candidate(server, 'a');
    await until(() => a.elector.isLeader);
    const current = lease(server) as Lease;
    server.seed(LEASES, { ...current, spec: { ...current.spec, holderIdentity: 'intruder', leaseDurationSeconds: 60 } });
    await a.running;
    expect(a.events).toEqual(['started', 'stopped']);
  });

  it('checks its durations', () => {
    expect(() => checkElectionDurations(15_000, 10_000, 2_000)).not.toThrow();
    expect(() => checkElectionDurations(10_000, 10_000, 2_000)).toThrow('lease duration (10000 ms) must be longer than the renew deadline (10000 ms)');
    expect(() => checkElectionDurations(15_000, 2_000, 2_000)).toThrow('renew deadline');
    expect(() => checkElectionDurations(900, 500, 100)).toThrow('at least 1 s');
  });
});
