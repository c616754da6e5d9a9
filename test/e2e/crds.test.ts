// @needs kube
/**
 * The synthesized manifests against a real API server: the six CRDs are accepted and established (so every CEL rule
 * compiled within the cost budget), the operator's objects and the sample orders are accepted, the stored sample shows
 * the spec's defaults, the server-side Table shows the seven columns, and every fixture of the admission corpus is
 * rejected with its rule's message or accepted, as the corpus says.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { defineProjectCharts } from '../../constructs/app';
import { ALL_KINDS } from '../../constructs/crds';
import { crdName } from '../../constructs/crd';
import { PLANE_RULES } from '../../src/api/identity-plane-rules';
import { CLUSTER_IDENTITY_RULES } from '../../src/api/cluster-identity-rules';
import type { PlaneKind } from '../../src/api/identity-plane';
import { RULES } from '../../src/api/rules';
import { CORPUS_NAMESPACE, type FixtureEntry } from './corpus/generate';
import { getJson, getTable, kubectl, kubectlOk, waitEstablished, type KubectlResult, type KubeObject } from '../support/kubectl';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';

const CORPUS = join(__dirname, 'corpus');
const outdir = mkdtempSync(join(tmpdir(), 'kac-synth-'));
const app = new App({ outdir });
defineProjectCharts(app);
app.synth();
const fileOf = (chart: string): string => {
  const name = readdirSync(outdir).find((f) => f.endsWith(`-${chart}.k8s.yaml`) || f === `${chart}.k8s.yaml`);
  if (!name) throw new Error(`no ${chart} manifest in ${outdir}`);
  return join(outdir, name);
};

/**
 * Applied as the other files install them (test/support/operator.ts `installCrds`): with `--force-conflicts`, because
 * files that install as a user does (`kubectl`'s field manager: the upgrade and install-artifacts files) may have
 * applied the admission policy before, and its `matchConstraints` is an atomic struct the API server stores with its
 * defaults filled in, so a second manager's apply of the same manifest conflicts with the first's.
 */
const applyFile = (file: string): Promise<string> => kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=kac-test', '-f', file]);

/** Every rule message of a kind, to check a fixture is refused for its own rule only. */
const MESSAGES: Record<string, readonly string[]> = {
  KeystoneApplicationCredential: RULES.map((r) => r.message),
  ...Object.fromEntries(Object.entries(PLANE_RULES).map(([kind, rules]) => [kind, rules.map((r) => r.message)])),
  KeystoneClusterIdentity: CLUSTER_IDENTITY_RULES.map((r) => r.message),
};

