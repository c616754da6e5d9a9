// @needs kube
/**
 * `keystone-appcred status` and `rotate` against the real API server, run as a user runs them (`node --import tsx
 * src/cli/main.ts`, with KUBECONFIG or `--kubeconfig`/`--context`). No operator runs here: the test plays it by writing
 * the orders' status through the status subresource with kubectl. Proven: the table and `-o json` show the readiness,
 * generations, next rotation and grace period the status holds; `rotate` raises `spec.credentialGeneration` with the
 * CLI's field manager; `rotate --wait` returns once the status names the new generation and the delivered Secret;
 * expected failures (timeout, order not found, RBAC denial, unreachable server, unknown context, and, last, a missing
 * CRD) print one line naming the object and what to do, without a stack trace, and exit 1.
 *
 * The missing CRD is real: under the cluster lock the KeystoneApplicationCredential CRD is deleted at the end (which
 * removes every object of the kind, as it would on any cluster), and the synthesized CRDs are applied again before the
 * lock is released.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { crdName } from '../../constructs/crd';
import { ALL_KINDS } from '../../constructs/crds';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { eventually, getJson, kubeconfigFor, kubectl, kubectlOk, waitEstablished, kubeRequest, applyOk, type KubeObject } from '../support/kubectl';
import { run, type RunResult } from '../support/package';
import { freePort } from '../support/proc';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(300_000);

const REPO = resolve(__dirname, '..', '..');
const NS = 'kac-e2e-cli';
const KAC_CRD = 'keystoneapplicationcredentials.c5c3.io';
const ADMIN_CONTEXT = 'kac-admin@kac-test';
const INSTALL = 'run `keystone-appcred manifests --image IMAGE | kubectl apply --server-side -f -`';
const DAY = 86_400_000;

let unlock: (() => void) | undefined;
let crdsFile = '';

/** Runs the CLI from the sources, as `npx tsx src/cli/main.ts` does; KUBECONFIG is the admin's unless `env` says otherwise. */
function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return run(process.execPath, ['--import', 'tsx', join(REPO, 'src/cli/main.ts'), ...args], {
    cwd: REPO,
    env: { ...process.env, KUBECONFIG: kubeconfigFor('admin'), KUBERNETES_SERVICE_HOST: '', ...env },
    timeoutMs: 120_000,
  });
}

/** A failure as a user sees it: exit 1, nothing but one `keystone-appcred: ...` line on stderr, no stack trace. */
function expectFailure(result: RunResult): string {
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stderr).toMatch(/^keystone-appcred: [^\n]+\n$/);
  expect(result.code).toBe(1);
  return result.stderr.slice('keystone-appcred: '.length, -1);
}

/** RFC 3339 without milliseconds, as `metav1.Time` serializes. */
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const condition = (type: string, status: string, reason: string, message = `${type}: ${reason}`) => ({ type, status, reason, message, lastTransitionTime: rfc3339(Date.now()) });

