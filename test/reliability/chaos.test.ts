// @needs kube keystone openbao
/**
 * The real-component chaos run (issue 46): a seeded schedule of kills, outages and tenant edits
 * (test/support/chaos/schedule.ts) against two operator replicas under the construct's RBAC, the real API server,
 * Keystone and OpenBao, while three orders rotate (two on the interval, one settled) and two consumers per order
 * authenticate with their delivered Secret every second; then the simulation's invariants, checked on what the run saw
 * at the real components (test/support/chaos/invariants/).
 *
 * `npm test` runs a short one: 7 minutes with 1-minute intervals from a fixed seed (a handful of events). The long run
 * is `npm run chaos -- --minutes 30 --seed S --interval 2m` (test/support/chaos/main.ts), which sets the variables
 * below: `KAC_CHAOS_SEED`, `KAC_CHAOS_MINUTES`, `KAC_CHAOS_INTERVAL` (a Go duration), `KAC_CHAOS_SCHEDULE` (a schedule
 * file to run as it is), `KAC_CHAOS_REPORT` (a directory for the report and the timeline as JSON).
 *
 * A replay: the same seed, minutes and interval draw the same schedule, event for event, each at the same second from
 * the start. The components' timing is not replayed: an event meets the operator wherever its passes are then (in a
 * rotation or between two), so a failure seen once may need a few runs of its seed to come again; the report's
 * timeline says where it was.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duration } from '../../src/api';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition } from '../support/credential-fixtures';
import { eventually } from '../support/kubectl';
import { INVARIANTS, noSecretAnywhere } from '../support/chaos/invariants';
import { installChaos, REPLICAS, type Installation } from '../support/chaos/installation';
import { logTexts, observe, operatorLines, type Observer } from '../support/chaos/observer';
import { reportLines, rotationsOf } from '../support/chaos/report';
import { drawSchedule, graceSecondsOf, parseSchedule, tailSecondsOf, type ChaosSchedule } from '../support/chaos/schedule';
import type { Timeline, Violation } from '../support/chaos/timeline';

const env = process.env;
const schedule: ChaosSchedule = env.KAC_CHAOS_SCHEDULE
  ? parseSchedule(readFileSync(env.KAC_CHAOS_SCHEDULE, 'utf8'))
  : drawSchedule({
      seed: Number(env.KAC_CHAOS_SEED ?? 32),
      minutes: Number(env.KAC_CHAOS_MINUTES ?? 7),
      intervalSeconds: Math.round(Duration.parse(env.KAC_CHAOS_INTERVAL ?? '1m', 'KAC_CHAOS_INTERVAL').milliseconds / 1000),
    });
const { setup } = schedule;
const RUN_MS = setup.minutes * 60_000;
const say = (line: string) => process.stdout.write(`[chaos] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let unlock: (() => void) | undefined;
let installation: Installation | undefined;
let observer: Observer | undefined;
let timeline: Timeline;
let violations: Violation[] = [];
let workDir = '';

beforeAll(async () => {
  unlock = await lockCluster('chaos.test.ts');
  workDir = env.KAC_CHAOS_REPORT ?? join(env.KAC_TEST_WORKDIR as string, 'chaos');
  mkdirSync(workDir, { recursive: true });
  say(`seed ${setup.seed}, ${setup.minutes} minutes, interval ${setup.intervalSeconds} s, ${schedule.steps.length} events; the report goes to ${workDir}`);
  installation = await installChaos(setup, workDir);
  const inst = installation;
  // Every order delivered and Ready before the clock starts.
  await eventually(async () => {
    for (const order of inst.orders) {
      const name = order.key.split('/')[1];
      const fx = inst.fixtures[order.tenant];
      const o = await fx.order(name);
      if (condition(o, 'Ready')?.status !== 'True' || (await fx.delivered(name))?.application_credential_id !== o.status?.credentialID) return false;
    }
    return true;
  }, 180_000, 1_000);
  await inst.addForeignCredential();
  observer = observe(inst, (graceSecondsOf(setup) * 1000) / 2);
  const started = Date.now();
  const running: Promise<void>[] = [];
  for (const step of schedule.steps) {
    await sleep(started + step.at * 1000 - Date.now());
    say(`+${Math.round((Date.now() - started) / 1000)} s ${JSON.stringify(step.event)}`);
    running.push(inst.apply(step.event));
  }
  await Promise.all(running);
  await sleep(started + RUN_MS - Date.now());
  await observer.stop();
  const ended = Date.now();
  timeline = {
    started,
    ended,
    orders: inst.orders,
    samples: observer.samples,
    keystone: inst.keystone.calls.map((c) => ({ ...c, at: c.at ?? 0 })),
    openbao: inst.openbao.calls.map((c) => ({ ...c, at: c.at ?? 0 })),
    keystoneDependency: inst.keystoneDependency,
    lines: operatorLines(inst, REPLICAS),
    disturbances: inst.disturbances,
    probes: observer.probes,
    metrics: observer.metrics,
    foreign: inst.foreign.ids,
    resyncMs: 3_600_000,
    laggingRefreshMs: (graceSecondsOf(setup) * 1000) / 2,
  };
  violations = INVARIANTS.flatMap((i) => i.check(timeline)).sort((a, b) => a.at - b.at);
  writeFileSync(join(workDir, 'schedule.json'), JSON.stringify(schedule, null, 2));
  writeFileSync(join(workDir, 'timeline.json'), JSON.stringify(timeline));
  const lines = reportLines(schedule, timeline, violations, inst.failures);
  writeFileSync(join(workDir, 'report.txt'), `${lines.join('\n')}\n`);
  for (const line of lines) say(line);
}, LOCKED_SETUP_MS + RUN_MS + 600_000);

afterAll(async () => {
  await observer?.stop();
  await installation?.close();
  unlock?.();
}, 300_000);

describe(`chaos: ${setup.minutes} minutes of rotations every ${setup.intervalSeconds} s under a seeded schedule (seed ${setup.seed})`, () => {
  it('every event of the schedule happened', () => {
    expect(installation?.failures).toEqual([]);
    expect(timeline.disturbances.length).toBe(schedule.steps.length);
  });

  it('the orders rotated on their interval and the consumers kept authenticating', () => {
    const rotations = rotationsOf(timeline);
    // At least one rotation per two intervals of the run without its tail, for each rotating order.
    const least = Math.floor((RUN_MS / 1000 - tailSecondsOf(setup)) / setup.intervalSeconds / 2);
    for (const order of timeline.orders.filter((o) => o.intervalMs > 0)) expect(rotations[order.key].length).toBeGreaterThanOrEqual(least + 1);
    for (const order of timeline.orders) expect(timeline.probes.filter((p) => p.order === order.key && p.outcome === 'ok').length).toBeGreaterThan(RUN_MS / 1000);
  });

  it.each(INVARIANTS.map((i) => [i.name, i.description] as const))('%s: %s', (name) => {
    expect(violations.filter((v) => v.invariant === name).map((v) => `+${Math.round((v.at - timeline.started) / 1000)} s ${v.message}`)).toEqual([]);
  });

  it('no-secret-anywhere: no minted or parked secret, password or token in any log line, Event, status or metrics text', async () => {
    const inst = installation as Installation;
    const texts = [
      ...logTexts(inst, REPLICAS),
      ...(await inst.fixtures.a.eventTexts(['kac-chaos-a', 'kac-chaos-b', 'kac-chaos-cp'])),
      ...inst.fixtures.a.statusesRead,
      ...inst.fixtures.b.statusesRead,
      ...(observer?.metricsTexts ?? []),
    ];
    // A credential's id is not a secret: status.credentialID carries it, as the reference says. A tenant's swap-keys
    // edit puts an id under application_credential_secret, and a consumer that reads the Secret before the operator
    // repairs it adds that id to what it saw there (stop 54's whole suite: the swap while Keystone was down, every
    // status of that generation reported). Every id Keystone listed or a status named is taken out of the secrets.
    const ids = new Set(
      timeline.samples.flatMap((s) => [
        ...(s.credentials ?? []).map((c) => c.id),
        ...Object.values(s.orders).flatMap((o) => [o?.status?.credentialID, o?.status?.previousCredentialID]),
      ]),
    );
    const seen = [...inst.fixtures.a.secretsSeen, ...inst.fixtures.b.secretsSeen].filter((value) => !ids.has(value));
    const secrets = [...seen, ...inst.foreign.secrets, inst.fixtures.a.env.adminPassword, env.KAC_BAO_TOKEN as string];
    expect(inst.fixtures.a.secretsSeen.size).toBeGreaterThanOrEqual(2);
    // The scan can fail: a planted secret is found.
    expect(noSecretAnywhere([...texts, { source: 'planted', text: `x${seen[0]}x` }], secrets, 0).map((v) => v.message)).toEqual(['planted carries a secret']);
    expect(noSecretAnywhere(texts, secrets, timeline.ended).map((v) => v.message)).toEqual([]);
  });
});