describe('the synthesized manifests on a real API server', () => {
  let unlock: (() => void) | undefined;
  afterAll(() => unlock?.());

  beforeAll(async () => {
    unlock = await lockCluster('crds.test.ts');
    await applyFile(fileOf('crds'));
    await waitEstablished([...ALL_KINDS.map((k) => `crd/${crdName(k)}`)]);
  }, LOCKED_SETUP_MS);

  it('establishes the six CRDs', async () => {
    for (const kind of ALL_KINDS) {
      const crd = await getJson<KubeObject & { status: { conditions: { type: string; status: string }[] } }>('crd', crdName(kind));
      expect(crd.status.conditions).toContainEqual(expect.objectContaining({ type: 'Established', status: 'True' }));
    }
  });

  it('accepts the operator', async () => {
    await applyFile(fileOf('operator'));
    const deployment = await getJson<KubeObject & { spec: { replicas: number } }>('deployment', 'keystone-appcred-operator', { namespace: 'keystone-appcred-system' });
    expect(deployment.spec.replicas).toBe(2);
    const role = await getJson<KubeObject & { rules: unknown[] }>('clusterrole', 'keystone-appcred-operator');
    expect(role.rules.length).toBeGreaterThan(0);
    for (const kind of ['serviceaccount', 'service/keystone-appcred-operator-metrics', 'poddisruptionbudget', 'role', 'rolebinding']) {
      expect((await kubectlOk(['get', kind, '-n', 'keystone-appcred-system', '-o', 'name'])).trim()).not.toBe('');
    }
  });

  describe('the operator\'s RBAC, as the real authorizer reads it', () => {
    beforeAll(async () => {
      await applyFile(fileOf('operator'));
    });

    it.each([
      ['list', 'keystoneapplicationcredentials.c5c3.io', 'tenant-a', true],
      ['patch', 'keystoneapplicationcredentials.c5c3.io/status', 'tenant-a', true],
      ['update', 'keystoneapplicationcredentials.c5c3.io', 'tenant-a', false],
      ['delete', 'keystoneusers.c5c3.io', 'tenant-a', false],
      ['create', 'secrets', 'tenant-a', true],
      ['patch', 'secrets', 'openstack', true],
      ['update', 'secrets', 'tenant-a', false],
      ['deletecollection', 'secrets', 'tenant-a', false],
      ['create', 'pods', 'tenant-a', false],
      ['create', 'events.events.k8s.io', 'tenant-a', true],
      ['update', 'leases.coordination.k8s.io/keystone-appcred-operator-leader', 'keystone-appcred-system', true],
      ['update', 'leases.coordination.k8s.io/another-lease', 'keystone-appcred-system', false],
      ['create', 'leases.coordination.k8s.io', 'tenant-a', false],
      ['watch', 'keystoneclusteridentities.c5c3.io', 'tenant-a', true],
      ['patch', 'keystoneclusteridentities.c5c3.io/status', 'tenant-a', true],
      ['patch', 'keystoneclusteridentities.c5c3.io', 'tenant-a', false],
      ['delete', 'keystoneclusteridentities.c5c3.io', 'tenant-a', false],
      ['list', 'namespaces', 'tenant-a', true],
      ['patch', 'namespaces', 'tenant-a', false],
    ] as const)('lets the operator %s %s in %s: %s', async (verb, resource, namespace, allowed) => {
      // `kubectl auth can-i` reads `<resource>/<x>` as a name: a subresource needs --subresource.
      const [target, subresource] = resource.endsWith('/status') ? [resource.slice(0, -'/status'.length), ['--subresource=status']] : [resource, []];
      const result = await kubectl(['auth', 'can-i', verb, target, ...subresource, '-n', namespace, '--as=system:serviceaccount:keystone-appcred-system:keystone-appcred-operator']);
      expect(result.stdout.trim()).toBe(allowed ? 'yes' : 'no');
    });
  });

  describe('the samples', () => {
    beforeAll(async () => {
      await applyFile(fileOf('samples'));
    });

    it('store workflow-appcred with the spec\'s defaults filled in', async () => {
      const order = await getJson<KubeObject & { spec: Record<string, unknown> }>('keystoneapplicationcredential', 'workflow-appcred', { namespace: 'tenant-a' });
      expect(order.spec).toEqual({
        controlPlaneRef: { name: 'cp', namespace: 'openstack' },
        userRef: { name: 'workflow' },
        projectRef: { name: 'workflow-project' },
        credentialGeneration: 1,
        rotation: { interval: '720h', gracePeriod: '24h' },
      });
    });

    it('store the neighbours with their defaults filled in', async () => {
      const cp = await getJson<KubeObject & { spec: Record<string, unknown> }>('controlplane', 'cp', { namespace: 'openstack' });
      expect(cp.spec).toMatchObject({
        region: 'RegionOne',
        services: { keystone: { mode: 'External', external: { endpointType: 'public', caBundleSecretRef: { name: 'keystone-ca', key: 'ca.crt' } } } },
        adminCredential: { domainName: 'Default', cloudCredentialsRef: { secretName: 'keystone-admin', cloudName: 'admin' } },
      });
      const identity = await getJson<KubeObject & { spec: Record<string, unknown> }>('keystoneclusteridentity', 'keystone-admin');
      expect(identity.metadata.namespace).toBeUndefined();
      expect(identity.spec).toEqual({ secretRef: { name: 'keystone-admin', namespace: 'openstack' }, cloudName: 'admin', allowedNamespaces: { list: ['openstack'] } });
      const user = await getJson<KubeObject & { spec: Record<string, unknown> }>('keystoneuser', 'workflow', { namespace: 'tenant-a' });
      expect(user.spec).toMatchObject({ passwordGeneration: 1 });
      expect((await kubectlOk(['get', 'keystoneprojects,keystoneroleassignments', '-n', 'tenant-a', '-o', 'name'])).trim().split('\n')).toEqual([
        'keystoneproject.c5c3.io/workflow-project',
        'keystoneroleassignment.c5c3.io/workflow-role',
      ]);
    });

    it('show the seven columns in the API server\'s Table, from the status the test fills in', async () => {
      const status = {
        conditions: [{ type: 'Ready', status: 'True', reason: 'AllReady', message: 'ready', lastTransitionTime: '2026-12-01T00:00:00Z' }],
        observedGeneration: 1,
        credentialGeneration: 3,
        nextRotation: '2027-01-01T00:00:00Z',
      };
      await kubectlOk([
        'patch', 'keystoneapplicationcredential', 'workflow-appcred', '-n', 'tenant-a', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status }),
      ]);
      const table = await getTable('/apis/c5c3.io/v1alpha1/namespaces/tenant-a/keystoneapplicationcredentials/workflow-appcred');
      expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Ready', 'ControlPlane', 'User', 'Project', 'Generation', 'NextRotation', 'Age']);
      expect(table.rows[0].cells.slice(0, 7)).toEqual(['workflow-appcred', 'True', 'cp', 'workflow', 'workflow-project', 3, '2027-01-01T00:00:00Z']);
      const printed = await kubectlOk(['get', 'keystoneapplicationcredential', '-n', 'tenant-a']);
      expect(printed.split('\n')[0].split(/\s+/)).toEqual(['NAME', 'READY', 'CONTROLPLANE', 'USER', 'PROJECT', 'GENERATION', 'NEXTROTATION', 'AGE']);
    });
  });

  describe('controlPlaneRef.namespace left out, as manifests written for the original kinds do', () => {
    const namespace = 'kac-controlplaneref';
    beforeAll(async () => {
      await kubectlOk(['create', 'namespace', namespace]);
    });

    it.each(['KeystoneProject', 'KeystoneUser'])('%s: is stored left out, and writing it out later is refused at spec.controlPlaneRef.namespace', async (kind) => {
      const order = { apiVersion: 'c5c3.io/v1alpha1', kind, metadata: { name: 'legacy', namespace }, spec: { controlPlaneRef: { name: 'cp' } } };
      await kubectlOk(['create', '-f', '-'], { input: JSON.stringify(order) });
      const stored = await getJson<KubeObject & { spec: { controlPlaneRef: unknown } }>(kind.toLowerCase(), 'legacy', { namespace });
      expect(stored.spec.controlPlaneRef).toEqual({ name: 'cp' });
      const result = await kubectl(['replace', '-f', '-'], { input: JSON.stringify({ ...order, spec: { controlPlaneRef: { name: 'cp', namespace: 'openstack' } } }) });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/spec\.controlPlaneRef\.namespace: Invalid value: .*controlPlaneRef\.namespace is immutable/);
    });
  });

  describe('the admission corpus', () => {
    const index = JSON.parse(readFileSync(join(CORPUS, 'index.json'), 'utf8')) as FixtureEntry[];

    beforeAll(async () => {
      await kubectlOk(['create', 'namespace', CORPUS_NAMESPACE]);
    });

    // The accepted fixtures are stored objects: left behind, the next file on this API server (the cluster pool hands
    // it on) met them as orders of its own operator, gated ones that read OpenBao on every start (restarts.test.ts
    // counted 66 such reads in a whole-suite run). No operator runs here, so nothing holds a finalizer on them.
    afterAll(async () => {
      const stored = index
        .filter((e) => 'accepted' in e.expect)
        .map((e) => parseAllDocuments(readFileSync(join(CORPUS, e.file), 'utf8')).map((d) => d.toJS() as KubeObject).pop() as KubeObject)
        .map(({ apiVersion, kind, metadata }) => ({ apiVersion, kind, metadata: { name: metadata.name, ...(metadata.namespace ? { namespace: metadata.namespace } : {}) } }));
      await kubectlOk(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: stored }) });
      await kubectlOk(['delete', 'namespace', CORPUS_NAMESPACE, '--wait=false']);
    });

    it('covers every rule of every kind', () => {
      for (const [kind, messages] of Object.entries(MESSAGES)) {
        const covered = index.filter((e) => e.kind === kind && 'rejected' in e.expect).map((e) => ('rejected' in e.expect ? e.expect.rejected : ''));
        for (const message of messages) expect([kind, covered]).toEqual([kind, expect.arrayContaining([message])]);
      }
    });

    it.each(index.map((e) => [e.file, e.description, e]))('%s (%s)', async (_file, _description, entry) => {
      const docs = parseAllDocuments(readFileSync(join(CORPUS, entry.file), 'utf8')).map((d) => d.toJS() as KubeObject);
      let result: KubectlResult;
      if (entry.operation === 'update') {
        await kubectlOk(['create', '-f', '-'], { input: JSON.stringify(docs[0]) });
        result = await kubectl(['replace', '-f', '-'], { input: JSON.stringify(docs[1]) });
      } else {
        result = await kubectl(['create', '-f', '-'], { input: JSON.stringify(docs[0]) });
      }
      if ('accepted' in entry.expect) {
        expect([result.code, result.stderr.trim()]).toEqual([0, '']);
        const sent = docs[docs.length - 1] as KubeObject & { spec: Record<string, unknown> };
        const stored = await getJson<KubeObject & { spec: Record<string, unknown> }>(sent.kind.toLowerCase(), sent.metadata.name, { namespace: sent.metadata.namespace });
        expect(stored.spec).toMatchObject(sent.spec); // stored as written, e.g. a Go client's 720h0m0s
        return;
      }
      const { rejected, by } = entry.expect;
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(rejected);
      if (by === 'rule') {
        const others = (MESSAGES[entry.kind as PlaneKind | 'KeystoneApplicationCredential' | 'KeystoneClusterIdentity'] ?? []).filter((m) => m !== rejected && result.stderr.includes(m));
        expect(others).toEqual([]);
      }
    });
  });
});
