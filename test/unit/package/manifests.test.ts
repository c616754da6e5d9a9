/**
 * `keystone-appcred manifests`: the YAML it prints (CRDs, operator, optional samples) and its errors, which name the
 * option and the value and carry no stack trace.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CommanderError } from 'commander';
import { parseAllDocuments } from 'yaml';
import { program } from '../../../src/cli/main';
import { DEFAULT_WORKERS } from '../../../src/api/operator-env';
import { manifestsCommand, packageVersion, parseImage } from '../../../src/cli/manifests';

const REPO = resolve(__dirname, '..', '..', '..');

interface Doc {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec?: { readonly template?: { readonly spec?: { readonly containers?: readonly { image: string; env?: readonly { name: string; value?: string }[] }[] } } };
}

/** Runs `manifests ...args` in-process; resolves with the YAML documents, rejects with the error the CLI would print. */
async function run(...args: string[]): Promise<Doc[]> {
  let out = '';
  let err = '';
  const command = manifestsCommand({ write: (text) => (out += text) })
    .exitOverride()
    .configureOutput({ writeErr: (text) => (err += text), writeOut: (text) => (out += text) });
  try {
    await command.parseAsync(args, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) throw new Error(err.trim());
    throw error;
  }
  return parseAllDocuments(out).map((d) => d.toJSON() as Doc);
}

