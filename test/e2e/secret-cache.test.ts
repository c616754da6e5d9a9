// @needs kube
/**
 * The operator's memory is bounded by what it manages, on the real API server (docs/concepts/caches.md, "What the operator
 * caches"): a namespace full of large unrelated Secrets, half of them made by `kubectl apply` (whose last-applied
 * annotation is a second copy of the data), some before the operator starts (its list) and some after (its watch).
 * Proven, with the operator (`keystone-appcred operator`, under the construct's RBAC) running:
 *
 * - its Secret lists on the API server's side carried metadata only: the API server's own response-size metric for
 *   Secret LISTs grew by far less than the unrelated Secrets' data;
 * - its caches hold them as metadata only (`keystone_appcred_informer_objects{kind="Secret/metadata"}`; the whole
 *   cache, `kind="Secret"`, holds none of them), and a heap snapshot of the process holds no byte of their payloads
 *   (neither the data nor the annotation's copy), while the same search finds their names (metadata is cached) and the
 *   data of the Secrets the operator must read (the ControlPlane's admin `clouds.yaml` and CA bundle, as they were
 *   last changed): the search would see a payload that was there;
 * - those referenced Secrets are still read whole and followed: the admin password rotated (the Secret emptied, then
 *   given a new `clouds.yaml`) and the CA bundle renewed (broken, then a new certificate) each show in the
 *   ControlPlane's status within seconds (printed).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { OWN_SECRET_LABELS } from '../../src/operator/secret-cache';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition } from '../support/credential-fixtures';
import { applyOk, eventually, getJson, kubeRequest, kubectl, type KubeObject } from '../support/kubectl';
import { metricsText, operatorKubeconfig, installCrds, removeOperatorRbac, startOperator, waitReady, type OperatorProcess } from '../support/operator';
import { tail } from '../support/proc';
import { synthesizeManifests } from '../support/synth';
import { selfSigned } from '../support/tls';

jest.setTimeout(300_000);

const NS = 'kac-e2e-secret-cache';
const IDENTITY = { namespace: NS, binding: 'kac-e2e-secret-cache-operator' };
const UNRELATED = 24;
const PAYLOAD_BYTES = 100 * 1024;
const say = (line: string) => process.stderr.write(`[secret-cache] ${line}\n`);

/** A marker only one Secret's payload carries: base64 letters and digits, so it stands as it is in base64 data too. */
const marker = (i: number) => `kacunrelated${i}x${randomBytes(9).toString('hex')}`;
const markers: { data: string; plain: string }[] = [];

let unlock: (() => void) | undefined;
let workDir = '';
let heapDir = '';
let kubeconfig = '';
let operator: OperatorProcess | undefined;

/** Unrelated Secret i: `data.payload` (base64) begins with one marker, `stringData.note` (plain) with another. */
function unrelatedSecret(i: number): KubeObject {
  const data = marker(i);
  const plain = marker(i);
  markers[i] = { data, plain };
  const payload = (data + 'A'.repeat(PAYLOAD_BYTES)).slice(0, PAYLOAD_BYTES);
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: `unrelated-${i}`, namespace: NS, labels: { app: 'helm-like' } }, data: { payload }, stringData: { note: `${plain} and some words` } } as KubeObject;
}

/** Half with client-side `kubectl apply` (the last-applied annotation), half with a plain create. */
async function createUnrelated(from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) {
    const secret = unrelatedSecret(i);
    if (i % 2 === 0) {
      // Client-side, as `kubectl apply -f` is used by hand: the annotation holds the manifest, data and stringData.
      const result = await kubectl(['apply', '-f', '-'], { input: JSON.stringify(secret) });
      if (result.code !== 0) throw new Error(`kubectl apply unrelated-${i}: ${result.stderr}`);
    } else {
      const res = await kubeRequest('POST', `/api/v1/namespaces/${NS}/secrets`, { body: secret });
      if (res.status !== 201) throw new Error(`create unrelated-${i}: ${res.status} ${res.body.slice(0, 200)}`);
    }
  }
}

