// @needs kube keystone openbao
/**
 * The reference's own end-to-end story of a KeystoneApplicationCredential (spec, "Chainsaw E2E Tests"), on the real API
 * server, the real Keystone and the real OpenBao, with the operator as a child process under the construct's RBAC:
 * order a credential beside the refused pieces (NoRoleOnProject); assign the role (generation 1, `openstack token issue`
 * with the delivered clouds.yaml); the scheduled rotation (generation 2); the schedule off; the superseded credential
 * authenticates inside the grace period and fails after it; rotate by hand (generation 3); freeze (nothing changes);
 * restore (rotates at once); the assignment held while the order exists; delete the order (nothing left anywhere).
 * Throughout, a consumer probe re-reads the delivered Secret and authenticates with it every second: it never fails.
 * Further cases: repairs, a lost parked secret, a foreign Secret, OpenBao unreachable.
 *
 * The operator runs in the namespaced Secret access (issue 34): its ClusterRole has no rule on Secrets, and its Roles
 * are the ones the constructs synthesize from the ControlPlane declared in the same app (the ControlPlane's namespace
 * and the assigned one), so the whole story is proven under those Roles only.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPrefix } from '../../src/api';
import { OpenBaoBackup } from '../../src/backup/openbao';
import { ApplicationCredentials, KeystoneSession, Users } from '../../src/keystone';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { GROUP, condition, credentialFixtures, type Order } from '../support/credential-fixtures';
import { adminSession, uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, getJson, getTable, kubectl, kubectlOk, type KubeObject } from '../support/kubectl';
import { MIN_SECRET_LENGTH, scanForSecrets } from '../support/secret-scan';
import { declareControlPlane, installCrds, metricsText, namespacedOperatorRbac, operatorKubeconfig, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess, QUICK_ELECTION } from '../support/operator';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(240_000);

const NS = 'kac-story';
const CP_NS = 'kac-story-cp';
const IDENTITY = { namespace: 'kac-story-operator', binding: 'kac-story-operator' };
const USER = uniqueName('story');
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: USER, projectName: uniqueName('story') });
const env = fx.env;
const { order, merge, delivered, authenticates, probe } = fx;
/** The credential names of the ordered user in Keystone (of the order `app` unless another prefix is given). */
const userCredentials = (prefix = childPrefix({ namespace: NS, name: 'app' })) => fx.userCredentials(prefix);
const controlPlane = (assigned: boolean) => fx.controlPlane({ assigned });
const credentialOrder = fx.credentialOrder;
const [projectOrder, userOrder, roleAssignment] = fx.identityOrders();

let unlock: (() => void) | undefined;
let operator: OperatorProcess;
/** The consumer probe on the order `app`, started once generation 1 is delivered. */
let consumer: ReturnType<typeof probe> | undefined;
let kubeconfig = '';
let workDir = '';
const operatorEnv = (baoAddress: string) => ({ KAC_OPENBAO_ADDRESS: baoAddress, KAC_OPENBAO_AUTH_METHOD: 'token', KAC_OPENBAO_TOKEN: process.env.KAC_BAO_TOKEN as string });
const launch = async (name: string, baoAddress = process.env.KAC_BAO_ADDR as string) => {
  operator = await startOperator({
    name,
    kubeconfig,
    namespace: IDENTITY.namespace,
    logDir: workDir,
    args: ['--secret-access', 'namespaced', ...QUICK_ELECTION],
    env: operatorEnv(baoAddress),
  });
  await waitReady(operator);
};

/** `openstack token issue` with a clouds.yaml, in a clean environment. */
function openstackTokenIssue(cloudsYaml: string): Promise<{ project_id: string }> {
  const home = mkdtempSync(join(tmpdir(), 'kac-story-osc-'));
  const file = join(home, 'clouds.yaml');
  writeFileSync(file, cloudsYaml, { mode: 0o600 });
  const cloud = /^ {2}([A-Za-z0-9_-]+):/m.exec(cloudsYaml)?.[1] ?? 'openstack';
  return new Promise((resolve, reject) => {
    execFile('/usr/bin/openstack', ['--os-cloud', cloud, 'token', 'issue', '-f', 'json'], { env: { PATH: '/usr/bin:/bin', HOME: home, OS_CLIENT_CONFIG_FILE: file }, timeout: 60_000 }, (error, out, err) => {
      rmSync(home, { recursive: true, force: true });
      if (error) reject(new Error(`openstack failed: ${error.message}\n${err}`));
      else resolve(JSON.parse(out) as { project_id: string });
    });
  });
}

