/**
 * Starts a real Kubernetes control plane for the tests: etcd and kube-apiserver (and, unless KAC_KUBE_CONTROLLER_MANAGER=0,
 * kube-controller-manager with the garbage-collector, namespace and service-account controllers) on 127.0.0.1 with free
 * ports, a temp data dir, openssl-generated certificates and RBAC authorization. It writes two kubeconfigs: an admin
 * (client certificate in group system:masters) and a limited identity (user `kac-limited`, bound to nothing).
 *
 * Variables it exports (see docs/testing.md): KAC_KUBECONFIG, KAC_KUBECONFIG_LIMITED, KAC_KUBECTL, KAC_KUBE_SERVER,
 * KAC_KUBE_CA_FILE, KAC_KUBE_ADMIN_CERT_FILE, KAC_KUBE_ADMIN_KEY_FILE, KAC_KUBE_LIMITED_CERT_FILE,
 * KAC_KUBE_LIMITED_KEY_FILE, KAC_KUBE_LIMITED_USER, KAC_KUBE_VERSION, KAC_KUBE_GC ('1' when the controller manager runs),
 * KAC_KUBE_AUDIT_LOG (the audit log of service accounts' requests on Secrets), KAC_KUBE_DIR (its work dir: logs, pki/).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { PINNED_VERSIONS, resolveBinaries, type BinaryName } from './binaries';
import type { Started, Starter } from './starter';
import { freePort, progress, type Server, startServer, waitUntil } from './proc';

export const LIMITED_USER = 'kac-limited';
export const ADMIN_USER = 'kac-admin';

export interface Pki {
  readonly dir: string;
  readonly ca: string;
  readonly caKey: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly adminCert: string;
  readonly adminKey: string;
  readonly limitedCert: string;
  readonly limitedKey: string;
  readonly saKey: string;
  readonly saPub: string;
}

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
}

function ecKey(dir: string, name: string): string {
  const path = join(dir, `${name}.key`);
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path], dir);
  return path;
}

/** Issues `name`.crt for `subject`, signed by the CA, with the X.509 extensions in `extensions`. */
function issue(dir: string, name: string, subject: string, extensions: string): { cert: string; key: string } {
  const key = ecKey(dir, name);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  const cert = join(dir, `${name}.crt`);
  writeFileSync(ext, extensions);
  openssl(['req', '-new', '-key', key, '-subj', subject, '-out', csr], dir);
  openssl(
    ['x509', '-req', '-in', csr, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', `0x${Date.now().toString(16)}${name.length}`,
      '-days', '3650', '-sha256', '-extfile', ext, '-out', cert],
    dir,
  );
  return { cert, key };
}

function makePki(dir: string): Pki {
  mkdirSync(dir, { recursive: true });
  const caKey = ecKey(dir, 'ca');
  const ca = join(dir, 'ca.crt');
  openssl(
    ['req', '-x509', '-new', '-key', caKey, '-subj', '/CN=kac-test-ca', '-days', '3650', '-sha256',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature', '-out', ca],
    dir,
  );
  const server = issue(
    dir,
    'apiserver',
    '/CN=kube-apiserver',
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local',
      '',
    ].join('\n'),
  );
  const clientExt = ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature,keyEncipherment', 'extendedKeyUsage=clientAuth', ''].join('\n');
  const admin = issue(dir, 'admin', `/O=system:masters/CN=${ADMIN_USER}`, clientExt);
  const limited = issue(dir, 'limited', `/CN=${LIMITED_USER}`, clientExt);
  const saKey = ecKey(dir, 'sa');
  const saPub = join(dir, 'sa.pub');
  openssl(['pkey', '-in', saKey, '-pubout', '-out', saPub], dir);
  return {
    dir, ca, caKey, serverCert: server.cert, serverKey: server.key, adminCert: admin.cert, adminKey: admin.key,
    limitedCert: limited.cert, limitedKey: limited.key, saKey, saPub,
  };
}

const b64 = (file: string): string => readFileSync(file).toString('base64');

/** A kubeconfig (JSON, which kubectl and client libraries read as YAML) with the credentials embedded. */
function writeKubeconfig(path: string, server: string, ca: string, user: string, cert: string, key: string): void {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kac-test', cluster: { server, 'certificate-authority-data': b64(ca) } }],
    users: [{ name: user, user: { 'client-certificate-data': b64(cert), 'client-key-data': b64(key) } }],
    contexts: [{ name: `${user}@kac-test`, context: { cluster: 'kac-test', user, namespace: 'default' } }],
    'current-context': `${user}@kac-test`,
    preferences: {},
  };
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
}

export interface HttpsProbe {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly insecure?: boolean;
}

