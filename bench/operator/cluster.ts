/**
 * The bench's cluster: Keystone (pinned to a CPU of its own with KAC_BENCH_KEYSTONE_CPU), an API server with etcd,
 * OpenBao and the proxy that records every Keystone call, up on 127.0.0.1; then the CRDs, the namespaces, the
 * ControlPlane (its Keystone through the proxy) and the project.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { startLocalKeystone, type LocalKeystone } from '../../src/testbed/keystone';
import { startKube } from '../../test/support/kube';
import type { KubeObject } from '../../test/support/kubectl';
import { startOpenBao } from '../../test/support/openbao';
import { installCrds } from '../../test/support/operator';
import { startRecordingProxy, type RecordingProxy } from '../../test/support/recording-proxy';
import { synthesizeManifests } from '../../test/support/synth';
import { API, CP_NS, CP_REF, NS, OP_NS, UNRELATED_NS, createAll, ok } from './api';

/** What the operators and the bare script reach: the work dir (logs), Keystone (direct and through the proxy), OpenBao. */
export interface Env {
  readonly work: string;
  readonly keystoneUrl: string;
  readonly adminPassword: string;
  readonly proxy: RecordingProxy;
  readonly bao: { readonly addr: string; readonly token: string };
}

/** The cluster up: what the parts reach, and Keystone's process (its CPU is a figure). */
export interface Cluster {
  readonly env: Env;
  readonly keystone: LocalKeystone;
}

/** What the cluster is started with. */
export interface ClusterOptions {
  /** Keystone's bcrypt cost. */
  readonly bcryptRounds: number;
  /** Keystone's server processes (src/testbed/keystone: one unless a bench of how Keystone shares its workers asks). @default 1 */
  readonly keystoneProcesses?: number;
  /** etcd's quota in bytes (hundreds of MB of unrelated Secrets, tens of thousands of orders). @default the test quota, 1 GiB */
  readonly etcdQuotaBytes?: number;
}

/**
 * Starts the components in `work`, each one's stop pushed on `stops` as it is up, and makes the objects every part
 * needs.
 */
export async function startCluster(work: string, options: ClusterOptions, stops: (() => Promise<void>)[]): Promise<Cluster> {
  const { bcryptRounds } = options;
  const started = Date.now();
  // KAC_BENCH_KEYSTONE_CPU=0: Keystone alone on CPU 0, everything else (this script, the API server, etcd, OpenBao,
  // the operator) on the other CPUs, so that neither arm of a comparison takes Keystone's core from it.
  const keystoneCpu = process.env.KAC_BENCH_KEYSTONE_CPU;
  const others = keystoneCpu === undefined ? undefined : Array.from({ length: availableParallelism() }, (_, i) => i).filter((i) => String(i) !== keystoneCpu).join(',');
  if (others) execFileSync('taskset', ['-a', '-p', '-c', others, String(process.pid)], { stdio: 'ignore' });
  const keystone = await startLocalKeystone({ dir: join(work, 'keystone'), bcryptRounds, processes: options.keystoneProcesses ?? 1 });
  stops.push(keystone.stop);
  if (keystoneCpu !== undefined) {
    const group = execFileSync('pgrep', ['-g', String(keystone.pid)], { encoding: 'utf8' }).split('\n').filter(Boolean);
    for (const pid of group) execFileSync('taskset', ['-a', '-p', '-c', keystoneCpu, pid], { stdio: 'ignore' });
    process.stderr.write(`[bench] Keystone (${group.length} processes) on CPU ${keystoneCpu}; everything else on ${others}\n`);
  }
  if (options.etcdQuotaBytes !== undefined) process.env.KAC_KUBE_ETCD_QUOTA_BYTES ??= String(options.etcdQuotaBytes);
  const kube = await startKube(join(work, 'kube'));
  stops.push(kube.stop);
  Object.assign(process.env, kube.env);
  const bao = await startOpenBao(join(work, 'openbao'));
  stops.push(bao.stop);
  const proxy = await startRecordingProxy(keystone.authUrl);
  // Not awaited: `close` waits for keep-alive connections, which a process being stopped may still hold.
  stops.push(async () => void proxy.close());
  const env: Env = { work, keystoneUrl: keystone.authUrl, adminPassword: keystone.adminPassword, proxy, bao: { addr: bao.env.KAC_BAO_ADDR, token: bao.env.KAC_BAO_TOKEN } };
  mkdirSync(join(work, 'synth'));
  await installCrds(synthesizeManifests(join(work, 'synth')));
  for (const ns of [CP_NS, NS, OP_NS, UNRELATED_NS]) await ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const clouds = `clouds:\n  admin:\n    auth:\n      auth_url: ${proxy.url}\n      username: admin\n      password: "${keystone.adminPassword}"\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n`;
  await createAll([
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keystone-admin', namespace: CP_NS }, stringData: { 'clouds.yaml': clouds } } as KubeObject,
    { apiVersion: API, kind: 'ControlPlane', metadata: { name: 'cp', namespace: CP_NS }, spec: { services: { keystone: { external: { authURL: proxy.url } } }, adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } }, namespaceAssignments: [{ namespace: NS, allowedRoles: ['member'] }] } },
    { apiVersion: API, kind: 'KeystoneProject', metadata: { name: 'proj', namespace: NS, labels: { 'bench/plane': 'yes' } }, spec: { controlPlaneRef: CP_REF, projectName: 'bench-proj' } },
  ]);
  process.stderr.write(`[bench] components up in ${Date.now() - started} ms\n`);
  return { env, keystone };
}
