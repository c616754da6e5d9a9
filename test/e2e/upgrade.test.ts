// @needs kube target-kube keystone openbao pulumi previous-release
/**
 * The upgrade from the previous release (keystone-appcred 0.1.0, built from commit 8f3fd1c by the `previous-release`
 * component) to this one, as a platform team lives it, the way cert-manager's hack/verify-upgrade.sh and
 * prometheus-operator's upgradepath test do it:
 *
 * 1. 0.1.0 installed as its README said (`manifests | kubectl apply --server-side -f -`), its operator running under
 *    that RBAC, with orders in flight: one rotated by a raised generation, its generation 1 in its grace period; one
 *    steady (a 720h schedule); one frozen (its namespace's assignment removed); one whose 0.1.0 backup path another
 *    installation overwrote; one on the registered target cluster `edge-1` (the run's second API server), registered
 *    as 0.1.0's docs/operator.md said: its `manifests --target-cluster` (the four order CRDs, the ClusterRole bound to
 *    `keystone-appcred-system/keystone-appcred-operator`) applied there, that service account's token kubeconfig in a
 *    Secret labelled `sigs.k8s.io/multicluster-runtime-kubeconfig` in the operator's namespace; its project, user and
 *    role assignment on the target cluster too, the ControlPlane (with a public endpoint) and the children on the
 *    management cluster. A consumer probe logs in with the delivered Secrets every second throughout (the target
 *    order's read from the target cluster). And one order (of a ControlPlane of its own, whose Keystone calls are
 *    counted apart) caught mid-rotation as a platform team meets it (issue 46): its generation 2 minted and parked by
 *    0.1.0 while OpenBao refused that order's backup, so never switched to (BackupNotSynced).
 * 2. This release applied over it as docs/install/upgrading.md says: the CRDs (deploy/crds.yaml, and this release's
 *    `manifests --target-cluster` on the target cluster), then the RBAC and the Deployment (deploy/install.yaml), then
 *    the old operator stopped and the new one started (a Recreate rollout), while another installation still on 0.1.0
 *    writes the 0.1.0 path of one order.
 * 3. Asserted: for a minute nothing is minted, deleted or changed (Keystone, statuses, delivered Secrets, on both
 *    clusters); no Keystone call and no API write at the upgrade but each order's record of its backup's migration
 *    (one status write: `status.backupPath`), the foreign backup's Event (and the target cluster's `ClusterConnected`
 *    Event on its registration Secret, when the new operator already led as it connected); every backup, the target
 *    order's too, at its uid path within a pass and the 0.1.0 path emptied (the
 *    foreign one left, a ForeignBackup Event); the order 0.1.0 left mid-rotation, OpenBao answering again, switched to
 *    0.1.0's own generation 2 (Keystone authenticates it with the parked secret: never minted again, never reported
 *    foreign); the probes never fail; 0.1.0's generation 1 swept at its
 *    previousCredentialDeleteAt; a rotation and a teardown (both paths empty, the target order's too) under the new
 *    release.
 * 4. The Pulumi face: a stack created with 0.1.0's package, then `up`, `refresh`, a rotation and `destroy` with this
 *    one: nothing minted but the rotation's credential, and what a rotation `up` killed right after it wrote the
 *    backup at the owner's path left (issue 46) is the next `up`'s own: the same owner, the same path; the `destroy`
 *    leaves no document under the stack's prefix.
 *
 * The timeline (each phase's seconds, the Keystone calls and API writes at the upgrade, the target order's migration)
 * is printed at the end. The target cluster is left as a 0.1.0 user's would be before the install: none of this
 * project's order CRDs or target ClusterRole (the other files that use it install theirs with `--force-conflicts`).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { OpenBaoBackup } from '../../src/backup/openbao';
import { ApplicationCredentials } from '../../src/keystone';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures, type Order } from '../support/credential-fixtures';
import { adminSession, createServiceUser, uniqueName, type ServiceUser } from '../support/keystone-fixtures';
import { applyOk, eventually, getJson, kubectl, kubectlOk, waitEstablished, type Identity } from '../support/kubectl';
import { metricSum, metricsText, registrationSecret, releaseAllLeftovers, releaseLeftovers, serviceAccountKubeconfig, startOperator, targetServiceAccountKubeconfig, waitReady, type OperatorProcess, QUICK_ELECTION } from '../support/operator';
import { buildProject } from '../support/package';
import { configureStack, runPulumi, runPulumiToHalt } from '../support/pulumi';
import { exportedResources, unwrapSecrets } from '../support/pulumi-state';
import { startRecordingProxy, isWrite, type RecordingProxy } from '../support/recording-proxy';

jest.setTimeout(600_000);

const REPO = resolve(__dirname, '..', '..');
const PREVIOUS = process.env.KAC_PREVIOUS_RELEASE_DIR as string;
const PREVIOUS_VERSION = process.env.KAC_PREVIOUS_RELEASE_VERSION as string;
const SYSTEM = 'keystone-appcred-system';
const SA = 'keystone-appcred-operator';
const NS = 'kac-upgrade';
const FROZEN_NS = 'kac-upgrade-frozen';
const CP_NS = 'kac-upgrade-cp';
const GRACE_S = 150;
const CRDS = ['controlplanes', 'keystoneprojects', 'keystoneusers', 'keystoneroleassignments', 'keystoneapplicationcredentials', 'keystoneclusteridentities'].map((r) => `${r}.c5c3.io`);
/** The registered target cluster (the Secret's name), the orders' namespace there, and the CRDs `manifests --target-cluster` installs there. */
const EDGE = 'edge-1';
const EDGE_NS = 'kac-upgrade-edge';
const TARGET_CRDS = ['keystoneprojects', 'keystoneusers', 'keystoneroleassignments', 'keystoneapplicationcredentials'].map((r) => `${r}.c5c3.io`);
const USERS = { main: uniqueName('upgrade'), frozen: uniqueName('upgrade-frozen'), edge: uniqueName('upgrade-edge'), parked: uniqueName('upgrade-parked') };
const fx = Object.assign(credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: USERS.main, projectName: uniqueName('upgrade') }), { userName: USERS.main });
const fxFrozen = Object.assign(credentialFixtures({ namespace: FROZEN_NS, cpNamespace: CP_NS, userName: USERS.frozen, projectName: uniqueName('upgrade-frozen') }), { userName: USERS.frozen });
const fxEdge = Object.assign(credentialFixtures({ namespace: EDGE_NS, cpNamespace: CP_NS, userName: USERS.edge, projectName: uniqueName('upgrade-edge'), orderCluster: { name: EDGE, as: 'target' } }), { userName: USERS.edge });
/** The order 0.1.0 leaves mid-rotation (issue 46), under a ControlPlane of its own whose Keystone is `parkedProxy`. */
const PARKED_NS = 'kac-upgrade-parked';
const PARKED_CP_NS = 'kac-upgrade-parked-cp';
const fxParked = credentialFixtures({ namespace: PARKED_NS, cpNamespace: PARKED_CP_NS, userName: USERS.parked, projectName: uniqueName('upgrade-parked') });
/** The auth URL orders on the target cluster are delivered (the ControlPlane's publicEndpoint): the same Keystone under another name, so the test can tell. */
const PUBLIC = fx.env.authUrl.replace('//127.0.0.1:', '//localhost:');
/** Every order of the story but the foreign one: its fixtures and name. */
const ORDERS = [[fx, 'graced'], [fx, 'steady'], [fxFrozen, 'frozen'], [fxEdge, 'edge']] as const;
const BAO = { address: process.env.KAC_BAO_ADDR as string, token: process.env.KAC_BAO_TOKEN as string };

