/**
 * The workload controllers of kube-controller-manager (deployment, replicaset, statefulset, daemonset) for the one test
 * file that needs them (test/e2e/consumer-handoff.test.ts), as a second kube-controller-manager process against the
 * shared API server, started and stopped by that file while it holds the cluster lock.
 *
 * Why not in the shared kube-controller-manager (test/support/kube.ts): there they would act on every Deployment any
 * e2e file applies (the operator's own, from the synthesized manifests, the cdk8s package test, the Pulumi deployment),
 * creating ReplicaSets and Pods that nothing schedules or runs (no scheduler, no kubelet) in every run. Started here,
 * they run only while the handoff file holds the cluster, which every file that applies workloads takes too, so no other
 * file sees them. There is no kubelet either way: the handoff test reads ReplicaSets, ControllerRevisions and the pod
 * template, never a Pod.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { resolveBinaries } from './binaries';
import { httpsStatus } from './kube';
import { freePort, startServer, waitUntil, type Server } from './proc';

/** The controllers it runs. */
export const WORKLOAD_CONTROLLERS = ['deployment', 'replicaset', 'statefulset', 'daemonset'] as const;

/** Starts the workload controllers against the test API server (KAC_KUBECONFIG); resolves once /healthz answers. */
export async function startWorkloadControllers(workDir: string): Promise<Server> {
  const kubeconfig = process.env.KAC_KUBECONFIG;
  if (!kubeconfig) throw new Error('the workload controllers need the test API server (@needs kube)');
  mkdirSync(workDir, { recursive: true });
  const bin = resolveBinaries(['kube-controller-manager'])['kube-controller-manager'].path;
  const port = await freePort();
  const server = startServer(
    'kube-controller-manager (workload controllers)',
    bin,
    [
      `--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1', `--secure-port=${port}`, `--cert-dir=${join(workDir, 'certs')}`,
      '--leader-elect=false', `--controllers=${WORKLOAD_CONTROLLERS.join(',')}`, '--use-service-account-credentials=false', '--v=1',
    ],
    join(workDir, 'kube-controller-manager.log'),
  );
  try {
    await waitUntil(server, 'healthz', async () => (await httpsStatus(`https://127.0.0.1:${port}/healthz`, { insecure: true })) === 200, 60_000);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}