/** The Secrets of the whole cluster that carry a label the operator writes (`namespace/name`, each once). */
async function ownSecrets(): Promise<string[]> {
  const keys = new Set<string>();
  for (const label of OWN_SECRET_LABELS) {
    const res = await kubeRequest('GET', `/api/v1/secrets?labelSelector=${encodeURIComponent(label)}`);
    if (res.status !== 200) throw new Error(`GET secrets ${label}: ${res.status}`);
    for (const item of res.json<{ items: KubeObject[] }>().items) keys.add(`${item.metadata.namespace}/${item.metadata.name}`);
  }
  return [...keys].sort();
}

/** The bytes the API server has answered Secret LISTs with so far (its `apiserver_response_sizes` histogram). */
async function secretListBytes(): Promise<number> {
  const res = await kubeRequest('GET', '/metrics');
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  let sum = 0;
  for (const m of res.body.matchAll(/^apiserver_response_sizes_sum\{([^}]*)\} (\S+)$/gm)) {
    if (/resource="secrets"/.test(m[1]) && /verb="LIST"/.test(m[1])) sum += Number(m[2]);
  }
  return sum;
}

const cloudsYaml = (password: string) =>
  `clouds:\n  admin:\n    auth:\n      auth_url: https://keystone.invalid:5000/v3\n      username: admin\n      password: "${password}"\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n`;
const userSecret = (name: string, data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS }, stringData: data }) as KubeObject;

/** Replaces a Secret's data as a whole (a PUT, as `kubectl replace` does). */
async function replaceSecret(name: string, data: Record<string, string>): Promise<void> {
  const path = `/api/v1/namespaces/${NS}/secrets/${name}`;
  const current = (await kubeRequest('GET', path)).json<KubeObject>();
  const res = await kubeRequest('PUT', path, { body: { ...current, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) } });
  if (res.status !== 200) throw new Error(`PUT ${path}: ${res.status} ${res.body.slice(0, 200)}`);
}
const replaceAdmin = (data: Record<string, string>) => replaceSecret('admin-clouds', data);
const replaceCa = (data: Record<string, string>) => replaceSecret('keystone-ca', data);
const adminReason = async () => condition(await getJson<Parameters<typeof condition>[0] & KubeObject>('controlplane', 'cp', { namespace: NS }), 'AdminCredentialReady')?.reason;

beforeAll(async () => {
  unlock = await lockCluster('secret-cache.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  heapDir = join(workDir, 'secret-cache-heap');
  mkdirSync(heapDir, { recursive: true });
  const manifests = synthesizeManifests();
  await installCrds(manifests);
  kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'secret-cache.kubeconfig'));
}, LOCKED_SETUP_MS);

