// @needs kube keystone
/**
 * A ControlPlane with `adminCredential.identityRef` on the real components (issue 11): the operator runs as a child
 * process under the construct's RBAC against the real API server and the real Keystone. Proven: an identity allowing the
 * ControlPlane's namespace by list → the mirror keystone-creds-<identity> (label, source hash, owned by the ControlPlane),
 * the ControlPlane Ready (a real admin login) and the identity's status.namespaces [ns]; the namespace removed from the
 * list → the mirror deleted, Ready=False/NamespaceNotAllowed; allowed by a selector after labelling the namespace →
 * Ready again; the source Secret changed → the mirror rewritten (its source hash changes).
 */
import { join } from 'node:path';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { adminSession, createServiceUser, keystoneTestEnv, uniqueName, type ServiceUser } from '../support/keystone-fixtures';
import { Projects, Users } from '../../src/keystone';
import { applyOk, eventually, getJson, kubectl, kubectlOk, type KubeObject } from '../support/kubectl';
import { installCrds, operatorKubeconfig, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess, QUICK_ELECTION } from '../support/operator';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(180_000);

const OP_NS = 'kac-e2e-cid-op';
const CP_NS = 'kac-e2e-cid-cp';
const SRC_NS = 'kac-e2e-cid-src';
const IDENTITY = { namespace: OP_NS, binding: 'kac-e2e-cid-operator' };
const API = 'c5c3.io/v1alpha1';
const NAME = uniqueName('kac-e2e-cid').slice(0, 40);
const MIRROR = `keystone-creds-${NAME}`;
const RESOURCE = 'keystoneclusteridentities.c5c3.io';
const LABEL = 'kac-e2e-cid/plane';

const env = keystoneTestEnv();

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly observedGeneration?: number;
}
type WithStatus = KubeObject & { status?: { conditions?: Condition[]; namespaces?: string[] } };
type SecretJson = KubeObject & { metadata: KubeObject['metadata'] & { annotations?: Record<string, string>; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string; controller?: boolean }[] } };

let unlock: (() => void) | undefined;
let op: OperatorProcess | undefined;

const cloudsYaml = (comment = '') =>
  `clouds:\n  admin:\n    auth:\n      auth_url: ${env.authUrl}\n      username: ${env.adminUser}\n      password: "${env.adminPassword}"\n      project_name: ${env.adminProject}\n      user_domain_name: ${env.domain}\n      project_domain_name: ${env.domain}\n${comment}`;

const source = (comment = '', document = cloudsYaml(comment)): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'admin-src', namespace: SRC_NS },
  data: { 'clouds.yaml': Buffer.from(document).toString('base64') },
});

/** The clouds.yaml of a user holding `admin` on its own project (Keystone's default policy: a cloud admin). */
const cloudsYamlOf = (user: ServiceUser, password: string) =>
  `clouds:\n  admin:\n    auth:\n      auth_url: ${env.authUrl}\n      username: ${user.userName}\n      password: "${password}"\n      project_name: ${user.projectName}\n      user_domain_name: ${env.domain}\n      project_domain_name: ${env.domain}\n`;

const identity = (allowedNamespaces: Record<string, unknown>): KubeObject => ({
  apiVersion: API,
  kind: 'KeystoneClusterIdentity',
  metadata: { name: NAME },
  spec: { secretRef: { namespace: SRC_NS, name: 'admin-src' }, allowedNamespaces },
});

const controlPlaneWith = (namespaceAssignments: { namespace: string }[]): KubeObject => ({
  apiVersion: API,
  kind: 'ControlPlane',
  metadata: { name: 'cp', namespace: CP_NS },
  spec: { services: { keystone: { external: { authURL: env.authUrl } } }, adminCredential: { identityRef: { name: NAME } }, namespaceAssignments },
});
const controlPlane = controlPlaneWith([]);

const conditionOf = (o: WithStatus, type: string) => o.status?.conditions?.find((c) => c.type === type);

async function controlPlaneIs(status: string, reason?: string): Promise<WithStatus> {
  return eventually(async () => {
    const cp = await getJson<WithStatus>('controlplanes.c5c3.io', 'cp', { namespace: CP_NS });
    const ready = conditionOf(cp, 'Ready');
    if (ready?.status === status && (reason === undefined || ready.reason === reason)) return cp;
    throw new Error(`ControlPlane Ready is ${JSON.stringify(ready)}; conditions ${JSON.stringify(cp.status?.conditions)}`);
  }, 30_000, 250);
}

const mirror = async (): Promise<SecretJson | undefined> => {
  const r = await kubectl(['get', 'secret', MIRROR, '-n', CP_NS, '-o', 'json']);
  return r.code === 0 ? (JSON.parse(r.stdout) as SecretJson) : undefined;
};

