// @needs kube
/**
 * The cdk8s face as an installed package: `npm pack`, then a temporary project outside the repository with
 * `npm install <tarball>`, the real `cdk8s-cli` and the peer dependencies at the repository's versions (`cdk8s` and
 * `constructs`, the only ones: no cdk8s-plus). In it:
 *
 * - an app of its own (TypeScript, type-checked with `module: node16` and compiled) with a `cdk8s.yaml`, importing
 *   `keystone-appcred/cdk8s`, synthesized by `cdk8s synth` and applied to the test API server: the CRDs, an operator and
 *   a service owner's orders, read back with their defaults;
 * - the example the package ships (`examples/cdk8s`, with its own `cdk8s.yaml`), synthesized by `cdk8s synth` as is;
 * - `keystone-appcred manifests`, piped to `kubectl apply --server-side --dry-run=server -f -`.
 *
 * It installs the project's CRDs on the shared API server, so it takes the cluster lock (test/support/cluster-lock.ts).
 * Its own objects have names of their own (`kac-pkg-*`), removed at the end; the CRDs stay, as crds.test.ts leaves them.
 */
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { getJson, kubectl, kubectlOk, waitEstablished, type KubeObject } from '../support/kubectl';
import { newProject, nodeEnv, npmInstall, packedTarball, REPO, repositoryVersion, run, runOk } from '../support/package';

jest.setTimeout(900_000);

/** The cdk8s-cli release the test installs (npm). */
const CDK8S_CLI = '2.207.60';
const SYSTEM = 'kac-pkg-system';
const OPENSTACK = 'kac-pkg-openstack';
const TENANT = 'kac-pkg-billing';
const OPERATOR = 'kac-pkg-operator';
const CRDS = ['controlplanes', 'keystoneprojects', 'keystoneusers', 'keystoneroleassignments', 'keystoneapplicationcredentials'].map((k) => `crd/${k}.c5c3.io`);

const APP = `import { ApiObject, App, Chart } from 'cdk8s';
import { ControlPlane, Crds, Duration, Operator, ServiceOwner } from 'keystone-appcred/cdk8s';

const app = new App();
const crds = new Chart(app, 'crds');
new Crds(crds, 'Crds');

const operator = new Chart(app, 'operator');
new Operator(operator, 'Operator', {
  image: 'registry.example/keystone-appcred',
  tag: '0.3.0',
  namespace: '${SYSTEM}',
  name: '${OPERATOR}',
  openBao: { address: 'https://openbao.example:8200', auth: { method: 'kubernetes', role: 'keystone-appcred' } },
});
operator.addDependency(crds);

const orders = new Chart(app, 'orders');
for (const name of ['${OPENSTACK}', '${TENANT}']) new ApiObject(orders, name, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const controlPlane = new ControlPlane(orders, 'ControlPlane', {
  metadata: { name: 'cp', namespace: '${OPENSTACK}' },
  keystone: { authURL: 'https://keystone.example:5000/v3' },
  adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } },
  namespaceAssignments: [{ namespace: '${TENANT}', allowedRoles: ['member'] }],
});
new ServiceOwner(orders, 'Billing', {
  namespace: '${TENANT}',
  controlPlaneRef: controlPlane.ref,
  name: 'billing',
  rotation: { interval: Duration.parse('168h'), gracePeriod: '12h' },
});
orders.addDependency(crds);

app.synth();
`;

const TSCONFIG = {
  compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'es2022', strict: true, skipLibCheck: true, types: [], outDir: '.' },
  files: ['main.ts'],
};

