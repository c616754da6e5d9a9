// @needs kube target-kube keystone openbao
/**
 * Orders on a registered target cluster (spec: "the management cluster or a registered target cluster"), with two real
 * API servers (the management cluster and the target cluster `edge-1`, each its own etcd and kube-apiserver), the real
 * Keystone and OpenBao, and the operator as a child process under the construct's RBAC on the management cluster and
 * under `manifests --target-cluster`'s ClusterRole on the target cluster (its identity there is a service account whose
 * token kubeconfig registers the cluster):
 * register (a labelled Secret elsewhere or an unlabelled one registers nothing; a changed kubeconfig reconnects); the
 * four kinds on the target cluster reach Ready; the credential delivered there authenticates with
 * `openstack token issue` and its `clouds.yaml` carries the public endpoint; the children are on the management cluster
 * with the cluster label; the scheduled rotation with a consumer probe that never fails; consent removed → frozen; no
 * public endpoint → KeystoneNotPublished; the target API server stopped and started → the management cluster's orders
 * carry on, the target's resume; deregister → the children stay; a 64-character cluster name → ClusterNameTooLong;
 * register again → resumed with nothing minted; a restart of the operator: every order of both clusters settled by the
 * cache (no Keystone call, no write to an order or a Secret: Keystone is reached through a recording proxy); teardown;
 * no secret in any log, Event or status.
 *
 * Both clusters grant Secrets in the namespaced mode (issue 34): no rule on Secrets in either ClusterRole; on the
 * management cluster the Roles the constructs synthesize from the ControlPlane declared in the same app, on the target
 * cluster those `manifests --target-cluster --secret-namespaces` prints for the namespace assigned there; the operator
 * runs with `--secret-access namespaced`.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parse } from 'yaml';
import { childPrefix } from '../../src/api';
import { passwordSecretName } from '../../src/plane/naming';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures, type Order } from '../support/credential-fixtures';
import { adminSession, uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, getJson, kubeconfigFor, kubectl, kubectlOk, type KubeObject } from '../support/kubectl';
import { run } from '../support/package';
import { MIN_SECRET_LENGTH, scanForSecrets } from '../support/secret-scan';
import { declareControlPlane, installCrds, metricSum, metricsText, namespacedOperatorRbac, operatorKubeconfig, operatorLog, registrationSecret, releaseLeftovers, removeOperatorRbac, startOperator, targetClusterKubeconfig, waitReady, type OperatorProcess, QUICK_ELECTION, openBaoTokenEnv } from '../support/operator';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';
import { synthesizeManifests } from '../support/synth';
import { targetApiServer } from '../support/target-kube';
import { Projects } from '../../src/keystone';

jest.setTimeout(300_000);

const EDGE = 'edge-1';
const LONG = `edge-${'x'.repeat(59)}`; // 64 characters
const NS = 'kac-mc';
const CP_NS = 'kac-mc-cp';
const IDENTITY = { namespace: 'kac-mc-operator', binding: 'kac-mc-operator' };
/** The orders on the target cluster, and orders of the same namespace and names on the management cluster. */
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: uniqueName('edge'), projectName: uniqueName('edge'), orderCluster: { name: EDGE, as: 'target' } });
const mgmt = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: uniqueName('mgmt'), projectName: uniqueName('mgmt') });
const env = fx.env;
/** The auth URL documents for orders on other clusters carry: the same Keystone under another name, so the tests can tell. */
const PUBLIC = env.authUrl.replace('//127.0.0.1:', '//localhost:');
/** The operator reaches Keystone through a recording proxy (the ControlPlane's authURL and the admin clouds.yaml), so the test counts its calls. */
let proxy: RecordingProxy;
const controlPlane = (spec: { assigned?: boolean } = {}) => fx.controlPlane({ ...spec, authUrl: proxy.url, publicEndpoint: PUBLIC, assignments: [{ namespace: NS }] });
const adminSecret = () => {
  const secret = fx.adminSecret() as KubeObject & { stringData: Record<string, string> };
  return { ...secret, stringData: { 'clouds.yaml': secret.stringData['clouds.yaml'].replace(env.authUrl, proxy.url) } } as KubeObject;
};
const onTarget = { fieldManager: 'kac-test', as: 'target' as const };
const onManagement = { fieldManager: 'kac-test' };

