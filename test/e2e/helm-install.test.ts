// @needs helm kube keystone openbao
/**
 * The Helm chart (deploy/charts/keystone-appcred) installed, upgraded and uninstalled with the real helm v4 on the
 * test API server, as a platform team runs it:
 *
 * 1. `helm install --create-namespace` with OpenBao's address and token auth as values: the CRDs come from the chart's
 *    crds/, the release's objects are the chart's, NOTES.txt says how to check the install.
 * 2. The operator the release's Deployment describes, run from what the API server holds after the install: the
 *    container's command and environment (the downward API, the memory limit, the OpenBao token from its Secret), as
 *    the chart's ServiceAccount (a token of it: the chart's RBAC, nothing else), as a child process. The API servers
 *    of these tests have no kubelet; that the image runs as a Deployment describes it is test/e2e/image-operator.test.ts,
 *    so here the Deployment's own command and environment are what is proven (the health and metrics ports alone are
 *    the host's free ones).
 * 3. The reference's story, step 1: the orders (ControlPlane, project, user, role assignment, credential) reach
 *    generation 1; the delivered credential authenticates. A consumer probe re-reads the delivered Secret and
 *    authenticates with it every second from then on. One order is then rotated by hand, its generation 1 in the
 *    grace period: orders in flight.
 * 4. `helm upgrade` to a changed build (another image tag, another log level): the new Deployment's operator started
 *    beside the old one (a RollingUpdate's surge), the old one stopped (SIGTERM, the Lease handed over). Asserted: the
 *    CRDs untouched; nothing minted, deleted or changed in Keystone, in the orders' statuses or in the delivered
 *    Secrets; no Keystone call and no API write by the new operator; the probe never failed.
 * 5. `helm uninstall`: the release's objects go, its namespace with them; the CRDs and the orders stay (Helm's convention
 *    for crds/, which the chart's NOTES.txt says).
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { OPERATOR_COMMAND } from '../../constructs/operator/props';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures, type Probe } from '../support/credential-fixtures';
import { uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, exists, getJson, kubeconfigFor, kubectl, kubectlOk, type KubeObject } from '../support/kubectl';
import { metricSum, metricsText, releaseLeftovers, serviceAccountKubeconfig, startOperator, waitReady, type OperatorProcess, QUICK_ELECTION } from '../support/operator';

jest.setTimeout(300_000);

const REPO = resolve(__dirname, '..', '..');
const CHART = join(REPO, 'deploy', 'charts', 'keystone-appcred');
const RELEASE = 'kac-helm';
/** The release's namespace and the operator's; `name` too, so the cluster-scoped objects are this file's own. */
const SYSTEM = 'kac-helm-system';
const NAME = 'kac-helm';
const NS = 'kac-helm';
const CP_NS = 'kac-helm-cp';
const USER = uniqueName('helm');
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: USER, projectName: uniqueName('helm') });
const [projectOrder, userOrder, roleAssignment] = fx.identityOrders();

let unlock: (() => void) | undefined;
let workDir = '';
const operators: OperatorProcess[] = [];
let consumer: Probe | undefined;
const timeline: string[] = [];

interface Container {
  command: string[];
  image: string;
  env: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string }; resourceFieldRef?: { resource: string }; secretKeyRef?: { name: string; key: string } } }[];
  resources: { limits: { memory: string } };
}
type Deployment = KubeObject & { spec: { template: { spec: { serviceAccountName: string; containers: Container[] } } } };

