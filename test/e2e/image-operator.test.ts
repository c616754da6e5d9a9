// @needs image kube keystone openbao
/**
 * The operator as users deploy it: the image built from the Dockerfile (`@needs image`, tools/image/build.ts) run as the
 * Operator construct's Deployment describes it (test/support/pod.ts reads the Deployment back from the API server:
 * command, environment with the downward API filled, security context, volumes, ports), configured from the pod's service
 * account (a TokenRequest token of the construct's ServiceAccount with `ca.crt` and `namespace` at
 * /var/run/secrets/kubernetes.io/serviceaccount, `KUBERNETES_SERVICE_HOST`/`_PORT` at the test API server, no kubeconfig
 * anywhere), backing up to an OpenBao set up exactly as docs/install/openbao.md tells users (its shell steps 1, 2b and 3 run as
 * written: KV v2, the policy, the Kubernetes auth method with a token reviewer bound to `system:auth-delegator`, the
 * role), which the operator logs in to with its own service account token.
 *
 * Proven in one pair of replicas: one leader of two; /healthz, /readyz and /metrics on the construct's ports; the
 * process is PID 1, runs as the construct's user with no capability and no_new_privs on a read-only root, and writes
 * nothing outside /tmp; an order reaches generation 1 (delivered, backed up at the reference's path), rotates on
 * schedule, meets a login OpenBao refuses (`BackupNotSynced` naming the role; the delivered Secret does not switch) and
 * recovers, and is torn down to nothing; SIGTERM hands the Lease over. Beside them, bad setups each fail at start with
 * one log line naming what is missing and the fix, and their exit code: no token and no kubeconfig, an unreachable API
 * server, a token the API server rejects. Printed: the image's size and build, start-up to ready, idle RSS with one order.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { Testing } from 'cdk8s';
import { Operator } from '../../constructs/operator';
import { childPrefix } from '../../src/api';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures } from '../support/credential-fixtures';
import { fencedBlock } from '../support/markdown';
import { uniqueName } from '../support/keystone-fixtures';
import { apply, eventually, getJson, kubeconfigFor, kubectl, kubectlOk, type KubeObject } from '../support/kubectl';
import { startBao, type BaoServer } from '../support/openbao';
import { installCrds, releaseLeftovers } from '../support/operator';
import { run } from '../support/package';
import { mountImage, podNameOf, startPod, type DeploymentLike, type ImageRootfs, type Pod } from '../support/pod';
import { freePort, tail } from '../support/proc';
import { MIN_SECRET_LENGTH, scanForSecrets } from '../support/secret-scan';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(300_000);

const NS = 'kac-image';
const CP_NS = 'kac-image-cp';
const ROLE = 'keystone-appcred-operator';
/** The page whose shell steps set OpenBao up, run here as written. */
const OPENBAO_PAGE = 'docs/install/openbao.md';
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: uniqueName('image'), projectName: uniqueName('image') });
const [projectOrder, userOrder, roleAssignment] = fx.identityOrders();
const prefix = childPrefix({ namespace: NS, name: 'app' });
/** The order's uid, once it exists: its backup path names it (docs/configure/order.md, The backup). */
let orderUid = '';

const [imageRepo, imageTag] = ((image: string) => [image.slice(0, image.lastIndexOf(':')), image.slice(image.lastIndexOf(':') + 1)])(process.env.KAC_IMAGE ?? ':');
const apiUrl = new URL(process.env.KAC_KUBE_SERVER ?? 'https://127.0.0.1:1');
const keystonePort = Number(new URL(fx.env.authUrl).port);
/** The ReplicaSet's template hash in the pods' names (one Deployment revision). */
const TEMPLATE_HASH = randomBytes(5).toString('hex');

let unlock: (() => void) | undefined;
let workDir = '';
let bao: BaoServer | undefined;
let rootfs: ImageRootfs | undefined;
let operatorObjects: KubeObject[] = [];
let deployment: DeploymentLike & KubeObject;
let applyWarnings = '';
const pods: Pod[] = [];

/** The construct's objects, as synthesized for this image and this OpenBao (everything else: the construct's defaults). */
function synthesizeOperator(baoAddress: string): KubeObject[] {
  const chart = Testing.chart();
  new Operator(chart, 'operator', { image: imageRepo, tag: imageTag, openBao: { address: baoAddress, auth: { method: 'kubernetes', role: ROLE } } });
  return Testing.synth(chart) as KubeObject[];
}