/** The seven printer columns of an order, as `kubectl get` shows them (the server-side Table). */
async function columns(name: string): Promise<Record<string, unknown>> {
  const table = await getTable(`${GROUP}/namespaces/${NS}/keystoneapplicationcredentials/${name}`);
  return Object.fromEntries(table.columnDefinitions.map((c, i) => [c.name, table.rows[0]?.cells[i]]));
}

beforeAll(async () => {
  unlock = await lockCluster('credential-story.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  const manifests = await installCrds(synthesizeManifests());
  for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  // No rule on Secrets cluster-wide: the Roles the constructs synthesize from the ControlPlane declared in the app.
  const rbac = namespacedOperatorRbac(IDENTITY, (chart) => declareControlPlane(chart, controlPlane(true) as Parameters<typeof declareControlPlane>[1]));
  kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'credential-story.kubeconfig'), { rbac });
  await applyOk(fx.adminSecret(), { fieldManager: 'kac-test' });
  await applyOk(controlPlane(true), { fieldManager: 'kac-test' });
  await launch('story-a');
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await consumer?.stop();
  await operator?.server.stop(5_000);
  // KAC_KEEP_LOGS=dir keeps the operators' logs for a look after the run.
  if (process.env.KAC_KEEP_LOGS) for (const n of ['story-a', 'story-b', 'story-c']) cpSync(join(workDir, `${n}.log`), join(process.env.KAC_KEEP_LOGS, `${n}.log`), { force: true });
  await releaseLeftovers([NS, CP_NS]);
  for (const ns of [NS, CP_NS]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
  await kubectl(['delete', 'namespace', IDENTITY.namespace, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  unlock?.();
});

describe('the KeystoneApplicationCredential story on the real API server, Keystone and OpenBao', () => {
  let g1: Record<string, string>;
  const latency: { rotation?: number; bare?: number } = {};

  it('runs under the namespaced Secret access: Secrets in the two namespaces only, none across the cluster', async () => {
    const can = async (verb: string, where: string[]) => (await kubectl(['auth', 'can-i', verb, 'secrets', ...where, `--as=system:serviceaccount:${IDENTITY.namespace}:operator`])).stdout.trim();
    for (const ns of [NS, CP_NS]) for (const verb of ['list', 'create', 'delete']) expect(`${ns} ${verb} ${await can(verb, ['-n', ns])}`).toBe(`${ns} ${verb} yes`);
    expect(await can('list', ['--all-namespaces'])).toBe('no');
    expect(await can('get', ['-n', 'kube-system'])).toBe('no');
  });

  it('orders a credential beside the refused pieces: NoRoleOnProject, nothing in Keystone', async () => {
    await applyOk([projectOrder, userOrder, credentialOrder('app', { interval: '1m', gracePeriod: '20s' })], { fieldManager: 'kac-test' });
    const refused = await eventually(async () => {
      const o = await order('app');
      return condition(o, 'CredentialReady')?.reason === 'NoRoleOnProject' && o;
    }, 60_000);
    expect(condition(refused, 'Ready')).toMatchObject({ status: 'False' });
    expect(await userCredentials()).toEqual([]);
    expect(await delivered('app')).toBeUndefined();
    expect(await columns('app')).toMatchObject({ Ready: 'False', ControlPlane: 'cp', User: 'svc', Project: 'proj' });
  });

  it('assigns the role: generation 1 is delivered, and openstack token issue works with the delivered clouds.yaml', async () => {
    await applyOk(roleAssignment, { fieldManager: 'kac-test' });
    const o = await eventually(async () => {
      const o = await order('app');
      return o.status?.credentialGeneration === 1 && o.status.secretName === 'app-credentials' && condition(o, 'Ready')?.status === 'True' && o;
    }, 60_000);
    g1 = (await delivered('app')) as Record<string, string>;
    expect(Object.keys(g1).sort()).toEqual(['application_credential_id', 'application_credential_secret', 'clouds.yaml']);
    expect(g1.application_credential_id).toBe(o.status?.credentialID);
    const issued = await openstackTokenIssue(g1['clouds.yaml']);
    const project = await getJson<{ status: { projectID: string } } & KubeObject>('keystoneproject', 'proj', { namespace: NS });
    expect(issued.project_id).toBe(project.status.projectID);
    expect(await columns('app')).toMatchObject({ Ready: 'True', Generation: 1, NextRotation: o.status?.nextRotation });
    consumer = probe('app');
  });

  it('the scheduled rotation switches to generation 2; both authenticate in the grace period', async () => {
    const before = await order('app');
    const due = Date.parse(before.status?.nextRotation as string);
    // The moment the delivered Secret carries generation 2, polled fast.
    const switched = await eventually(async () => {
      const doc = await delivered('app');
      return doc && doc.application_credential_id !== g1.application_credential_id && Date.now();
    }, 120_000, 100);
    latency.rotation = switched - due;
    const o = await eventually(async () => {
      const o = await order('app');
      return o.status?.credentialGeneration === 2 && o;
    }, 30_000);
    expect(o.status).toMatchObject({ previousCredentialID: g1.application_credential_id, previousCredentialGeneration: 1 });
    expect(await authenticates(g1.application_credential_id, g1.application_credential_secret)).toBe(true);
    expect(await userCredentials()).toEqual([`${childPrefix({ namespace: NS, name: 'app' })}-credential-v1`, `${childPrefix({ namespace: NS, name: 'app' })}-credential-v2`]);
    // The bare work of a rotation in the same run: one Keystone create as the user and one OpenBao write.
    const svc = await getJson<{ status: { userID: string } } & KubeObject>('keystoneuser', 'svc', { namespace: NS });
    const password = (await kubectlOk(['get', 'secret', '-n', NS, 'svc-credentials', '-o', 'jsonpath={.data.password}'])).trim();
    const project = await getJson<{ status: { projectID: string } } & KubeObject>('keystoneproject', 'proj', { namespace: NS });
    const session = new KeystoneSession({ authUrl: env.authUrl, auth: { method: 'password', user: { id: svc.status.userID }, password: Buffer.from(password, 'base64').toString(), project: { id: project.status.projectID } } });
    await session.token();
    const t0 = performance.now();
    const bare = await new ApplicationCredentials(session).create({ name: uniqueName('bare'), secret: 'x'.repeat(43), expiresAt: new Date(Date.now() + 3_600_000) });
    await new OpenBaoBackup({ address: process.env.KAC_BAO_ADDR as string, token: process.env.KAC_BAO_TOKEN as string, path: `keystone/bench/${uniqueName('bare')}` }).write({ 'clouds.yaml': 'x', application_credential_id: bare.id, application_credential_secret: 'x' });
    latency.bare = performance.now() - t0;
    await new ApplicationCredentials(session).delete(bare.id);
    process.stderr.write(`[credential-story] rotation latency (nextRotation due → Secret carries generation 2): ${latency.rotation} ms; bare Keystone create + OpenBao write: ${Math.round(latency.bare)} ms\n`);
  });

  it('turns the schedule off: the superseded credential authenticates inside the grace period and fails after it', async () => {
    await merge('keystoneapplicationcredential', 'app', { spec: { rotation: { interval: '0s' } } });
    expect(await authenticates(g1.application_credential_id, g1.application_credential_secret)).toBe(true);
    await eventually(async () => !(await authenticates(g1.application_credential_id, g1.application_credential_secret)), 60_000, 1000);
    const swept = await eventually(async () => {
      const o = await order('app');
      return o.status?.previousCredentialID === undefined && o.status?.nextRotation === undefined && o;
    }, 30_000);
    expect(swept.status?.credentialGeneration).toBe(2);
    expect(await userCredentials()).toEqual([`${childPrefix({ namespace: NS, name: 'app' })}-credential-v2`]);
  });

  it('a new order, while nothing else moves, takes at most 5 API writes, Events included (the operator\'s keystone_appcred_api_writes_total)', async () => {
    const writes = async () => {
      let sum = 0;
      for (const m of (await metricsText(operator)).matchAll(/^keystone_appcred_api_writes_total\{([^}]*)\} (\S+)$/gm)) sum += Number(m[2]);
      return sum;
    };
    const before = await writes();
    await applyOk(credentialOrder('counted', { interval: '720h', gracePeriod: '1h' }), { fieldManager: 'kac-test' });
    await eventually(async () => {
      const o = await order('counted');
      return o.status?.credentialGeneration === 1 && condition(o, 'Ready')?.status === 'True' && o;
    }, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // Events are posted after the status write
    const made = (await writes()) - before;
    const events = await getJson<{ items: { reason: string; regarding: { name: string } }[] }>('events.events.k8s.io', undefined, { namespace: NS });
    expect(events.items.filter((e) => e.regarding.name === 'counted').map((e) => e.reason)).toEqual(['Minted']); // a first delivery is no switch
    expect(made).toBeLessThanOrEqual(5);
    await kubectlOk(['delete', 'keystoneapplicationcredential', 'counted', '-n', NS, '--wait=true', '--timeout=60s']);
    expect(await userCredentials(childPrefix({ namespace: NS, name: 'counted' }))).toEqual([]);
  });

  it('rotates by hand: a raised credentialGeneration creates generation 3 at once', async () => {
    await merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 3 } });
    const o = await eventually(async () => {
      const o = await order('app');
      return o.status?.credentialGeneration === 3 && !!o.status.secretName && o;
    }, 60_000);
    expect(o.status?.previousCredentialGeneration).toBe(2);
    const doc = await delivered('app');
    expect(doc?.application_credential_id).toBe(o.status?.credentialID);
    expect(await columns('app')).toMatchObject({ Ready: 'True', Generation: 3 });
  });

  it('removing the namespace assignment freezes the order: nothing in Keystone, OpenBao or the Secret changes', async () => {
    await applyOk(controlPlane(false), { fieldManager: 'kac-test' });
    await eventually(async () => condition(await order('app'), 'CredentialReady')?.reason === 'NamespaceNotAssigned', 60_000);
    const backup = fx.backup('app', (await order('app')).metadata.uid as string);
    const snapshot = async () => ({ keystone: await userCredentials(), backup: await backup.readDocument(), secret: await delivered('app') });
    const before = await snapshot();
    await merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 4 } });
    await new Promise((r) => setTimeout(r, 6_000));
    expect(await snapshot()).toEqual(before);
    const o = await order('app');
    expect(o.status?.credentialGeneration).toBe(3);
    expect(condition(o, 'DeliveryReady')?.reason).toBe('NamespaceNotAssigned');
    expect(await columns('app')).toMatchObject({ Ready: 'False', Generation: 3 });
  });

  it('restoring it rotates at once: the raised generation 4 is created and delivered', async () => {
    await applyOk(controlPlane(true), { fieldManager: 'kac-test' });
    const o = await eventually(async () => {
      const o = await order('app');
      return o.status?.credentialGeneration === 4 && condition(o, 'Ready')?.status === 'True' && o;
    }, 60_000);
    expect((await delivered('app'))?.application_credential_id).toBe(o.status?.credentialID);
  });
});