function helm(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const kubeconfig = kubeconfigFor();
  const result = spawnSync(process.env.KAC_HELM as string, [...args, '--kubeconfig', kubeconfig], { encoding: 'utf8', timeout: 180_000, env: { ...process.env, HELM_CACHE_HOME: join(workDir, 'helm', 'cache'), HELM_CONFIG_HOME: join(workDir, 'helm', 'config'), HELM_DATA_HOME: join(workDir, 'helm', 'data') } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
function helmOk(args: readonly string[]): string {
  const result = helm(args);
  if (result.status !== 0) throw new Error(`helm ${args.join(' ')} failed (${String(result.status)}): ${result.stderr}${result.stdout}`);
  return result.stdout;
}

/** Bytes of a Kubernetes memory quantity (the forms the chart's values take). */
function bytes(quantity: string): number {
  const m = /^([0-9.]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity);
  if (!m) throw new Error(`not a memory quantity: ${quantity}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] ?? ''] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

/** The environment a kubelet would give the Deployment's container in a pod named `pod`. */
async function containerEnv(deployment: Deployment, pod: string): Promise<Record<string, string>> {
  const container = deployment.spec.template.spec.containers[0];
  const env: Record<string, string> = {};
  for (const e of container.env) {
    const from = e.valueFrom;
    if (e.value !== undefined) env[e.name] = e.value;
    else if (from?.fieldRef) env[e.name] = from.fieldRef.fieldPath === 'metadata.namespace' ? String(deployment.metadata.namespace) : pod;
    else if (from?.resourceFieldRef) env[e.name] = String(bytes(container.resources.limits.memory));
    else if (from?.secretKeyRef) {
      const secret = await getJson<KubeObject & { data: Record<string, string> }>('secret', from.secretKeyRef.name, { namespace: String(deployment.metadata.namespace) });
      env[e.name] = Buffer.from(secret.data[from.secretKeyRef.key], 'base64').toString();
    } else throw new Error(`the container's env ${e.name} has a source this test does not provide`);
  }
  return env;
}

/** Starts the operator the release's Deployment describes now, as its pod `pod` would run. */
async function startFromDeployment(pod: string): Promise<OperatorProcess> {
  const deployment = await getJson<Deployment>('deployment', NAME, { namespace: SYSTEM });
  expect(deployment.spec.template.spec.containers[0].command).toEqual([...OPERATOR_COMMAND]);
  const kubeconfig = await serviceAccountKubeconfig({ namespace: SYSTEM, serviceAccount: deployment.spec.template.spec.serviceAccountName }, join(workDir, `${pod}.kubeconfig`));
  const op = await startOperator({ name: pod, kubeconfig, namespace: SYSTEM, logDir: workDir, args: QUICK_ELECTION, env: await containerEnv(deployment, pod) });
  operators.push(op);
  await waitReady(op);
  return op;
}

/** What an upgrade must not change: the user's credentials in Keystone, the orders' statuses, the delivered Secrets. */
async function snapshot(): Promise<string> {
  const statuses = await Promise.all(['app', 'steady'].map(async (name) => (await fx.order(name)).status));
  const secrets = await Promise.all(['app', 'steady'].map((name) => fx.delivered(name)));
  return JSON.stringify({ keystone: await fx.userCredentials(''), statuses, secrets });
}

beforeAll(async () => {
  unlock = await lockCluster('helm-install.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  // This file's release owns the admission policy while it runs (a template of the chart); the files before it applied
  // theirs with kubectl and apply it again when they run.
  await kubectl(['delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', 'keystoneclusteridentities.c5c3.io', '--ignore-not-found']);
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await consumer?.stop();
  for (const op of operators) await op.server.stop(5_000);
  helm(['uninstall', RELEASE, '--namespace', SYSTEM]);
  await releaseLeftovers([NS, CP_NS]);
  for (const ns of [NS, CP_NS, SYSTEM]) await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);
  process.stderr.write(`[helm-install] ${timeline.join('; ')}\n`);
  unlock?.();
});

describe('the Helm chart on the test API server', () => {
  let leader: OperatorProcess;
  let before = '';

  it('installs: the CRDs from crds/, the release deployed, NOTES.txt says how to check it', async () => {
    const t0 = Date.now();
    const out = helmOk([
      'install', RELEASE, CHART, '--namespace', SYSTEM, '--create-namespace',
      '--set', `name=${NAME}`,
      '--set', `openBao.address=${String(process.env.KAC_BAO_ADDR)}`,
      '--set', 'openBao.auth.method=token',
      '--set', 'openBao.auth.secretName=openbao-token',
    ]);
    timeline.push(`helm install ${Date.now() - t0} ms`);
    expect(out).toContain('STATUS: deployed');
    expect(out).toContain(`kubectl -n ${SYSTEM} rollout status deployment/${NAME}`);
    expect(out).toContain('helm uninstall leaves them, and every order, in place');
    for (const crd of ['keystoneapplicationcredentials.c5c3.io', 'controlplanes.c5c3.io', 'keystoneclusteridentities.c5c3.io']) expect(await exists('crd', crd)).toBe(true);
    const namespace = await getJson<KubeObject & { metadata: { labels: Record<string, string> } }>('namespace', SYSTEM);
    expect(namespace.metadata.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'restricted', 'app.kubernetes.io/managed-by': 'Helm' });
    expect(JSON.parse(helmOk(['status', RELEASE, '--namespace', SYSTEM, '-o', 'json'])) as { info: { status: string } }).toMatchObject({ info: { status: 'deployed' } });
    // The OpenBao token the values name, as a platform team creates it beside the release.
    await kubectlOk(['create', 'secret', 'generic', 'openbao-token', '-n', SYSTEM, `--from-literal=token=${String(process.env.KAC_BAO_TOKEN)}`]);
  });

  it("runs the Deployment's operator as the chart's ServiceAccount; the reference's story step 1 passes on it", async () => {
    leader = await startFromDeployment(`${NAME}-a`);
    for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
    await applyOk([fx.adminSecret(), fx.controlPlane({ assigned: true })], { fieldManager: 'kac-test' });
    await applyOk([projectOrder, userOrder, roleAssignment, fx.credentialOrder('app', { interval: '720h', gracePeriod: '30m' }), fx.credentialOrder('steady', { interval: '720h', gracePeriod: '1h' })], { fieldManager: 'kac-test' });
    for (const name of ['app', 'steady']) {
      const o = await eventually(async () => {
        const o = await fx.order(name);
        return o.status?.credentialGeneration === 1 && condition(o, 'Ready')?.status === 'True' && o;
      }, 120_000);
      const g1 = (await fx.delivered(name)) as Record<string, string>;
      expect(g1.application_credential_id).toBe(o.status?.credentialID);
      expect(await fx.authenticates(g1.application_credential_id, g1.application_credential_secret)).toBe(true);
    }
    consumer = fx.probe('app');
    // In flight at the upgrade: `app` rotated by hand, its generation 1 in a 30 minute grace period.
    const g1 = (await fx.delivered('app')) as Record<string, string>;
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 2 } });
    const rotated = await eventually(async () => {
      const o = await fx.order('app');
      return o.status?.credentialGeneration === 2 && o.status.previousCredentialID === g1.application_credential_id && o;
    }, 60_000);
    expect(rotated.status?.previousCredentialDeleteAt).toBeDefined();
  });

  it('upgrades to a changed build with orders in flight: nothing minted, deleted or changed; no call, no write; the probe never fails', async () => {
    const crdVersion = async () => (await getJson<KubeObject>('crd', 'keystoneapplicationcredentials.c5c3.io')).metadata.resourceVersion;
    const crdBefore = await crdVersion();
    before = await snapshot();
    const t0 = Date.now();
    helmOk(['upgrade', RELEASE, CHART, '--namespace', SYSTEM, '--reuse-values', '--set', 'tag=0.0.0-changed', '--set', 'logLevel=debug']);
    timeline.push(`helm upgrade ${Date.now() - t0} ms`);
    const deployment = await getJson<Deployment>('deployment', NAME, { namespace: SYSTEM });
    expect(deployment.spec.template.spec.containers[0].image).toBe('keystone-appcred:0.0.0-changed');
    expect(deployment.spec.template.spec.containers[0].env).toContainEqual({ name: 'KAC_LOG_LEVEL', value: 'debug' });
    expect(await crdVersion()).toBe(crdBefore);
    // The rollout: the new pod's operator beside the old one, then the old one stopped; the new one takes the Lease.
    const next = await startFromDeployment(`${NAME}-b`);
    const t1 = Date.now();
    await leader.server.stop(10_000);
    await eventually(async () => (await metricsText(next)).includes('keystone_appcred_leader 1') || undefined, 60_000, 250);
    timeline.push(`Lease taken over ${Date.now() - t1} ms after the old operator's SIGTERM`);
    // Half a minute of the new release: its first pass over every order, and the probe throughout.
    await new Promise((r) => setTimeout(r, 30_000));
    const metrics = await metricsText(next);
    const calls = metricSum(metrics, 'keystone_appcred_keystone_requests_total');
    const writes = metricSum(metrics, 'keystone_appcred_api_writes_total');
    timeline.push(`after the upgrade: ${calls} Keystone calls, ${writes} API writes, probe ${consumer?.attempts} attempts ${consumer?.failures.length} failures`);
    expect(await snapshot()).toBe(before);
    expect({ calls, writes }).toEqual({ calls: 0, writes: 0 });
    expect(metricSum(metrics, 'keystone_appcred_reconcile_total')).toBeGreaterThan(0);
    expect(consumer?.failures).toEqual([]);
  });

  it('uninstalls: the release goes with its namespace, the CRDs and the orders stay', async () => {
    for (const op of operators) await op.server.stop(10_000);
    const out = helmOk(['uninstall', RELEASE, '--namespace', SYSTEM]);
    expect(out).toContain(`release "${RELEASE}" uninstalled`);
    expect(await exists('clusterrole', NAME)).toBe(false);
    for (const crd of ['keystoneapplicationcredentials.c5c3.io', 'controlplanes.c5c3.io']) expect(await exists('crd', crd)).toBe(true);
    expect(await exists('keystoneapplicationcredential', 'app', { namespace: NS })).toBe(true);
    expect(helm(['status', RELEASE, '--namespace', SYSTEM]).status).not.toBe(0);
    // The namespace the chart created was the release's: it goes too (docs/install/helm.md says what that takes along).
    await eventually(async () => {
      const ns = await kubectl(['get', 'namespace', SYSTEM, '-o', 'jsonpath={.status.phase}']);
      return (ns.code !== 0 || ns.stdout === 'Terminating') && true;
    }, 30_000);
  });
});