/** The HTTP status of a GET over TLS (`insecure`: without verifying the server). */
export function httpsStatus(url: string, tls: HttpsProbe): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        ca: tls.ca ? readFileSync(tls.ca) : undefined,
        cert: tls.cert ? readFileSync(tls.cert) : undefined,
        key: tls.key ? readFileSync(tls.key) : undefined,
        rejectUnauthorized: !tls.insecure,
        timeout: 5_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return res.ok;
}

function withController(): boolean {
  return process.env.KAC_KUBE_CONTROLLER_MANAGER !== '0';
}

/** A Kubernetes control plane of the test run: etcd, kube-apiserver and (optionally) kube-controller-manager. */
export interface KubeCluster {
  /** `https://127.0.0.1:<port>`. */
  readonly server: string;
  readonly pki: Pki;
  /** The admin kubeconfig (group system:masters). */
  readonly kubeconfig: string;
  /** The kubeconfig of the limited identity (bound to nothing). */
  readonly kubeconfigLimited: string;
  readonly kubectl: string;
  /** Whether kube-controller-manager runs. */
  readonly controllerManager: boolean;
  /** The audit log of service accounts' requests on Secrets (JSON lines, metadata level). */
  readonly auditLog: string;
  readonly logs: readonly string[];
  /** Stops kube-apiserver (SIGTERM; etcd and the controller manager keep running). */
  stopApiServer(): Promise<void>;
  /** Starts kube-apiserver again as it was (same port, certificates and etcd) and waits until it is ready. */
  startApiServer(): Promise<void>;
  /** Stops everything; safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts one control plane in `workDir`: its own certificates, etcd and kube-apiserver on free ports, and, when
 * `controllerManager`, kube-controller-manager with the garbage-collector, namespace and service-account controllers.
 * `name` prefixes the progress lines (`kube`, `target-kube`).
 */
export async function startKubeCluster(workDir: string, options: { readonly name: string; readonly controllerManager: boolean }): Promise<KubeCluster> {
  mkdirSync(workDir, { recursive: true });
  const names: BinaryName[] = ['etcd', 'kube-apiserver', 'kubectl'];
  if (options.controllerManager) names.push('kube-controller-manager');
  const bins = resolveBinaries(names);
  for (const n of names) progress(`${options.name}: ${n} from ${bins[n].source}: ${bins[n].path}`);

  const pki = makePki(join(workDir, 'pki'));
  const servers: Server[] = [];
  const logs: string[] = [];
  let apiserver: Server | undefined;
  let stopped = false;
  const rss: string[] = [];
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const s of [...servers].reverse()) {
      await s.stop();
      rss.push(`${s.name}=${Math.round(s.peakRssKiB() / 1024)}MiB`);
    }
    progress(`${options.name} stopped; peak RSS ${rss.join(' ')}`);
    writeFileSync(join(workDir, 'peak-rss.txt'), `${rss.join('\n')}\n`);
  };

  try {
    // etcd
    const etcdClient = await freePort();
    const etcdPeer = await freePort();
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const etcdLog = join(workDir, 'etcd.log');
    logs.push(etcdLog);
    const etcd = startServer(
      'etcd',
      bins.etcd.path,
      [
        '--name=kac', `--data-dir=${join(workDir, 'etcd-data')}`,
        `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`, `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-cluster=kac=http://127.0.0.1:${etcdPeer}`, '--initial-cluster-state=new',
        '--unsafe-no-fsync=true', `--quota-backend-bytes=${process.env.KAC_KUBE_ETCD_QUOTA_BYTES ?? '1073741824'}`, '--log-level=warn',
      ],
      etcdLog,
    );
    servers.push(etcd);
    await waitUntil(etcd, 'health', () => httpOk(`${etcdUrl}/health`), 60_000);

    // kube-apiserver
    const port = await freePort();
    const server = `https://127.0.0.1:${port}`;
    const apiLog = join(workDir, 'kube-apiserver.log');
    logs.push(apiLog);
    // The audit log of what service accounts ask of Secrets (metadata only: who, verb, namespace, code; never a body),
    // so a test can count an operator's requests, the refused ones included, which the API server's metrics do not.
    const auditPolicy = join(workDir, 'audit-policy.yaml');
    const auditLog = join(workDir, 'audit-secrets.log');
    writeFileSync(
      auditPolicy,
      [
        'apiVersion: audit.k8s.io/v1',
        'kind: Policy',
        'omitStages: [RequestReceived]',
        'rules:',
        '  - level: Metadata',
        '    userGroups: ["system:serviceaccounts"]',
        '    resources: [{ group: "", resources: ["secrets"] }]',
        '  - level: None',
        '',
      ].join('\n'),
    );
    const apiArgs = [
      `--etcd-servers=${etcdUrl}`, '--etcd-prefix=/kac-registry',
      '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1', `--secure-port=${port}`,
      `--cert-dir=${join(workDir, 'apiserver-certs')}`,
      `--tls-cert-file=${pki.serverCert}`, `--tls-private-key-file=${pki.serverKey}`,
      `--client-ca-file=${pki.ca}`,
      '--authorization-mode=RBAC',
      `--service-account-key-file=${pki.saPub}`, `--service-account-signing-key-file=${pki.saKey}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--service-cluster-ip-range=10.0.0.0/24', '--allow-privileged=true',
      '--endpoint-reconciler-type=none', '--v=1',
      `--audit-policy-file=${auditPolicy}`, `--audit-log-path=${auditLog}`, '--audit-log-maxsize=200', '--audit-log-maxbackup=1',
    ];
    const admin = { ca: pki.ca, cert: pki.adminCert, key: pki.adminKey };
    const startApiServer = async (): Promise<void> => {
      if (apiserver && apiserver.exited() === undefined) return;
      const previous = apiserver;
      apiserver = startServer('kube-apiserver', bins['kube-apiserver'].path, apiArgs, apiLog);
      // Stopped before the controller manager, started after etcd: keep the stop order of a cluster.
      if (previous) servers.splice(servers.indexOf(previous), 1, apiserver);
      else servers.push(apiserver);
      await waitUntil(apiserver, 'readyz', async () => (await httpsStatus(`${server}/readyz`, admin)) === 200, 120_000);
    };
    await startApiServer();
    await waitUntil(apiserver as Server, 'the default namespace', async () => (await httpsStatus(`${server}/api/v1/namespaces/default`, admin)) === 200, 60_000);

    const kubeconfig = join(workDir, 'admin.kubeconfig');
    const kubeconfigLimited = join(workDir, 'limited.kubeconfig');
    writeKubeconfig(kubeconfig, server, pki.ca, ADMIN_USER, pki.adminCert, pki.adminKey);
    writeKubeconfig(kubeconfigLimited, server, pki.ca, LIMITED_USER, pki.limitedCert, pki.limitedKey);

    // kube-controller-manager: owner-reference garbage collection, namespace deletion, service accounts.
    if (options.controllerManager) {
      const kcmPort = await freePort();
      const kcmLog = join(workDir, 'kube-controller-manager.log');
      logs.push(kcmLog);
      const kcm = startServer(
        'kube-controller-manager',
        bins['kube-controller-manager'].path,
        [
          `--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`,
          '--bind-address=127.0.0.1', `--secure-port=${kcmPort}`, `--cert-dir=${join(workDir, 'kcm-certs')}`,
          '--leader-elect=false', '--controllers=garbagecollector,namespace,serviceaccount,serviceaccount-token',
          `--service-account-private-key-file=${pki.saKey}`, `--root-ca-file=${pki.ca}`,
          '--use-service-account-credentials=false', '--v=1',
        ],
        kcmLog,
      );
      servers.push(kcm);
      await waitUntil(kcm, 'healthz', async () => (await httpsStatus(`https://127.0.0.1:${kcmPort}/healthz`, { insecure: true })) === 200, 60_000);
    }

    return {
      server,
      pki,
      kubeconfig,
      kubeconfigLimited,
      kubectl: bins.kubectl.path,
      controllerManager: options.controllerManager,
      auditLog,
      logs,
      stopApiServer: async () => {
        await apiserver?.stop();
      },
      startApiServer,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export const startKube: Starter = async (workDir: string): Promise<Started> => {
  const cluster = await startKubeCluster(workDir, { name: 'kube', controllerManager: withController() });
  const { pki } = cluster;
  return {
    env: {
      KAC_KUBECONFIG: cluster.kubeconfig,
      KAC_KUBECONFIG_LIMITED: cluster.kubeconfigLimited,
      KAC_KUBECTL: cluster.kubectl,
      KAC_KUBE_SERVER: cluster.server,
      KAC_KUBE_CA_FILE: pki.ca,
      KAC_KUBE_ADMIN_CERT_FILE: pki.adminCert,
      KAC_KUBE_ADMIN_KEY_FILE: pki.adminKey,
      KAC_KUBE_LIMITED_CERT_FILE: pki.limitedCert,
      KAC_KUBE_LIMITED_KEY_FILE: pki.limitedKey,
      KAC_KUBE_LIMITED_USER: LIMITED_USER,
      KAC_KUBE_VERSION: PINNED_VERSIONS.kubernetes,
      KAC_KUBE_GC: cluster.controllerManager ? '1' : '0',
      KAC_KUBE_AUDIT_LOG: cluster.auditLog,
      KAC_KUBE_DIR: workDir,
    },
    logs: cluster.logs,
    stop: cluster.stop,
  };
};
