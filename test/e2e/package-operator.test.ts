// @needs kube
/**
 * The operator as the image runs it, from the packed package: `npm pack` (its prepack builds), `npm install --omit=dev
 * <tarball>` into a temporary project outside the repository (no optional peer dependency: the operator needs none),
 * then `node_modules/.bin/keystone-appcred operator` on Node 24 (compiled JavaScript, not tsx) against the test API
 * server, authenticated as a service account bound to exactly the construct's ClusterRole and Lease Role. Proven:
 * /readyz answers 200, /metrics shows the leader gauge at 1, a ControlPlane is reconciled, SIGTERM releases the Lease and
 * exits 0; the construct's command (`node lib/src/cli/main.js operator`) runs from the installed package's root. Printed:
 * the installed footprint (du of node_modules) and the start-up time to ready, three runs.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATOR_COMMAND } from '../../constructs/operator';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { applyOk, eventually, getJson, kubectl, type KubeObject } from '../support/kubectl';
import {
  httpGet,
  installCrds,
  isLeader,
  manifestObjects,
  metricsText,
  operatorKubeconfig,
  operatorLog,
  removeOperatorRbac,
  rssMiB,
  startOperator,
  waitReady,
  type OperatorProcess,
} from '../support/operator';
import { newProject, nodeEnv, npmInstall, packDir, packedTarball, runOk } from '../support/package';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(900_000);

const NS = 'kac-e2e-package-operator';
const LEASE = 'keystone-appcred-operator-leader';
const IDENTITY = { namespace: NS, binding: 'kac-e2e-package-operator' };

let dir = '';
let logDir = '';
let kubeconfig = '';
let unlock: (() => void) | undefined;
const operators: OperatorProcess[] = [];

/** `keystone-appcred operator` from the installed package, as the image runs it: Node 24 on PATH, NODE_ENV=production. */
async function start(name: string): Promise<OperatorProcess> {
  const operator = await startOperator({
    name,
    kubeconfig,
    namespace: NS,
    logDir,
    command: [join(dir, 'node_modules', '.bin', 'keystone-appcred'), 'operator'],
    cwd: dir,
    env: { PATH: nodeEnv().PATH as string, NODE_ENV: 'production' },
  });
  operators.push(operator);
  return operator;
}

/** SIGTERM; resolves with the exit code (or signal) once the process is gone. */
async function terminate(op: OperatorProcess): Promise<string | undefined> {
  op.server.process.kill('SIGTERM');
  await eventually(async () => op.server.exited() !== undefined, 30_000, 50);
  return op.server.exited();
}

const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;

beforeAll(async () => {
  const tarball = await packedTarball();
  dir = newProject('operator');
  await npmInstall(dir, [tarball], ['--omit=dev']);
  logDir = process.env.KAC_TEST_WORKDIR ?? dir;
  // Packed and installed first; the cluster is taken only for what needs it.
  unlock = await lockCluster('package-operator.test.ts');
  const manifests = synthesizeManifests();
  await installCrds(manifests);
  kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(logDir, 'package-operator.kubeconfig'));
  const spec = (manifestObjects(manifests, 'samples').find((d) => d.kind === 'ControlPlane') as { spec?: unknown } | undefined)?.spec;
  await applyOk({ apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name: 'packed-cp', namespace: NS }, spec } as KubeObject, { fieldManager: 'kac-test' });
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await Promise.all(operators.map((op) => op.server.stop(5_000)));
  if (unlock) {
    await kubectl(['delete', 'namespace', NS, '--wait=false']);
    await removeOperatorRbac(IDENTITY);
    unlock();
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (!process.env.KAC_TEST_WORKDIR) rmSync(packDir(), { recursive: true, force: true });
});