let unlock: (() => void) | undefined;
let operator: OperatorProcess;
/** The log files of every operator process the test started (the secret scan reads them all). */
const logs: string[] = [];
let workDir = '';
let targetKubeconfig = '';
let consumer: ReturnType<typeof fx.probe> | undefined;
/** The operator's per-order series of the orders on `cluster`. */
async function orderSeries(cluster: string): Promise<string[]> {
  return (await metricsText(operator)).split('\n').filter((l) => l.startsWith('keystone_appcred_credential_') && l.includes(`cluster="${cluster}"`));
}

/** The target order `app`'s credentials in Keystone, its parked secrets and delivered credential id before deregistering. */
let beforeDeregistration: { keystone: string[]; parked: Map<number, string>; id?: string } | undefined;

/** `openstack token issue` with a clouds.yaml, in a clean environment. */
function openstackTokenIssue(cloudsYaml: string): Promise<{ project_id: string }> {
  const home = mkdtempSync(join(tmpdir(), 'kac-mc-osc-'));
  const file = join(home, 'clouds.yaml');
  writeFileSync(file, cloudsYaml, { mode: 0o600 });
  return new Promise((resolve, reject) => {
    execFile('/usr/bin/openstack', ['--os-cloud', 'openstack', 'token', 'issue', '-f', 'json'], { env: { PATH: '/usr/bin:/bin', HOME: home, OS_CLIENT_CONFIG_FILE: file }, timeout: 60_000 }, (error, out, err) => {
      rmSync(home, { recursive: true, force: true });
      if (error) reject(new Error(`openstack failed: ${error.message}\n${err}`));
      else resolve(JSON.parse(out) as { project_id: string });
    });
  });
}

/** The operator's gauge of a target cluster's connection: '1', '0', or undefined when there is no series. */
async function connected(cluster: string): Promise<string | undefined> {
  const line = (await metricsText(operator)).split('\n').find((l) => l.startsWith(`keystone_appcred_target_cluster_connected{cluster="${cluster}"}`));
  return line?.split(' ').pop();
}

/** The Events on a registration Secret: `<type> <reason>`. */
async function registrationEvents(name: string): Promise<string[]> {
  const events = await getJson<{ items: { type: string; reason: string; regarding: { kind: string; name: string } }[] }>('events.events.k8s.io', undefined, { namespace: IDENTITY.namespace });
  return events.items.filter((e) => e.regarding.kind === 'Secret' && e.regarding.name === name).map((e) => `${e.type} ${e.reason}`);
}

/** The children (Secrets in the ControlPlane's namespace on the management cluster) of the target cluster's orders. */
async function childrenOf(cluster: string): Promise<string[]> {
  const names = await Promise.all(
    ['keystoneapplicationcredential', 'keystoneuser'].map((kind) => kubectlOk(['get', 'secrets', '-n', CP_NS, '-l', `c5c3.io/${kind}-cluster=${cluster}`, '-o', 'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}'])),
  );
  return names.join('').split('\n').filter(Boolean).sort();
}

/** `keystone-appcred status` from the sources, as a user on the management cluster runs it (admin kubeconfig). */
function status(args: readonly string[]) {
  const repo = join(__dirname, '..', '..');
  return run(process.execPath, ['--import', 'tsx', join(repo, 'src/cli/main.ts'), 'status', '--kubeconfig', kubeconfigFor('admin'), ...args], {
    cwd: repo,
    env: { ...process.env, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '' },
    timeoutMs: 120_000,
  });
}

const ready = (o: Order | undefined, type = 'Ready') => condition(o, type)?.status === 'True';
const launch = async (name: string) => {
  operator = await startOperator({
    name,
    kubeconfig: join(workDir, 'target-cluster.kubeconfig'),
    namespace: IDENTITY.namespace,
    logDir: workDir,
    args: ['--secret-access', 'namespaced', ...QUICK_ELECTION],
    env: openBaoTokenEnv(),
  });
  logs.push(operator.server.log);
  await waitReady(operator);
};

