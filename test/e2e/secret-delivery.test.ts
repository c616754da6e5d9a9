// @needs kube keystone openbao
/**
 * Issue 49 on the operator, with `keystone-appcred operator` as a child process under the construct's RBAC, the real
 * API server, Keystone and OpenBao:
 * - a Secret template (labels, annotations, `cloud.conf`, the `OS_*` keys, keys of your own): a real openstackclient
 *   run with only the Secret's `OS_*` keys as its environment (what `envFrom` gives a container) authenticates;
 *   `cloud.conf` read by the cloud controller manager's parser (gcfg) authenticates through gophercloud
 *   (test/support/go/cloudconf); a rotation updates every key in one write (a watch sees no version of the Secret with
 *   keys of two generations); a key, label or format removed from the template leaves the Secret; a foreign writer's
 *   key and label survive;
 * - deletionPolicy Retain: the order deleted, the delivered credential keeps authenticating, its Secret stays (no owner
 *   reference), its backup stays, the superseded one and every child are gone, an Event (and the log) says so with the
 *   commands that remove it; those commands remove it;
 * - revoke now, by the annotation and by `keystone-appcred rotate --revoke-previous --wait`, also during a grace
 *   period: the revoked credential stops authenticating within seconds of the switch, a Warning Event GraceSkipped
 *   says so, and a consumer probe re-reading the Secret fails at most around the switch;
 * - adoption of a hand-made credential: nothing minted, the status records it, the next rotation supersedes it and its
 *   sweep deletes it; a wrong secret and an unrestricted credential are refused (AdoptionRefused), nothing minted;
 * - no secret in the operator's log, the Events or any status.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPrefix } from '../../src/api';
import { ApplicationCredentials, KeystoneSession, Users } from '../../src/keystone';
import { resolveBinary } from '../support/binaries';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures, type Order } from '../support/credential-fixtures';
import { adminSession, uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, kubeconfigFor, kubectl, kubectlOk, type KubeObject } from '../support/kubectl';
import { installCrds, operatorKubeconfig, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess, QUICK_ELECTION, openBaoTokenEnv } from '../support/operator';
import { MIN_SECRET_LENGTH, scanForSecrets } from '../support/secret-scan';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(240_000);

const NS = 'kac-shapes';
const CP_NS = 'kac-shapes-cp';
const IDENTITY = { namespace: 'kac-shapes-operator', binding: 'kac-shapes-operator' };
const USER = uniqueName('shapes');
const PROJECT = uniqueName('shapes');
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: USER, projectName: PROJECT });
const { env, order, delivered, authenticates } = fx;
const REPO = join(__dirname, '..', '..');

let unlock: (() => void) | undefined;
let operator: OperatorProcess;
let workDir = '';
/** Secrets this file handed over or saw, for the scan. */
const seen = new Set<string>();

const credential = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'c5c3.io/v1alpha1',
  kind: 'KeystoneApplicationCredential',
  metadata: { name, namespace: NS },
  spec: { ...fx.ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, ...spec },
});

async function orderWhere(name: string, check: (o: Order) => boolean, what: string, timeoutMs = 60_000): Promise<Order> {
  return eventually(async () => {
    const o = await order(name);
    if (check(o)) return o;
    throw new Error(`${name} ${what}: ${JSON.stringify(o.status)}`);
  }, timeoutMs);
}

const ready = (generation: number) => (o: Order) => o.status?.credentialGeneration === generation && o.status.secretName !== undefined && condition(o, 'Ready')?.status === 'True';

