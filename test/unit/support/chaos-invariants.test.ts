/**
 * The chaos run's invariants (test/support/chaos/invariants/) on timelines written by hand: one order's healthy
 * rotation breaks none of them, and each rule finds the fault it is about (so none of them can pass by not looking).
 */
import { INVARIANTS } from '../../support/chaos/invariants';
import { passesOf } from '../../support/chaos/invariants/calls';
import { eventCounts, reportLines } from '../../support/chaos/report';
import { digestOf, type Call, type CredentialSeen, type Disturbance, type LogLine, type MetricsSample, type OrderSeen, type ProbeResult, type Sample, type Timeline } from '../../support/chaos/timeline';

const S = 1_000;
const T0 = Date.parse('2026-12-08T10:00:00Z');
const at = (seconds: number) => T0 + seconds * S;
const PREFIX = 'r1-0123abcd-applicationcredential';
const UID = '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
const ORDER = { key: 'kac-chaos-a/r1', tenant: 'a' as const, prefix: PREFIX, user: { id: 'u1', name: 'user-1' }, graceMs: 30 * S, intervalMs: 60 * S };
const cred = (g: number): CredentialSeen => ({ id: `id${g}`, name: `${PREFIX}-credential-v${g}`, userId: 'u1', expiresAt: at(60 * g + 500) });
const parked = { 1: digestOf('s1'), 2: digestOf('s2'), 3: digestOf('s3') };
const ready = [{ type: 'Ready', status: 'True', reason: 'Ready' }];

/** Generation 1 delivered until 100 s, generation 2 minted at 95 s (backed up at 96 s), delivered from 100 s; 1 swept at 131 s. */
function healthySample(s: number): Sample {
  const delivered = s < 100 ? 1 : 2;
  const seen: OrderSeen = {
    generation: 2,
    status: { credentialGeneration: delivered, credentialID: `id${delivered}`, observedGeneration: 2, conditions: ready, nextRotation: new Date(at(delivered === 1 ? 100 : 220)).toISOString(), ...(delivered === 2 && s < 131 ? { previousCredentialID: 'id1', previousCredentialDeleteAt: new Date(at(130)).toISOString() } : {}) },
    delivered: { id: `id${delivered}`, secret: digestOf(`s${delivered}`) },
    backup: s < 96 ? 'id1' : 'id2',
    parked,
  };
  return { at: at(s), orders: { [ORDER.key]: seen }, credentials: [...(s < 131 ? [cred(1)] : []), ...(s >= 95 ? [cred(2)] : [])] };
}

function timeline(over: Partial<Timeline> = {}, seconds = 250): Timeline {
  return {
    started: at(0),
    ended: at(seconds),
    orders: [ORDER],
    samples: Array.from({ length: seconds }, (_, s) => healthySample(s)),
    keystone: [{ at: at(131), method: 'DELETE', path: '/v3/users/u1/application_credentials/id1', status: 204 }],
    openbao: [],
    keystoneDependency: 'Keystone http://127.0.0.1:5000/v3',
    lines: [],
    disturbances: [],
    probes: [],
    metrics: [],
    foreign: [],
    resyncMs: 3_600_000,
    laggingRefreshMs: 15 * S,
    ...over,
  };
}

const check = (t: Timeline, name: string) => (INVARIANTS.find((i) => i.name === name) as (typeof INVARIANTS)[number]).check(t).map((v) => v.message);
const line = (s: number, fields: Record<string, unknown>): LogLine => ({ process: 'chaos-1', at: at(s), msg: 'reconcile', ...fields });
const probe = (s: number, g: number, outcome: ProbeResult['outcome'], secret = `s${g}`): ProbeResult => ({ at: at(s), order: ORDER.key, consumer: 'lagging', id: `id${g}`, secret: digestOf(secret), outcome });