beforeAll(async () => {
  unlock = await lockCluster('target-cluster.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  proxy = await startRecordingProxy(env.authUrl);
  const manifests = await installCrds(synthesizeManifests());
  for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  // The namespaced Secret access on both clusters: the management cluster's Roles from the ControlPlane declared in the
  // app, the target cluster's from `manifests --target-cluster --secret-namespaces` (which creates the namespace first).
  const rbac = namespacedOperatorRbac(IDENTITY, (chart) => declareControlPlane(chart, controlPlane() as Parameters<typeof declareControlPlane>[1]));
  await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'target-cluster.kubeconfig'), { rbac });
  targetKubeconfig = await targetClusterKubeconfig({ namespace: IDENTITY.namespace }, { secretNamespaces: [NS] });
  await applyOk(adminSecret(), { fieldManager: 'kac-test' });
  await applyOk(controlPlane(), { fieldManager: 'kac-test' });
  await launch('mc-a');
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await consumer?.stop();
  await targetApiServer('start').catch(() => undefined); // whatever a failed test left
  await operator?.server.stop(5_000);
  if (process.env.KAC_KEEP_LOGS) for (const log of logs) cpSync(log, join(process.env.KAC_KEEP_LOGS, basename(log)), { force: true });
  await releaseLeftovers([NS, CP_NS]);
  for (const ns of [NS, CP_NS]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
  await kubectl(['delete', 'namespace', IDENTITY.namespace, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  await proxy?.close();
  unlock?.();
}, 120_000);

describe('an order on a registered target cluster', () => {
  let g1: Record<string, string>;

  it('both clusters grant Secrets in the namespaced mode only: in the namespaces that need them, none across the cluster', async () => {
    const can = async (verb: string, where: string[], as: 'admin' | 'target') =>
      (await kubectl(['auth', 'can-i', verb, 'secrets', ...where, `--as=system:serviceaccount:${IDENTITY.namespace}:operator`], { as })).stdout.trim();
    for (const ns of [NS, CP_NS]) expect(`${ns} ${await can('create', ['-n', ns], 'admin')}`).toBe(`${ns} yes`);
    expect(await can('watch', ['-n', NS], 'target')).toBe('yes');
    for (const as of ['admin', 'target'] as const) {
      expect(await can('list', ['--all-namespaces'], as)).toBe('no');
      expect(await can('get', ['-n', 'kube-system'], as)).toBe('no');
    }
    expect(await can('list', ['-n', CP_NS], 'target')).toBe('no');
  });

  it('registers edge-1 from a labelled kubeconfig Secret: connected, and an Event on the Secret', async () => {
    await applyOk(registrationSecret(EDGE, IDENTITY.namespace, targetKubeconfig), onManagement);
    await eventually(async () => (await connected(EDGE)) === '1', 60_000);
    await eventually(async () => (await registrationEvents(EDGE)).includes('Normal ClusterConnected'), 30_000);
    expect(operatorLog(operator).some((l) => l.msg === 'target cluster registered' && l.cluster === EDGE)).toBe(true);
    // A changed kubeconfig (here: its context renamed) reconnects.
    const renamed = JSON.parse(targetKubeconfig) as { contexts: { name: string }[]; 'current-context': string };
    renamed.contexts[0].name = renamed['current-context'] = 'edge-1-renamed';
    await applyOk(registrationSecret(EDGE, IDENTITY.namespace, JSON.stringify(renamed)), onManagement);
    await eventually(async () => operatorLog(operator).some((l) => String(l.msg).startsWith('target cluster reconnecting') && l.cluster === EDGE), 30_000);
    await eventually(async () => operatorLog(operator).filter((l) => l.msg === 'target cluster connected' && l.cluster === EDGE).length >= 2, 60_000);
    expect(await connected(EDGE)).toBe('1');
  });

  it('a kubeconfig that does not parse: a Warning Event on its Secret, a log line naming it, the gauge at 0; edge-1 carries on; a labelled Secret in another namespace and an unlabelled one register nothing', async () => {
    // Neither is read for registration: the operator lists only the labelled Secrets of its own namespace.
    await applyOk(registrationSecret('elsewhere', NS, targetKubeconfig), onManagement);
    const unlabelled = registrationSecret('unlabelled', IDENTITY.namespace, targetKubeconfig);
    await applyOk({ ...unlabelled, metadata: { ...unlabelled.metadata, labels: { 'example.com/not-the-label': 'true' } } } as KubeObject, onManagement);
    await applyOk(registrationSecret('broken', IDENTITY.namespace, 'this is no kubeconfig'), onManagement);
    await eventually(async () => (await registrationEvents('broken')).includes('Warning KubeconfigInvalid'), 30_000);
    expect(await connected('broken')).toBe('0');
    expect(operatorLog(operator).find((l) => l.msg === 'target cluster not registered' && l.cluster === 'broken')).toMatchObject({ secret: `${IDENTITY.namespace}/broken` });
    expect(await connected(EDGE)).toBe('1');
    for (const name of ['elsewhere', 'unlabelled']) {
      expect(await connected(name)).toBeUndefined();
      expect(operatorLog(operator).filter((l) => l.cluster === name)).toEqual([]);
    }
    expect(await registrationEvents('unlabelled')).toEqual([]);
    await kubectlOk(['delete', 'secret', 'elsewhere', '-n', NS]);
    await kubectlOk(['delete', 'secret', 'unlabelled', '-n', IDENTITY.namespace]);
    await kubectlOk(['delete', 'secret', 'broken', '-n', IDENTITY.namespace]);
    await eventually(async () => (await connected('broken')) === undefined, 30_000);
  });

  it('the four kinds on the target cluster reach Ready; the delivered clouds.yaml carries the public endpoint and openstack token issue works with it', async () => {
    const [project, user, assignment] = fx.identityOrders();
    await applyOk([project, user, assignment, fx.credentialOrder('app', { interval: '1m', gracePeriod: '20s' })], onTarget);
    const o = await eventually(async () => {
      const o = await fx.order('app');
      return o.status?.credentialGeneration === 1 && o.status.secretName === 'app-credentials' && ready(o) && o;
    }, 120_000);
    for (const [kind, name, type] of [['keystoneprojects', 'proj', 'ProjectReady'], ['keystoneusers', 'svc', 'Ready'], ['keystoneroleassignments', 'member', 'AssignmentReady']]) {
      expect(ready(await fx.order(name, kind), type)).toBe(true);
    }
    g1 = (await fx.delivered('app')) as Record<string, string>;
    expect(g1.application_credential_id).toBe(o.status?.credentialID);
    expect(parse(g1['clouds.yaml']).clouds.openstack.auth.auth_url).toBe(PUBLIC);
    const issued = await openstackTokenIssue(g1['clouds.yaml']);
    expect(issued.project_id).toBe((await fx.order('proj', 'keystoneprojects')).status?.projectID);
    // The user's delivered clouds.yaml too.
    const userSecret = await getJson<KubeObject & { data: Record<string, string> }>('secret', 'svc-credentials', { namespace: NS, as: 'target' });
    expect(parse(Buffer.from(userSecret.data['clouds.yaml'], 'base64').toString()).clouds.openstack.auth.auth_url).toBe(PUBLIC);
    consumer = fx.probe('app', PUBLIC);
  });

  it('the children are on the management cluster, named from <cluster>/<namespace>/<name>, with the cluster label; nothing of them on the target cluster', async () => {
    const children = await childrenOf(EDGE);
    expect(children).toEqual([`${fx.prefixOf('app')}-secret-v1`, passwordSecretName({ cluster: EDGE, namespace: NS, name: 'svc' }, 1)].sort());
    const child = await getJson<KubeObject>('secret', `${fx.prefixOf('app')}-secret-v1`, { namespace: CP_NS });
    expect(child.metadata.labels).toEqual({
      'c5c3.io/keystoneapplicationcredential-name': 'app',
      'c5c3.io/keystoneapplicationcredential-namespace': NS,
      'c5c3.io/keystoneapplicationcredential-cluster': EDGE,
    });
    expect((await kubectl(['get', 'namespace', CP_NS], { as: 'target' })).code).not.toBe(0);
    expect((await kubectl(['get', 'secret', 'app-credentials', '-n', NS])).code).not.toBe(0);
  });

  it('the same namespace and names on the management cluster are other orders, with other children', async () => {
    const [project, user, assignment] = mgmt.identityOrders();
    await applyOk([project, user, assignment, mgmt.credentialOrder('app', { interval: '0s', gracePeriod: '20s' })], onManagement);
    const o = await eventually(async () => {
      const o = await mgmt.order('app');
      return o.status?.credentialGeneration === 1 && ready(o) && o;
    }, 120_000);
    expect(mgmt.prefixOf('app')).not.toBe(fx.prefixOf('app'));
    expect(parse((await mgmt.delivered('app'))?.['clouds.yaml'] as string).clouds.openstack.auth.auth_url).toBe(proxy.url);
    expect((await mgmt.parkedSecrets('app')).size).toBe(1);
    expect((await fx.order('app')).status?.credentialID).not.toBe(o.status?.credentialID);
  });

  it('keystone-appcred status lists both clusters\' orders with a CLUSTER column; --cluster edge-1 only that cluster\'s', async () => {
    const all = await status(['-n', NS, '--operator-namespace', IDENTITY.namespace]);
    expect([all.code, all.stderr]).toEqual([0, '']);
    const rows = all.stdout.split('\n').filter(Boolean).map((l) => l.split(/ {3,}/).slice(0, 4));
    expect(rows[0]).toEqual(['CLUSTER', 'KIND', 'NAME', 'READY']);
    const kinds = ['KeystoneProject proj', 'KeystoneUser svc', 'KeystoneRoleAssignment member', 'KeystoneApplicationCredential app'];
    expect(rows.slice(1).map((r) => `${r[0]} ${r[1]} ${r[2]}`)).toEqual([...kinds.map((k) => `(management) ${k}`), ...kinds.map((k) => `${EDGE} ${k}`)]);
    const edge = await status(['-n', NS, '--operator-namespace', IDENTITY.namespace, '--cluster', EDGE, '-o', 'json']);
    expect(edge.code).toBe(0);
    const items = (JSON.parse(edge.stdout) as { items: { cluster?: string; kind: string; name: string; ready: string }[] }).items;
    expect(items.map((i) => `${i.cluster} ${i.kind} ${i.name} ${i.ready}`)).toEqual(kinds.map((k) => `${EDGE} ${k} True`));
  });

  it('rotates on schedule on the target cluster: generation 2 delivered there, generation 1 valid through its grace period', async () => {
    const o = await eventually(async () => {
      const o = await fx.order('app');
      return o.status?.credentialGeneration === 2 && o.status.secretName === 'app-credentials' && o;
    }, 150_000);
    expect(o.status?.previousCredentialGeneration).toBe(1);
    expect((await fx.delivered('app'))?.application_credential_id).toBe(o.status?.credentialID);
    expect(await fx.userCredentials(fx.prefixOf('app'))).toEqual(expect.arrayContaining([`${fx.prefixOf('app')}-credential-v2`]));
    // A longer schedule from here on, and a generation that outlives the outages below.
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { rotation: { interval: '30m', gracePeriod: '20s' }, credentialGeneration: 3 } });
    await eventually(async () => {
      const now = await fx.order('app');
      return now.status?.credentialGeneration === 3 && now.status.secretName === 'app-credentials' && ready(now) && now;
    }, 90_000);
  });

  it('consent removed: frozen, nothing changes in Keystone, OpenBao or the Secret; the management cluster\'s orders carry on; restored, the raised generation is created', async () => {
    await applyOk(controlPlane({ assigned: false }), onManagement);
    await eventually(async () => condition(await fx.order('app'), 'CredentialReady')?.reason === 'NamespaceNotAssigned', 60_000);
    const backup = fx.backup('app', (await fx.order('app')).metadata.uid as string);
    const snapshot = async () => ({ keystone: await fx.userCredentials(fx.prefixOf('app')), backup: await backup.readDocument(), secret: await fx.delivered('app') });
    const before = await snapshot();
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 4 } });
    await new Promise((r) => setTimeout(r, 6_000));
    expect(await snapshot()).toEqual(before);
    expect(condition(await fx.order('app'), 'DeliveryReady')?.reason).toBe('NamespaceNotAssigned');
    expect(ready(await mgmt.order('app'))).toBe(true);
    await applyOk(controlPlane(), onManagement);
    await eventually(async () => {
      const o = await fx.order('app');
      return o.status?.credentialGeneration === 4 && ready(o) && o;
    }, 90_000);
  });

  it('no public endpoint: KeystoneNotPublished for a user and a credential on the target cluster, nothing delivered', async () => {
    const privateCp = { ...fx.controlPlane(), metadata: { name: 'cp-private', namespace: CP_NS } } as KubeObject;
    await applyOk(privateCp, onManagement);
    const ref = { controlPlaneRef: { name: 'cp-private', namespace: CP_NS } };
    await applyOk(
      [
        { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', metadata: { name: 'private', namespace: NS }, spec: { ...ref, userName: uniqueName('private') } },
        // Its references belong to the other ControlPlane (ControlPlaneMismatch): admitted, gated, and still nothing to deliver.
        { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneApplicationCredential', metadata: { name: 'private-app', namespace: NS }, spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' } } },
      ] as KubeObject[],
      onTarget,
    );
    const user = await eventually(async () => {
      const o = await fx.order('private', 'keystoneusers');
      return condition(o, 'DeliveryReady')?.reason === 'KeystoneNotPublished' && o;
    }, 60_000);
    expect(condition(user, 'UserReady')).toMatchObject({ status: 'True' });
    const credential = await eventually(async () => {
      const o = await fx.order('private-app');
      return condition(o, 'DeliveryReady')?.reason === 'KeystoneNotPublished' && o;
    }, 60_000);
    expect(condition(credential, 'CredentialReady')?.reason).toBe('ControlPlaneMismatch');
    expect(await fx.userCredentials(fx.prefixOf('private-app'))).toEqual([]);
    expect(await fx.delivered('private', 'private-credentials')).toBeUndefined();
    expect(await fx.delivered('private-app')).toBeUndefined();
    await kubectl(['delete', 'keystoneapplicationcredential', 'private-app', '-n', NS, '--wait=false'], { as: 'target' });
    await kubectl(['delete', 'keystoneuser', 'private', '-n', NS, '--wait=false'], { as: 'target' });
    await eventually(async () => (await kubectlOk(['get', 'keystoneusers,keystoneapplicationcredentials', '-n', NS, '-o', 'name'], { as: 'target' })).split('\n').every((l) => !l.includes('private')), 60_000);
    await kubectlOk(['delete', 'controlplane', 'cp-private', '-n', CP_NS]);
  });

  it('the target API server stopped: reported, the management cluster\'s orders carry on; started again: the target\'s orders resume', async () => {
    await targetApiServer('stop');
    const down = Date.now();
    await eventually(async () => (await connected(EDGE)) === '0', 60_000);
    await eventually(async () => (await registrationEvents(EDGE)).includes('Warning ClusterUnreachable'), 30_000);
    // A rotation ordered on the management cluster meanwhile happens.
    await mgmt.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 2 } });
    await eventually(async () => {
      const o = await mgmt.order('app');
      return o.status?.credentialGeneration === 2 && ready(o) && o;
    }, 60_000);
    expect(await connected(EDGE)).toBe('0');
    await targetApiServer('start');
    process.stderr.write(`[target-cluster] target API server down for ${Math.round((Date.now() - down) / 1000)} s\n`);
    await eventually(async () => (await connected(EDGE)) === '1', 90_000);
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 5 } });
    await eventually(async () => {
      const o = await fx.order('app');
      return o.status?.credentialGeneration === 5 && ready(o) && o;
    }, 90_000);
  });

  it('deregistered: the operator stops serving edge-1, and the children stay on the management cluster', async () => {
    // Generation 4 is in its grace period of 20 s until the sweep deletes it: recorded before that, the order is not
    // where it rests, and whether the pass after the registration or the comparison comes first decided the test.
    await eventually(async () => (await fx.userCredentials(fx.prefixOf('app'))).length === 1, 90_000);
    beforeDeregistration = { keystone: await fx.userCredentials(fx.prefixOf('app')), parked: await fx.parkedSecrets('app'), id: (await fx.delivered('app'))?.application_credential_id };
    const children = await childrenOf(EDGE);
    expect(await orderSeries(EDGE)).not.toEqual([]);
    await kubectlOk(['delete', 'secret', EDGE, '-n', IDENTITY.namespace]);
    await eventually(async () => (await connected(EDGE)) === undefined, 30_000);
    // Its orders' series go with it (they would keep the last state, and alert on it, until a restart).
    await eventually(async () => (await orderSeries(EDGE)).length === 0, 30_000);
    await eventually(async () => operatorLog(operator).some((l) => String(l.msg).startsWith('target cluster deregistered') && l.cluster === EDGE), 30_000);
    // Nothing serves the target's orders now: a change there is not acted on.
    const status = (await fx.order('app')).status;
    await fx.merge('keystoneapplicationcredential', 'app', { metadata: { annotations: { 'example.com/poke': 'deregistered' } } });
    await new Promise((r) => setTimeout(r, 5_000));
    expect((await fx.order('app')).status).toEqual(status);
    expect(await childrenOf(EDGE)).toEqual(children);
    expect(await fx.userCredentials(fx.prefixOf('app'))).toEqual(beforeDeregistration.keystone);
  });

  it('a cluster registered under a 64-character name: its orders report ClusterNameTooLong and nothing is created', async () => {
    await applyOk(registrationSecret(LONG, IDENTITY.namespace, targetKubeconfig), onManagement);
    await eventually(async () => (await connected(LONG)) === '1', 60_000);
    const projectName = uniqueName('long');
    await applyOk({ apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneProject', metadata: { name: 'long-proj', namespace: NS }, spec: { ...fx.ref, projectName } } as KubeObject, onTarget);
    const project = await eventually(async () => {
      const o = await fx.order('long-proj', 'keystoneprojects');
      return condition(o, 'ProjectReady')?.reason === 'ClusterNameTooLong' && o;
    }, 60_000);
    expect(condition(project, 'ProjectReady')?.message).toContain('64 characters');
    expect(project.metadata.finalizers ?? []).toEqual([]);
    await eventually(async () => condition(await fx.order('app'), 'CredentialReady')?.reason === 'ClusterNameTooLong', 60_000);
    expect(condition(await fx.order('svc', 'keystoneusers'), 'UserReady')?.reason).toBe('ClusterNameTooLong');
    // No child under the long name (a label value of 64 characters could not even select them).
    const secrets = (await kubectlOk(['get', 'secrets', '-n', CP_NS, '-o', 'name'])).split('\n');
    const longChildren = [childPrefix({ cluster: LONG, namespace: NS, name: 'app' }), passwordSecretName({ cluster: LONG, namespace: NS, name: 'svc' }, 1)];
    expect(secrets.filter((n) => longChildren.some((c) => n.includes(c)))).toEqual([]);
    expect(await new Projects(adminSession()).findByName(projectName)).toBeUndefined();
    expect(await fx.userCredentials(fx.prefixOf('app'))).toEqual(beforeDeregistration?.keystone);
    await kubectlOk(['delete', 'keystoneproject', 'long-proj', '-n', NS], { as: 'target' });
    await kubectlOk(['delete', 'secret', LONG, '-n', IDENTITY.namespace]);
    await eventually(async () => (await connected(LONG)) === undefined, 30_000);
  });

  it('registered again: its orders resume where they were, with no new credential minted', async () => {
    await applyOk(registrationSecret(EDGE, IDENTITY.namespace, targetKubeconfig), onManagement);
    await eventually(async () => (await connected(EDGE)) === '1', 60_000);
    const o = await eventually(async () => {
      const o = await fx.order('app');
      return o.status?.credentialGeneration === 5 && ready(o) && o;
    }, 90_000);
    // met anew, its orders' series are back
    await eventually(async () => (await orderSeries(EDGE)).some((l) => l.startsWith('keystone_appcred_credential_condition{') && l.includes('name="app"')), 60_000);
    expect(await fx.userCredentials(fx.prefixOf('app'))).toEqual(beforeDeregistration?.keystone);
    expect(await fx.parkedSecrets('app')).toEqual(beforeDeregistration?.parked);
    expect((await fx.delivered('app'))?.application_credential_id).toBe(beforeDeregistration?.id);
    expect(o.status?.credentialID).toBe(beforeDeregistration?.id);
    // One mint per generation over the whole story, none after the re-registration.
    expect(operatorLog(operator).filter((l) => l.msg === 'action' && l.cluster === EDGE && l.key === `${NS}/app` && l.action === 'mint' && l.outcome === 'done').map((l) => l.generation)).toEqual([1, 2, 3, 4, 5]);
  });

  it('a restart of the operator: every order of both clusters is settled by the cache, its first pass makes no Keystone call and writes no order, status or Secret', async () => {
    // Nothing due: both credentials Ready and their superseded generations swept (a sweep that falls due is a full pass,
    // after a restart as without one: src/lifecycle/settled.ts).
    const idle = (o: Order) => ready(o) && o.status?.previousCredentialGeneration === undefined;
    await eventually(async () => idle(await fx.order('app')) && idle(await mgmt.order('app')), 90_000);
    // ... and every identity-plane order of both clusters and the ControlPlane converged too: Ready, its status of the
    // current spec (an order still on its way, on a loaded machine, takes a full pass after the restart, as it should).
    const current = (o: Order) => ready(o) && o.status?.observedGeneration === o.metadata.generation;
    await eventually(async () => {
      for (const f of [fx, mgmt]) {
        for (const [kind, name] of [['keystoneprojects', 'proj'], ['keystoneusers', 'svc'], ['keystoneroleassignments', 'member']] as const) if (!current(await f.order(name, kind))) return false;
      }
      return current(await mgmt.controlPlaneNow());
    }, 90_000);
    await operator.server.stop(10_000);
    const mark = proxy.calls.length;
    await launch('mc-b');
    await eventually(async () => (await connected(EDGE)) === '1', 60_000);
    // 9 objects: the ControlPlane, and the project, user, role assignment and credential on each cluster.
    let last = '';
    let since = Date.now();
    await eventually(async () => {
      const text = await metricsText(operator);
      const now = `${proxy.calls.length} ${metricSum(text, 'keystone_appcred_reconcile_total')}`;
      if (now !== last) [last, since] = [now, Date.now()];
      return metricSum(text, 'keystone_appcred_reconcile_total') >= 9 && Date.now() - since >= 2_000;
    }, 60_000, 250);
    const text = await metricsText(operator);
    const writes = metricSum(text, 'keystone_appcred_api_writes_total');
    const events = metricSum(text, 'keystone_appcred_api_writes_total', { kind: 'Event' });
    process.stderr.write(`[target-cluster] restart: ${metricSum(text, 'keystone_appcred_reconcile_total')} reconciles, ${proxy.since(mark).length} Keystone calls, ${writes} API writes (${events} Events)\n`);
    expect(proxy.since(mark)).toEqual([]);
    // The only write allowed is the Event that records the target cluster connected on its registration Secret.
    expect(writes - events).toBe(0);
    expect(events).toBeLessThanOrEqual(1);
    expect(ready(await fx.order('app'))).toBe(true);
  });
});