/** The delivered Secret whole: data (decoded), labels, annotations, owner references; undefined while there is none. */
async function secretObject(name: string): Promise<{ data: Record<string, string>; labels: Record<string, string>; annotations: Record<string, string>; owners: unknown[] } | undefined> {
  const result = await kubectl(['get', 'secret', `${name}-credentials`, '-n', NS, '-o', 'json']);
  if (result.code !== 0) return undefined;
  const s = JSON.parse(result.stdout) as { data?: Record<string, string>; metadata: { labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: unknown[] } };
  const data = Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  if (data.application_credential_secret) seen.add(data.application_credential_secret);
  return { data, labels: s.metadata.labels ?? {}, annotations: s.metadata.annotations ?? {}, owners: s.metadata.ownerReferences ?? [] };
}

/** Runs a program with exactly `environment` (and PATH, HOME); resolves with stdout, rejects with stderr. */
function run(program: string, args: readonly string[], environment: Record<string, string> = {}): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'kac-shapes-'));
  return new Promise<string>((resolve, reject) => {
    execFile(program, [...args], { env: { PATH: '/usr/bin:/bin', HOME: home, ...environment }, timeout: 60_000 }, (error, out, err) => {
      rmSync(home, { recursive: true, force: true });
      if (error) reject(new Error(`${program} ${args.join(' ')} failed: ${error.message}\n${err}\n${out}`));
      else resolve(out);
    });
  });
}

/** Events about an order, as `<type> <reason>: <note>`. */
async function eventsOf(name: string): Promise<string[]> {
  const list = JSON.parse(await kubectlOk(['get', 'events.events.k8s.io', '-n', NS, '-o', 'json'])) as { items: { reason: string; note: string; type: string; regarding?: { name?: string } }[] };
  return list.items.filter((e) => e.regarding?.name === name).map((e) => `${e.type} ${e.reason}: ${e.note}`);
}

/** A session as the ordered user, scoped to the ordered project (its password from the KeystoneUser's Secret). */
async function asUser(): Promise<KeystoneSession> {
  const password = (await delivered('svc'))?.password as string;
  return new KeystoneSession({ authUrl: env.authUrl, auth: { method: 'password', user: { name: USER, domainName: env.domain }, password, project: { name: PROJECT, domainName: env.domain } } });
}

beforeAll(async () => {
  unlock = await lockCluster('secret-delivery.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  const manifests = await installCrds(synthesizeManifests());
  for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  const kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'secret-delivery.kubeconfig'));
  await applyOk([fx.adminSecret(), fx.controlPlane(), ...fx.identityOrders()], { fieldManager: 'kac-test' });
  operator = await startOperator({
    name: 'shapes',
    kubeconfig,
    namespace: IDENTITY.namespace,
    logDir: workDir,
    args: QUICK_ELECTION,
    env: openBaoTokenEnv(),
  });
  await waitReady(operator);
  await eventually(async () => (await delivered('svc'))?.password !== undefined, 60_000);
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await operator?.server.stop(5_000);
  await releaseLeftovers([NS, CP_NS]);
  for (const ns of [NS, CP_NS, IDENTITY.namespace]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  const admin = adminSession(env);
  const user = await new Users(admin).findByName(USER);
  if (user) await admin.request({ method: 'DELETE', path: admin.transport.pathOf(`users/${user.id}`) }).catch(() => undefined);
  const projects = (await admin.request({ method: 'GET', path: admin.transport.pathOf(`projects?name=${encodeURIComponent(PROJECT)}`) })).body as { projects: { id: string }[] };
  for (const p of projects.projects) await admin.request({ method: 'DELETE', path: admin.transport.pathOf(`projects/${p.id}`) }).catch(() => undefined);
  await admin.close();
  unlock?.();
}, 60_000);