async function setStatus(resource: string, name: string, status: object): Promise<void> {
  await kubectlOk(['patch', resource, name, '-n', NS, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
}

const spec = async (): Promise<{ credentialGeneration: number }> =>
  (await getJson<KubeObject & { spec: { credentialGeneration: number } }>('keystoneapplicationcredential', 'app', { namespace: NS })).spec;

/** The table's data rows as cells (columns are three or more spaces apart; cells hold single spaces at most). */
const tableRows = (out: string): string[][] => out.trimEnd().split('\n').map((line) => line.split(/ {3,}/));

const ref = { name: 'cp', namespace: NS };
const NEXT_ROTATION = rfc3339(Date.now() + 30 * DAY);
const GRACE_UNTIL = rfc3339(Date.now() + DAY - 3_600_000);

beforeAll(async () => {
  unlock = await lockCluster('cli-status.test.ts');
  const manifests = synthesizeManifests();
  crdsFile = join(manifests, readdirSync(manifests).find((f) => f.includes('crds')) as string);
  // --force-conflicts: a file that ran before on this cluster may have installed them as a user does (kubectl's manager).
  await kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=kac-test', '-f', crdsFile]);
  await waitEstablished([...ALL_KINDS.map((k) => `crd/${crdName(k)}`)]);
  await kubectl(['create', 'namespace', NS]);
  await applyOk(
    [
      {
        apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name: 'cp', namespace: NS },
        spec: {
          adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } },
          namespaceAssignments: [{ namespace: NS, allowedRoles: ['member'] }],
          services: { keystone: { mode: 'External', external: { authURL: 'https://keystone.example:5000/v3', caBundleSecretRef: { name: 'keystone-ca' } } } },
        },
      },
      { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneProject', metadata: { name: 'svc-project', namespace: NS }, spec: { controlPlaneRef: ref } },
      { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', metadata: { name: 'svc', namespace: NS }, spec: { controlPlaneRef: ref, passwordGeneration: 2 } },
      {
        apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneRoleAssignment', metadata: { name: 'svc-member', namespace: NS },
        spec: { controlPlaneRef: ref, userRef: { name: 'svc' }, projectRef: { name: 'svc-project' }, role: 'member' },
      },
      {
        apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneApplicationCredential', metadata: { name: 'app', namespace: NS },
        spec: { controlPlaneRef: ref, userRef: { name: 'svc' }, projectRef: { name: 'svc-project' } },
      },
    ] as KubeObject[],
    { fieldManager: 'kac-test' },
  );
  await setStatus('controlplane', 'cp', { observedGeneration: 1, conditions: [condition('AdminCredentialReady', 'True', 'AdminCredentialReady'), condition('Ready', 'True', 'AllReady')] });
  await setStatus('keystoneproject', 'svc-project', { observedGeneration: 1, conditions: [condition('ProjectReady', 'True', 'ProjectProvisioned')] });
  await setStatus('keystoneuser', 'svc', {
    observedGeneration: 1, passwordGeneration: 1,
    conditions: [condition('UserReady', 'True', 'UserProvisioned'), condition('DeliveryReady', 'False', 'DeliveryRefused'), condition('Ready', 'False', 'DeliveryRefused')],
  });
  await setStatus('keystoneapplicationcredential', 'app', {
    observedGeneration: 1,
    conditions: [condition('CredentialReady', 'True', 'CredentialMinted'), condition('DeliveryReady', 'True', 'Delivered'), condition('Ready', 'True', 'AllReady')],
    credentialID: 'id-3', credentialGeneration: 3, nextRotation: NEXT_ROTATION,
    previousCredentialID: 'id-2', previousCredentialGeneration: 2, previousCredentialDeleteAt: GRACE_UNTIL,
    secretName: 'app-credentials', secretKeys: ['clouds.yaml', 'application_credential_id', 'application_credential_secret'],
  });
}, LOCKED_SETUP_MS);

afterAll(async () => {
  try {
    // Leave the CRDs as found, whatever the last test did.
    if (crdsFile) {
      await kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=kac-test', '-f', crdsFile]);
      await waitEstablished([...ALL_KINDS.map((k) => `crd/${crdName(k)}`)]);
    }
    await kubectl(['delete', 'namespace', NS, '--wait=false']);
  } finally {
    unlock?.();
  }
}, 180_000);

describe('keystone-appcred status on the real API server', () => {
  it('prints the table of the namespace: each kind\'s readiness and reason, generations, next rotation, grace period', async () => {
    const result = await cli(['status', '-n', NS]);
    expect([result.code, result.stderr]).toEqual([0, '']);
    const [header, ...rows] = tableRows(result.stdout);
    expect(header).toEqual(['KIND', 'NAME', 'READY', 'REASON', 'GENERATION', 'NEXT ROTATION', 'GRACE PERIOD']);
    expect(rows).toEqual([
      ['ControlPlane', 'cp', 'True', 'AllReady', '-', '-', '-'],
      ['KeystoneProject', 'svc-project', 'True', 'ProjectProvisioned', '-', '-', '-'],
      ['KeystoneUser', 'svc', 'False', 'DeliveryRefused', '1 (ordered 2)', '-', '-'],
      ['KeystoneRoleAssignment', 'svc-member', '<none>', '<none>', '-', '-', '-'],
      ['KeystoneApplicationCredential', 'app', 'True', 'AllReady', '3', expect.stringMatching(new RegExp(`^${NEXT_ROTATION} \\(in (29|30)d\\)$`)), expect.stringMatching(new RegExp(`^until ${GRACE_UNTIL} \\(in 2[23]h\\)$`))],
    ]);
  });

  it('-o json with --kubeconfig and --context: every row, with the status values as stored', async () => {
    const result = await cli(['status', '-n', NS, '-o', 'json', '--kubeconfig', kubeconfigFor('admin'), '--context', ADMIN_CONTEXT], { KUBECONFIG: '' });
    expect([result.code, result.stderr]).toEqual([0, '']);
    const { items } = JSON.parse(result.stdout) as { items: Record<string, unknown>[] };
    expect(items.map((i) => `${String(i.kind)}/${String(i.name)}`)).toEqual(['ControlPlane/cp', 'KeystoneProject/svc-project', 'KeystoneUser/svc', 'KeystoneRoleAssignment/svc-member', 'KeystoneApplicationCredential/app']);
    expect(items[4]).toEqual({
      kind: 'KeystoneApplicationCredential', namespace: NS, name: 'app', ready: 'True', reason: 'AllReady', message: 'Ready: AllReady',
      generation: 3, orderedGeneration: 1, rotationInterval: '720h', nextRotation: NEXT_ROTATION,
      gracePeriod: { previousGeneration: 2, until: GRACE_UNTIL },
      // Issue 48: the policy in force; the order wrote none, so each field is the CRD's default (src/api/provenance.ts).
      policy: {
        rotation: { interval: '720h', gracePeriod: '24h' },
        sources: { 'rotation.interval': 'Default', 'rotation.gracePeriod': 'Default', 'rotation.window': 'Default', 'rotation.jitterPercent': 'Default', roles: 'Default', accessRules: 'Default' },
      },
      window: null,
    });
  });

  it('-A adds the NAMESPACE column and lists every namespace', async () => {
    const result = await cli(['status', '-A']);
    expect(result.code).toBe(0);
    const [header, ...rows] = tableRows(result.stdout);
    expect(header.slice(0, 3)).toEqual(['NAMESPACE', 'KIND', 'NAME']);
    expect(rows.filter((r) => r[0] === NS).map((r) => r[2])).toEqual(['cp', 'svc-project', 'svc', 'svc-member', 'app']);
  });
});

describe('keystone-appcred rotate on the real API server', () => {
  it('raises spec.credentialGeneration one above the generation held, with the CLI\'s field manager', async () => {
    const result = await cli(['rotate', 'app', '-n', NS]);
    expect([result.code, result.stdout, result.stderr]).toEqual([0, `KeystoneApplicationCredential ${NS}/app: spec.credentialGeneration raised from 1 to 4\n`, '']);
    expect((await spec()).credentialGeneration).toBe(4);
    const stored = JSON.parse(await kubectlOk(['get', 'keystoneapplicationcredential', 'app', '-n', NS, '-o', 'json', '--show-managed-fields'])) as KubeObject;
    expect(stored.metadata.managedFields?.map((f) => f.manager)).toContain('keystone-appcred-cli');
    const table = tableRows((await cli(['status', '-n', NS])).stdout);
    expect(table.find((r) => r[1] === 'app')?.[4]).toBe('3 (ordered 4)');
  });

  it('--wait returns once the status names the new generation and the delivered Secret', async () => {
    const started = Date.now();
    const waiting = cli(['rotate', 'app', '-n', NS, '--wait', '--timeout', '90s']);
    await eventually(async () => (await spec()).credentialGeneration === 5, 60_000, 200);
    // The operator's part: first the generation without the Secret (not done), then both.
    await setStatus('keystoneapplicationcredential', 'app', { credentialGeneration: 5, secretName: null, conditions: [condition('Ready', 'False', 'NotAllReady')] });
    await new Promise((r) => setTimeout(r, 3_000));
    await setStatus('keystoneapplicationcredential', 'app', {
      credentialGeneration: 5, previousCredentialGeneration: 3, secretName: 'app-credentials',
      conditions: [condition('CredentialReady', 'True', 'CredentialMinted'), condition('DeliveryReady', 'True', 'Delivered'), condition('Ready', 'True', 'AllReady')],
    });
    const result = await waiting;
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toBe(
      `KeystoneApplicationCredential ${NS}/app: spec.credentialGeneration raised from 4 to 5\n` +
        `KeystoneApplicationCredential ${NS}/app: generation 5 delivered in Secret app-credentials\n`,
    );
    expect(Date.now() - started).toBeGreaterThan(3_000);
  });

  it('--wait times out naming the order, the generation it holds and the last reason; the spec stays raised', async () => {
    await setStatus('keystoneapplicationcredential', 'app', {
      conditions: [condition('CredentialReady', 'False', 'WaitingForUser', 'KeystoneUser svc is not Ready'), condition('DeliveryReady', 'True', 'Delivered'), condition('Ready', 'False', 'NotAllReady')],
    });
    const result = await cli(['rotate', 'app', '-n', NS, '--wait', '--timeout', '3s']);
    expect(result.stdout).toBe(`KeystoneApplicationCredential ${NS}/app: spec.credentialGeneration raised from 5 to 6\n`);
    expect(expectFailure(result)).toBe(
      `timed out after 3s waiting for KeystoneApplicationCredential ${NS}/app to deliver generation 6: it holds generation 5; Ready is False, reason WaitingForUser (KeystoneUser svc is not Ready); the rotation stays ordered; see keystone-appcred status and the operator's logs`,
    );
    expect((await spec()).credentialGeneration).toBe(6);
  });
});

describe('expected failures, as a user reads them', () => {
  it('an order that does not exist', async () => {
    expect(expectFailure(await cli(['rotate', 'nope', '-n', NS]))).toBe(
      `KeystoneApplicationCredential ${NS}/nope not found: check the name and -n (keystone-appcred status -n ${NS} lists the orders there)`,
    );
  });

  it('RBAC denial names the verb and the resources', async () => {
    const limited = { KUBECONFIG: kubeconfigFor('limited') };
    const status = expectFailure(await cli(['status', '-n', NS], limited));
    expect(status).toMatch(
      new RegExp(`^not allowed to list controlplanes\\.c5c3\\.io, keystoneprojects\\.c5c3\\.io, keystoneusers\\.c5c3\\.io, keystoneroleassignments\\.c5c3\\.io, ${KAC_CRD.replace(/\./g, '\\.')} in namespace ${NS} \\(.*User "kac-limited" cannot list resource .*; likewise for the others\\): ask a cluster admin for a Role granting "list" on controlplanes\\.c5c3\\.io, `),
    );
    const rotate = expectFailure(await cli(['rotate', 'app', '-n', NS], limited));
    expect(rotate).toMatch(new RegExp(`^not allowed to get ${KAC_CRD.replace(/\./g, '\\.')} app in namespace ${NS} \\(.*User "kac-limited" cannot get resource "keystoneapplicationcredentials".*\\): ask a cluster admin for a Role granting "get" on ${KAC_CRD.replace(/\./g, '\\.')}$`));
  });

  it('an unreachable API server names it and the context', async () => {
    const port = await freePort();
    const file = join(process.env.KAC_TEST_WORKDIR ?? REPO, 'cli-unreachable.kubeconfig');
    writeFileSync(file, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'gone',
      clusters: [{ name: 'gone', cluster: { server: `https://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'gone', context: { cluster: 'gone', user: 'u' } }],
    }), { mode: 0o600 });
    expect(expectFailure(await cli(['status', '--kubeconfig', file]))).toBe(
      `cannot reach the API server https://127.0.0.1:${port} (context gone of --kubeconfig ${file}): connect ECONNREFUSED 127.0.0.1:${port}; check that the cluster is up and that --kubeconfig, --context or KUBECONFIG select it`,
    );
  });

  it('an unknown --context lists the contexts there are', async () => {
    expect(expectFailure(await cli(['status', '--context', 'prod']))).toBe(`--context (prod) is not a context of KUBECONFIG; it has ${ADMIN_CONTEXT}`);
  });

  // Last: deletes the KeystoneApplicationCredential CRD (the file's afterAll applies the CRDs again).
  it('a missing CRD names the kind and the command that installs it; status still prints the other kinds', async () => {
    const leftovers = JSON.parse(await kubectlOk(['get', 'keystoneapplicationcredentials', '-A', '-o', 'json'])) as { items: KubeObject[] };
    for (const order of leftovers.items.filter((o) => (o.metadata.finalizers ?? []).length > 0)) {
      // Left by a finished test (the lock is held): without an operator nothing would ever remove them.
      await kubectlOk(['patch', 'keystoneapplicationcredential', order.metadata.name, '-n', order.metadata.namespace ?? '', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    }
    await kubectlOk(['delete', 'crd', KAC_CRD, '--wait=true', '--timeout=120s'], { timeoutMs: 150_000 });
    await eventually(async () => (await kubeRequest('GET', `/apis/c5c3.io/v1alpha1/namespaces/${NS}/keystoneapplicationcredentials`)).status === 404, 60_000);

    const status = await cli(['status', '-n', NS]);
    expect(tableRows(status.stdout).slice(1).map((r) => r[0])).toEqual(['ControlPlane', 'KeystoneProject', 'KeystoneUser', 'KeystoneRoleAssignment']);
    expect(expectFailure(status)).toBe(`the KeystoneApplicationCredential CRD is not installed on ${process.env.KAC_KUBE_SERVER}: ${INSTALL}`);
    expect(expectFailure(await cli(['rotate', 'app', '-n', NS]))).toBe(`the KeystoneApplicationCredential CRD is not installed on ${process.env.KAC_KUBE_SERVER}: ${INSTALL}`);
  });
});