/** The ```sh block of docs/install/openbao.md whose first line starts with `# <step>.`. */
const docsStep = (step: string): string => fencedBlock(OPENBAO_PAGE, 'sh', `# ${step}.`);

/** Runs a docs step with bash as a user would: BAO_ADDR/BAO_TOKEN, kubectl on PATH with the admin kubeconfig. */
async function runDocsStep(step: string): Promise<string> {
  const dir = mkdtempSync(join(workDir, `docs-${step}-`));
  const env = {
    PATH: `${dirname(process.env.KAC_KUBECTL as string)}:${dirname((bao as BaoServer).bao)}:/usr/bin:/bin`,
    HOME: dir,
    KUBECONFIG: kubeconfigFor('admin'),
    BAO_ADDR: (bao as BaoServer).addr,
    BAO_TOKEN: (bao as BaoServer).token,
  };
  const result = await run('bash', ['-euo', 'pipefail', '-c', docsStep(step)], { cwd: dir, env, timeoutMs: 120_000 });
  if (result.code !== 0) throw new Error(`${OPENBAO_PAGE} step ${step} failed (${String(result.code)}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** OpenBao's HTTP API with the root token. */
async function baoApi(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${(bao as BaoServer).addr}/v1/${path}`, {
    method,
    headers: { 'x-vault-token': (bao as BaoServer).token, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** The backup document at the reference's path, or undefined (404). */
async function backup(): Promise<Record<string, string> | undefined> {
  const res = await baoApi('GET', `openstack/data/keystone/${CP_NS}/${prefix}/${orderUid}/service-accounts/application-credential`);
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`reading the backup: ${res.status} ${JSON.stringify(res.json)}`);
  return (res.json.data as { data: Record<string, string> }).data;
}

/** A TokenRequest token of a ServiceAccount (as the kubelet asks for the pod's projected token: one hour). */
async function tokenFor(serviceAccount: string, namespace: string): Promise<string> {
  return (await kubectlOk(['create', 'token', serviceAccount, '-n', namespace, '--duration=3607s'])).trim();
}

/** Starts a pod of `spec` (the Deployment as read back, unless a bad setup changes it). */
async function pod(name: string, options: { spec?: DeploymentLike; token?: string; envOverrides?: Record<string, string> } = {}): Promise<Pod> {
  const spec = options.spec ?? deployment;
  const tpl = spec.spec.template.spec;
  const namespace = spec.metadata.namespace as string;
  const serviceAccount = tpl.automountServiceAccountToken === false ? undefined : { token: options.token ?? (await tokenFor(tpl.serviceAccountName as string, namespace)), caCert: readFileSync(process.env.KAC_KUBE_CA_FILE as string, 'utf8') };
  const p = await startPod({
    rootfs: rootfs as ImageRootfs,
    deployment: spec,
    podName: podNameOf(spec.metadata.name, TEMPLATE_HASH),
    dir: mkdtempSync(join(workDir, `pod-${name}-`)),
    apiServer: { host: apiUrl.hostname, port: Number(apiUrl.port) },
    serviceAccount,
    reach: [keystonePort, Number(new URL((bao as BaoServer).addr).port)],
    envOverrides: options.envOverrides,
  });
  pods.push(p);
  return p;
}

async function get(p: Pod, port: 'health' | 'metrics', path: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${p.ports[port]}${path}`, { signal: AbortSignal.timeout(2_000) });
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined;
  }
}

async function waitReady(p: Pod, timeoutMs = 120_000): Promise<number> {
  await eventually(async () => {
    if (p.server.exited() !== undefined) throw new Error(`${p.name} exited (${p.server.exited()}):\n${tail(p.server.log)}`);
    return (await get(p, 'health', '/readyz'))?.status === 200;
  }, timeoutMs, 100);
  return Date.now() - p.spawnedAt;
}

const isLeader = async (p: Pod): Promise<boolean> => /^keystone_appcred_leader 1$/m.test((await get(p, 'metrics', '/metrics'))?.body ?? '');

/** The JSON lines a pod logged. */
function logLines(p: Pod): Record<string, unknown>[] {
  return readFileSync(p.server.log, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** `/proc/<pid>/status` fields of a pod's entry point. */
function status(p: Pod): Record<string, string> {
  const text = readFileSync(`/proc/${p.pid() as number}/status`, 'utf8');
  return Object.fromEntries(text.split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]));
}

/** The status of a SelfSubjectReview with `token` as the bearer (201: accepted, 401: refused). */
function whoAmIStatus(token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL('/apis/authentication.k8s.io/v1/selfsubjectreviews', apiUrl),
      { method: 'POST', ca: readFileSync(process.env.KAC_KUBE_CA_FILE as string), headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, timeout: 10_000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
  });
}

const order = fx.order;
const delivered = () => fx.delivered('app');

beforeAll(async () => {
  workDir = mkdtempSync(join(process.env.KAC_TEST_WORKDIR as string, 'img-'));
  unlock = await lockCluster('image-operator.test.ts');
  await installCrds(synthesizeManifests());
  bao = await startBao(join(workDir, 'bao'));
  operatorObjects = synthesizeOperator(bao.addr);
  const namespace = operatorObjects.find((o) => o.kind === 'Namespace')?.metadata.name as string;
  // A namespace of the same name still going away (another file deployed the construct's defaults before) must be gone.
  await eventually(async () => (await kubectl(['get', 'namespace', namespace, '-o', 'jsonpath={.status.phase}'])).stdout !== 'Terminating', 120_000, 500);
  const applied = await apply(operatorObjects, { fieldManager: 'kac-test', force: true });
  if (applied.code !== 0) throw new Error(`applying the construct's objects failed: ${applied.stderr}`);
  applyWarnings = applied.stderr;
  const synthesized = operatorObjects.find((o) => o.kind === 'Deployment') as KubeObject;
  deployment = await getJson<DeploymentLike & KubeObject>('deployment', synthesized.metadata.name, { namespace });
  for (const step of ['1', '2b', '3']) await runDocsStep(step);
  rootfs = await mountImage(deployment.spec.template.spec.containers[0].image);
  for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  await apply([fx.adminSecret(), fx.controlPlane({ assigned: true })], { fieldManager: 'kac-test' });
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await Promise.all(pods.map((p) => p.stop(5_000)));
  if (process.env.KAC_KEEP_LOGS) for (const p of pods) writeFileSync(join(process.env.KAC_KEEP_LOGS, `${p.name}.log`), readFileSync(p.server.log));
  await rootfs?.remove();
  if (unlock) {
    await releaseLeftovers([NS, CP_NS]);
    for (const ns of [NS, CP_NS]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
    await kubectl(['delete', 'serviceaccount,secret', 'openbao-token-reviewer', '-n', 'kube-system', '--ignore-not-found']);
    await kubectl(['delete', 'clusterrolebinding', 'openbao-token-reviewer', '--ignore-not-found']);
    // The construct's objects, and its namespace gone for good before the next file may deploy the construct's defaults.
    const clusterScoped = operatorObjects.filter((o) => !o.metadata.namespace && o.kind !== 'Namespace');
    for (const o of clusterScoped) await kubectl(['delete', o.kind.toLowerCase(), o.metadata.name, '--ignore-not-found']);
    const namespace = operatorObjects.find((o) => o.kind === 'Namespace')?.metadata.name;
    if (namespace) await kubectl(['delete', 'namespace', namespace, '--timeout=120s']);
    unlock();
  }
  await bao?.stop();
  if (workDir && !process.env.KAC_KEEP_TEST_DIR) rmSync(workDir, { recursive: true, force: true });
}, 300_000);

describe("the operator's image, run as the construct's Deployment", () => {
  const figures: string[] = [];
  let a: Pod;
  let b: Pod;
  let leader: Pod;
  let standby: Pod;
  let g1: Record<string, string>;
  let g2: Record<string, string>;
  let badSetups: Promise<void> | undefined;

  afterAll(() => process.stderr.write(`[image-operator] ${figures.join('; ')}\n`));

  it("is the construct's image: its entry point, user and ports, the production dependencies only", () => {
    const container = deployment.spec.template.spec.containers[0];
    const fs = rootfs as ImageRootfs;
    expect(container.image).toBe(process.env.KAC_IMAGE);
    expect(fs.config.Entrypoint).toEqual(container.command);
    const pod = deployment.spec.template.spec.securityContext;
    expect(fs.config.User).toBe(`${String(pod?.runAsUser)}:${String(pod?.runAsGroup)}`);
    expect(Object.keys(fs.config.ExposedPorts ?? {}).sort()).toEqual((container.ports ?? []).map((p) => `${p.containerPort}/tcp`).sort());
    const modules = readdirSync(join(fs.dir, 'app/node_modules'));
    for (const present of ['@kubernetes', 'bottleneck', 'commander', 'prom-client', 'undici', 'yaml']) expect([present, modules.includes(present)]).toEqual([present, true]);
    for (const absent of ['cdk8s', 'constructs', 'cdk8s-plus-33', '@pulumi', 'typescript', 'tsx', 'jest', 'node', 'esbuild']) expect([absent, modules.includes(absent)]).toEqual([absent, false]);
    // The pod template passes the `restricted` Pod Security level its namespace enforces.
    expect(applyWarnings).not.toMatch(/PodSecurity|would violate/);
    figures.push(`image ${process.env.KAC_IMAGE} ${Math.round(Number(process.env.KAC_IMAGE_SIZE) / 1e6)} MB on ${String(process.env.KAC_IMAGE_BASE_REF)} (${String(process.env.KAC_IMAGE_BUILD)})`);
  });

  it('two replicas start from the service account (no kubeconfig anywhere), serve the endpoints on the construct\'s ports, and elect one leader', async () => {
    [a, b] = [await pod('a'), await pod('b')];
    const startup = await Promise.all([waitReady(a), waitReady(b)]);
    const inProcess = [a, b].map((p) => logLines(p).find((l) => String(l.msg).startsWith('ready'))?.sinceProcessStartMs);
    figures.push(`start-up to /readyz 200: ${startup.join(', ')} ms from the pod's start (${inProcess.join(', ')} ms in-process)`);
    const sa = deployment.spec.template.spec.serviceAccountName as string;
    const namespace = deployment.metadata.namespace as string;
    for (const p of [a, b]) {
      const loaded = logLines(p).find((l) => l.msg === 'kubernetes configuration loaded');
      expect(loaded).toMatchObject({ source: 'in-cluster', server: `https://${apiUrl.host}`, authenticatedAs: `system:serviceaccount:${namespace}:${sa}` });
      // Endpoints on the construct's container ports (each pod has its own network namespace, as on a node).
      expect((await get(p, 'health', '/healthz'))?.status).toBe(200);
      expect((await get(p, 'health', '/readyz'))?.status).toBe(200);
      expect((await get(p, 'metrics', '/metrics'))?.body).toMatch(/^keystone_appcred_leader [01]$/m);
      expect(Object.keys(p.ports)).toEqual(expect.arrayContaining(['health', 'metrics', String(deployment.spec.template.spec.containers[0].ports?.[0].containerPort)]));
    }
    leader = await eventually(async () => {
      const leaders = [];
      for (const p of [a, b]) if (await isLeader(p)) leaders.push(p);
      return leaders.length === 1 && leaders[0];
    }, 60_000, 250);
    standby = leader === a ? b : a;
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await isLeader(standby)).toBe(false);
    const lease = await getJson<KubeObject & { spec: { holderIdentity?: string } }>('lease', `${deployment.metadata.name}-leader`, { namespace });
    expect(lease.spec.holderIdentity).toBe(leader.name);
  });

  it("the process is PID 1, runs as the construct's user without capabilities on a read-only root, as the Deployment's command, with the downward API filled", () => {
    const container = deployment.spec.template.spec.containers[0];
    const pod = deployment.spec.template.spec.securityContext as { runAsUser: number; runAsGroup: number };
    const s = status(leader);
    expect(s.NSpid.split(/\s+/).pop()).toBe('1');
    expect(s.Uid.split(/\s+/)).toEqual(Array(4).fill(String(pod.runAsUser)));
    expect(s.Gid.split(/\s+/)).toEqual(Array(4).fill(String(pod.runAsGroup)));
    for (const caps of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) expect([caps, s[caps]]).toEqual([caps, '0000000000000000']);
    expect(s.NoNewPrivs).toBe('1');
    const pid = leader.pid() as number;
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)).toEqual(container.command);
    // The root is read-only; /tmp is the emptyDir, the only writable place of the image's file system.
    const mountinfo = readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n').map((l) => l.split(' '));
    const mountAt = (point: string) => mountinfo.filter((f) => f[4] === point).pop();
    expect(mountAt('/')?.[5].split(',')).toContain('ro');
    expect(mountAt('/tmp')?.[5].split(',')).toContain('rw');
    const env = Object.fromEntries(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
    expect(env).toMatchObject({ KAC_NAMESPACE: deployment.metadata.namespace, KAC_POD_NAME: leader.name, KUBERNETES_SERVICE_HOST: apiUrl.hostname, KUBERNETES_SERVICE_PORT: apiUrl.port });
    expect(env.KUBECONFIG).toBeUndefined();
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toMatch(/kubeconfig/);
    expect(() => readdirSync(join((rootfs as ImageRootfs).dir, 'home/node/.kube'))).toThrow(/ENOENT/);
  });

  it('an order reaches generation 1: the Secret is delivered after the backup is written at the order\'s backing path, through the Kubernetes auth login', async () => {
    await apply([projectOrder, userOrder, roleAssignment, fx.credentialOrder('app', { interval: '1m', gracePeriod: '20s' })], { fieldManager: 'kac-test' });
    const o = await eventually(async () => {
      const o = await order('app');
      return o.status?.credentialGeneration === 1 && o.status.secretName === 'app-credentials' && condition(o, 'Ready')?.status === 'True' && o;
    }, 120_000);
    g1 = (await delivered()) as Record<string, string>;
    orderUid = o.metadata.uid as string;
    expect(g1.application_credential_id).toBe(o.status?.credentialID);
    expect(await fx.authenticates(g1.application_credential_id, g1.application_credential_secret)).toBe(true);
    expect(await backup()).toEqual(g1);
    // The operator's OpenBao token came from the Kubernetes auth method's login.
    const leases = await baoApi('LIST', 'sys/leases/lookup/auth/kubernetes/login');
    expect((leases.json.data as { keys?: string[] } | undefined)?.keys?.length ?? 0).toBeGreaterThan(0);
  });

  it('bad setups fail at start with one line naming what is missing and the fix, and their exit code', async () => {
    // Run beside the scheduled rotation (a minute): each is a pod of its own.
    const noToken = { ...deployment, spec: { ...deployment.spec, template: { ...deployment.spec.template, spec: { ...deployment.spec.template.spec, automountServiceAccountToken: false } } } };
    const closed = await freePort();
    const namespace = deployment.metadata.namespace as string;
    await kubectlOk(['create', 'serviceaccount', 'kac-image-gone', '-n', namespace]);
    const goneToken = await tokenFor('kac-image-gone', namespace);
    await kubectlOk(['delete', 'serviceaccount', 'kac-image-gone', '-n', namespace]);
    // The API server refuses the token once it has seen the deletion.
    await eventually(async () => (await whoAmIStatus(goneToken)) === 401, 30_000, 250);
    const cases = [
      { name: 'no-token', pod: await pod('no-token', { spec: noToken }), exit: '2', says: [/no service account token at \/var\/run\/secrets\/kubernetes\.io\/serviceaccount\/token/, /automountServiceAccountToken: true/] },
      { name: 'unreachable', pod: await pod('unreachable', { envOverrides: { KUBERNETES_SERVICE_PORT: String(closed) } }), exit: '1', says: [new RegExp(`cannot reach the API server https://127\\.0\\.0\\.1:${closed} \\(in-cluster\\)`), /ECONNREFUSED/, /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT/] },
      { name: 'rejected', pod: await pod('rejected', { token: goneToken }), exit: '2', says: [/refused the service account token .* \(ServiceAccount [^)]*\/kac-image-gone\) \(401 Unauthorized\)/, /check that the ServiceAccount exists/] },
    ];
    badSetups = Promise.all(
      cases.map(async (c) => {
        await eventually(async () => c.pod.server.exited() !== undefined, 60_000, 200);
        const lines = logLines(c.pod);
        const errors = lines.filter((l) => l.level === 'error');
        expect([c.name, c.pod.server.exited()]).toEqual([c.name, c.exit]);
        expect([c.name, errors.length]).toEqual([c.name, 1]);
        for (const re of c.says) expect([c.name, String(errors[0].msg)]).toEqual([c.name, expect.stringMatching(re)]);
        // Nothing else went wrong before it: the start line, then that one error (nothing served, nothing watched).
        expect([c.name, lines.map((l) => l.msg).filter((m) => m !== 'operator starting').length]).toEqual([c.name, 1]);
        expect(readFileSync(c.pod.server.log, 'utf8')).not.toContain(goneToken);
      }),
    ).then(() => undefined);
    await badSetups;
  });

  it('idles with one order at a small RSS, and has written nothing outside /tmp', async () => {
    await new Promise((r) => setTimeout(r, 5_000));
    figures.push(`RSS idle with one order (leader): ${Math.round(Number(/(\d+)/.exec(status(leader).VmRSS)?.[1]) / 1024)} MiB, standby ${Math.round(Number(/(\d+)/.exec(status(standby).VmRSS)?.[1]) / 1024)} MiB`);
    for (const p of [leader, standby]) {
      expect(readFileSync(p.server.log, 'utf8')).not.toMatch(/EROFS|read-only file system/i);
      const written = readdirSync(p.volumes.tmp, { recursive: true });
      figures.push(`${p === leader ? 'leader' : 'standby'} wrote ${written.length} entries to /tmp${written.length ? ` (${written.slice(0, 5).join(', ')})` : ''}`);
    }
  });

  it('rotates on schedule: generation 2 is backed up, then delivered', async () => {
    const o = await eventually(async () => {
      const o = await order('app');
      return o.status?.credentialGeneration === 2 && o;
    }, 150_000, 500);
    g2 = await eventually(async () => {
      const doc = await delivered();
      return doc?.application_credential_id === o.status?.credentialID && doc;
    }, 30_000);
    expect(g2.application_credential_id).not.toBe(g1.application_credential_id);
    expect(await backup()).toEqual(g2);
  });

  it('a login OpenBao refuses: BackupNotSynced naming the role, the delivered Secret keeps generation 2; the restored role lets it switch', async () => {
    expect((await baoApi('DELETE', `auth/kubernetes/role/${ROLE}`)).status).toBe(204);
    // The tokens it gave out go too, so the operator must log in again.
    expect((await baoApi('PUT', 'sys/leases/revoke-prefix/auth/kubernetes/login')).status).toBe(204);
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 3 } });
    const refused = await eventually(async () => {
      const o = await order('app');
      return condition(o, 'DeliveryReady')?.reason === 'BackupNotSynced' && /refused/.test(condition(o, 'DeliveryReady')?.message ?? '') && o;
    }, 60_000, 250);
    const message = condition(refused, 'DeliveryReady')?.message ?? '';
    expect(message).toContain(`login as role ${ROLE} refused`);
    expect(message).toMatch(/invalid role name/);
    expect(message).toContain(`bao read auth/kubernetes/role/${ROLE}`);
    expect(message).toContain(`${deployment.metadata.namespace}/${deployment.spec.template.spec.serviceAccountName}`);
    expect(condition(refused, 'Ready')?.status).toBe('False');
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await delivered())?.application_credential_id).toBe(g2.application_credential_id);
    expect((await backup())?.application_credential_id).toBe(g2.application_credential_id);
    await runDocsStep('3');
    const switched = await eventually(async () => {
      const o = await order('app');
      const doc = await delivered();
      return (o.status?.credentialGeneration ?? 0) >= 3 && doc?.application_credential_id === o.status?.credentialID && condition(o, 'Ready')?.status === 'True' && o;
    }, 120_000, 500);
    expect((await backup())?.application_credential_id).toBe(switched.status?.credentialID);
  });

  it('is torn down to nothing: no credential in Keystone, no backup, no Secret, no parked secret', async () => {
    await kubectlOk(['delete', 'keystoneapplicationcredential', 'app', '-n', NS, '--wait=false']);
    await eventually(async () => (await kubectl(['get', 'keystoneapplicationcredential', 'app', '-n', NS])).code !== 0, 120_000, 500);
    expect(await fx.userCredentials(prefix)).toEqual([]);
    expect(await backup()).toBeUndefined();
    expect((await baoApi('GET', `openstack/metadata/keystone/${CP_NS}/${prefix}/${orderUid}/service-accounts/application-credential`)).status).toBe(404);
    expect(await delivered()).toBeUndefined();
    expect((await fx.parkedSecrets('app')).size).toBe(0);
  });

  it('SIGTERM: the leader exits 0 and releases the Lease, and the standby takes over', async () => {
    expect(await leader.stop()).toBe('0');
    expect(readFileSync(leader.server.log, 'utf8')).toContain('"msg":"released the lease"');
    await eventually(() => isLeader(standby), 30_000, 200);
    expect(await standby.stop()).toBe('0');
  });

  it('never wrote a secret into a log, an Event or a status', async () => {
    const texts = [
      ...pods.map((p) => ({ source: p.name, text: readFileSync(p.server.log, 'utf8') })),
      ...(await fx.eventTexts([NS, CP_NS])),
      ...fx.statusesRead,
    ];
    const secrets = [...fx.secretsSeen].filter((s) => s.length >= MIN_SECRET_LENGTH);
    expect(secrets.length).toBeGreaterThan(0);
    expect(scanForSecrets(texts, secrets)).toEqual([]);
  });
});