describe('a Secret template', () => {
  const TEMPLATE = {
    labels: { team: 'platform', 'velero.io/backup': 'keep' },
    annotations: { 'reflector.v1.k8s.emberstack.com/reflection-allowed': 'true' },
    formats: ['CloudConf', 'Env'],
    data: {
      'openrc.sh': 'export OS_AUTH_URL={{ authURL }}\nexport OS_APPLICATION_CREDENTIAL_ID={{applicationCredentialID}}\n',
      'scope.json': '{"user":"{{ userID }}","project":"{{ projectID }}","name":"{{ projectName }}","domain":"{{ projectDomainName }}","region":"{{ region }}","interface":"{{ interface }}"}',
    },
  };

  it('delivers the labels, annotations, cloud.conf, the OS_* keys and the keys of your own beside the three keys', async () => {
    await applyOk(credential('tpl', { rotation: { interval: '1h', gracePeriod: '20s' }, secretTemplate: TEMPLATE }), { fieldManager: 'kac-test' });
    const o = await orderWhere('tpl', ready(1), 'delivers generation 1');
    const s = (await secretObject('tpl')) as NonNullable<Awaited<ReturnType<typeof secretObject>>>;
    const id = o.status?.credentialID as string;
    expect(s.labels).toMatchObject({ team: 'platform', 'velero.io/backup': 'keep', 'c5c3.io/keystoneapplicationcredential-name': 'tpl' });
    expect(s.annotations).toMatchObject({ 'reflector.v1.k8s.emberstack.com/reflection-allowed': 'true', 'c5c3.io/keystoneapplicationcredential-template': expect.any(String) });
    expect(Object.keys(s.data).sort()).toEqual(
      [
        'clouds.yaml',
        'application_credential_id',
        'application_credential_secret',
        'cloud.conf',
        'OS_AUTH_TYPE',
        'OS_AUTH_URL',
        'OS_APPLICATION_CREDENTIAL_ID',
        'OS_APPLICATION_CREDENTIAL_SECRET',
        'OS_REGION_NAME',
        'OS_INTERFACE',
        'OS_IDENTITY_API_VERSION',
        'openrc.sh',
        'scope.json',
      ].sort(),
    );
    expect(o.status?.secretKeys).toEqual(expect.arrayContaining(['clouds.yaml', 'cloud.conf', 'OS_AUTH_URL', 'openrc.sh']));
    expect(s.data['openrc.sh']).toBe(`export OS_AUTH_URL=${env.authUrl}\nexport OS_APPLICATION_CREDENTIAL_ID=${id}\n`);
    const scope = JSON.parse(s.data['scope.json']) as Record<string, string>;
    const user = await new Users(adminSession(env)).findByName(USER);
    expect(scope).toMatchObject({ user: user?.id, name: PROJECT, domain: 'Default', region: 'RegionOne', interface: 'public' });
    expect(scope.project).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a real openstackclient with only the Secret\'s OS_* keys as its environment (envFrom) authenticates', async () => {
    const s = await secretObject('tpl');
    const osKeys = Object.fromEntries(Object.entries(s?.data ?? {}).filter(([k]) => k.startsWith('OS_')));
    const issued = JSON.parse(await run('/usr/bin/openstack', ['token', 'issue', '-f', 'json'], osKeys)) as { project_id: string };
    expect(JSON.parse(s?.data['scope.json'] ?? '{}')).toMatchObject({ project: issued.project_id });
  });

  it('cloud.conf, read by the cloud controller manager\'s parser (gcfg), authenticates through gophercloud', async () => {
    const s = await secretObject('tpl');
    const dir = mkdtempSync(join(tmpdir(), 'kac-cloudconf-'));
    try {
      writeFileSync(join(dir, 'cloud.conf'), s?.data['cloud.conf'] ?? '', { mode: 0o600 });
      const read = JSON.parse(await run(resolveBinary('cloudconf').path, [join(dir, 'cloud.conf')])) as Record<string, unknown>;
      expect(read).toMatchObject({
        authenticated: true,
        authURL: env.authUrl,
        region: 'RegionOne',
        endpointType: 'public',
        applicationCredentialID: s?.data.application_credential_id,
        secretSHA256: createHash('sha256').update(s?.data.application_credential_secret ?? '').digest('hex'),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a rotation rewrites every key in one write: no version of the Secret carries keys of two generations; a foreign writer\'s key and label survive', async () => {
    // Another field manager adds a key and a label, as a tenant's tool would.
    await kubectlOk(['label', 'secret', 'tpl-credentials', '-n', NS, 'owner=tenant']);
    await kubectlOk(['patch', 'secret', 'tpl-credentials', '-n', NS, '--type=merge', '-p', JSON.stringify({ stringData: { 'foreign.txt': 'kept' } })]);
    const versions: Record<string, string>[] = [];
    // Every version the API server sends a watch: one line of the Secret's data per event.
    const watch = spawn(process.env.KAC_KUBECTL as string, [`--kubeconfig=${kubeconfigFor('admin')}`, 'get', 'secret', 'tpl-credentials', '-n', NS, '--watch', '-o', 'jsonpath={.data}{"\\n"}'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: '' },
    });
    let buffer = '';
    let watchErrors = '';
    watch.stderr.setEncoding('utf8').on('data', (chunk: string) => (watchErrors += chunk));
    watch.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end).trim();
        buffer = buffer.slice(end + 1);
        if (line) versions.push(Object.fromEntries(Object.entries(JSON.parse(line) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])));
      }
    });
    await eventually(async () => versions.length > 0 || (watchErrors ? Promise.reject(new Error(watchErrors)) : false), 20_000);
    try {
      await fx.merge('keystoneapplicationcredential', 'tpl', { spec: { credentialGeneration: 2 } });
      await orderWhere('tpl', ready(2), 'delivers generation 2');
      await eventually(async () => versions.some((v) => v.application_credential_id !== versions[0]?.application_credential_id), 20_000);
    } finally {
      watch.kill();
    }
    expect(versions.length).toBeGreaterThanOrEqual(2);
    for (const v of versions) {
      const id = v.application_credential_id;
      const secret = v.application_credential_secret;
      expect([v.OS_APPLICATION_CREDENTIAL_ID, /application-credential-id = "(\w+)"/.exec(v['cloud.conf'])?.[1], /CREDENTIAL_ID=(\w+)/.exec(v['openrc.sh'])?.[1]]).toEqual([id, id, id]);
      expect(v.OS_APPLICATION_CREDENTIAL_SECRET).toBe(secret);
      expect(v['clouds.yaml']).toContain(id);
      seen.add(secret);
    }
    const s = await secretObject('tpl');
    expect(s?.data['foreign.txt']).toBe('kept');
    expect(s?.labels.owner).toBe('tenant');
  });

  it('a key, a label and a format removed from the template leave the Secret; the foreign key stays', async () => {
    // A JSON merge patch: null removes a key of a map, a list is replaced.
    await fx.merge('keystoneapplicationcredential', 'tpl', { spec: { secretTemplate: { labels: { 'velero.io/backup': null }, annotations: null, formats: ['CloudConf'], data: { 'scope.json': null } } } });
    const s = await eventually(async () => {
      const now = await secretObject('tpl');
      return now && now.data.OS_AUTH_URL === undefined && now.data['scope.json'] === undefined && now.labels['velero.io/backup'] === undefined && now;
    }, 30_000);
    expect(Object.keys(s.data).sort()).toEqual(['application_credential_id', 'application_credential_secret', 'cloud.conf', 'clouds.yaml', 'foreign.txt', 'openrc.sh']);
    expect(s.labels).toMatchObject({ team: 'platform', owner: 'tenant' });
    expect(s.annotations['reflector.v1.k8s.emberstack.com/reflection-allowed']).toBeUndefined();
    expect((await order('tpl')).status?.secretKeys).toEqual(['clouds.yaml', 'application_credential_id', 'application_credential_secret', 'cloud.conf', 'openrc.sh']);
  });
});

