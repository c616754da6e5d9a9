// @needs keystone kube pulumi
/**
 * The Kubernetes side of the Pulumi face against the real API server, with the real Pulumi CLI and the real Kubernetes
 * provider plugin: one program deploys the construct library's CRDs and operator (dist/), an order, and a credential it
 * minted from the real Keystone, delivered as a Secret with the spec's keys; a rotation on `pulumi up` rewrites the
 * Secret in the same run; destroy removes all of it.
 *
 * The plugin (`pulumi-resource-kubernetes`) is an optional build: `bash test/support/build-test-binaries.sh
 * pulumi-resource-kubernetes`, or KAC_PULUMI_RESOURCE_KUBERNETES_BIN. Without it this file is skipped (and says so); the
 * same component and example are always tested with Pulumi's mocks in test/unit/pulumi/kubernetes.test.ts.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ApplicationCredentials, authenticateApplicationCredential } from '../../src/keystone';
import { kubernetesPluginPath } from '../support/binaries';
import { releaseAllLeftovers } from '../support/operator';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { buildProject } from '../support/package';
import { exists, getJson, kubectl } from '../support/kubectl';
import { pulumiEnv, runPulumi } from '../support/pulumi';
import { synthesizeManifests } from '../support/synth';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';

jest.setTimeout(600_000);

const REPO = resolve(__dirname, '..', '..');
const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const NS = 'tenant-pulumi';


const plugin = kubernetesPluginPath();
if (!plugin) {
  process.stderr.write(
    '[pulumi-kubernetes e2e] SKIPPED: no pulumi-resource-kubernetes plugin (build it with `bash test/support/build-test-binaries.sh pulumi-resource-kubernetes`); the mocks test covers the component\n',
  );
}
const maybe = plugin ? describe : describe.skip;

interface SecretObject {
  data: Record<string, string>;
  metadata: { labels?: Record<string, string> };
}

maybe('CredentialSecret and the Kubernetes example against the real API server', () => {
  let user: ServiceUser;
  let dir: string;
  const stack = 'kube';

  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    PATH: `${dirname(plugin as string)}:${pulumiEnv().PATH ?? ''}`,
    OS_AUTH_URL: user.authUrl,
    OS_USER_ID: user.userId,
    OS_PASSWORD: user.password,
    OS_PROJECT_ID: user.projectId,
    ...extra,
  });
  async function ok(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<string> {
    const result = await runPulumi([...args, '--stack', stack, '--non-interactive'], { cwd: dir, env: env(extra), timeoutMs: 540_000 });
    if (result.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed (${String(result.code)}):\n${result.stdout}\n${result.stderr}`.split(user.password).join('***'));
    return result.stdout;
  }
  const decoded = (secret: SecretObject): Record<string, string> =>
    Object.fromEntries(Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
  const login = (data: Record<string, string>) =>
    authenticateApplicationCredential({ authUrl: user.authUrl, id: data.application_credential_id, secret: data.application_credential_secret }).then(
      () => true,
      (e: Error) => e.message,
    );

  let unlock: (() => void) | undefined;

  beforeAll(async () => {
    unlock = await lockCluster('pulumi-kubernetes.test.ts');
    // Other files leave the CRDs chart's cluster-wide admission policy applied by another field manager; Pulumi's
    // server-side apply of the same chart would then conflict on it. Remove it, so this program deploys it as its own.
    await kubectl(['delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', 'keystoneclusteridentities.c5c3.io', '--ignore-not-found']);
    // Its destroy deletes the CRDs, which waits on orders other files left with finalizers (their operators stopped).
    await releaseAllLeftovers();
    await buildProject(); // under the lock every build of lib/ takes
    if (!existsSync(join(REPO, 'lib', 'examples', 'pulumi', 'kubernetes.js'))) throw new Error('npm run build produced no lib/examples/pulumi/kubernetes.js');
    user = await createServiceUser('pulumi-kube');
    dir = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'pulumi-kubernetes-'));
    cpSync(join(__dirname, 'fixtures', 'pulumi-kubernetes'), dir, { recursive: true });
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(REPO, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
    symlinkSync(join(REPO, 'node_modules', '@pulumi'), join(dir, 'node_modules', '@pulumi'), 'dir');
    await ok(['stack', 'init']);
    await ok(['config', 'set', 'kubeconfig', process.env.KAC_KUBECONFIG as string]);
    await ok(['config', 'set', 'namespace', NS]);
    await ok(['config', 'set', 'distDir', synthesizeManifests()]);
  }, LOCKED_SETUP_MS);

  afterAll(async () => {
    unlock?.();
    await user?.cleanup();
  });

  let first: Record<string, string>;

  it('deploys the CRDs, the operator, an order, and the minted credential as a Secret with the spec keys', async () => {
    await ok(['up', '--yes', '--skip-preview']);
    expect(await exists('customresourcedefinitions', 'keystoneapplicationcredentials.c5c3.io')).toBe(true);
    expect(await exists('deployments', 'keystone-appcred-operator', { namespace: 'keystone-appcred-system' })).toBe(true);
    const order = await getJson<{ spec: { userRef: { name: string } } }>('keystoneapplicationcredentials.c5c3.io', 'workflow-appcred', { namespace: NS });
    expect(order.spec.userRef.name).toBe('workflow');
    const secret = await getJson<SecretObject>('secrets', 'ci-credentials', { namespace: NS });
    first = decoded(secret);
    expect(Object.keys(first).sort()).toEqual(['application_credential_id', 'application_credential_secret', 'clouds.yaml']);
    expect(first['clouds.yaml']).toContain(`application_credential_id: ${first.application_credential_id}`);
    expect(secret.metadata.labels).toMatchObject({ 'c5c3.io/keystoneapplicationcredential-name': 'ci', 'c5c3.io/keystoneapplicationcredential-namespace': NS });
    expect(await login(first)).toBe(true);
  });

  it('a rotation on pulumi up rewrites the Secret in the same run', async () => {
    await ok(['up', '--yes', '--skip-preview'], { LD_PRELOAD: FAKETIME_LIB, FAKETIME: '+61m', FAKETIME_DONT_FAKE_MONOTONIC: '1' });
    const next = decoded(await getJson<SecretObject>('secrets', 'ci-credentials', { namespace: NS }));
    expect(next.application_credential_id).not.toBe(first.application_credential_id);
    expect(await login(next)).toBe(true);
    expect(await login(first)).toBe(true);
  });

  it('pulumi destroy removes the Secret, the order and every credential', async () => {
    await ok(['destroy', '--yes', '--skip-preview'], { LD_PRELOAD: FAKETIME_LIB, FAKETIME: '+61m', FAKETIME_DONT_FAKE_MONOTONIC: '1' });
    expect(await exists('secrets', 'ci-credentials', { namespace: NS })).toBe(false);
    // Gone, or being deleted: orders other files left on the shared API server can hold a CRD's deletion with their
    // finalizers (their operators have stopped).
    const crd = (await exists('customresourcedefinitions', 'keystoneapplicationcredentials.c5c3.io'))
      ? await getJson<{ metadata: { deletionTimestamp?: string } }>('customresourcedefinitions', 'keystoneapplicationcredentials.c5c3.io')
      : undefined;
    expect(crd === undefined || crd.metadata.deletionTimestamp !== undefined).toBe(true);
    expect(await new ApplicationCredentials(user.session()).list()).toEqual([]);
  });
});