/** The backup at an order's 0.1.0 path (the spec's, without the uid) and at its uid path. */
const formerBackup = (f: typeof fx, name: string) => new OpenBaoBackup({ ...BAO, path: `keystone/${CP_NS}/${f.prefixOf(name)}/service-accounts/application-credential` });
/** An order's own backup path below the mount (the uid path). */
const ownBackupPath = (f: typeof fx, name: string, uid: string) => `keystone/${CP_NS}/${f.prefixOf(name)}/${uid}/service-accounts/application-credential`;
const ownBackup = (f: typeof fx, name: string, uid: string) => f.backup(name, uid);

/**
 * The ControlPlane: the orders' namespace assigned on the management cluster, the frozen one's while `frozenAssigned`,
 * and the target order's on `edge-1`, whose orders are delivered the public endpoint.
 */
const controlPlane = (frozenAssigned: boolean) =>
  fx.controlPlane({ authUrl: proxy.url, publicEndpoint: PUBLIC, assignments: [...(frozenAssigned ? [{ namespace: FROZEN_NS }] : []), { namespace: EDGE_NS, targetClusterRef: { name: EDGE } }] });

const timeline: [string, number][] = [];
let phaseStart = Date.now();
const phase = (name: string) => {
  const now = Date.now();
  timeline.push([name, (now - phaseStart) / 1000]);
  phaseStart = now;
};

let unlock: (() => void) | undefined;
let proxy: RecordingProxy;
let parkedProxy: RecordingProxy;
let baoProxy: RecordingProxy;
let workDir = '';
let oldOperator: OperatorProcess | undefined;
let operator: OperatorProcess | undefined;
const probes: ReturnType<typeof fx.probe>[] = [];
const upgradeFigures: Record<string, unknown> = {};

/** A kubeconfig that authenticates as the installed operator's service account (what its pod would use). */
const installedOperatorKubeconfig = (path: string) => serviceAccountKubeconfig({ namespace: SYSTEM, serviceAccount: SA }, path);

/** Both operators reach OpenBao through `baoProxy`, which refuses the parked order's backup while 0.1.0 rotates it. */
const operatorEnv = () => ({ KAC_OPENBAO_ADDRESS: baoProxy.url, KAC_OPENBAO_AUTH_METHOD: 'token', KAC_OPENBAO_TOKEN: BAO.token });

/** The ordered users' credentials in Keystone (the parked order's user's alone with `parked`), as the admin sees them: id → name. */
async function keystoneCredentials(parked = false): Promise<Record<string, string>> {
  const admin = adminSession(fx.env);
  const out: Record<string, string> = {};
  const users = await admin.request({ method: 'GET', path: admin.transport.pathOf('users') });
  const names = new Set(parked ? [USERS.parked] : [fx, fxFrozen, fxEdge].map((f) => f.userName));
  for (const u of (users.body as { users: { id: string; name: string }[] }).users.filter((x) => names.has(x.name))) {
    const list = await admin.request({ method: 'GET', path: admin.transport.pathOf(`users/${u.id}/application_credentials`) });
    for (const c of (list.body as { application_credentials: { id: string; name: string }[] }).application_credentials) out[c.id] = c.name;
  }
  return out;
}

