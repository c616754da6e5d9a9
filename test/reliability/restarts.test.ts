// @needs kube keystone openbao
/**
 * What a restart of the operator costs its converged orders (issue 46, finding 1), counted at recording proxies in
 * front of the real Keystone (the ControlPlane's auth URL) and the real OpenBao (the operator's address), with the
 * operator a child process under the construct's RBAC on the real API server. Ten converged orders of one user:
 *
 * - restarted: no OpenBao and no Keystone request in the first 30 s of the new process (each order's status records
 *   its backup's migration done, `status.backupPath`, so the cache settles it whole);
 * - restarted while OpenBao answers 503: the same, and every order stays Ready;
 * - restarted over statuses without that record (written before it existed, or a status write that was lost) while
 *   OpenBao answers 503: the settled orders wait on OpenBao and ask Keystone nothing; once OpenBao answers, each reads
 *   its two paths once and records the migration (one status write), still without Keystone;
 * - restarted while an order's raised generation waits for its grace period ("No rotation starts while a grace period
 *   runs"): the order is Ready and settled until the grace period ends, so the same (before, the new process logged in,
 *   listed and read the backup for it: seed 460004 of the simulation, schedule 27).
 *
 * Before the record (0.2.0), the same restart read two OpenBao paths per order every time, and with OpenBao answering
 * 503 sent the user's login and credential list to Keystone (docs/upgrading.md: "No Keystone call").
 */
import { join } from 'node:path';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures, type Order } from '../support/credential-fixtures';
import { uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, kubectl, kubectlOk } from '../support/kubectl';
import { installCrds, operatorKubeconfig, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess } from '../support/operator';
import { startRecordingProxy, type RecordedCall, type RecordingProxy } from '../support/recording-proxy';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(240_000);

const NS = 'kac-restarts';
const CP_NS = 'kac-restarts-cp';
const IDENTITY = { namespace: 'kac-restarts-operator', binding: 'kac-restarts-operator' };
const ORDERS = Array.from({ length: 10 }, (_, i) => `app-${i}`);
/** How long after each start the requests are counted. */
const WINDOW_MS = 30_000;
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: uniqueName('restarts'), projectName: uniqueName('restarts') });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (line: string) => process.stdout.write(`[restarts] ${line}\n`);

let unlock: (() => void) | undefined;
let workDir = '';
let kubeconfig = '';
let operator: OperatorProcess | undefined;
let keystone: RecordingProxy;
let openBao: RecordingProxy;
let restarts = 0;
const figures: string[] = [];

const ready = (o: Order) => condition(o, 'Ready')?.status === 'True';
const orders = () => Promise.all(ORDERS.map((name) => fx.order(name)));

/** Stops the operator and starts a new process; `openBaoStatus`: what the OpenBao proxy answers instead of OpenBao. */
async function restart(openBaoStatus?: number): Promise<{ keystone: RecordedCall[]; openBao: RecordedCall[]; startedAt: number }> {
  await operator?.server.stop(10_000);
  openBao.fault = openBaoStatus === undefined ? undefined : () => openBaoStatus;
  const marks = { keystone: keystone.calls.length, openBao: openBao.calls.length };
  operator = await startOperator({
    name: `restarts-${++restarts}`,
    kubeconfig,
    namespace: IDENTITY.namespace,
    logDir: workDir,
    env: { KAC_OPENBAO_ADDRESS: openBao.url, KAC_OPENBAO_AUTH_METHOD: 'token', KAC_OPENBAO_TOKEN: process.env.KAC_BAO_TOKEN as string },
  });
  await waitReady(operator);
  return { keystone: keystone.calls.slice(marks.keystone), openBao: openBao.calls.slice(marks.openBao), startedAt: operator.spawnedAt };
}

/** The requests each proxy received in the first `WINDOW_MS` of the process started at `startedAt`, once that has passed. */
async function firstWindow(started: { startedAt: number }, what: string): Promise<{ keystone: RecordedCall[]; openBao: RecordedCall[] }> {
  await sleep(Math.max(0, started.startedAt + WINDOW_MS - Date.now()));
  const inside = (calls: readonly RecordedCall[]) => calls.filter((c) => (c.at ?? 0) >= started.startedAt && (c.at ?? 0) < started.startedAt + WINDOW_MS);
  const counted = { keystone: inside(keystone.calls), openBao: inside(openBao.calls) };
  const line = `${what}: ${counted.openBao.length} OpenBao and ${counted.keystone.length} Keystone requests in the first ${WINDOW_MS / 1000} s (${ORDERS.length} converged orders)`;
  figures.push(line);
  say(line);
  return counted;
}

const describeCalls = (calls: readonly RecordedCall[]) => calls.map((c) => `${c.method} ${c.path.replace(/\?.*/, '')} ${c.status ?? ''}`.trim());