const names = (docs: readonly Doc[]): string[] => docs.map((d) => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`);
const container = (docs: readonly Doc[]) => docs.find((d) => d.kind === 'Deployment')?.spec?.template?.spec?.containers?.[0];

describe('keystone-appcred manifests', () => {
  it('--target-cluster prints what a target cluster needs: the four order CRDs, then the ClusterRole and binding of the given identity', async () => {
    const docs = await run('--target-cluster');
    expect(names(docs)).toEqual([
      'CustomResourceDefinition//keystoneprojects.c5c3.io',
      'CustomResourceDefinition//keystoneusers.c5c3.io',
      'CustomResourceDefinition//keystoneroleassignments.c5c3.io',
      'CustomResourceDefinition//keystoneapplicationcredentials.c5c3.io',
      'ClusterRole//keystone-appcred-operator',
      'ClusterRoleBinding//keystone-appcred-operator',
    ]);
    const subjects = (d: readonly Doc[]) => (d.find((x) => x.kind === 'ClusterRoleBinding') as unknown as { subjects: unknown[] }).subjects;
    expect(subjects(docs)).toEqual([{ kind: 'ServiceAccount', name: 'keystone-appcred-operator', namespace: 'keystone-appcred-system' }]);
    expect(subjects(await run('--target-cluster', '--target-service-account', 'platform/kac'))).toEqual([{ kind: 'ServiceAccount', name: 'kac', namespace: 'platform' }]);
    expect(subjects(await run('--target-cluster', '--target-user', 'kac-operator'))).toEqual([{ kind: 'User', name: 'kac-operator', apiGroup: 'rbac.authorization.k8s.io' }]);
  });

  it.each([
    [['--target-cluster', '--target-service-account', 'Platform/kac'], '--target-service-account ("Platform/kac"): subject.namespace must be a DNS label of at most 63 characters'],
    [['--target-cluster', '--target-service-account', 'kac'], '--target-service-account ("kac"): subject.namespace must be a DNS label of at most 63 characters'],
    [['--target-cluster', '--sample'], "error: option '--target-cluster' cannot be used with option '--sample'"],
    [['--image', 'kac', '--target-user', 'bob'], 'error: --target-user applies only with --target-cluster'],
  ])('--target-cluster refuses %j: %s', async (args, message) => {
    await expect(run(...args)).rejects.toThrow(message);
  });

  it('is a subcommand of the CLI', () => {
    expect(program().commands.map((c) => c.name())).toContain('manifests');
  });

  it('prints the six CRDs and the cluster identity admission policy, then the operator, and no orders without --sample', async () => {
    const docs = await run('--image', 'registry.example:5000/platform/keystone-appcred:1.2.3');
    const crds = docs.filter((d) => d.kind === 'CustomResourceDefinition');
    expect(docs.slice(0, crds.length)).toEqual(crds); // the CRDs come first
    expect(crds.map((d) => d.metadata.name).sort()).toEqual([
      'controlplanes.c5c3.io',
      'keystoneapplicationcredentials.c5c3.io',
      'keystoneclusteridentities.c5c3.io',
      'keystoneprojects.c5c3.io',
      'keystoneroleassignments.c5c3.io',
      'keystoneusers.c5c3.io',
    ]);
    expect(names(docs.slice(6, 8))).toEqual([
      'ValidatingAdmissionPolicy//keystoneclusteridentities.c5c3.io',
      'ValidatingAdmissionPolicyBinding//keystoneclusteridentities.c5c3.io',
    ]);
    expect(names(docs.slice(8))).toEqual([
      'Namespace//keystone-appcred-system',
      'ServiceAccount/keystone-appcred-system/keystone-appcred-operator',
      'ClusterRole//keystone-appcred-operator',
      'ClusterRoleBinding//keystone-appcred-operator',
      'Role/keystone-appcred-system/keystone-appcred-operator-leader-election',
      'RoleBinding/keystone-appcred-system/keystone-appcred-operator-leader-election',
      'Role/keystone-appcred-system/keystone-appcred-operator-cluster-registration',
      'RoleBinding/keystone-appcred-system/keystone-appcred-operator-cluster-registration',
      'Deployment/keystone-appcred-system/keystone-appcred-operator',
      'Service/keystone-appcred-system/keystone-appcred-operator-metrics',
      'PodDisruptionBudget/keystone-appcred-system/keystone-appcred-operator',
    ]);
    expect(container(docs)?.image).toBe('registry.example:5000/platform/keystone-appcred:1.2.3');
    expect(container(docs)?.env).toEqual(
      expect.arrayContaining([
        { name: 'KAC_OPENBAO_ADDRESS', value: 'https://openbao.openbao.svc:8200' },
        { name: 'KAC_OPENBAO_AUTH_METHOD', value: 'kubernetes' },
        { name: 'KAC_OPENBAO_ROLE', value: 'keystone-appcred-operator' },
      ]),
    );
  });

  it('takes the namespace, OpenBao settings and the sample orders from the options', async () => {
    const docs = await run('--image', 'kac', '--namespace', 'platform', '--openbao-address', 'http://bao.vault:8200', '--openbao-token-secret', 'bao-token', '--sample');
    expect(docs.filter((d) => d.metadata.namespace === 'keystone-appcred-system')).toEqual([]);
    expect(docs.find((d) => d.kind === 'Deployment')?.metadata.namespace).toBe('platform');
    expect(container(docs)?.image).toBe(`kac:${packageVersion()}`);
    expect(container(docs)?.env).toEqual(expect.arrayContaining([{ name: 'KAC_OPENBAO_ADDRESS', value: 'http://bao.vault:8200' }, { name: 'KAC_OPENBAO_AUTH_METHOD', value: 'token' }]));
    expect(names(docs.filter((d) => d.apiVersion === 'c5c3.io/v1alpha1'))).toEqual([
      'ControlPlane/openstack/cp',
      'KeystoneProject/tenant-a/workflow-project',
      'KeystoneUser/tenant-a/workflow',
      'KeystoneRoleAssignment/tenant-a/workflow-role',
      'KeystoneApplicationCredential/tenant-a/workflow-appcred',
    ]);
    expect(names(docs.filter((d) => d.kind === 'Namespace'))).toEqual(['Namespace//platform', 'Namespace//openstack', 'Namespace//tenant-a']);
  });

  it('adds the workload rules and turns the consumer handoff on with --consumer-handoff, and only then', async () => {
    const apps = (docs: Awaited<ReturnType<typeof run>>) =>
      docs.filter((d) => d.kind === 'ClusterRole').flatMap((d) => (d as unknown as { rules: { apiGroups: string[]; verbs: string[] }[] }).rules).filter((r) => r.apiGroups.includes('apps'));
    expect(apps(await run('--image', 'kac'))).toEqual([]);
    const on = await run('--image', 'kac', '--consumer-handoff');
    expect(apps(on).flatMap((r) => r.verbs).sort()).toEqual(['get', 'list', 'patch', 'watch']);
    expect(container(on)?.env).toEqual(expect.arrayContaining([{ name: 'KAC_CONSUMER_HANDOFF', value: 'true' }]));
  });

  it('--secret-namespaces: no cluster-scoped rule on Secrets, a Role per namespace and a read-only Role per source, the operator namespaced', async () => {
    const secretRules = (docs: Awaited<ReturnType<typeof run>>, kind: string) =>
      docs.filter((d) => d.kind === kind).flatMap((d) => ((d as unknown as { rules: { resources: string[] }[] }).rules ?? []).filter((r) => r.resources.includes('secrets')).map(() => `${d.metadata.namespace ?? ''}/${d.metadata.name}`));
    const docs = await run('--image', 'kac', '--secret-namespaces', 'openstack,tenant-a,vault/keystone-admin');
    expect(secretRules(docs, 'ClusterRole')).toEqual([]);
    expect([...new Set(secretRules(docs, 'Role'))]).toEqual([
      'keystone-appcred-system/keystone-appcred-operator-cluster-registration',
      'openstack/keystone-appcred-operator-secrets',
      'tenant-a/keystone-appcred-operator-secrets',
      'vault/keystone-appcred-operator-source-keystone-admin',
    ]);
    expect(names(docs).filter((n) => n.startsWith('RoleBinding/') && !n.includes('keystone-appcred-system'))).toHaveLength(3);
    expect(container(docs)?.env).toEqual(expect.arrayContaining([{ name: 'KAC_SECRET_ACCESS', value: 'namespaced' }, { name: 'KAC_RBAC_NAME', value: 'keystone-appcred-operator' }]));
    // With --sample, the sample ControlPlane's namespaces are granted too, beside it.
    expect(names(await run('--image', 'kac', '--secret-namespaces', 'extra', '--sample')).filter((n) => n.startsWith('Role/') && n.endsWith('-secrets'))).toEqual([
      'Role/extra/keystone-appcred-operator-secrets',
      'Role/openstack/keystone-appcred-operator-secrets',
      'Role/tenant-a/keystone-appcred-operator-secrets',
    ]);
    // On a target cluster: the namespaces only.
    const target = await run('--target-cluster', '--secret-namespaces', 'tenant-a');
    expect(secretRules(target, 'ClusterRole')).toEqual([]);
    expect([...new Set(secretRules(target, 'Role'))]).toEqual(['tenant-a/keystone-appcred-operator-secrets']);
    await expect(run('--target-cluster', '--secret-namespaces', 'tenant-a,vault/x')).rejects.toThrow('entry "vault/x" names a Secret, but a target cluster holds no KeystoneClusterIdentity source');
    await expect(run('--image', 'kac', '--secret-namespaces', 'Tenant')).rejects.toThrow("option '--secret-namespaces <list>' argument 'Tenant' is invalid. entry \"Tenant\": \"Tenant\" must be a namespace name");
  });

  it('gives the operator the construct\'s workers, or --workers', async () => {
    expect(container(await run('--image', 'kac'))?.env).toContainEqual({ name: 'KAC_WORKERS', value: String(DEFAULT_WORKERS) });
    expect(container(await run('--image', 'kac', '--workers', '12'))?.env).toContainEqual({ name: 'KAC_WORKERS', value: '12' });
  });

  it('defaults the tag to the package version', () => {
    expect(packageVersion()).toBe((JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version);
    expect(parseImage('kac')).toEqual({ image: 'kac', tag: packageVersion(), given: 'kac' });
    expect(parseImage('localhost:5000/kac')).toEqual({ image: 'localhost:5000/kac', tag: packageVersion(), given: 'localhost:5000/kac' });
    expect(parseImage('localhost:5000/kac:v2')).toEqual({ image: 'localhost:5000/kac', tag: 'v2', given: 'localhost:5000/kac:v2' });
  });

  it.each([
    [['--sample'], "error: required option '--image <IMAGE[:TAG]>' not specified"],
    [['--image', 'kac@sha256:0123'], "error: option '--image <IMAGE[:TAG]>' argument 'kac@sha256:0123' is invalid. digests are not supported; give IMAGE or IMAGE:TAG"],
    [['--image', 'kac:'], "error: option '--image <IMAGE[:TAG]>' argument 'kac:' is invalid. the tag after \":\" is empty"],
    [['--image', 'Platform/KAC:1'], '--image ("Platform/KAC:1"): the repository "Platform/KAC" must be lower-case letters, digits, ".", "_", "-", "/" and a registry ":port"'],
    [['--image', 'kac:bad!tag'], '--image ("kac:bad!tag"): tag must be a Docker tag: letters, digits, _ . -, at most 128 characters'],
    [['--image', 'kac', '--namespace', 'Platform'], '--namespace ("Platform"): namespace must be a DNS label of at most 63 characters'],
    [['--image', 'kac', '--openbao-address', 'bao:8200'], '--openbao-address ("bao:8200"): openBao.address must be an http or https URL'],
    [['--image', 'kac', '--openbao-token-secret', 'Bao_Token'], '--openbao-token-secret ("Bao_Token"): openBao.auth.secretName must name a Secret in the operator\'s namespace'],
    [['--image', 'kac', '--workers', 'many'], '--workers ("many"): workers must be a whole number of workers from 1 to 64'],
    [['--image', 'kac', '--workers', '0'], '--workers ("0"): workers must be a whole number of workers from 1 to 64'],
    [['--image', 'kac', '--openbao-role', ''], '--openbao-role (""): openBao.auth.role must name the OpenBao role bound to the operator\'s service account'],
  ])('refuses %j naming the option and the value', async (args, message) => {
    await expect(run(...args)).rejects.toThrow(message);
  });

  it('prints a refused value as one line on stderr, without a stack trace, and exits 1', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', join(REPO, 'src', 'cli', 'main.ts'), 'manifests', '--image', 'kac', '--namespace', 'Platform'], {
      cwd: REPO,
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('keystone-appcred: --namespace ("Platform"): namespace must be a DNS label of at most 63 characters\n');
  });
});