afterAll(async () => {
  if (operator) say(`operator log (tail):\n${tail(operator.server.log, 15)}`);
  await operator?.server.stop(5_000);
  await kubectl(['delete', 'namespace', NS, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  unlock?.();
});

describe('unrelated Secrets cost the operator metadata only', () => {
  it('lists them as metadata, caches their metadata, and holds no byte of their data', async () => {
    await createUnrelated(0, UNRELATED / 2);
    const password = `adminpw${randomBytes(12).toString('hex')}`;
    await applyOk([
      userSecret('admin-clouds', { 'clouds.yaml': cloudsYaml(password) }),
      userSecret('keystone-ca', { 'ca.crt': selfSigned('kac-e2e-secret-cache-ca-1').cert }),
      {
        apiVersion: 'c5c3.io/v1alpha1',
        kind: 'ControlPlane',
        metadata: { name: 'cp', namespace: NS },
        spec: { services: { keystone: { mode: 'External', external: { authURL: 'https://127.0.0.1:9/v3', caBundleSecretRef: { name: 'keystone-ca' } } } }, adminCredential: { cloudCredentialsRef: { secretName: 'admin-clouds' } } },
      } as KubeObject,
    ]);
    const listedBefore = await secretListBytes();
    operator = await startOperator({
      name: 'secret-cache',
      kubeconfig,
      namespace: NS,
      logDir: workDir,
      env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${heapDir}`.trim() },
    });
    await waitReady(operator);
    const listed = (await secretListBytes()) - listedBefore;
    const payloadBytes = (UNRELATED / 2) * PAYLOAD_BYTES;
    say(`the operator's start-up Secret LISTs: ${listed} bytes from the API server, with ${payloadBytes} bytes of unrelated data in the cluster`);
    expect(listed).toBeLessThan(payloadBytes / 4);

    // The second half arrives through the watch.
    await createUnrelated(UNRELATED / 2, UNRELATED);
    const op = operator;
    const cached = await eventually(async () => {
      const m = /^keystone_appcred_informer_objects\{kind="Secret\/metadata"\} (\d+)$/m.exec(await metricsText(op));
      return m && Number(m[1]) >= UNRELATED + 1 ? Number(m[1]) : undefined;
    }, 60_000, 500);
    say(`Secrets cached as metadata only: ${cached}`);
    // None of them in the whole cache: it holds exactly the Secrets of the cluster that carry a label the operator
    // writes (here none, but another test's namespace may still be terminating with its delivered Secrets: counted on
    // both sides), and not one of this namespace's.
    const whole = await eventually(async () => {
      const inCache = Number(/^keystone_appcred_informer_objects\{kind="Secret"\} (\d+)$/m.exec(await metricsText(op))?.[1]);
      const own = await ownSecrets();
      return inCache === own.length ? own : undefined;
    }, 30_000, 500);
    say(`Secrets cached whole: ${whole.length} (${whole.join(', ') || 'none'})`);
    expect(whole.filter((key) => key.startsWith(`${NS}/`))).toEqual([]);

    // The referenced admin Secret is read whole and followed: the ControlPlane got past the Secret (to Keystone) ...
    await eventually(async () => {
      const reason = await adminReason();
      return reason !== undefined && reason !== 'WaitingForCloudsYaml' ? reason : undefined;
    }, 60_000, 250);
    // ... and a change of it shows within seconds.
    await replaceAdmin({ other: 'no clouds.yaml here' });
    let t0 = Date.now();
    await eventually(async () => (await adminReason()) === 'WaitingForCloudsYaml', 60_000, 100);
    say(`admin Secret emptied: the ControlPlane reported WaitingForCloudsYaml after ${Date.now() - t0} ms`);
    const rotated = `adminpw${randomBytes(12).toString('hex')}`;
    await replaceAdmin({ 'clouds.yaml': cloudsYaml(rotated) });
    t0 = Date.now();
    await eventually(async () => {
      const reason = await adminReason();
      return reason !== undefined && reason !== 'WaitingForCloudsYaml';
    }, 60_000, 100);
    say(`admin Secret restored with a rotated password: seen after ${Date.now() - t0} ms`);

    // The CA bundle renewed: broken first (so the change is visible in the status), then a new certificate.
    await replaceCa({ 'ca.crt': 'not a certificate' });
    t0 = Date.now();
    await eventually(async () => (await adminReason()) === 'WaitingForCABundle', 60_000, 100);
    say(`CA bundle broken: the ControlPlane reported WaitingForCABundle after ${Date.now() - t0} ms`);
    const renewed = selfSigned('kac-e2e-secret-cache-ca-2').cert;
    await replaceCa({ 'ca.crt': renewed });
    t0 = Date.now();
    await eventually(async () => {
      const reason = await adminReason();
      return reason !== undefined && reason !== 'WaitingForCABundle';
    }, 60_000, 100);
    say(`CA bundle renewed: seen after ${Date.now() - t0} ms`);

    // A heap snapshot of the operator (written on SIGUSR2, after a full collection).
    op.server.process.kill('SIGUSR2');
    const snapshot = await eventually(async () => {
      const file = readdirSync(heapDir).find((f) => f.endsWith('.heapsnapshot'));
      if (!file) return undefined;
      const path = join(heapDir, file);
      const size = statSync(path).size;
      await new Promise((r) => setTimeout(r, 1_000));
      return size > 0 && statSync(path).size === size ? path : undefined;
    }, 120_000, 500);
    const heap = readFileSync(snapshot);
    say(`heap snapshot: ${(heap.length / 2 ** 20).toFixed(0)} MiB`);
    const found = (text: string) => heap.includes(Buffer.from(text));
    // The search sees what the operator holds: the unrelated Secrets' names, and the referenced Secret's data.
    expect(found(`unrelated-${UNRELATED - 1}`)).toBe(true);
    expect(found(Buffer.from(cloudsYaml(rotated)).toString('base64'))).toBe(true);
    expect(found(Buffer.from(renewed).toString('base64'))).toBe(true);
    // No byte of the unrelated payloads: neither the data nor the plain text (in kubectl's annotation) of any of them.
    const held = markers.flatMap((m, i) => [m.data, m.plain].filter(found).map((text) => `unrelated-${i}: ${text}`));
    expect(held).toEqual([]);
  });
});
