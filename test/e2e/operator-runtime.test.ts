// @needs kube
/**
 * The operator's runtime on the real API server: `keystone-appcred operator` runs as child processes that authenticate
 * as a service account bound to exactly the construct's ClusterRole and Lease Role (the synthesized objects' rules),
 * with short lease durations. Proven: /healthz, /readyz (once the caches synced) and /metrics (the leader gauge) answer;
 * of two processes exactly one leads and only the leader reconciles; after kill -9 of the leader the standby leads
 * within the lease duration; SIGTERM releases the Lease (holderIdentity cleared) and a standby takes over at once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { eventually, getJson, kubectl, kubectlOk, applyOk, type KubeObject } from '../support/kubectl';
import {
  httpGet as get,
  installCrds,
  isLeader,
  manifestObjects,
  metricsText,
  operatorKubeconfig,
  removeOperatorRbac,
  rssMiB,
  startOperator,
  waitReady as ready,
  type OperatorProcess as Operator,
} from '../support/operator';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(300_000);

const NS = 'kac-e2e-runtime';
const LEASE = 'keystone-appcred-operator-leader';
const IDENTITY = { namespace: NS, binding: 'kac-e2e-runtime-operator' };
const LEASE_SECONDS = 4;
const TIMING = ['--lease-duration', `${LEASE_SECONDS}s`, '--renew-deadline', '3s', '--retry-period', '500ms'];

let unlock: (() => void) | undefined;
let kubeconfig = '';
let workDir = '';
const operators: Operator[] = [];

async function start(name: string): Promise<Operator> {
  const operator = await startOperator({ name, kubeconfig, namespace: NS, logDir: workDir, args: TIMING });
  operators.push(operator);
  return operator;
}

/** Finished ControlPlane reconciles, whatever their result (the registered reconciler decides success or not). */
const reconciles = async (op: Operator): Promise<number> =>
  [...(await metricsText(op)).matchAll(/^keystone_appcred_reconcile_total\{kind="ControlPlane",result="[a-z]+"\} (\d+)$/gm)]
    .reduce((sum, m) => sum + Number(m[1]), 0);
const lease = () => getJson<KubeObject & { spec: { holderIdentity?: string; leaseTransitions?: number } }>('lease', LEASE, { namespace: NS });

beforeAll(async () => {
  unlock = await lockCluster('operator-runtime.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  const manifests = synthesizeManifests();
  await installCrds(manifests);
  kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'operator-runtime.kubeconfig'));
  await applyOk({ apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name: 'runtime-cp', namespace: NS }, spec: sampleControlPlaneSpec(manifests) } as KubeObject, { fieldManager: 'kac-test' });
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await Promise.all(operators.map((op) => op.server.stop(5_000)));
  await kubectl(['delete', 'namespace', NS, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  unlock?.();
});

/** The spec of the synthesized sample ControlPlane (the runtime's no-op reconciler only needs one to exist). */
function sampleControlPlaneSpec(manifests: string): unknown {
  return (manifestObjects(manifests, 'samples').find((d) => d.kind === 'ControlPlane') as { spec?: unknown } | undefined)?.spec;
}

describe('keystone-appcred operator on the real API server, as the construct\'s RBAC allows', () => {
  let a: Operator;
  let b: Operator;

  it('answers /healthz, /readyz once the caches synced, and /metrics with the leader gauge', async () => {
    a = await start('runtime-a');
    const startup = await ready(a);
    expect((await get(`http://127.0.0.1:${a.health}/healthz`))?.status).toBe(200);
    await eventually(() => isLeader(a), 30_000, 200);
    await eventually(async () => (await reconciles(a)) >= 1, 30_000, 200);
    const metrics = (await get(`http://127.0.0.1:${a.metrics}/metrics`))?.body ?? '';
    expect(metrics).toContain('keystone_appcred_informer_synced{kind="ControlPlane"} 1');
    expect(metrics).toContain('process_resident_memory_bytes');
    expect((await lease()).spec.holderIdentity).toBe('runtime-a');
    const logLines = () => readFileSync(a.server.log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    // ControlPlanes other files left on the shared API server are reconciled too: look for this file's own.
    const own = await eventually(async () => logLines().find((l) => l.msg === 'reconcile' && l.controller === 'ControlPlane' && l.key === `${NS}/runtime-cp`), 30_000, 200);
    expect(own).toMatchObject({ key: `${NS}/runtime-cp`, result: expect.any(String), durationMs: expect.any(Number) });
    const logged = logLines();
    const readyLine = logged.find((l) => String(l.msg).startsWith('ready'));
    process.stderr.write(`[operator-runtime] start-up to /readyz 200: ${startup} ms from spawn (tsx), ${String(readyLine?.sinceProcessStartMs)} ms in-process\n`);
  });

  it('with two processes, exactly one leads and only the leader reconciles', async () => {
    b = await start('runtime-b');
    await ready(b);
    const before = await reconciles(a);
    await kubectlOk(['annotate', 'controlplane', 'runtime-cp', '-n', NS, 'kac-e2e/touch=1', '--overwrite']);
    await eventually(async () => (await reconciles(a)) > before, 30_000, 200);
    for (let i = 0; i < 4; i++) {
      expect([await isLeader(a), await isLeader(b)]).toEqual([true, false]);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(await reconciles(b)).toBe(0);
    await new Promise((r) => setTimeout(r, 3_000));
    process.stderr.write(`[operator-runtime] idle RSS: leader ${rssMiB(a)} MiB, standby ${rssMiB(b)} MiB\n`);
  });

  it('after kill -9 of the leader, the standby leads within the lease duration', async () => {
    const transitions = (await lease()).spec.leaseTransitions ?? 0;
    a.server.process.kill('SIGKILL');
    const killed = Date.now();
    await eventually(() => isLeader(b), 30_000, 100);
    const took = Date.now() - killed;
    process.stderr.write(`[operator-runtime] takeover after kill -9: ${took} ms (lease ${LEASE_SECONDS} s)\n`);
    // The standby saw the last renewal up to one retry period (plus jitter) before the kill, and tries every 0.5-0.6 s.
    expect(took).toBeLessThanOrEqual(LEASE_SECONDS * 1000 + 1_500);
    const held = await lease();
    expect([held.spec.holderIdentity, held.spec.leaseTransitions]).toEqual(['runtime-b', transitions + 1]);
    await eventually(async () => (await reconciles(b)) >= 1, 30_000, 200);
  });

  it('SIGTERM finishes, releases the Lease (holderIdentity cleared), and a standby takes over at once', async () => {
    const c = await start('runtime-c');
    await ready(c);
    expect(await isLeader(c)).toBe(false);
    b.server.process.kill('SIGTERM');
    const stopped = Date.now();
    await eventually(async () => b.server.exited(), 30_000, 50);
    expect(b.server.exited()).toBe('0');
    const log = readFileSync(b.server.log, 'utf8');
    expect(log).toContain('"msg":"released the lease"');
    expect(log).toMatch(/"msg":"manager stopped","drained":true,"released":true/);
    await eventually(() => isLeader(c), 30_000, 100);
    const took = Date.now() - stopped;
    process.stderr.write(`[operator-runtime] takeover after SIGTERM: ${took} ms\n`);
    expect(took).toBeLessThan(LEASE_SECONDS * 1000);
    expect((await lease()).spec.holderIdentity).toBe('runtime-c');
    // And the leader's own SIGTERM leaves the Lease free.
    c.server.process.kill('SIGTERM');
    await eventually(async () => c.server.exited(), 30_000, 50);
    expect((await lease()).spec.holderIdentity).toBeUndefined();
  });
});