describe('repairs and refusals (further cases)', () => {
  const prefix = childPrefix({ namespace: NS, name: 'extra' });
  const ready = (generation: number) =>
    eventually(async () => {
      const o = await order('extra');
      return o.status?.credentialGeneration === generation && condition(o, 'Ready')?.status === 'True' && o;
    }, 60_000);

  it('an edited key is rewritten, a key somebody else added stays', async () => {
    await applyOk(credentialOrder('extra', { interval: '1h', gracePeriod: '10m' }), { fieldManager: 'kac-test' });
    await ready(1);
    const good = (await delivered('extra')) as Record<string, string>;
    await merge('secret', 'extra-credentials', { data: { application_credential_secret: Buffer.from('edited').toString('base64'), note: Buffer.from('mine').toString('base64') } });
    const repaired = await eventually(async () => {
      const doc = await delivered('extra');
      return doc?.application_credential_secret === good.application_credential_secret && doc;
    }, 30_000);
    expect(repaired.note).toBe('mine');
  });

  it('a deleted delivered Secret is written again from the parked secret, with no new credential', async () => {
    const before = await userCredentials(prefix);
    const id = (await delivered('extra'))?.application_credential_id;
    await kubectlOk(['delete', 'secret', '-n', NS, 'extra-credentials']);
    const again = await eventually(async () => delivered('extra'), 30_000);
    expect(again.application_credential_id).toBe(id);
    expect(await userCredentials(prefix)).toEqual(before);
  });

  it('a deleted secret-v<N> of the delivered generation (its secret lost) is replaced by a new generation', async () => {
    await kubectlOk(['delete', 'secret', '-n', CP_NS, `${prefix}-secret-v1`]);
    const o = await ready(2);
    expect((await delivered('extra'))?.application_credential_id).toBe(o.status?.credentialID);
  });

  it('a live credential deleted in Keystone by hand is noticed once the user changes the order: a new generation is minted and delivered', async () => {
    await applyOk(credentialOrder('gone', { interval: '1h', gracePeriod: '10m' }), { fieldManager: 'kac-test' });
    const first = await eventually(async () => {
      const o = await order('gone');
      return o.status?.credentialGeneration === 1 && condition(o, 'Ready')?.status === 'True' && o;
    }, 60_000);
    const admin = adminSession(env);
    try {
      const user = await new Users(admin).findByName(USER);
      await admin.request({ method: 'DELETE', path: admin.transport.pathOf(`users/${user?.id}/application_credentials/${first.status?.credentialID}`) });
    } finally {
      await admin.close();
    }
    expect(await userCredentials(childPrefix({ namespace: NS, name: 'gone' }))).toEqual([]);
    // The operator's list of the user's credentials is seconds old; a change the user makes to the order lists anew
    // (docs/concepts/passes.md, "To make an order look now, change it").
    await merge('keystoneapplicationcredential', 'gone', { metadata: { annotations: { 'example.com/recheck': String(Date.now()) } } });
    const o = await eventually(async () => {
      const o = await order('gone');
      return o.status?.credentialGeneration === 2 && condition(o, 'Ready')?.status === 'True' && o;
    }, 60_000);
    const doc = await delivered('gone');
    expect(doc?.application_credential_id).toBe(o.status?.credentialID);
    expect(await authenticates(doc?.application_credential_id, doc?.application_credential_secret)).toBe(true);
  });

  it('a foreign Secret of the delivered name: DeliveryRefused, and it is never touched', async () => {
    await applyOk({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'taken-credentials', namespace: NS }, stringData: { mine: 'yes' } } as KubeObject, { fieldManager: 'someone-else' });
    await applyOk(credentialOrder('taken', { interval: '1h', gracePeriod: '10m' }), { fieldManager: 'kac-test' });
    const o = await eventually(async () => {
      const o = await order('taken');
      return condition(o, 'DeliveryReady')?.reason === 'DeliveryRefused' && o;
    }, 60_000);
    expect(o.status?.secretName).toBeUndefined();
    const secret = await getJson<KubeObject & { data: Record<string, string> }>('secret', 'taken-credentials', { namespace: NS });
    expect(Object.keys(secret.data)).toEqual(['mine']);
    expect(secret.metadata.ownerReferences).toBeUndefined();
    const events = await getJson<{ items: { reason: string; regarding: { name: string } }[] }>('events.events.k8s.io', undefined, { namespace: NS });
    expect(events.items.some((e) => e.reason === 'DeliveryRefused' && e.regarding.name === 'taken')).toBe(true);
    await kubectlOk(['delete', 'keystoneapplicationcredential', '-n', NS, 'taken']);
  });

  it('OpenBao unreachable: BackupNotSynced, and the Secret keeps the old generation until the backup holds the new one', async () => {
    const backedPrefix = childPrefix({ namespace: NS, name: 'backed' });
    // A grace period of 0s: no grace period holds the raised generation back (none runs after the first credential).
    await applyOk(credentialOrder('backed', { interval: '1h', gracePeriod: '0s' }), { fieldManager: 'kac-test' });
    await eventually(async () => (await order('backed')).status?.credentialGeneration === 1 && !!(await delivered('backed')), 60_000);
    const id = (await delivered('backed'))?.application_credential_id;
    await operator.server.stop(10_000);
    await launch('story-b', 'http://127.0.0.1:1'); // nothing listens there
    await merge('keystoneapplicationcredential', 'backed', { spec: { credentialGeneration: 2 } });
    const waiting = await eventually(async () => {
      const o = await order('backed');
      return condition(o, 'DeliveryReady')?.reason === 'BackupNotSynced' && (await userCredentials(backedPrefix)).length === 2 && o;
    }, 60_000);
    expect(condition(waiting, 'DeliveryReady')?.message).toMatch(/backup cannot be read/);
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await delivered('backed'))?.application_credential_id).toBe(id);
    expect((await order('backed')).status?.credentialGeneration).toBe(1);
    await operator.server.stop(10_000);
    await launch('story-c');
    const o = await eventually(async () => {
      const o = await order('backed');
      return o.status?.credentialGeneration === 2 && condition(o, 'Ready')?.status === 'True' && o;
    }, 60_000);
    const backup = fx.backup('backed', o.metadata.uid as string);
    expect(await backup.read()).toBe(o.status?.credentialID);
    expect((await delivered('backed'))?.application_credential_id).toBe(o.status?.credentialID);
  });
});