describe('the chaos invariants', () => {
  it('a healthy rotation breaks none', () => {
    const t = timeline({ probes: [probe(10, 1, 'ok'), probe(120, 2, 'ok')] });
    expect(INVARIANTS.flatMap((i) => i.check(t))).toEqual([]);
  });

  it('held-credential-kept: a deletion inside the grace period, and a consumer refused a live credential', () => {
    const early = timeline({ keystone: [{ at: at(110), method: 'DELETE', path: '/v3/users/u1/application_credentials/id1', status: 204 }] });
    expect(check(early, 'held-credential-kept')).toEqual([expect.stringMatching(/generation 1 deleted 11 s after .* inside its grace period of 30 s/)]);
    expect(check(timeline({ probes: [probe(50, 1, 'rejected')] }), 'held-credential-kept')).toEqual([expect.stringMatching(/Keystone refused generation 1/)]);
  });

  it("held-credential-kept: a tenant's pair is excused until the repair reaches the consumer, not after", () => {
    const edit: Disturbance = { kind: 'tenant-edit', order: 'r1', fault: 'key', from: at(40), to: at(41) };
    const samples = timeline().samples.map((s, i) => (i >= 41 && i < 50 ? { ...s, orders: { [ORDER.key]: { ...s.orders[ORDER.key], delivered: { id: 'id1', secret: digestOf('edited') } } } } : s));
    const t = (when: number) => timeline({ samples, disturbances: [edit], probes: [probe(when, 1, 'rejected', 'edited')] });
    expect(check(t(45), 'held-credential-kept')).toEqual([]);
    expect(check(t(55), 'held-credential-kept')).toEqual([]); // the lagging consumer re-reads within 15 s of the repair at 50 s
    expect(check(t(80), 'held-credential-kept')).toEqual([expect.stringMatching(/no tenant's edit explains it/)]);
  });

  it('held-credential-kept: an expired credential is excused only with something in its way', () => {
    const expired = (disturbances: Disturbance[]) => timeline({ disturbances, probes: [probe(90, 1, 'rejected')], samples: timeline().samples.map((s) => ({ ...s, credentials: s.credentials?.map((c) => ({ ...c, expiresAt: at(80) })) })) });
    expect(check(expired([]), 'held-credential-kept')).toEqual([expect.stringMatching(/reached its Keystone expiry .* with nothing in its rotation's way/)]);
    expect(check(expired([{ kind: 'keystone', fault: 'down', from: at(40), to: at(85) }]), 'held-credential-kept')).toEqual([]);
  });

  it('foreign-untouched: a deletion of a credential the operator did not make', () => {
    const t = timeline({ foreign: ['other'], samples: timeline().samples.map((s) => ({ ...s, credentials: [...(s.credentials ?? []), { id: 'other', name: 'somebody', userId: 'u1' }] })) });
    expect(check(t, 'foreign-untouched')).toEqual([]);
    const deleted = { ...t, keystone: [...t.keystone, { at: at(60), method: 'DELETE', path: '/v3/users/u1/application_credentials/other', status: 204 }] };
    expect(check(deleted, 'foreign-untouched')).toEqual([expect.stringMatching(/\(other\) was deleted by it/)]);
  });

  it('at-most-two-credentials: three of the order in one listing', () => {
    const samples = timeline().samples.map((s, i) => (i === 120 ? { ...s, credentials: [cred(1), cred(2), cred(3)] } : s));
    expect(check(timeline({ samples }), 'at-most-two-credentials')).toEqual(['kac-chaos-a/r1 holds 3 credentials in Keystone: generations 1, 2, 3']);
  });

  it('backup-holds-delivered: the backup behind the Secret, or not holding the steady delivered one', () => {
    const behind = timeline().samples.map((s, i) => (i >= 100 && i < 103 ? { ...s, orders: { [ORDER.key]: { ...s.orders[ORDER.key], backup: 'id1' } } } : s));
    expect(check(timeline({ samples: behind }), 'backup-holds-delivered')).toEqual([expect.stringMatching(/carries generation 2 while the backup holds generation 1 \(the backup comes first\)/)]);
    const ahead = timeline().samples.map((s, i) => (i >= 150 && i < 170 ? { ...s, orders: { [ORDER.key]: { ...s.orders[ORDER.key], backup: 'id3' } }, credentials: [cred(2)] } : s));
    expect(check(timeline({ samples: ahead }), 'backup-holds-delivered')).toEqual([expect.stringMatching(/steady on generation 2 since .* its backup holds id3/)]);
  });

  it('swept-in-time: a superseded credential a minute past its sweep, unless something was in the way', () => {
    const kept = timeline({ keystone: [], samples: timeline().samples.map((s) => (s.at >= at(131) ? { ...s, credentials: [cred(1), cred(2)] } : s)) });
    expect(check(kept, 'swept-in-time')).toEqual([expect.stringMatching(/generation 1 is still in Keystone 6\d s after its sweep was due/)]);
    expect(check({ ...kept, disturbances: [{ kind: 'openbao', fault: '403', from: at(120), to: at(240) }] }, 'swept-in-time')).toEqual([]);
  });

  it("tenant-edit-repaired: an edit left standing for more than a minute", () => {
    const samples = timeline().samples.map((s, i) => (i >= 41 ? { ...s, orders: { [ORDER.key]: { ...s.orders[ORDER.key], delivered: undefined } } } : s));
    const t = timeline({ samples, disturbances: [{ kind: 'tenant-edit', order: 'r1', fault: 'delete', from: at(40), to: at(41) }] });
    expect(check(t, 'tenant-edit-repaired')).toEqual([expect.stringMatching(/\(delete\) at .* was never undone/)]);
  });

  it('restart-costs-nothing: a converged order read from OpenBao, or its user logged in as, after a new leader', () => {
    const leader: LogLine = { process: 'chaos-2', at: at(145), msg: 'became the leader' };
    const bao: Call = { at: at(147), method: 'GET', path: `/v1/openstack/data/keystone/cp/${PREFIX}/${UID}/service-accounts/application-credential`, status: 200 };
    const login: Call = { at: at(148), method: 'POST', path: '/v3/auth/tokens', login: 'u1', status: 201 };
    expect(check(timeline({ lines: [leader] }), 'restart-costs-nothing')).toEqual([]);
    expect(check(timeline({ lines: [leader], openbao: [bao], keystone: [...timeline().keystone, login] }), 'restart-costs-nothing')).toEqual([
      expect.stringMatching(/kac-chaos-a\/r1 was converged when chaos-2 became the leader .* cost 1 OpenBao requests/),
      expect.stringMatching(/every order of user user-1 was converged .* made 1 Keystone requests as that user/),
    ]);
    // Not converged (its sweep due within the window): nothing is held against it.
    expect(check(timeline({ lines: [{ ...leader, at: at(110) }], openbao: [{ ...bao, at: at(112) }] }), 'restart-costs-nothing')).toEqual([]);
  });

  it('waiters-recover-in-60s: an order that waited on Keystone and had no successful pass in the minute after it returned', () => {
    const outage: Disturbance = { kind: 'keystone', fault: 'down', from: at(10), to: at(40) };
    const waited = line(30, { controller: 'KeystoneApplicationCredential', key: 'kac-chaos-a/r1', result: 'error', waitsOn: 'Keystone http://127.0.0.1:5000/v3' });
    expect(check(timeline({ disturbances: [outage], lines: [waited] }), 'waiters-recover-in-60s')).toEqual([expect.stringMatching(/kac-chaos-a\/r1 waited on Keystone .* no successful pass in the minute after/)]);
    const recovered = line(45, { controller: 'KeystoneApplicationCredential', key: 'kac-chaos-a/r1', result: 'success' });
    expect(check(timeline({ disturbances: [outage], lines: [waited, recovered] }), 'waiters-recover-in-60s')).toEqual([]);
  });

  it('waiters-recover-in-60s: an order gated by the outage (its passes succeed) not Ready in the minute after it ended', () => {
    const outage: Disturbance = { kind: 'keystone', fault: '403', from: at(10), to: at(40) };
    const gated = [{ type: 'CredentialReady', status: 'False', reason: 'WaitingForAdminCredential' }, { type: 'Ready', status: 'False', reason: 'NotAllReady' }];
    const until = (s: number) =>
      timeline().samples.map((x) => (x.at >= at(20) && x.at < at(s) ? { ...x, orders: { [ORDER.key]: { ...x.orders[ORDER.key], status: { ...x.orders[ORDER.key].status, conditions: gated } } } } : x));
    expect(check(timeline({ disturbances: [outage], samples: until(150) }), 'waiters-recover-in-60s')).toEqual([
      expect.stringMatching(/kac-chaos-a\/r1 was not Ready \(CredentialReady WaitingForAdminCredential, DeliveryReady \?\) when Keystone .* answered again/),
    ]);
    expect(check(timeline({ disturbances: [outage], samples: until(90) }), 'waiters-recover-in-60s')).toEqual([]);
  });

  it('outage-calls-bounded: more passes in a minute than the failing objects and the probe', () => {
    const outage: Disturbance = { kind: 'openbao', fault: 'down', from: at(0), to: at(200) };
    const waited = line(10, { controller: 'KeystoneApplicationCredential', key: 'kac-chaos-a/r1', result: 'error', waitsOn: 'OpenBao' });
    const calls = (n: number): Call[] => Array.from({ length: n }, (_, i) => ({ at: at(75 + i * 5), method: 'GET', path: `/v1/openstack/data/keystone/cp/${PREFIX}/${UID}/service-accounts/application-credential`, reset: true }));
    expect(check(timeline({ disturbances: [outage], lines: [waited], openbao: calls(6) }), 'outage-calls-bounded')).toEqual([]);
    expect(check(timeline({ disturbances: [outage], lines: [waited], openbao: calls(10) }), 'outage-calls-bounded')).toEqual([expect.stringMatching(/10 passes reached it .* with 1 objects failing, 0 of them new, waiting on 1 dependencies/)]);
    // Waiting on Keystone too (cut off meanwhile): its probe's passes read OpenBao as well, five more a minute.
    const both = line(12, { controller: 'KeystoneApplicationCredential', key: 'kac-chaos-a/r1', result: 'error', waitsOn: 'OpenBao, Keystone http://127.0.0.1:5000/v3' });
    const keystone: Disturbance = { kind: 'keystone', fault: 'down', from: at(5), to: at(300) };
    expect(check(timeline({ disturbances: [outage, keystone], lines: [waited, both], openbao: calls(10) }), 'outage-calls-bounded')).toEqual([]);
    expect(check(timeline({ disturbances: [outage, keystone], lines: [waited, both], openbao: [...calls(10), ...calls(10).map((c) => ({ ...c, at: c.at + 2 * S }))] }), 'outage-calls-bounded')).toEqual([
      expect.stringMatching(/20 passes .* waiting on 2 dependencies \(allowed: 11/),
    ]);
    // Keystone's return in the minute wakes its waiters: that minute is the return's.
    const returned: Disturbance = { ...keystone, to: at(100) };
    expect(check(timeline({ disturbances: [outage, returned], lines: [waited], openbao: calls(10) }), 'outage-calls-bounded')).toEqual([]);
  });

  it('passes: one actor’s requests less than 2 s apart are one pass', () => {
    const c = (s: number, path: string): Call => ({ at: at(s), method: 'GET', path });
    const own = `/v1/openstack/data/keystone/cp/${PREFIX}/${UID}/service-accounts/application-credential`;
    const former = `/v1/openstack/data/keystone/cp/${PREFIX}/service-accounts/application-credential`;
    expect(passesOf([c(0, own), c(0.5, former), c(5, own), c(5, '/v3/users/u1/application_credentials')])).toBe(3);
  });

  it('status-reasons-have-series: a condition whose series is missing at two samples ten seconds apart', () => {
    const leader: LogLine = { process: 'chaos-1', at: at(0), msg: 'became the leader' };
    const series = { 'keystone_appcred_credential_condition{namespace="kac-chaos-a",name="r1",type="Ready",status="True",reason="Ready"}': 1 };
    const sample = (s: number, with_: boolean): MetricsSample => ({ at: at(s), process: 'chaos-1', series: with_ ? series : {}, conditions: { [ORDER.key]: ready } });
    expect(check(timeline({ lines: [leader], metrics: [sample(60, true), sample(75, true)] }), 'status-reasons-have-series')).toEqual([]);
    expect(check(timeline({ lines: [leader], metrics: [sample(60, false), sample(65, false)] }), 'status-reasons-have-series')).toEqual([]);
    expect(check(timeline({ lines: [leader], metrics: [sample(60, false), sample(75, false)] }), 'status-reasons-have-series')).toEqual([expect.stringMatching(/Ready condition says True\/Ready and the leader chaos-1 has exported no such series/)]);
  });

  it('the report counts the events by kind, an outage by its fault, and the rotations', () => {
    const d = (kind: Disturbance['kind'], fault?: string): Disturbance => ({ kind, from: at(10), to: at(20), ...(fault ? { fault } : {}) });
    const t = timeline({ disturbances: [d('kill'), d('keystone', 'down'), d('kill'), d('keystone', '503'), d('tenant-edit')] });
    expect(eventCounts(t)).toEqual(['keystone 503 1', 'keystone down 1', 'kill 2', 'tenant-edit 1']);
    expect(reportLines({ setup: { seed: 1, minutes: 4, intervalSeconds: 60 }, steps: [] }, t, [], [])).toEqual(
      expect.arrayContaining([expect.stringMatching(/generations delivered: kac-chaos-a\/r1 2 \(1–2\); 1 rotations$/), 'events: 5 (keystone 503 1, keystone down 1, kill 2, tenant-edit 1)']),
    );
  });
});