const identityNamespaces = async (want: readonly string[]) =>
  eventually(async () => {
    const o = await getJson<WithStatus>(RESOURCE, NAME);
    if (JSON.stringify(o.status?.namespaces ?? []) === JSON.stringify(want) && conditionOf(o, 'Ready')?.reason === 'SecretFound') return o;
    throw new Error(`identity status ${JSON.stringify(o.status)}`);
  }, 30_000, 250);

beforeAll(async () => {
  unlock = await lockCluster('cluster-identity.test.ts');
  const workDir = process.env.KAC_TEST_WORKDIR as string;
  const manifests = synthesizeManifests();
  await installCrds(manifests);
  const kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'cluster-identity.kubeconfig'));
  for (const ns of [CP_NS, SRC_NS]) await kubectl(['create', 'namespace', ns]);
  await applyOk([source(), identity({ list: [CP_NS] }), controlPlane]);
  op = await startOperator({ name: 'cid-a', kubeconfig, namespace: OP_NS, logDir: workDir, args: QUICK_ELECTION });
  await waitReady(op);
}, LOCKED_SETUP_MS);

afterAll(async () => {
  await op?.server.stop(5_000);
  await releaseLeftovers([CP_NS]);
  // status.namespaces refuses the identity's deletion; with the operator stopped nothing else clears it.
  await kubectl(['patch', RESOURCE, NAME, '--subresource=status', '--type=merge', '-p', '{"status":{"namespaces":[]}}']);
  await kubectl(['delete', RESOURCE, NAME, '--wait=false']);
  await kubectl(['delete', 'namespace', CP_NS, SRC_NS, OP_NS, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  unlock?.();
}, 60_000);

describe('KeystoneClusterIdentity: the operator resolves a ControlPlane\'s identityRef', () => {
  test('allowed by list → mirror, Ready, status.namespaces; revoked → mirror deleted; by selector → Ready; source changed → rewritten', async () => {
    const cp = await controlPlaneIs('True', 'AllReady');
    expect(conditionOf(cp, 'IdentityAllowed')).toMatchObject({ status: 'True', reason: 'IdentityAllowed' });
    expect(conditionOf(cp, 'CredentialsMirrored')).toMatchObject({ status: 'True', reason: 'CredentialsMirrored' });
    expect(conditionOf(cp, 'AdminCredentialReady')).toMatchObject({ status: 'True' });
    const first = await mirror();
    expect(first?.metadata.labels?.['c5c3.io/mirrored']).toBe('true');
    expect(first?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'ControlPlane', name: 'cp', controller: false })]);
    const hash = first?.metadata.annotations?.['c5c3.io/source-hash'];
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    await identityNamespaces([CP_NS]);

    // Revoked: the namespace leaves the list.
    await applyOk(identity({ list: ['kac-e2e-cid-elsewhere'] }));
    const revoked = await controlPlaneIs('False', 'NamespaceNotAllowed');
    expect(conditionOf(revoked, 'AdminCredentialReady')).toMatchObject({ status: 'False' });
    await eventually(async () => (await mirror()) === undefined, 30_000, 250);
    await identityNamespaces([]);

    // Allowed by a selector once the namespace carries the label.
    await applyOk(identity({ selector: { matchLabels: { [LABEL]: 'yes' } } }));
    await kubectlOk(['label', 'namespace', CP_NS, `${LABEL}=yes`, '--overwrite']);
    await controlPlaneIs('True', 'AllReady');
    expect((await mirror())?.metadata.annotations?.['c5c3.io/source-hash']).toBe(hash);
    await identityNamespaces([CP_NS]);

    // The source changes: the mirror is rewritten.
    await applyOk(source('# rotated\n'));
    const rewritten = await eventually(async () => {
      const m = await mirror();
      const now = m?.metadata.annotations?.['c5c3.io/source-hash'];
      return now !== undefined && now !== hash ? m : undefined;
    }, 30_000, 250);
    expect(Buffer.from((rewritten as unknown as { data: Record<string, string> }).data['clouds.yaml'], 'base64').toString('utf8')).toContain('# rotated');
    await controlPlaneIs('True', 'AllReady');
    await identityNamespaces([CP_NS]);

    // The ControlPlane switches to a clouds.yaml of its own: the mirror goes with its last user, and comes back with it.
    await applyOk({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'own-admin', namespace: CP_NS }, stringData: { 'clouds.yaml': cloudsYaml() } } as KubeObject);
    const spec = (controlPlane as KubeObject & { spec: Record<string, unknown> }).spec;
    await applyOk({ ...controlPlane, spec: { ...spec, adminCredential: { cloudCredentialsRef: { secretName: 'own-admin' } } } } as KubeObject);
    await eventually(async () => (await mirror()) === undefined, 30_000, 250);
    await controlPlaneIs('True', 'AllReady');
    await identityNamespaces([]);
    await applyOk(controlPlane);
    await controlPlaneIs('True', 'AllReady');
    await identityNamespaces([CP_NS]);
  });

  test('a new admin password (in Keystone, then in the source Secret) is followed without a restart; orders wait while revoked with nothing deleted in Keystone; deletion is refused while the identity is used and accepted after', async () => {
    const admin: ServiceUser = await createServiceUser('kac-cid-admin', { roles: ['admin'] });
    const projectName = uniqueName('kac-cid-project');
    const projects = new Projects(adminSession());
    try {
      // The ControlPlane authenticates with this admin and an order of its namespace makes a project.
      await applyOk(source('', cloudsYamlOf(admin, admin.password)));
      await applyOk(controlPlaneWith([{ namespace: CP_NS }]));
      await applyOk({ apiVersion: API, kind: 'KeystoneProject', metadata: { name: 'p', namespace: CP_NS }, spec: { controlPlaneRef: { name: 'cp' }, projectName } } as KubeObject);
      await eventually(async () => {
        const p = await getJson<WithStatus>('keystoneprojects.c5c3.io', 'p', { namespace: CP_NS });
        if (conditionOf(p, 'ProjectReady')?.status === 'True') return p;
        throw new Error(`KeystoneProject p: ${JSON.stringify(p.status?.conditions)}`);
      }, 60_000);
      expect(await projects.findByName(projectName)).toBeDefined();

      // The password changes in Keystone, then in the source Secret: the mirror follows and the ControlPlane is Ready.
      const hash = (await mirror())?.metadata.annotations?.['c5c3.io/source-hash'];
      const rotated = `Rotated${uniqueName('pw').replace(/[^A-Za-z0-9]/g, '')}`;
      await new Users(adminSession()).updatePassword(admin.userId, rotated);
      await applyOk(source('', cloudsYamlOf(admin, rotated)));
      await eventually(async () => {
        const m = await mirror();
        if (m && m.metadata.annotations?.['c5c3.io/source-hash'] !== hash) return m;
        throw new Error(`mirror ${JSON.stringify(m?.metadata.annotations)}`);
      }, 30_000);
      const cp = await controlPlaneIs('True', 'AllReady');
      expect(conditionOf(cp, 'AdminCredentialReady')).toMatchObject({ status: 'True' });

      // Revoked: the ControlPlane is not Ready with the reason, its orders wait, nothing is deleted in Keystone.
      await applyOk(identity({ list: ['kac-e2e-cid-elsewhere'] }));
      await controlPlaneIs('False', 'NamespaceNotAllowed');
      const waiting = await eventually(async () => {
        const p = await getJson<WithStatus>('keystoneprojects.c5c3.io', 'p', { namespace: CP_NS });
        if (conditionOf(p, 'ProjectReady')?.reason === 'WaitingForAdminCredential') return p;
        throw new Error(`KeystoneProject p: ${JSON.stringify(p.status?.conditions)}`);
      }, 30_000);
      expect(conditionOf(waiting, 'ProjectReady')?.status).toBe('False');
      expect(await projects.findByName(projectName)).toBeDefined();

      // Allowed again: deleting the identity is refused while a ControlPlane uses it, naming the namespace.
      await applyOk(identity({ list: [CP_NS] }));
      await controlPlaneIs('True', 'AllReady');
      await identityNamespaces([CP_NS]);
      const refused = await kubectl(['delete', RESOURCE, NAME, '--wait=false']);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(CP_NS);

      // The last user goes: the order (its project deleted in Keystone), then the ControlPlane; then the delete passes.
      await kubectlOk(['delete', 'keystoneprojects.c5c3.io', 'p', '-n', CP_NS, '--timeout=60s']);
      expect(await projects.findByName(projectName)).toBeUndefined();
      await kubectlOk(['delete', 'controlplanes.c5c3.io', 'cp', '-n', CP_NS, '--timeout=60s']);
      await identityNamespaces([]);
      // The mirror goes with its last owner (garbage collection of the owner reference).
      await eventually(async () => {
        const m = await mirror();
        if (m === undefined) return true;
        throw new Error(`mirror still there: ${JSON.stringify(m.metadata)}`);
      }, 60_000);
      await kubectlOk(['delete', RESOURCE, NAME, '--timeout=30s']);
      expect((await kubectl(['get', 'secret', 'admin-src', '-n', SRC_NS])).code).toBe(0); // the source is never touched
    } finally {
      await admin.cleanup();
    }
  });
});
