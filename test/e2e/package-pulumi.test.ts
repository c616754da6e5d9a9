// @needs keystone pulumi kube
/**
 * The Pulumi face as an installed package: `npm pack`, then a temporary project outside the repository with
 * `npm install <tarball>` and `@pulumi/pulumi` / `@pulumi/kubernetes` linked from the repository's node_modules (the
 * versions the Pulumi CLI of the tests matches). Its program, plain CommonJS as a user writes it, declares two
 * credentials (`ci` on a weekly schedule, `batch` with the schedule off) and, when the optional Kubernetes provider
 * plugin is built, a CredentialSecret on the test API server. The real Pulumi CLI previews, ups, reads the stack outputs
 * with `--show-secrets` (each credential authenticates) and destroys, against the test Keystone.
 *
 * The program exports the optional `nextRotation` of `batch` with a default, so `pulumi up` prints no "Undefined value".
 * The package's provider plugin, run from node_modules/.bin as npm linked it, serves the schema the package ships.
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { ApplicationCredentials, authenticateApplicationCredential } from '../../src/keystone';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { getJson, kubectl, kubectlOk } from '../support/kubectl';
import { kubernetesPluginPath } from '../support/binaries';
import { linkFromRepository, newProject, npmInstall, packageJson, packedTarball } from '../support/package';
import { pulumiEnv, runPulumi } from '../support/pulumi';

jest.setTimeout(900_000);

const NS = 'kac-pkg-pulumi';

const PROGRAM = `'use strict';
const fs = require('node:fs');
const pulumi = require('@pulumi/pulumi');
const { KeystoneApplicationCredential } = require('keystone-appcred/pulumi');

const config = new pulumi.Config();
const connection = {
  authUrl: config.require('authUrl'),
  userId: config.require('userId'),
  password: config.requireSecret('password'),
  projectId: config.require('projectId'),
};
const ci = new KeystoneApplicationCredential('ci', { rotation: { interval: '168h', gracePeriod: '24h' }, connection });
const batch = new KeystoneApplicationCredential('batch', { rotation: { interval: '0s' }, connection, cloudName: 'batch' });

exports.ciCredentialId = ci.credentialId;
exports.ciCloudsYaml = ci.cloudsYaml;
exports.ciNextRotation = ci.nextRotation.apply((at) => at ?? 'never');
exports.batchCredentialId = batch.credentialId;
exports.batchCredentialSecret = batch.credentialSecret;
exports.batchNextRotation = batch.nextRotation.apply((at) => at ?? 'never (rotation.interval is 0s)');

if (config.getBoolean('kubernetes')) {
  const k8s = require('@pulumi/kubernetes');
  const { CredentialSecret } = require('keystone-appcred/pulumi/kubernetes');
  const provider = new k8s.Provider('kube', { kubeconfig: fs.readFileSync(config.require('kubeconfig'), 'utf8') });
  const delivered = new CredentialSecret('ci', { credential: ci, namespace: config.require('namespace') }, { provider });
  exports.secretName = delivered.secretName;
}
`;


const plugin = kubernetesPluginPath();
if (!plugin) {
  process.stderr.write(
    '[package-pulumi e2e] the CredentialSecret part is SKIPPED: no pulumi-resource-kubernetes plugin (build it with `bash test/support/build-test-binaries.sh pulumi-resource-kubernetes`)\n',
  );
}

interface StackOutputs {
  ciCredentialId: string;
  ciCloudsYaml: string;
  ciNextRotation: string;
  batchCredentialId: string;
  batchCredentialSecret: string;
  batchNextRotation: string;
  secretName?: string;
}

describe('the Pulumi face, installed from the packed tarball', () => {
  let user: ServiceUser;
  let dir: string;
  const stack = 'package';

  const env = (): NodeJS.ProcessEnv => (plugin ? { PATH: `${dirname(plugin)}:${pulumiEnv().PATH ?? ''}` } : {});
  async function ok(args: string[]): Promise<string> {
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    const result = await runPulumi([...args.slice(0, end), '--stack', stack, '--non-interactive', ...args.slice(end)], { cwd: dir, env: env(), timeoutMs: 540_000 });
    if (result.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed (${String(result.code)}):\n${result.stdout}\n${result.stderr}`.split(user.password).join('***'));
    return `${result.stdout}${result.stderr}`;
  }
  const authenticates = (id: string, secret: string): Promise<true | string> =>
    authenticateApplicationCredential({ authUrl: user.authUrl, id, secret }).then(
      () => true as const,
      (e: Error) => e.message,
    );

  let unlock: (() => void) | undefined;
  beforeAll(async () => {
    const tarball = await packedTarball();
    user = await createServiceUser('pkg-pulumi');
    dir = newProject('pulumi', {
      'Pulumi.yaml': 'name: kac-package-e2e\nruntime: nodejs\nmain: index.js\n',
      'index.js': PROGRAM,
    });
    await npmInstall(dir, [tarball]);
    linkFromRepository(dir, ['@pulumi/pulumi', '@pulumi/kubernetes']);
    await ok(['stack', 'init']);
    await ok(['config', 'set', 'authUrl', user.authUrl]);
    await ok(['config', 'set', 'userId', user.userId]);
    await ok(['config', 'set', 'projectId', user.projectId]);
    await ok(['config', 'set', '--secret', 'password', '--', user.password]);
    if (plugin) {
      // The cluster lock: another file may restart the shared API server (test/reliability/outages.test.ts).
      unlock = await lockCluster('package-pulumi.test.ts');
      await kubectlOk(['create', 'namespace', NS]);
      await ok(['config', 'set', 'kubernetes', 'true']);
      await ok(['config', 'set', 'kubeconfig', process.env.KAC_KUBECONFIG as string]);
      await ok(['config', 'set', 'namespace', NS]);
    }
  }, 900_000 + LOCKED_SETUP_MS);

  afterAll(async () => {
    if (plugin) await kubectl(['delete', '--ignore-not-found', '--wait=false', 'namespace', NS]);
    unlock?.();
    await user?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('pulumi preview plans both credentials (and the Secret) without an error', async () => {
    const out = await ok(['preview']);
    expect(out).toMatch(/KeystoneApplicationCredential\s+ci\s+create/);
    expect(out).toMatch(/KeystoneApplicationCredential\s+batch\s+create/);
    if (plugin) expect(out).toMatch(/keystone-appcred:kubernetes:CredentialSecret\s+ci\s+create/);
    expect(await new ApplicationCredentials(user.session()).list()).toEqual([]);
  });

  it('pulumi up mints both; no "Undefined value" warning; the stack outputs (--show-secrets) authenticate', async () => {
    const out = await ok(['up', '--yes', '--skip-preview']);
    expect(out).not.toContain('Undefined value');
    const outputs = JSON.parse(await ok(['stack', 'output', '--json', '--show-secrets'])) as StackOutputs;
    expect(outputs.batchNextRotation).toBe('never (rotation.interval is 0s)');
    expect(Date.parse(outputs.ciNextRotation)).toBeGreaterThan(Date.now() + 167 * 3_600_000);
    const clouds = parse(outputs.ciCloudsYaml) as { clouds: { openstack: { auth: { application_credential_id: string; application_credential_secret: string } } } };
    expect(clouds.clouds.openstack.auth.application_credential_id).toBe(outputs.ciCredentialId);
    expect(await authenticates(outputs.ciCredentialId, clouds.clouds.openstack.auth.application_credential_secret)).toBe(true);
    expect(await authenticates(outputs.batchCredentialId, outputs.batchCredentialSecret)).toBe(true);
    const held = (await new ApplicationCredentials(user.session()).list()).map((c) => c.name).sort();
    expect(held).toEqual([expect.stringMatching(/^batch-[0-9a-f]{8}-applicationcredential-credential-v1$/), expect.stringMatching(/^ci-[0-9a-f]{8}-applicationcredential-credential-v1$/)]);
    // Without --show-secrets the secret outputs stay hidden.
    expect(JSON.parse(await ok(['stack', 'output', '--json'])) as StackOutputs).toMatchObject({ ciCloudsYaml: '[secret]', batchCredentialSecret: '[secret]' });
    if (plugin) {
      expect(outputs.secretName).toBe('ci-credentials');
      const secret = await getJson<{ data: Record<string, string> }>('secrets', 'ci-credentials', { namespace: NS });
      expect(Buffer.from(secret.data.application_credential_id, 'base64').toString('utf8')).toBe(outputs.ciCredentialId);
    }
  });

  it('pulumi up again is a no-op and still prints no "Undefined value"', async () => {
    const out = await ok(['up', '--yes', '--skip-preview']);
    expect(out).not.toMatch(/updated|created|deleted/);
    expect(out).not.toContain('Undefined value');
  });

  it('the provider plugin of the tarball (a bin, node_modules/.bin/pulumi-resource-keystone-appcred) serves its schema to pulumi package get-schema', async () => {
    const bin = join(dir, 'node_modules', '.bin', 'pulumi-resource-keystone-appcred');
    const result = await runPulumi(['package', 'get-schema', bin], { cwd: dir, env: env() });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(JSON.parse(readFileSync(join(dir, 'node_modules', 'keystone-appcred', 'sdk', 'schema.json'), 'utf8')));
    expect(JSON.parse(result.stdout)).toMatchObject({ name: 'keystone-appcred', version: packageJson().version });
  });

  it('pulumi destroy deletes both credentials (and the Secret)', async () => {
    await ok(['destroy', '--yes', '--skip-preview']);
    expect(await new ApplicationCredentials(user.session()).list()).toEqual([]);
    if (plugin) expect((await kubectl(['get', 'secret', 'ci-credentials', '-n', NS])).code).not.toBe(0);
  });
});