describe('deletionPolicy Retain', () => {
  it('deleting the order keeps the delivered credential, its Secret (no owner reference) and its backup; the superseded one and every child go; the Event prints the commands', async () => {
    await applyOk(credential('keep', { rotation: { interval: '1h', gracePeriod: '10m' }, deletionPolicy: 'Retain' }), { fieldManager: 'kac-test' });
    await orderWhere('keep', ready(1), 'delivers generation 1');
    const g1 = (await delivered('keep')) as Record<string, string>;
    await fx.merge('keystoneapplicationcredential', 'keep', { spec: { credentialGeneration: 2 } });
    const o = await orderWhere('keep', (x) => ready(2)(x) && x.status?.previousCredentialID !== undefined, 'switches to generation 2 in its grace period');
    const [live, superseded, uid] = [o.status?.credentialID as string, o.status?.previousCredentialID as string, o.metadata.uid as string];
    const before = (await delivered('keep')) as Record<string, string>;
    await kubectlOk(['delete', 'keystoneapplicationcredential', 'keep', '-n', NS, '--wait=true', '--timeout=60s']);
    const s = await secretObject('keep');
    expect(s?.owners).toEqual([]);
    expect(s?.data.application_credential_id).toBe(live);
    expect(await authenticates(live, before.application_credential_secret)).toBe(true);
    expect(await fx.userCredentials(childPrefix({ namespace: NS, name: 'keep' }))).toEqual([`${childPrefix({ namespace: NS, name: 'keep' })}-credential-v2`]);
    expect(superseded).toBe(g1.application_credential_id);
    expect(await authenticates(superseded, g1.application_credential_secret)).toBe(false);
    expect((await fx.parkedSecrets('keep')).size).toBe(0);
    const backup = fx.backup('keep', uid);
    expect(await backup.read()).toBe(live);
    // Nothing holds the GC to it: a minute later the Secret is still there.
    const events = await eventually(async () => {
      const all = await eventsOf('keep');
      return all.some((e) => e.includes('Retained')) && all;
    }, 20_000);
    const retained = events.find((e) => e.includes('Retained')) as string;
    expect(retained).toContain(`left application credential ${live} (generation 2) in Keystone`);
    expect(retained).toContain(`kubectl delete secret -n ${NS} keep-credentials`);
    const path = `keystone/${CP_NS}/${childPrefix({ namespace: NS, name: 'keep' })}/${uid}/service-accounts/application-credential`;
    expect(retained).toContain(`bao kv metadata delete -mount=openstack ${path}`);
    expect(readFileSync(operator.server.log, 'utf8')).toContain(`openstack application credential delete ${live}`);
    // The printed commands remove it: the credential as its user, the Secret, the backup.
    const userSecret = (await delivered('svc')) as Record<string, string>;
    const dir = mkdtempSync(join(tmpdir(), 'kac-retain-'));
    try {
      writeFileSync(join(dir, 'clouds.yaml'), userSecret['clouds.yaml'], { mode: 0o600 });
      const projectId = /--os-project-id (\w+)/.exec(retained)?.[1] as string;
      await run('/usr/bin/openstack', ['--os-cloud', 'openstack', '--os-project-id', projectId, 'application', 'credential', 'delete', live], { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await authenticates(live, before.application_credential_secret)).toBe(false);
    await kubectlOk(['delete', 'secret', '-n', NS, 'keep-credentials']);
    await run(resolveBinary('bao').path, ['kv', 'metadata', 'delete', '-mount=openstack', path], { BAO_ADDR: process.env.KAC_BAO_ADDR as string, BAO_TOKEN: process.env.KAC_BAO_TOKEN as string });
    expect(await backup.read()).toBeUndefined();
  });
});

describe('revoke now', () => {
  it('the annotation, also during a grace period: both older credentials stop authenticating within seconds of the switch; GraceSkipped says so; the probe fails at most around the switch', async () => {
    await applyOk(credential('rev', { rotation: { interval: '1h', gracePeriod: '10m' } }), { fieldManager: 'kac-test' });
    await orderWhere('rev', ready(1), 'delivers generation 1');
    const g1 = (await delivered('rev')) as Record<string, string>;
    await fx.merge('keystoneapplicationcredential', 'rev', { spec: { credentialGeneration: 2 } });
    await orderWhere('rev', (x) => ready(2)(x) && x.status?.previousCredentialGeneration === 1, 'runs the grace period of generation 1');
    const g2 = (await delivered('rev')) as Record<string, string>;
    expect(await authenticates(g1.application_credential_id, g1.application_credential_secret)).toBe(true);
    const consumer = fx.probe('rev');
    const asked = Date.now();
    await kubectlOk(['annotate', 'keystoneapplicationcredential', 'rev', '-n', NS, 'c5c3.io/revoke-previous=incident-1']);
    const o = await orderWhere('rev', (x) => ready(3)(x) && x.status?.lastRevokeRequest === 'incident-1' && x.status.previousCredentialID === undefined, 'revokes', 30_000);
    const switched = Date.now();
    await new Promise((r) => setTimeout(r, 2_000));
    await consumer.stop();
    expect(o.status?.revokeGeneration).toBeUndefined();
    expect(await authenticates(g1.application_credential_id, g1.application_credential_secret)).toBe(false);
    expect(await authenticates(g2.application_credential_id, g2.application_credential_secret)).toBe(false);
    const g3 = (await delivered('rev')) as Record<string, string>;
    expect(await authenticates(g3.application_credential_id, g3.application_credential_secret)).toBe(true);
    const skipped = (await eventsOf('rev')).filter((e) => e.startsWith('Warning GraceSkipped'));
    expect(skipped.join('\n')).toContain(`deleted generation 2 (application credential ${g2.application_credential_id}) at once, its grace period of 10m skipped: revoke requested (incident-1)`);
    expect(skipped.join('\n')).toContain('generation 1');
    // A consumer that re-reads the Secret before each use fails at most between its read and the delete (one try).
    expect(consumer.failuresOutside([[asked, switched + 2_000]])).toEqual([]);
    expect(consumer.failures.length).toBeLessThanOrEqual(2);
    console.log(`revoke now: switch and delete ${switched - asked} ms after the annotation; the probe failed ${consumer.failures.length} of ${consumer.attempts} tries`);
    // The same value again does nothing.
    await kubectlOk(['annotate', '--overwrite', 'keystoneapplicationcredential', 'rev', '-n', NS, 'c5c3.io/revoke-previous=incident-1', 'touch=1']);
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await order('rev')).status?.credentialGeneration).toBe(3);
  });

  it('keystone-appcred rotate --revoke-previous --wait returns once the superseded credential is deleted', async () => {
    const before = (await delivered('rev')) as Record<string, string>;
    const out = await run(process.execPath, ['--import', 'tsx', join(REPO, 'src/cli/main.ts'), 'rotate', 'rev', '-n', NS, '--revoke-previous', '--wait', '--timeout', '90s'], {
      KUBECONFIG: kubeconfigFor('admin'),
      PATH: process.env.PATH as string,
      NODE_PATH: join(REPO, 'node_modules'),
    }).catch((error: Error) => error.message);
    expect(out).toContain('generation 4 delivered in Secret rev-credentials; generation 3 is deleted');
    expect(await authenticates(before.application_credential_id, before.application_credential_secret)).toBe(false);
  });
});

