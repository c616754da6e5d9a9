// @needs kube
/**
 * The operator's runtime on the real API server: `keystone-appcred operator` runs as child processes that authenticate
 * as a service account bound to exactly the construct's ClusterRole and Lease Role (the synthesized objects' rules),
 * with short lease durations. Proven: /healthz, /readyz (once the caches synced) and /metrics (the leader gauge) answer;
 * of two processes exactly one leads and only the leader reconciles; after kill -9 of the leader the standby leads
 * within the lease duration; SIGTERM releases the Lease (holderIdentity cleared) and a standby takes over at once.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { lockCluster } from '../support/cluster-lock';
import { eventually, getJson, kubectl, kubectlOk, applyOk, type KubeObject } from '../support/kubectl';
import { freePort, startServer, tail, type Server } from '../support/proc';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(300_000);

const REPO = resolve(__dirname, '..', '..');
const NS = 'kac-e2e-runtime';
const SA = 'operator';
const LEASE = 'keystone-appcred-operator-leader';
const BINDING = 'kac-e2e-runtime-operator';
const LEASE_SECONDS = 4;
const TIMING = ['--lease-duration', `${LEASE_SECONDS}s`, '--renew-deadline', '3s', '--retry-period', '500ms'];

interface Operator {
  readonly name: string;
  readonly server: Server;
  readonly health: number;
  readonly metrics: number;
  readonly spawnedAt: number;
}

let unlock: (() => void) | undefined;
let kubeconfig = '';
let workDir = '';
const operators: Operator[] = [];

async function get(url: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined;
  }
}

async function start(name: string): Promise<Operator> {
  const health = await freePort();
  const metrics = await freePort();
  const args = [
    '--import', 'tsx', join(REPO, 'src/cli/main.ts'), 'operator',
    '--kubeconfig', kubeconfig, '--namespace', NS, '--identity', name,
    '--bind-address', '127.0.0.1', '--health-port', String(health), '--metrics-port', String(metrics), ...TIMING,
  ];
  const server = startServer(`operator ${name}`, process.execPath, args, join(workDir, `${name}.log`), { cwd: REPO });
  const operator = { name, server, health, metrics, spawnedAt: Date.now() };
  operators.push(operator);
  return operator;
}

const isLeader = async (op: Operator): Promise<boolean> => /^keystone_appcred_leader 1$/m.test((await get(`http://127.0.0.1:${op.metrics}/metrics`))?.body ?? '');
/** Finished ControlPlane reconciles, whatever their result (the registered reconciler decides success or not). */
const reconciles = async (op: Operator): Promise<number> =>
  [...((await get(`http://127.0.0.1:${op.metrics}/metrics`))?.body ?? '').matchAll(/^keystone_appcred_reconcile_total\{kind="ControlPlane",result="[a-z]+"\} (\d+)$/gm)]
    .reduce((sum, m) => sum + Number(m[1]), 0);
const lease = () => getJson<KubeObject & { spec: { holderIdentity?: string; leaseTransitions?: number } }>('lease', LEASE, { namespace: NS });

async function ready(op: Operator): Promise<number> {
  await eventually(async () => {
    if (op.server.exited() !== undefined) throw new Error(`${op.name} exited (${op.server.exited()}):\n${tail(op.server.log)}`);
    return (await get(`http://127.0.0.1:${op.health}/readyz`))?.status === 200;
  }, 120_000, 100);
  return Date.now() - op.spawnedAt;
}

function rssMiB(op: Operator): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${op.server.process.pid}/status`, 'utf8'));
  return Math.round(Number(m?.[1] ?? 0) / 1024);
}

/** The construct's ClusterRole and Lease Role, as synthesized, bound to this file's service account. */
function rbacObjects(manifests: string): KubeObject[] {
  const file = readdirSync(manifests).find((f) => f.includes('operator') && f.endsWith('.k8s.yaml')) as string;
  const docs = parseAllDocuments(readFileSync(join(manifests, file), 'utf8')).map((d) => d.toJS() as KubeObject & { rules?: unknown[] });
  const clusterRole = docs.find((d) => d.kind === 'ClusterRole') as KubeObject & { rules: unknown[] };
  const leaseRole = docs.find((d) => d.kind === 'Role') as KubeObject & { rules: unknown[] };
  const subjects = [{ kind: 'ServiceAccount', name: SA, namespace: NS }];
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SA, namespace: NS } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: BINDING }, rules: clusterRole.rules },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: BINDING }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: BINDING }, subjects },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'leader-election', namespace: NS }, rules: leaseRole.rules },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'leader-election', namespace: NS }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'leader-election' }, subjects },
  ];
}

beforeAll(async () => {
  unlock = await lockCluster('operator-runtime.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  const manifests = synthesizeManifests();
  const crds = readdirSync(manifests).find((f) => f.includes('crds')) as string;
  await kubectlOk(['apply', '--server-side', '--field-manager=kac-test', '-f', join(manifests, crds)]);
  await kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd/controlplanes.c5c3.io']);
  await kubectl(['create', 'namespace', NS]);
  await applyOk(rbacObjects(manifests), { fieldManager: 'kac-test' });
  const token = (await kubectlOk(['create', 'token', SA, '-n', NS, '--duration=2h'])).trim();
  kubeconfig = join(workDir, 'operator-runtime.kubeconfig');
  writeFileSync(kubeconfig, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'sa',
    clusters: [{ name: 'kac', cluster: { server: process.env.KAC_KUBE_SERVER, 'certificate-authority': process.env.KAC_KUBE_CA_FILE } }],
    users: [{ name: SA, user: { token } }],
    contexts: [{ name: 'sa', context: { cluster: 'kac', user: SA, namespace: NS } }],
  }), { mode: 0o600 });
  await applyOk({ apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name: 'runtime-cp', namespace: NS }, spec: sampleControlPlaneSpec(manifests) } as KubeObject, { fieldManager: 'kac-test' });
}, 300_000);

afterAll(async () => {
  await Promise.all(operators.map((op) => op.server.stop(5_000)));
  await kubectl(['delete', 'namespace', NS, '--wait=false']);
  await kubectl(['delete', 'clusterrolebinding,clusterrole', BINDING, '--ignore-not-found']);
  unlock?.();
});

/** The spec of the synthesized sample ControlPlane (the runtime's no-op reconciler only needs one to exist). */
function sampleControlPlaneSpec(manifests: string): unknown {
  const file = readdirSync(manifests).find((f) => f.includes('samples')) as string;
  return parseAllDocuments(readFileSync(join(manifests, file), 'utf8'))
    .map((d) => d.toJS() as KubeObject & { spec: unknown })
    .find((d) => d.kind === 'ControlPlane')?.spec;
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
    const logged = readFileSync(a.server.log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.find((l) => l.msg === 'reconcile' && l.controller === 'ControlPlane')).toMatchObject({ key: `${NS}/runtime-cp`, result: expect.any(String), durationMs: expect.any(Number) });
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