describe('keystone-appcred operator from the packed package, installed with --omit=dev', () => {
  it('installs the runtime dependencies and none of the optional peers or devDependencies; prints the footprint', async () => {
    const modules = join(dir, 'node_modules');
    expect(existsSync(join(modules, 'keystone-appcred', 'lib', 'src', 'cli', 'main.js'))).toBe(true);
    expect(existsSync(join(modules, '.bin', 'keystone-appcred'))).toBe(true);
    for (const runtime of ['@kubernetes/client-node', 'commander', 'prom-client', 'undici', 'yaml']) expect([runtime, existsSync(join(modules, runtime))]).toEqual([runtime, true]);
    for (const absent of ['cdk8s', 'constructs', 'cdk8s-plus-33', '@pulumi/pulumi', '@pulumi/kubernetes', 'typescript', 'tsx', 'jest', 'node']) {
      expect([absent, existsSync(join(modules, absent))]).toEqual([absent, false]);
    }
    const du = async (path: string): Promise<number> => Number((await runOk('du', ['-sk', path], { cwd: dir })).split(/\s/)[0]);
    const packages = readdirSync(modules)
      .filter((e) => !e.startsWith('.'))
      .flatMap((e) => (e.startsWith('@') ? readdirSync(join(modules, e)).map((s) => `${e}/${s}`) : [e])).length;
    const largest = await Promise.all(['@kubernetes/client-node', 'keystone-appcred', 'prom-client', 'undici'].map(async (p) => `${p} ${mib(await du(join(modules, p)))}`));
    process.stderr.write(`[package-operator] installed footprint: node_modules ${mib(await du(modules))} in ${packages} packages (${largest.join(', ')})\n`);
  });

  it('serves /readyz 200 and /metrics with the leader gauge, reconciles, and exits 0 on SIGTERM, releasing the Lease', async () => {
    const op = await start('packed-a');
    const startup = await waitReady(op);
    expect(readFileSync(`/proc/${op.server.process.pid}/cmdline`, 'utf8').split('\0')).toContain(join(dir, 'node_modules', '.bin', 'keystone-appcred'));
    expect((await httpGet(`http://127.0.0.1:${op.health}/readyz`))?.status).toBe(200);
    expect((await httpGet(`http://127.0.0.1:${op.health}/healthz`))?.status).toBe(200);
    await eventually(() => isLeader(op), 30_000, 200);
    expect(await metricsText(op)).toMatch(/^keystone_appcred_leader 1$/m);
    await eventually(async () => /^keystone_appcred_reconcile_total\{kind="ControlPlane",result="[a-z]+"\} [1-9]/m.test(await metricsText(op)), 30_000, 200);
    await new Promise((r) => setTimeout(r, 3_000));
    const inProcess = operatorLog(op).find((l) => String(l.msg).startsWith('ready'))?.sinceProcessStartMs;
    process.stderr.write(`[package-operator] start-up to /readyz 200 (packed, node): ${startup} ms from spawn, ${String(inProcess)} ms in-process; RSS after 3 s idle ${rssMiB(op)} MiB\n`);
    expect(await terminate(op)).toBe('0');
    const log = readFileSync(op.server.log, 'utf8');
    expect(log).toContain('"msg":"released the lease"');
    expect(log).toMatch(/"msg":"manager stopped","drained":true,"released":true/);
    expect((await getJson<KubeObject & { spec: { holderIdentity?: string } }>('lease', LEASE, { namespace: NS })).spec.holderIdentity).toBeUndefined();
  });

  it('start-up to ready, three runs', async () => {
    const times: number[] = [];
    for (const n of [1, 2, 3]) {
      const op = await start(`packed-run-${n}`);
      times.push(await waitReady(op));
      expect(await terminate(op)).toBe('0');
    }
    process.stderr.write(`[package-operator] start-up to /readyz 200 (packed, node), three runs: ${times.join(', ')} ms\n`);
    for (const t of times) expect(t).toBeLessThan(30_000);
  });

  it("the construct's command runs from the installed package's root (the image's WORKDIR layout)", async () => {
    const [program, ...args] = OPERATOR_COMMAND;
    expect(program).toBe('node');
    const out = await runOk(process.execPath, [...args, '--help'], { cwd: join(dir, 'node_modules', 'keystone-appcred'), env: nodeEnv({ NODE_ENV: 'production' }) });
    expect(out).toMatch(/^Usage: keystone-appcred operator \[options\]/);
  });
});