describe('the end of the story', () => {
  it('deleting the role assignment while the order exists is held: ReferencedByApplicationCredentials', async () => {
    await kubectlOk(['delete', 'keystoneroleassignment', '-n', NS, 'member', '--wait=false']);
    await eventually(async () => {
      const a = await getJson<Order>('keystoneroleassignment', 'member', { namespace: NS });
      return condition(a, 'AssignmentReady')?.reason === 'ReferencedByApplicationCredentials';
    }, 60_000);
  });

  it('the consumer probe never failed to authenticate, across every rotation and operator restart', async () => {
    expect(consumer).toBeDefined();
    await consumer?.stop();
    process.stderr.write(`[credential-story] consumer probe: ${consumer?.attempts} authentications, ${consumer?.failures.length} failed\n`);
    expect(consumer?.failures).toEqual([]);
    expect(consumer?.attempts).toBeGreaterThan(60);
  });

  it('deleting the orders leaves no credential in Keystone, an empty OpenBao path, no secret-v<N>, no delivered Secret', async () => {
    const uidOf = new Map<string, string>();
    for (const name of ['app', 'extra', 'gone', 'backed']) uidOf.set(name, (await order(name)).metadata.uid as string);
    for (const name of ['app', 'extra', 'gone', 'backed']) await kubectlOk(['delete', 'keystoneapplicationcredential', '-n', NS, name, '--wait=false']);
    for (const name of ['app', 'extra', 'gone', 'backed']) {
      await eventually(async () => (await kubectl(['get', 'keystoneapplicationcredential', '-n', NS, name])).code !== 0, 60_000);
      const prefix = childPrefix({ namespace: NS, name });
      expect(await userCredentials(prefix)).toEqual([]);
      const backup = fx.backup(name, uidOf.get(name) as string);
      expect(await backup.readDocument()).toBeUndefined();
      const children = await kubectlOk(['get', 'secret', '-n', CP_NS, '-l', `c5c3.io/keystoneapplicationcredential-name=${name}`, '-o', 'name']);
      expect(children.trim()).toBe('');
      expect(await delivered(name)).toBeUndefined();
    }
    // The held assignment goes once no order holds it.
    await eventually(async () => (await kubectl(['get', 'keystoneroleassignment', '-n', NS, 'member'])).code !== 0, 60_000);
  });

  it('deleting the user, the project and the ControlPlane leaves nothing of the story in Keystone', async () => {
    await kubectlOk(['delete', 'keystoneuser,keystoneproject', '--all', '-n', NS, '--wait=false']);
    await eventually(async () => (await kubectlOk(['get', 'keystoneuser,keystoneproject', '-n', NS, '-o', 'name'])).trim() === '', 60_000);
    expect(await new Users(adminSession()).findByName(USER)).toBeUndefined();
    await kubectlOk(['delete', 'controlplane', '-n', CP_NS, 'cp']);
  });

  it('no minted secret appears in the operator log, the events or any status', async () => {
    expect(fx.secretsSeen.size).toBeGreaterThanOrEqual(5);
    const texts = [
      { source: 'operator log story-c', text: readFileSync(operator.server.log, 'utf8') },
      ...['story-a', 'story-b'].map((n) => ({ source: `operator log ${n}`, text: readFileSync(join(workDir, `${n}.log`), 'utf8') })),
      { source: 'events', text: await kubectlOk(['get', 'events.events.k8s.io', '-A', '-o', 'json']) },
      { source: 'plane orders', text: await kubectlOk(['get', 'keystoneusers,keystoneprojects,keystoneroleassignments,controlplanes', '-A', '-o', 'json']) },
      ...fx.statusesRead,
    ];
    // The short values this file wrote into a delivered Secret itself ('edited') are no minted secrets.
    const minted = [...fx.secretsSeen].filter((secret) => secret.length >= MIN_SECRET_LENGTH);
    expect(minted.length).toBeGreaterThanOrEqual(5);
    expect(scanForSecrets(texts, [...minted, env.adminPassword])).toEqual([]);
  });
});