describe('the cdk8s face, installed from the packed tarball', () => {
  let dir: string;
  let unlock: (() => void) | undefined;

  beforeAll(async () => {
    const tarball = await packedTarball();
    dir = newProject('cdk8s', {
      'main.ts': APP,
      'tsconfig.json': `${JSON.stringify(TSCONFIG, null, 2)}\n`,
      'cdk8s.yaml': 'language: typescript\napp: node main.js\noutput: dist\n',
    });
    // The peers the package names, and nothing else: no cdk8s-plus.
    const peers = ['cdk8s', 'constructs'].map((p) => `${p}@${repositoryVersion(p)}`);
    await npmInstall(dir, [tarball, `cdk8s-cli@${CDK8S_CLI}`, `tsx@${repositoryVersion('tsx')}`, ...peers]);
  }, 900_000);

  afterAll(async () => {
    try {
      await kubectl(['delete', '--ignore-not-found', '--wait=false', 'namespace', SYSTEM, OPENSTACK, TENANT]);
      await kubectl(['delete', '--ignore-not-found', 'clusterrole', OPERATOR]);
      await kubectl(['delete', '--ignore-not-found', 'clusterrolebinding', OPERATOR]);
    } finally {
      unlock?.();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('type-checks and compiles an app importing keystone-appcred/cdk8s with module node16', async () => {
    const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.code).toBe(0);
    expect(existsSync(join(dir, 'main.js'))).toBe(true);
  });

  it('cdk8s synth (cdk8s-cli) writes the three charts', async () => {
    const out = await runOk('npx', ['--no', '--', 'cdk8s', 'synth'], { cwd: dir, env: nodeEnv(), timeoutMs: 180_000 });
    expect(out).toContain('dist');
    expect(readdirSync(join(dir, 'dist')).sort()).toEqual(['0000-crds.k8s.yaml', '0001-operator.k8s.yaml', '0002-orders.k8s.yaml']);
    const kinds = parseAllDocuments(readFileSync(join(dir, 'dist', '0002-orders.k8s.yaml'), 'utf8')).map((d) => (d.toJSON() as KubeObject).kind);
    expect(kinds).toEqual(['Namespace', 'Namespace', 'ControlPlane', 'KeystoneProject', 'KeystoneUser', 'KeystoneRoleAssignment', 'KeystoneApplicationCredential']);
  });

  it('the API server takes the synthesized CRDs, operator and orders', async () => {
    unlock = await lockCluster('package-cdk8s.test.ts');
    const applyFile = (file: string) => kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=kac-test', '-f', join(dir, 'dist', file)]);
    await applyFile('0000-crds.k8s.yaml');
    await waitEstablished([...CRDS]);
    await applyFile('0001-operator.k8s.yaml');
    await applyFile('0002-orders.k8s.yaml');
    const deployment = await getJson<KubeObject & { spec: { template: { spec: { containers: { image: string }[] } } } }>('deployment', OPERATOR, { namespace: SYSTEM });
    expect(deployment.spec.template.spec.containers[0].image).toBe('registry.example/keystone-appcred:0.3.0');
    const order = await getJson<KubeObject & { spec: { credentialGeneration: number; rotation: { interval: string; gracePeriod: string }; userRef: { name: string } } }>(
      'keystoneapplicationcredentials.c5c3.io',
      'billing-appcred',
      { namespace: TENANT },
    );
    // The schema's default fills what the app left out.
    expect(order.spec).toMatchObject({ credentialGeneration: 1, rotation: { interval: '168h0m0s', gracePeriod: '12h' }, userRef: { name: 'billing' } });
  }, LOCKED_SETUP_MS); // waits for the cluster lock first

  it('cdk8s synth runs the example the package ships, with its cdk8s.yaml as it is', async () => {
    const example = join(dir, 'billing');
    cpSync(join(dir, 'node_modules', 'keystone-appcred', 'examples', 'cdk8s'), example, { recursive: true });
    await runOk('npx', ['--no', '--', 'cdk8s', 'synth'], { cwd: example, env: nodeEnv(), timeoutMs: 180_000 });
    const docs = parseAllDocuments(readFileSync(join(example, 'dist', 'billing.k8s.yaml'), 'utf8')).map((d) => d.toJSON() as KubeObject);
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'KeystoneProject/billing-project',
      'KeystoneUser/billing',
      'KeystoneRoleAssignment/billing-role',
      'KeystoneApplicationCredential/billing-appcred',
      'Deployment/billing',
    ]);
  });

  it('keystone-appcred manifests prints YAML that kubectl apply takes (server-side dry run)', async () => {
    const yaml = await runOk('npx', ['--no', '--', 'keystone-appcred', 'manifests', '--image', 'registry.example/keystone-appcred:0.3.0', '--namespace', SYSTEM], {
      cwd: dir,
      env: nodeEnv(),
    });
    expect(parseAllDocuments(yaml).filter((d) => (d.toJSON() as KubeObject).kind === 'CustomResourceDefinition')).toHaveLength(6);
    const applied = await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=kac-test', '--dry-run=server', '-f', '-'], { input: yaml });
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('deployment.apps/keystone-appcred-operator serverside-applied (server dry run)');
    const sample = await runOk('npx', ['--no', '--', 'keystone-appcred', 'manifests', '--image', 'kac', '--sample'], { cwd: dir, env: nodeEnv() });
    expect(sample).toContain('kind: KeystoneApplicationCredential');
  });
});
