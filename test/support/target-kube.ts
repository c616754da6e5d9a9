/**
 * A second Kubernetes control plane for the run: a registered target cluster (spec: "the management cluster or a
 * registered target cluster"). Its own certificates, etcd, kube-apiserver and kube-controller-manager (garbage collection
 * of the delivered Secrets, namespace deletion, service-account tokens), from the same cached binaries as the first
 * (test/support/kube.ts `startKubeCluster`), on other free ports.
 *
 * A test stops and starts its API server (an outage of a target cluster) through a small control endpoint this process
 * serves on 127.0.0.1: the servers belong to the Jest parent process, which stops them at the end of the run whatever a
 * test did. `POST /apiserver/stop` and `POST /apiserver/start` answer once the API server is gone or ready again.
 *
 * Variables it exports (see docs/testing.md): KAC_TARGET_KUBECONFIG, KAC_TARGET_KUBECONFIG_LIMITED, KAC_TARGET_KUBE_SERVER,
 * KAC_TARGET_KUBE_CA_FILE, KAC_TARGET_KUBE_ADMIN_CERT_FILE, KAC_TARGET_KUBE_ADMIN_KEY_FILE, KAC_TARGET_KUBE_CONTROL,
 * KAC_TARGET_KUBE_GC.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { Started, Starter } from './starter';
import { startKubeCluster } from './kube';
import { freePort, progress } from './proc';

export const startTargetKube: Starter = async (workDir: string): Promise<Started> => {
  const controllerManager = process.env.KAC_KUBE_CONTROLLER_MANAGER !== '0';
  const cluster = await startKubeCluster(workDir, { name: 'target-kube', controllerManager });
  let control: HttpServer | undefined;
  try {
    // One request at a time: a stop and a start that overlap would race for the port.
    let busy: Promise<void> = Promise.resolve();
    control = createServer((req, res) => {
      const action = req.method === 'POST' ? { '/apiserver/stop': cluster.stopApiServer, '/apiserver/start': cluster.startApiServer }[req.url ?? ''] : undefined;
      if (!action) {
        res.writeHead(404).end('POST /apiserver/stop or /apiserver/start\n');
        return;
      }
      busy = busy.then(async () => {
        const t0 = Date.now();
        try {
          await action();
          progress(`target-kube: ${req.url} done in ${Date.now() - t0} ms`);
          res.writeHead(200).end('done\n');
        } catch (error) {
          res.writeHead(500).end(`${error instanceof Error ? error.message : String(error)}\n`);
        }
      });
    });
    const port = await freePort();
    await new Promise<void>((resolve, reject) => {
      control?.once('error', reject);
      control?.listen(port, '127.0.0.1', resolve);
    });
    const server = control;
    const { pki } = cluster;
    return {
      env: {
        KAC_TARGET_KUBECONFIG: cluster.kubeconfig,
        KAC_TARGET_KUBECONFIG_LIMITED: cluster.kubeconfigLimited,
        KAC_TARGET_KUBE_SERVER: cluster.server,
        KAC_TARGET_KUBE_CA_FILE: pki.ca,
        KAC_TARGET_KUBE_ADMIN_CERT_FILE: pki.adminCert,
        KAC_TARGET_KUBE_ADMIN_KEY_FILE: pki.adminKey,
        KAC_TARGET_KUBE_CONTROL: `http://127.0.0.1:${port}`,
        KAC_TARGET_KUBE_GC: controllerManager ? '1' : '0',
        KAC_TARGET_KUBE_AUDIT_LOG: cluster.auditLog,
        KAC_KUBECTL: cluster.kubectl,
      },
      logs: cluster.logs,
      stop: async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await cluster.stop();
      },
    };
  } catch (error) {
    control?.close();
    await cluster.stop();
    throw error;
  }
};

/** Stops or starts the target cluster's API server (from a test worker, through the control endpoint of the run). */
export async function targetApiServer(action: 'stop' | 'start'): Promise<void> {
  const control = process.env.KAC_TARGET_KUBE_CONTROL;
  if (!control) throw new Error('KAC_TARGET_KUBE_CONTROL is not set: declare `@needs target-kube` in the test file');
  const res = await fetch(`${control}/apiserver/${action}`, { method: 'POST', signal: AbortSignal.timeout(180_000) });
  if (!res.ok) throw new Error(`the target API server did not ${action}: ${res.status} ${await res.text()}`);
}