beforeAll(async () => {
  unlock = await lockCluster('restarts.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  keystone = await startRecordingProxy(fx.env.authUrl);
  openBao = await startRecordingProxy(process.env.KAC_BAO_ADDR as string);
  const manifests = await installCrds(synthesizeManifests());
  kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'restarts.kubeconfig'));
  for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  await applyOk([fx.adminSecret(), fx.controlPlane({ authUrl: keystone.url })], { fieldManager: 'kac-test' });
  await applyOk(fx.identityOrders(), { fieldManager: 'kac-test' });
  await restart();
  await applyOk(ORDERS.map((name) => fx.credentialOrder(name, { interval: '1h', gracePeriod: '10m' })), { fieldManager: 'kac-test' });
  await eventually(async () => (await orders()).every((o) => ready(o) && o.status?.backupPath !== undefined), 120_000, 500);
  // Every identity-plane object converged on its current spec too, so that nothing but the restart is counted.
  await eventually(async () => {
    for (const [kind, name] of [['keystoneprojects', 'proj'], ['keystoneusers', 'svc'], ['keystoneroleassignments', 'member']] as const) {
      const o = await fx.order(name, kind);
      if (!ready(o) || o.status?.observedGeneration !== o.metadata.generation) return false;
    }
    return ready(await fx.controlPlaneNow());
  }, 60_000);
}, LOCKED_SETUP_MS);

// A test that failed with OpenBao answering 503 does not leave it so for the next (a whole-suite run's one failure
// became two).
afterEach(() => {
  if (openBao) openBao.fault = undefined;
});

afterAll(async () => {
  await operator?.server.stop(5_000);
  await releaseLeftovers([NS, CP_NS]);
  for (const ns of [NS, CP_NS, IDENTITY.namespace]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  await keystone?.close();
  await openBao?.close();
  unlock?.();
  if (figures.length > 0) process.stdout.write(`\n[restarts] figures (docs/reliability.md):\n${figures.map((f) => `  ${f}`).join('\n')}\n`);
});

describe('a restart of the operator over converged orders (OpenBao and Keystone counted at proxies)', () => {
  it('restarted: no OpenBao and no Keystone request; every order stays Ready', async () => {
    const counted = await firstWindow(await restart(), 'restart');
    expect(describeCalls(counted.openBao)).toEqual([]);
    expect(describeCalls(counted.keystone)).toEqual([]);
    expect((await orders()).every(ready)).toBe(true);
  });

  it('restarted while OpenBao answers 503: no OpenBao and no Keystone request; every order stays Ready', async () => {
    const counted = await firstWindow(await restart(503), 'restart, OpenBao answering 503');
    expect(describeCalls(counted.openBao)).toEqual([]);
    expect(describeCalls(counted.keystone)).toEqual([]);
    expect((await orders()).every(ready)).toBe(true);
  });

  it('restarted over statuses without the record while OpenBao answers 503: Keystone is asked nothing; once OpenBao answers, each order records its migration, still without Keystone', async () => {
    await operator?.server.stop(10_000);
    for (const name of ORDERS) {
      await kubectlOk(['patch', 'keystoneapplicationcredentials', name, '-n', NS, '--subresource=status', '--type=json', '-p', '[{"op":"remove","path":"/status/backupPath"}]']);
    }
    const started = await restart(503);
    const counted = await firstWindow(started, 'restart over statuses without the record, OpenBao answering 503');
    expect(describeCalls(counted.keystone)).toEqual([]);
    // Each order read its two paths and now waits on OpenBao, probed: a handful of requests, not a retry per order.
    expect(counted.openBao.length).toBeGreaterThanOrEqual(2 * ORDERS.length);
    expect(counted.openBao.length).toBeLessThanOrEqual(2 * ORDERS.length + 12);
    expect((await orders()).every(ready)).toBe(true);
    openBao.fault = undefined;
    const answered = Date.now();
    const recorded = await eventually(async () => {
      const all = await orders();
      return all.every((o) => o.status?.backupPath !== undefined) && all;
    }, 60_000, 500);
    const line = `OpenBao answering again: every order recorded its migration in ${Date.now() - answered} ms; Keystone requests since the restart: ${keystone.calls.filter((c) => (c.at ?? 0) >= started.startedAt).length}`;
    figures.push(line);
    say(line);
    expect(recorded.every((o) => ready(o) && o.status?.backupPath === `openstack/keystone/${CP_NS}/${fx.prefixOf(o.metadata.name)}/${o.metadata.uid}/service-accounts/application-credential`)).toBe(true);
    expect(describeCalls(keystone.calls.filter((c) => (c.at ?? 0) >= started.startedAt))).toEqual([]);
  });

  it('restarted while a raised generation waits for a grace period: no OpenBao and no Keystone request; the order stays Ready at its generation', async () => {
    const rotation = { interval: '1h', gracePeriod: '10m' };
    await applyOk([fx.credentialOrder('app-0', rotation, 2)], { fieldManager: 'kac-test' });
    await eventually(async () => {
      const o = await fx.order('app-0');
      return ready(o) && o.status?.credentialGeneration === 2 && o.status.previousCredentialGeneration === 1 && o.status.observedGeneration === o.metadata.generation;
    }, 60_000, 500);
    // Raised again inside the grace period of generation 1: generation 3 waits for its end, ten minutes on.
    await applyOk([fx.credentialOrder('app-0', rotation, 3)], { fieldManager: 'kac-test' });
    await eventually(async () => {
      const o = await fx.order('app-0');
      return ready(o) && o.status?.credentialGeneration === 2 && o.status.observedGeneration === o.metadata.generation;
    }, 60_000, 500);
    const counted = await firstWindow(await restart(), 'restart, a raised generation waiting for a grace period');
    expect(describeCalls(counted.openBao)).toEqual([]);
    expect(describeCalls(counted.keystone)).toEqual([]);
    const after = await fx.order('app-0');
    expect([ready(after), after.status?.credentialGeneration, after.spec.credentialGeneration]).toEqual([true, 2, 3]);
    expect((await orders()).every(ready)).toBe(true);
  });
});