/**
 * What must not change for a minute after the upgrade: the orders' statuses and the delivered Secrets (the target
 * order's on the target cluster), but the record of each backup's migration the upgrade adds (`status.backupPath`).
 */
async function clusterSnapshot(): Promise<string> {
  const orders: unknown[] = [];
  for (const [f, names] of [[fx, ['graced', 'steady', 'foreign']], [fxFrozen, ['frozen']], [fxEdge, ['edge']]] as const) {
    for (const name of names) {
      const status = { ...(await f.order(name)).status };
      delete status.backupPath;
      orders.push({ name, status, secret: await f.delivered(name) });
    }
  }
  return JSON.stringify(orders);
}

const ready = (o: Order) => condition(o, 'Ready')?.status === 'True';

/** The operator's ClusterRole and ClusterRoleBinding as an install (0.1.0's or this release's) names them, on either cluster. */
async function removeClusterRbac(as: Identity = 'admin'): Promise<void> {
  await kubectl(['delete', 'clusterrolebinding,clusterrole', 'keystone-appcred-operator', '--ignore-not-found'], { as });
}

/** `keystone-appcred manifests --target-cluster` of a build (`cli`: its main, and what runs it) for the operator's service account. */
function targetClusterManifests(cli: readonly string[], cwd: string): string {
  return execFileSync(process.execPath, [...cli, 'manifests', '--target-cluster', '--target-service-account', `${SYSTEM}/${SA}`], { cwd, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
}

/** Applied to the target cluster as docs/configure/target-clusters.md says (`kubectl --context edge-1 apply --server-side -f -`); its CRDs established. */
async function applyOnTarget(yaml: string): Promise<void> {
  await kubectlOk(['apply', '--server-side', '-f', '-'], { input: yaml, as: 'target', timeoutMs: 120_000 });
  await waitEstablished([...TARGET_CRDS.map((c) => `crd/${c}`)], { as: 'target' });
}

/** Removes from the target cluster what this file puts there: the orders' and the operator's namespaces, the ClusterRole, the CRDs. */
async function clearTarget(): Promise<void> {
  await releaseAllLeftovers('target');
  await kubectl(['delete', 'namespace', EDGE_NS, SYSTEM, '--ignore-not-found', '--timeout=180s'], { as: 'target', timeoutMs: 200_000 });
  await removeClusterRbac('target');
  await kubectl(['delete', 'crd', ...TARGET_CRDS, '--ignore-not-found', '--timeout=180s'], { as: 'target', timeoutMs: 200_000 });
}

beforeAll(async () => {
  unlock = await lockCluster('upgrade.test.ts');
  workDir = mkdtempSync(join(process.env.KAC_TEST_WORKDIR as string, 'upgrade-'));
  proxy = await startRecordingProxy(fx.env.authUrl);
  parkedProxy = await startRecordingProxy(fx.env.authUrl);
  baoProxy = await startRecordingProxy(BAO.address);
  // A cluster as a 0.1.0 user has it: nothing of this project but what 0.1.0 installs.
  await releaseAllLeftovers();
  await kubectl(['delete', 'crd', ...CRDS, '--ignore-not-found', '--timeout=180s'], { timeoutMs: 200_000 });
  // The identity kind's admission policy and its binding too: another file's install (another field manager) would
  // otherwise conflict with the apply a 0.1.0 user makes.
  const policy = 'keystoneclusteridentities.c5c3.io';
  await kubectl(['delete', 'validatingadmissionpolicybinding', policy, '--ignore-not-found']);
  await kubectl(['delete', 'validatingadmissionpolicy', policy, '--ignore-not-found']);
  await removeClusterRbac();
  // The target cluster as a 0.1.0 user has it before registering it: none of this project's order CRDs or target
  // ClusterRole there (another file's, under another field manager, would conflict with the apply 0.1.0's docs make).
  await clearTarget();
  phase('setup');
}, LOCKED_SETUP_MS);

afterAll(async () => {
  for (const p of probes) await p.stop();
  await operator?.server.stop(5_000);
  await oldOperator?.server.stop(5_000);
  await releaseLeftovers([NS, FROZEN_NS, CP_NS, PARKED_NS, PARKED_CP_NS]);
  for (const ns of [NS, FROZEN_NS, CP_NS, PARKED_NS, PARKED_CP_NS]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
  // The operator's namespace is the one other files install into: gone before the lock is let go, and with it the
  // cluster-wide RBAC the installs made (as `kubectl`, a field manager the other files' applies would conflict with).
  await kubectl(['delete', 'namespace', SYSTEM, '--timeout=180s'], { timeoutMs: 200_000 });
  await removeClusterRbac();
  // The target cluster as the file found it, as far as this project goes: its orders released and their namespace, the
  // operator's identity there, the ClusterRole and the CRDs gone (the registration Secret went with SYSTEM above).
  await clearTarget();
  await proxy?.close();
  await parkedProxy?.close();
  await baoProxy?.close();
  process.stdout.write(`[upgrade] timeline (s): ${timeline.map(([n, s]) => `${n} ${s.toFixed(1)}`).join(', ')}; at the upgrade: ${JSON.stringify(upgradeFigures)}\n`);
  unlock?.();
});

describe(`the upgrade from keystone-appcred ${PREVIOUS_VERSION} with orders in flight`, () => {
  let before = '';
  let keystoneBefore: Record<string, string> = {};
  const uids: Record<string, string> = {};
  /** 0.1.0's generation 2 of the order it left mid-rotation: its Keystone id (issue 46). */
  let parkedSuccessor = '';

  it(`${PREVIOUS_VERSION} installed as its README said, its operator running, ${EDGE} registered as its docs said; orders in grace, steady, frozen, on ${EDGE}, and one whose 0.1.0 path another installation wrote`, async () => {
    const yaml = execFileSync(process.execPath, [join(PREVIOUS, 'lib/src/cli/main.js'), 'manifests', '--image', `keystone-appcred:${PREVIOUS_VERSION}`, '--openbao-address', BAO.address], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
    await kubectlOk(['apply', '--server-side', '-f', '-'], { input: yaml, timeoutMs: 120_000 });
    await waitEstablished([...CRDS.map((c) => `crd/${c}`)]);
    // The target cluster as 0.1.0's docs/operator.md registered one: its `manifests --target-cluster` applied there (the
    // four order CRDs, the ClusterRole and its binding to keystone-appcred-system/keystone-appcred-operator), that
    // namespace and service account created there, a token kubeconfig of it in a labelled Secret of the operator's
    // namespace on the management cluster, named after the cluster.
    const targetYaml = targetClusterManifests([join(PREVIOUS, 'lib/src/cli/main.js')], PREVIOUS);
    expect(targetYaml.match(/^kind: .*$/gm)).toEqual([...TARGET_CRDS.map(() => 'kind: CustomResourceDefinition'), 'kind: ClusterRole', 'kind: ClusterRoleBinding']);
    await applyOnTarget(targetYaml);
    const targetKubeconfig = await targetServiceAccountKubeconfig({ namespace: SYSTEM, serviceAccount: SA });
    await applyOk(registrationSecret(EDGE, SYSTEM, targetKubeconfig), { fieldManager: 'kac-test' });
    const kubeconfig = await installedOperatorKubeconfig(join(workDir, 'old.kubeconfig'));
    oldOperator = await startOperator({ name: 'old', command: [process.execPath, join(PREVIOUS, 'lib/src/cli/main.js'), 'operator'], cwd: PREVIOUS, kubeconfig, namespace: SYSTEM, logDir: workDir, args: QUICK_ELECTION, env: operatorEnv() });
    await waitReady(oldOperator);
    for (const ns of [NS, FROZEN_NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
    await kubectl(['create', 'namespace', EDGE_NS], { as: 'target' });
    const adminYaml = fx.adminCloudsYaml().replace(fx.env.authUrl, proxy.url);
    await applyOk([fx.adminSecret('keystone-admin', adminYaml), controlPlane(true)], { fieldManager: 'kac-test' });
    await applyOk([...fx.identityOrders(), ...fxFrozen.identityOrders()], { fieldManager: 'kac-test' });
    await applyOk(fxEdge.identityOrders(), { fieldManager: 'kac-test', as: 'target' });
    await applyOk(
      [
        fx.credentialOrder('graced', { interval: '1h', gracePeriod: `${GRACE_S}s` }),
        fx.credentialOrder('steady', { interval: '720h', gracePeriod: '1h' }),
        fx.credentialOrder('foreign', { interval: '720h', gracePeriod: '1h' }),
        fxFrozen.credentialOrder('frozen', { interval: '720h', gracePeriod: '1h' }),
      ],
      { fieldManager: 'kac-test' },
    );
    await applyOk(fxEdge.credentialOrder('edge', { interval: '720h', gracePeriod: '1h' }), { fieldManager: 'kac-test', as: 'target' });
    for (const [f, name] of [...ORDERS, [fx, 'foreign']] as const) {
      await eventually(async () => {
        const o = await f.order(name);
        return o.status?.credentialGeneration === 1 && ready(o) && o;
      }, 180_000);
    }
    // 0.1.0's model of an order on a target cluster: the order and its delivered Secret there (with the public
    // endpoint), the ControlPlane and the children on the management cluster.
    const edge = await fxEdge.order('edge');
    const delivered = await fxEdge.delivered('edge');
    expect(delivered?.application_credential_id).toBe(edge.status?.credentialID);
    expect(parse(delivered?.['clouds.yaml'] ?? '').clouds.openstack.auth.auth_url).toBe(PUBLIC);
    expect([...(await fxEdge.parkedSecrets('edge')).keys()]).toEqual([1]);
    expect((await kubectl(['get', 'secret', 'edge-credentials', '-n', EDGE_NS])).code).not.toBe(0);
    phase(`${PREVIOUS_VERSION} installed, ${EDGE} registered, 5 orders delivered`);
    probes.push(fx.probe('graced'), fx.probe('steady'), fxEdge.probe('edge', PUBLIC));
    // In flight: generation 2 by a raised generation, generation 1 in its grace period.
    await fx.merge('keystoneapplicationcredential', 'graced', { spec: { credentialGeneration: 2 } });
    const graced = await eventually(async () => {
      const o = await fx.order('graced');
      return o.status?.credentialGeneration === 2 && o.status.previousCredentialGeneration === 1 && ready(o) && o;
    }, 120_000);
    expect(graced.status?.previousCredentialDeleteAt).toBeDefined();
    // Frozen: its namespace's assignment removed.
    await applyOk(controlPlane(false), { fieldManager: 'kac-test' });
    await eventually(async () => condition(await fxFrozen.order('frozen'), 'Ready')?.reason === 'NotAllReady', 60_000);
    // 0.1.0 backed up at the spec's path, without the uid (the target order's prefix hashes its cluster in).
    for (const [f, name] of ORDERS) {
      const o = await f.order(name);
      uids[name] = o.metadata.uid as string;
      expect(await formerBackup(f, name).read()).toBe(o.status?.credentialID);
      expect(await ownBackup(f, name, uids[name]).read()).toBeUndefined();
    }
    uids.foreign = (await fx.order('foreign')).metadata.uid as string;
    // Mid-rotation (issue 46): OpenBao refuses the `parked` order's backup while 0.1.0 rotates it by a raised generation,
    // so 0.1.0 parks and mints generation 2 and never switches to it (BackupNotSynced).
    for (const ns of [PARKED_NS, PARKED_CP_NS]) await kubectl(['create', 'namespace', ns]);
    await applyOk([fxParked.adminSecret('keystone-admin', fxParked.adminCloudsYaml().replace(fx.env.authUrl, parkedProxy.url)), fxParked.controlPlane({ authUrl: parkedProxy.url })], { fieldManager: 'kac-test' });
    await applyOk([...fxParked.identityOrders(), fxParked.credentialOrder('parked', { interval: '720h', gracePeriod: '1h' })], { fieldManager: 'kac-test' });
    await eventually(async () => {
      const o = await fxParked.order('parked');
      return o.status?.credentialGeneration === 1 && ready(o) && o;
    }, 180_000);
    const parkedPath = `/keystone/${PARKED_CP_NS}/${fxParked.prefixOf('parked')}/`;
    baoProxy.fault = (call) => (call.method !== 'GET' && call.path.includes(parkedPath) ? 503 : undefined);
    await fxParked.merge('keystoneapplicationcredential', 'parked', { spec: { credentialGeneration: 2 } });
    const stuck = await eventually(async () => {
      const o = await fxParked.order('parked');
      return o.status?.credentialGeneration === 1 && condition(o, 'DeliveryReady')?.reason === 'BackupNotSynced' && (await fxParked.userCredentials(fxParked.prefixOf('parked'))).length === 2 && o;
    }, 120_000);
    expect([...(await fxParked.parkedSecrets('parked')).keys()]).toEqual([1, 2]);
    const successor = Object.entries(await keystoneCredentials(true)).find(([, name]) => name === `${fxParked.prefixOf('parked')}-credential-v2`);
    parkedSuccessor = successor?.[0] ?? '';
    expect(parkedSuccessor).not.toBe('');
    expect(stuck.status?.credentialID).not.toBe(parkedSuccessor);
    phase(`orders in flight; one mid-rotation, its generation 2 parked and minted by ${PREVIOUS_VERSION}`);
  });

  it('this release applied as docs/install/upgrading.md says: the CRDs (and the target cluster\'s), then the RBAC and the Deployment, then the new operator takes over', async () => {
    await kubectlOk(['apply', '--server-side', '-f', join(REPO, 'deploy/crds.yaml')], { timeoutMs: 120_000 });
    await waitEstablished([...CRDS.map((c) => `crd/${c}`)]);
    // On the target cluster: this release's `manifests --target-cluster` (its CRDs gain the optional fields 0.2.0 added,
    // the ClusterRole is unchanged).
    const rolesOnTarget = () => kubectlOk(['get', 'crd', 'keystoneapplicationcredentials.c5c3.io', '-o', 'jsonpath={.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.roles.type}'], { as: 'target' });
    expect(await rolesOnTarget()).toBe('');
    await applyOnTarget(targetClusterManifests(['--import', 'tsx', join(REPO, 'src/cli/main.ts')], REPO));
    expect(await rolesOnTarget()).toBe('array');
    await kubectlOk(['apply', '--server-side', '-f', join(REPO, 'deploy/install.yaml')], { timeoutMs: 120_000 });
    const deployment = JSON.parse(await kubectlOk(['get', 'deployment', SA, '-n', SYSTEM, '-o', 'json'])) as { spec: { template: { spec: { containers: { image: string }[] } } } };
    expect(deployment.spec.template.spec.containers[0].image).toBe(`keystone-appcred:${JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version as string}`);
    phase('CRDs, RBAC and Deployment applied');
    // The rollout (as the Recreate strategy does it): the old pod gets SIGTERM and releases the Lease, the new one starts.
    await oldOperator?.server.stop(30_000);
    oldOperator = undefined;
    before = await clusterSnapshot();
    keystoneBefore = await keystoneCredentials();
    // Meanwhile another installation sharing this OpenBao (still on 0.1.0) wrote the 0.1.0 path of `foreign` last.
    await formerBackup(fx, 'foreign').write({ 'clouds.yaml': '', application_credential_id: 'another-installations-credential', application_credential_secret: 'not-this-orders' });
    const kubeconfig = await installedOperatorKubeconfig(join(workDir, 'new.kubeconfig'));
    baoProxy.fault = undefined; // OpenBao answers the parked order again
    const parkedMark = parkedProxy.calls.length;
    const mark = proxy.calls.length;
    const startedAt = Date.now();
    operator = await startOperator({ name: 'new', kubeconfig, namespace: SYSTEM, logDir: workDir, args: QUICK_ELECTION, env: operatorEnv() });
    await waitReady(operator);
    await eventually(async () => /^keystone_appcred_leader 1$/m.test(await metricsText(operator as OperatorProcess)), 60_000);
    const leaderAt = Date.now();
    phase('new operator leading');
    // Within one pass: every backup at its uid path, the 0.1.0 path emptied (the foreign document left alone); when
    // each got there, the target order's among them.
    const migratedAt: Record<string, number> = {};
    await eventually(async () => {
      for (const [f, name] of [...ORDERS, [fx, 'foreign']] as const) {
        if (migratedAt[name] !== undefined) continue;
        const id = (await f.order(name)).status?.credentialID;
        if ((await ownBackup(f, name, uids[name]).read()) === id) migratedAt[name] = Date.now();
      }
      return Object.keys(migratedAt).length === ORDERS.length + 1;
    }, 60_000, 250);
    upgradeFigures.migratedAfterLeaderS = (Math.max(...Object.values(migratedAt)) - leaderAt) / 1000;
    for (const [f, name] of ORDERS) expect(await formerBackup(f, name).read()).toBeUndefined();
    // Each order's status records the migration done at its own path (issue 46): the next restart reads OpenBao for none.
    for (const [f, name] of [...ORDERS, [fx, 'foreign']] as const) {
      await eventually(async () => (await f.order(name)).status?.backupPath === `openstack/${ownBackupPath(f, name, uids[name])}`, 30_000);
    }
    expect(metricSum(await metricsText(operator), 'keystone_appcred_target_cluster_connected', { cluster: EDGE })).toBe(1);
    upgradeFigures.target = { cluster: EDGE, migratedAfterLeaderS: (migratedAt.edge - leaderAt) / 1000 };
    expect(await formerBackup(fx, 'foreign').read()).toBe('another-installations-credential');
    const events = JSON.parse(await kubectlOk(['get', 'events.events.k8s.io', '-n', NS, '-o', 'json'])) as { items: { reason: string; regarding: { name: string }; note: string }[] };
    expect(events.items.filter((e) => e.reason === 'ForeignBackup').map((e) => [e.regarding.name, e.note.includes('another-installations-credential')])).toEqual([['foreign', true]]);
    phase('backups migrated');
    // The order 0.1.0 left mid-rotation: switched to 0.1.0's own generation 2 (Keystone authenticates it with the parked
    // secret of generation 2: the order's), nothing minted, nothing reported foreign, in one pass.
    const parked = await eventually(async () => {
      const o = await fxParked.order('parked');
      return o.status?.credentialGeneration === 2 && ready(o) && o;
    }, 60_000, 250);
    expect(parked.status?.credentialID).toBe(parkedSuccessor);
    expect(condition(parked, 'CredentialReady')?.reason).toBe('CredentialMinted');
    expect(Object.keys(await keystoneCredentials(true)).sort()).toEqual([parked.status?.previousCredentialID, parkedSuccessor].sort());
    expect(parkedProxy.since(parkedMark).filter((c) => c.method === 'POST' && c.path.includes('application_credentials'))).toEqual([]);
    const delivered = await fxParked.delivered('parked');
    expect(delivered?.application_credential_id).toBe(parkedSuccessor);
    expect(delivered?.application_credential_secret).toBe((await fxParked.parkedSecrets('parked')).get(2));
    expect(await fxParked.backup('parked', parked.metadata.uid as string).read()).toBe(parkedSuccessor);
    const parkedEvents = JSON.parse(await kubectlOk(['get', 'events.events.k8s.io', '-n', PARKED_NS, '-o', 'json'])) as { items: { reason: string; eventTime: string }[] };
    const upgraded = parkedEvents.items.filter((e) => Date.parse(e.eventTime) >= startedAt).map((e) => e.reason);
    expect(upgraded.sort()).toEqual(['AllReady', 'Switched']); // no ForeignCredential, no Minted
    phase(`the order ${PREVIOUS_VERSION} left mid-rotation switched to its generation 2`);
    // A minute: nothing minted, deleted or changed; no Keystone call; no API write but that one Event.
    const quietUntil = Date.now() + 60_000;
    while (Date.now() < quietUntil) {
      expect(await keystoneCredentials()).toEqual(keystoneBefore);
      expect(await clusterSnapshot()).toBe(before);
      await new Promise((r) => setTimeout(r, 5_000));
    }
    const calls = proxy.since(mark);
    const text = await metricsText(operator);
    upgradeFigures.keystoneCalls = calls.length;
    upgradeFigures.keystoneWrites = calls.filter(isWrite).length;
    upgradeFigures.apiWrites = metricSum(text, 'keystone_appcred_api_writes_total');
    upgradeFigures.apiWritesEvents = metricSum(text, 'keystone_appcred_api_writes_total', { verb: 'event' });
    upgradeFigures.apiWritesRecords = metricSum(text, 'keystone_appcred_api_writes_total', { kind: 'KeystoneApplicationCredential', verb: 'patchStatus' });
    // The target cluster's `ClusterConnected` Event on its registration Secret: recorded when its API server first
    // answers the new process, by the leader only (src/operator/runtime/kubeconfig-provider.ts), so one when the process
    // already led then, none when it connected as a standby. A write of the registration, not of any order.
    type RegistrationEvent = { reason: string; eventTime: string; regarding: { kind: string; name: string } };
    const registrationEvents = (await getJson<{ items: RegistrationEvent[] }>('events.events.k8s.io', undefined, { namespace: SYSTEM })).items;
    const connected = registrationEvents.filter((e) => e.reason === 'ClusterConnected' && e.regarding.kind === 'Secret' && e.regarding.name === EDGE && Date.parse(e.eventTime) >= startedAt).length;
    upgradeFigures.apiWritesClusterConnected = connected;
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([]);
    // The writes: one status write per order, the record of its backup's migration (the parked order's with its
    // switch), the parked order's delivered Secret and its two Events (Switched, and AllReady as Ready turns True), and
    // the Events below.
    expect(upgradeFigures.apiWritesRecords).toBe(ORDERS.length + 2);
    expect(metricSum(text, 'keystone_appcred_api_writes_total', { kind: 'Secret' })).toBe(1);
    expect(upgradeFigures.apiWrites).toBe((upgradeFigures.apiWritesEvents as number) + (upgradeFigures.apiWritesRecords as number) + 1);
    expect(connected).toBeLessThanOrEqual(1);
    expect(upgradeFigures.apiWritesEvents).toBe(3 + connected);
    expect(text).toMatch(/^keystone_appcred_build_info\{version="\d+\.\d+\.\d+"\} 1$/m);
    phase('a quiet minute');
  });

  it(`${PREVIOUS_VERSION}'s generation 1 is swept at its previousCredentialDeleteAt; the consumers never failed`, async () => {
    const graced = await fx.order('graced');
    const deleteAt = Date.parse(graced.status?.previousCredentialDeleteAt as string);
    const g1 = graced.status?.previousCredentialID as string;
    const goneAt = await eventually(async () => !(g1 in (await keystoneCredentials())) && Date.now(), deleteAt - Date.now() + 120_000, 250);
    upgradeFigures.sweepLateS = (goneAt - deleteAt) / 1000;
    expect(goneAt).toBeGreaterThanOrEqual(deleteAt - 1_000);
    expect(goneAt - deleteAt).toBeLessThan(30_000);
    for (const p of probes) expect(p.failures).toEqual([]);
    phase('generation 1 swept');
  });

  it('a rotation under the new release: one create, the backup at the uid path; a teardown (the target order\'s too) leaves Keystone and both paths empty', async () => {
    const mark = proxy.calls.length;
    await fx.merge('keystoneapplicationcredential', 'steady', { spec: { credentialGeneration: 2 } });
    const steady = await eventually(async () => {
      const o = await fx.order('steady');
      return o.status?.credentialGeneration === 2 && ready(o) && o;
    }, 120_000);
    expect(proxy.since(mark).filter((c) => c.method === 'POST' && c.path.includes('application_credentials'))).toHaveLength(1);
    expect(await ownBackup(fx, 'steady', uids.steady).read()).toBe(steady.status?.credentialID);
    phase('a rotation');
    for (const p of probes) await p.stop();
    for (const p of probes) expect(p.failures).toEqual([]);
    probes.length = 0;
    for (const name of ['graced', 'steady']) await kubectl(['delete', 'keystoneapplicationcredential', name, '-n', NS, '--wait=false']);
    await eventually(async () => (await kubectl(['get', 'keystoneapplicationcredential', 'graced', '-n', NS])).code !== 0 && (await kubectl(['get', 'keystoneapplicationcredential', 'steady', '-n', NS])).code !== 0, 120_000);
    expect(await fx.userCredentials(fx.prefixOf('graced'))).toEqual([]);
    expect(await fx.userCredentials(fx.prefixOf('steady'))).toEqual([]);
    for (const name of ['graced', 'steady']) {
      expect(await ownBackup(fx, name, uids[name]).read()).toBeUndefined();
      expect(await formerBackup(fx, name).read()).toBeUndefined();
    }
    // The target order, minted by 0.1.0, deleted on its cluster under the new release.
    await kubectl(['delete', 'keystoneapplicationcredential', 'edge', '-n', EDGE_NS, '--wait=false'], { as: 'target' });
    await eventually(async () => (await kubectl(['get', 'keystoneapplicationcredential', 'edge', '-n', EDGE_NS], { as: 'target' })).code !== 0, 120_000);
    expect(await fxEdge.userCredentials(fxEdge.prefixOf('edge'))).toEqual([]);
    expect(await ownBackup(fxEdge, 'edge', uids.edge).read()).toBeUndefined();
    expect(await formerBackup(fxEdge, 'edge').read()).toBeUndefined();
    expect(await fxEdge.delivered('edge')).toBeUndefined();
    expect((await fxEdge.parkedSecrets('edge')).size).toBe(0);
    phase('a teardown');
  });
});

describe(`a Pulumi stack created with keystone-appcred ${PREVIOUS_VERSION}'s package, then this one`, () => {
  const TYPE = 'pulumi-nodejs:dynamic/keystone-appcred:KeystoneApplicationCredential';
  const FAKETIME = { LD_PRELOAD: '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', FAKETIME: '+61m', FAKETIME_DONT_FAKE_MONOTONIC: '1' };
  let user: ServiceUser;
  let dir = '';
  const link = (pkg: string, pulumiModules: string) => {
    rmSync(join(dir, 'node_modules'), { recursive: true, force: true });
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(pkg, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
    symlinkSync(pulumiModules, join(dir, 'node_modules', '@pulumi'), 'dir');
  };
  const ok = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    const result = await runPulumi([...args.slice(0, end), '--stack', 'upgrade', '--non-interactive', ...args.slice(end)], { cwd: dir, env, timeoutMs: 240_000 });
    if (result.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed (${String(result.code)}):\n${result.stdout}\n${result.stderr}`.split(user.password).join('***'));
    return result.stdout;
  };
  const outputs = async () => unwrapSecrets(exportedResources(await ok(['stack', 'export', '--show-secrets'])).find((r) => r.type === TYPE)?.outputs ?? {}) as Record<string, string | number | undefined>;
  const creates = (mark: number) => proxy.since(mark).filter((c) => c.method === 'POST' && c.path.includes('application_credentials')).length;
  const atPath = (prefix: string, owner?: string) => new OpenBaoBackup({ ...BAO, path: `keystone/pulumi/${prefix}${owner ? `/${owner}` : ''}/service-accounts/application-credential` });
  /** The keys OpenBao lists under the stack's prefix (`bao kv list openstack/keystone/pulumi/<prefix>`). */
  const underPrefix = async (prefix: string): Promise<string[]> => {
    const res = await fetch(`${BAO.address}/v1/openstack/metadata/keystone/pulumi/${prefix}?list=true`, { headers: { 'x-vault-token': BAO.token } });
    return res.status === 404 ? [] : ((await res.json()) as { data: { keys: string[] } }).data.keys;
  };

  it('created by 0.1.0; up, refresh, a rotation and destroy with this release: one create (the rotation), the backup moved, both paths empty at the end', async () => {
    phaseStart = Date.now();
    user = await createServiceUser('upgrade-pulumi');
    dir = mkdtempSync(join(workDir, 'pulumi-'));
    cpSync(join(__dirname, 'fixtures', 'pulumi-appcred'), dir, { recursive: true });
    link(PREVIOUS, join(PREVIOUS, 'node_modules', '@pulumi'));
    await configureStack(ok, { interval: '1h', gracePeriod: '20m', authUrl: proxy.url, userId: user.userId, projectId: user.projectId, password: user.password });
    await ok(['config', 'set', 'keystone-appcred:openbaoAddress', BAO.address]);
    await ok(['config', 'set', '--secret', 'keystone-appcred:openbaoToken', BAO.token]);
    await ok(['up', '--yes', '--skip-preview']);
    const o1 = await outputs();
    expect(o1.owner).toBeUndefined();
    const prefix = o1.prefix as string;
    expect(await atPath(prefix).read()).toBe(o1.credentialId);
    phase(`pulumi: stack created with ${PREVIOUS_VERSION}`);
    // The package upgraded: this release's build.
    await buildProject();
    link(REPO, join(REPO, 'node_modules', '@pulumi'));
    const mark = proxy.calls.length;
    const up = await ok(['up', '--yes', '--skip-preview']);
    expect(up).not.toMatch(/updated|created|deleted|replaced/);
    await ok(['refresh', '--yes', '--skip-preview']);
    const o2 = await outputs();
    expect(o2.credentialId).toBe(o1.credentialId);
    expect(creates(mark)).toBe(0);
    // The rotation's `up` killed right after its first write, the delivered document at the owner's path (the migration),
    // before Pulumi saved anything (issue 46): the state still names no owner and no such path.
    const killed = await runPulumiToHalt(['up', '--yes', '--skip-preview', '--stack', 'upgrade', '--non-interactive'], { cwd: dir, env: FAKETIME, point: 'update:backup', timeoutMs: 240_000 });
    expect(killed.halted).toBe(true);
    await ok(['cancel', '--yes']);
    expect((await outputs()).owner).toBeUndefined();
    const written = (await underPrefix(prefix)).filter((k) => k !== 'service-accounts/');
    expect(written).toHaveLength(1);
    expect(creates(mark)).toBe(0); // killed before its mint
    await ok(['up', '--yes', '--skip-preview'], FAKETIME);
    const o3 = await outputs();
    expect(o3.credentialGeneration).toBe(2);
    expect(o3.previousCredentialId).toBe(o1.credentialId);
    // The same owner as the killed run: its path is this state's, written again with the rotation's document.
    expect(`${o3.owner as string}/`).toBe(written[0]);
    expect(o3.owner).toMatch(/^[0-9a-f-]{36}$/);
    expect(creates(mark)).toBe(1);
    expect((await new ApplicationCredentials(user.session()).list()).map((c) => c.id).sort()).toEqual([o1.credentialId, o3.credentialId].sort());
    expect(await atPath(prefix, o3.owner as string).read()).toBe(o3.credentialId);
    expect(await atPath(prefix).read()).toBeUndefined();
    phase('pulumi: up, refresh, a rotation killed after its backup, a rotation with this release');
    await ok(['destroy', '--yes', '--skip-preview'], FAKETIME);
    expect((await new ApplicationCredentials(user.session()).list()).map((c) => c.name).filter((n) => n.startsWith(prefix))).toEqual([]);
    expect(await atPath(prefix, o3.owner as string).read()).toBeUndefined();
    expect(await atPath(prefix).read()).toBeUndefined();
    expect(await underPrefix(prefix)).toEqual([]);
    expect(creates(mark)).toBe(1);
    phase('pulumi: destroy');
  });
});