describe('the end', () => {
  it('the consumer probe on the target cluster never failed to authenticate, across rotations, the freeze, the outage and the re-registration', async () => {
    expect(consumer).toBeDefined();
    await consumer?.stop();
    process.stderr.write(`[target-cluster] consumer probe: ${consumer?.attempts} authentications, ${consumer?.failures.length} failed, ${consumer?.readErrors} reads the API server did not answer\n`);
    expect(consumer?.failures).toEqual([]);
    expect(consumer?.attempts).toBeGreaterThan(60);
  });

  it('teardown of the target cluster\'s credential: nothing left in Keystone or OpenBao, no child on the management cluster, no delivered Secret on the target cluster', async () => {
    const uid = (await fx.order('app')).metadata.uid as string;
    await kubectlOk(['delete', 'keystoneapplicationcredential', 'app', '-n', NS, '--wait=false'], { as: 'target' });
    await eventually(async () => (await kubectl(['get', 'keystoneapplicationcredential', 'app', '-n', NS], { as: 'target' })).code !== 0, 90_000);
    expect(await fx.userCredentials(fx.prefixOf('app'))).toEqual([]);
    const backup = fx.backup('app', uid);
    expect(await backup.readDocument()).toBeUndefined();
    expect((await childrenOf(EDGE)).filter((n) => n.startsWith(fx.prefixOf('app')))).toEqual([]);
    expect(await fx.delivered('app')).toBeUndefined();
    // The rest of both clusters' orders go too (the assignments first: they hold the users and projects).
    for (const as of ['target', 'admin'] as const) {
      await kubectl(['delete', 'keystoneapplicationcredentials,keystoneroleassignments', '--all', '-n', NS, '--wait=false'], { as });
      await eventually(async () => (await kubectlOk(['get', 'keystoneapplicationcredentials,keystoneroleassignments', '-n', NS, '-o', 'name'], { as })).trim() === '', 90_000);
      await kubectl(['delete', 'keystoneusers,keystoneprojects', '--all', '-n', NS, '--wait=false'], { as });
      await eventually(async () => (await kubectlOk(['get', 'keystoneusers,keystoneprojects', '-n', NS, '-o', 'name'], { as })).trim() === '', 90_000);
    }
    expect(await childrenOf(EDGE)).toEqual([]);
  });

  it('no minted secret or kubeconfig token appears in the operator log, the Events of either cluster or any status', async () => {
    const token = String((JSON.parse(targetKubeconfig) as { users: { user: { token: string } }[] }).users[0].user.token);
    const texts = [
      ...logs.map((log) => ({ source: `operator log ${basename(log)}`, text: readFileSync(log, 'utf8') })),
      { source: 'events (management)', text: await kubectlOk(['get', 'events.events.k8s.io', '-A', '-o', 'json']) },
      { source: 'events (target)', text: await kubectlOk(['get', 'events.events.k8s.io', '-A', '-o', 'json'], { as: 'target' }) },
      ...fx.statusesRead,
      ...mgmt.statusesRead,
    ];
    const minted = [...fx.secretsSeen, ...mgmt.secretsSeen].filter((secret) => secret.length >= MIN_SECRET_LENGTH);
    expect(minted.length).toBeGreaterThanOrEqual(5);
    expect(scanForSecrets(texts, [...minted, env.adminPassword, token])).toEqual([]);
  });
});