describe('adopt', () => {
  it('a hand-made credential is adopted: nothing minted, the status records it, the next rotation supersedes it and its sweep deletes it', async () => {
    const session = await asUser();
    const secret = randomBytes(24).toString('base64url');
    seen.add(secret);
    const made = await new ApplicationCredentials(session).create({ name: uniqueName('hand-made'), secret });
    await applyOk({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'legacy', namespace: NS }, stringData: { token: secret } } as KubeObject, { fieldManager: 'kac-test' });
    await applyOk(credential('adopted', { rotation: { interval: '1h', gracePeriod: '20s' }, adopt: { credentialID: made.id, secretRef: { name: 'legacy', key: 'token' } } }), { fieldManager: 'kac-test' });
    const o = await orderWhere('adopted', ready(1), 'adopts');
    expect(o.status).toMatchObject({ credentialID: made.id, adoptedCredentialID: made.id });
    expect(condition(o, 'CredentialReady')?.message).toContain(`adopted application credential ${made.id}`);
    expect(await fx.userCredentials(childPrefix({ namespace: NS, name: 'adopted' }))).toEqual([]);
    expect((await delivered('adopted'))?.application_credential_secret).toBe(secret);
    expect(await fx.backup('adopted', o.metadata.uid as string).read()).toBe(made.id);
    expect((await eventsOf('adopted')).join('\n')).toContain(`Normal Adopted: adopted application credential ${made.id} as generation 1`);
    await fx.merge('keystoneapplicationcredential', 'adopted', { spec: { credentialGeneration: 2 } });
    await orderWhere('adopted', (x) => ready(2)(x) && x.status?.previousCredentialID === made.id, 'supersedes it');
    expect(await authenticates(made.id, secret)).toBe(true);
    const swept = await orderWhere('adopted', (x) => ready(2)(x) && x.status?.previousCredentialID === undefined, 'sweeps it', 60_000);
    expect(swept.status?.adoptedCredentialID).toBeUndefined();
    expect(await new ApplicationCredentials(session).get(made.id)).toBeUndefined();
    await session.close();
  });

  it.each([
    ['a wrong secret', false, 'Keystone does not authenticate application credential'],
    ['an unrestricted credential', true, 'is unrestricted'],
  ])('refuses %s: AdoptionRefused, nothing minted', async (_what, unrestricted, message) => {
    const session = await asUser();
    const secret = randomBytes(24).toString('base64url');
    seen.add(secret);
    const path = session.transport.pathOf(`users/${(await session.token()).userId}/application_credentials`);
    const made = (await session.request({ method: 'POST', path, body: { application_credential: { name: uniqueName('hand'), secret, unrestricted } }, sensitive: [secret] })).body as { application_credential: { id: string } };
    const id = made.application_credential.id;
    const name = unrestricted ? 'unrestricted' : 'wrong';
    await applyOk({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-given`, namespace: NS }, stringData: { application_credential_secret: unrestricted ? secret : `${secret}x` } } as KubeObject, { fieldManager: 'kac-test' });
    await applyOk(credential(name, { adopt: { credentialID: id, secretRef: { name: `${name}-given` } } }), { fieldManager: 'kac-test' });
    const o = await orderWhere(name, (x) => condition(x, 'CredentialReady')?.reason === 'AdoptionRefused', 'refuses');
    expect(condition(o, 'CredentialReady')?.message).toContain(message);
    expect(await fx.userCredentials(childPrefix({ namespace: NS, name }))).toEqual([]);
    expect(await delivered(name)).toBeUndefined();
    await kubectlOk(['delete', 'keystoneapplicationcredential', name, '-n', NS, '--wait=true', '--timeout=60s']);
    await new ApplicationCredentials(session).delete(id);
    await session.close();
  });
});

it('no secret appears in the operator log, the Events or any status', async () => {
  const texts = [
    { source: 'operator log', text: readFileSync(operator.server.log, 'utf8') },
    { source: 'events', text: await kubectlOk(['get', 'events.events.k8s.io', '-A', '-o', 'json']) },
    { source: 'orders', text: await kubectlOk(['get', 'keystoneapplicationcredentials', '-A', '-o', 'json']) },
    ...fx.statusesRead,
  ];
  const secrets = [...seen, ...fx.secretsSeen].filter((s) => s.length >= MIN_SECRET_LENGTH);
  expect(secrets.length).toBeGreaterThanOrEqual(6);
  expect(scanForSecrets(texts, [...secrets, env.adminPassword])).toEqual([]);
});
