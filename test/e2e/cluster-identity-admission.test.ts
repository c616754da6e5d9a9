// @needs kube
/**
 * The KeystoneClusterIdentity's admission on a real API server (issue 11): the synthesized CRD and
 * ValidatingAdmissionPolicy are installed, and
 * - a limited user who may not `get` the Secret is refused on create (and on an update that re-points secretRef or
 *   changes allowedNamespaces) with the policy's message; one who may is admitted; a label-only update is not checked;
 * - `allowedNamespaces: {}` is rejected with the hint to write `selector: {}`;
 * - delete is refused while `status.namespaces` is not empty, the message listing them, and accepted once it is empty.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Chart } from 'cdk8s';
import { Crds } from '../../constructs/crds';
import { crdName } from '../../constructs/crd';
import { CLUSTER_IDENTITY_POLICY_NAME } from '../../constructs/cluster-identity-admission';
import { KEYSTONE_CLUSTER_IDENTITY } from '../../constructs/definitions/keystone-cluster-identity';
import { API_VERSION } from '../../src/api/types';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { applyOk, eventually, exists, getJson, getTable, kubectl, kubectlOk, waitEstablished, type KubectlResult, type KubeObject } from '../support/kubectl';

const PREFIX = 'kac-cia';
const SECRETS_NAMESPACE = `${PREFIX}-secrets`;
const READABLE = 'readable';
const HIDDEN = 'hidden';
const LIMITED = process.env.KAC_KUBE_LIMITED_USER ?? 'kac-limited';
const RESOURCE = 'keystoneclusteridentities.c5c3.io';

/** The CRDs and the policy as the project's crds chart synthesizes them (Crds with its defaults). */
function crdsManifest(): string {
  const outdir = mkdtempSync(join(tmpdir(), 'kac-cia-synth-'));
  const app = new App({ outdir });
  new Crds(new Chart(app, 'crds'), 'Crds');
  app.synth();
  const [file] = readdirSync(outdir).filter((f) => f.endsWith('.k8s.yaml'));
  return join(outdir, file);
}

interface Identity extends KubeObject {
  spec: Record<string, unknown>;
  status?: { namespaces?: string[] };
}

const identity = (name: string, spec: Record<string, unknown>): Identity => ({
  apiVersion: API_VERSION,
  kind: KEYSTONE_CLUSTER_IDENTITY.kind,
  metadata: { name: `${PREFIX}-${name}` },
  spec,
});
const secretRef = (name: string): Record<string, string> => ({ name, namespace: SECRETS_NAMESPACE });
const create = (object: Identity, as: 'admin' | 'limited' = 'admin'): Promise<KubectlResult> => kubectl(['create', '-f', '-'], { as, input: JSON.stringify(object) });
const replace = (object: Identity, as: 'admin' | 'limited' = 'admin'): Promise<KubectlResult> => kubectl(['replace', '-f', '-'], { as, input: JSON.stringify(object) });
const refusedFor = (secret: string): string => `user "${LIMITED}" may not get Secret ${SECRETS_NAMESPACE}/${secret}: a KeystoneClusterIdentity may only name a Secret its author can read`;
const setStatusNamespaces = (name: string, namespaces: string[]): Promise<string> =>
  kubectlOk(['patch', RESOURCE, name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { namespaces } })]);
const deleteIdentity = (name: string): Promise<KubectlResult> => kubectl(['delete', RESOURCE, name, '--wait=false']);

describe('KeystoneClusterIdentity admission on a real API server', () => {
  let unlock: (() => void) | undefined;
  const created: string[] = [];

  beforeAll(async () => {
    unlock = await lockCluster('cluster-identity-admission.test.ts');
    await kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=kac-test', '-f', crdsManifest()]);
    await waitEstablished([`crd/${crdName(KEYSTONE_CLUSTER_IDENTITY)}`]);
    await applyOk([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SECRETS_NAMESPACE } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: READABLE, namespace: SECRETS_NAMESPACE }, stringData: { 'clouds.yaml': 'clouds: {}\n' } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: HIDDEN, namespace: SECRETS_NAMESPACE }, stringData: { 'clouds.yaml': 'clouds: {}\n' } },
      // The limited user may write identities (RBAC), and get one Secret: the policy decides the rest.
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: `${PREFIX}-identity-author` },
        rules: [{ apiGroups: ['c5c3.io'], resources: ['keystoneclusteridentities'], verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${PREFIX}-identity-author` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${PREFIX}-identity-author` },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: LIMITED }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: `${PREFIX}-read-one-secret`, namespace: SECRETS_NAMESPACE },
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: [READABLE] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: `${PREFIX}-read-one-secret`, namespace: SECRETS_NAMESPACE },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${PREFIX}-read-one-secret` },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: LIMITED }],
      },
    ]);
    // The policy is in force once the API server's admission has loaded it: until then a refused create is admitted.
    const probe = identity('probe', { secretRef: secretRef(HIDDEN) });
    await eventually(async () => {
      const result = await create(probe, 'limited');
      if (result.code === 0) await kubectlOk(['delete', RESOURCE, probe.metadata.name]);
      return result.stderr.includes(refusedFor(HIDDEN));
    }, 60_000, 500);
  }, LOCKED_SETUP_MS);

  afterAll(async () => {
    try {
      for (const name of created) {
        await kubectl(['patch', RESOURCE, name, '--subresource=status', '--type=merge', '-p', '{"status":{"namespaces":null}}']);
        await kubectl(['delete', RESOURCE, name, '--ignore-not-found', '--wait=false']);
      }
      await kubectl(['delete', 'clusterrolebinding,clusterrole', `${PREFIX}-identity-author`, '--ignore-not-found']);
      await kubectl(['delete', 'namespace', SECRETS_NAMESPACE, '--ignore-not-found', '--wait=false']);
    } finally {
      unlock?.();
    }
  }, 120_000);

  // The policy's status.typeChecking is written by a kube-controller-manager controller the test environment does not
  // run; every expression is instead evaluated by the cases below (failurePolicy Fail turns an evaluation error into a
  // refusal that names the error, not the policy's message).
  it('installs the policy and its binding as synthesized', async () => {
    const policy = await getJson<KubeObject & { spec: { failurePolicy: string } }>('validatingadmissionpolicy', CLUSTER_IDENTITY_POLICY_NAME);
    expect(policy.spec.failurePolicy).toBe('Fail');
    const binding = await getJson<KubeObject & { spec: { policyName: string; validationActions: string[] } }>('validatingadmissionpolicybinding', CLUSTER_IDENTITY_POLICY_NAME);
    expect(binding.spec).toMatchObject({ policyName: CLUSTER_IDENTITY_POLICY_NAME, validationActions: ['Deny'] });
  });

  it('refuses a limited user who may not get the Secret, on create, with the policy\'s message', async () => {
    const result = await create(identity('hidden', { secretRef: secretRef(HIDDEN), allowedNamespaces: { list: ['tenant-a'] } }), 'limited');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`ValidatingAdmissionPolicy '${CLUSTER_IDENTITY_POLICY_NAME}'`);
    expect(result.stderr).toContain(refusedFor(HIDDEN));
    expect(await exists(RESOURCE, `${PREFIX}-hidden`)).toBe(false);
  });

  it('admits a limited user who may get the Secret, with cloudName defaulted', async () => {
    const object = identity('readable', { secretRef: secretRef(READABLE), allowedNamespaces: { list: ['tenant-a'] } });
    const result = await create(object, 'limited');
    expect([result.code, result.stderr.trim()]).toEqual([0, '']);
    created.push(object.metadata.name);
    const stored = await getJson<Identity>(RESOURCE, object.metadata.name);
    expect(stored.spec).toEqual({ secretRef: secretRef(READABLE), cloudName: 'admin', allowedNamespaces: { list: ['tenant-a'] } });
    expect(stored.metadata.namespace).toBeUndefined();
  });

  it('refuses the limited user an update that re-points secretRef to a Secret they may not get', async () => {
    const stored = await getJson<Identity>(RESOURCE, `${PREFIX}-readable`);
    const result = await replace({ ...stored, spec: { ...stored.spec, secretRef: secretRef(HIDDEN) } }, 'limited');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(refusedFor(HIDDEN));
  });

  it('checks an update of an identity whose Secret the user may not get only when secretRef or allowedNamespaces changes', async () => {
    const object = identity('admin-made', { secretRef: secretRef(HIDDEN), allowedNamespaces: { list: ['tenant-a'] } });
    expect((await create(object)).code).toBe(0);
    created.push(object.metadata.name);
    const stored = await getJson<Identity>(RESOURCE, object.metadata.name);
    const relabelled = await replace({ ...stored, metadata: { ...stored.metadata, labels: { team: 'platform' } } }, 'limited');
    expect([relabelled.code, relabelled.stderr.trim()]).toEqual([0, '']);
    const widened = await getJson<Identity>(RESOURCE, object.metadata.name);
    const result = await replace({ ...widened, spec: { ...widened.spec, allowedNamespaces: { selector: {} } } }, 'limited');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(refusedFor(HIDDEN));
  });

  it('rejects allowedNamespaces: {} with the hint to write selector: {}', async () => {
    const result = await create(identity('empty', { secretRef: secretRef(READABLE), allowedNamespaces: {} }));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/spec\.allowedNamespaces: Invalid value: .*allowedNamespaces must set list, selector or both: write selector: \{\} to allow every namespace/);
  });

  it('admits selector: {} (every namespace) and a list with a selector', async () => {
    for (const [name, allowedNamespaces] of [
      ['every', { selector: {} }],
      ['union', { list: ['tenant-a'], selector: { matchLabels: { 'c5c3.io/keystone-admin': 'true' }, matchExpressions: [{ key: 'environment', operator: 'In', values: ['staging'] }] } }],
    ] as const) {
      const object = identity(name, { secretRef: secretRef(READABLE), allowedNamespaces });
      const result = await create(object, 'limited');
      expect([name, result.code, result.stderr.trim()]).toEqual([name, 0, '']);
      created.push(object.metadata.name);
    }
  });

  it('shows the Secret, Namespace, Ready and Age columns', async () => {
    const name = `${PREFIX}-readable`;
    const condition = { type: 'Ready', status: 'True', reason: 'SecretFound', message: `Secret ${SECRETS_NAMESPACE}/${READABLE} found`, lastTransitionTime: '2026-12-01T00:00:00Z' };
    await kubectlOk(['patch', RESOURCE, name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { conditions: [condition] } })]);
    const table = await getTable(`/apis/c5c3.io/v1alpha1/keystoneclusteridentities/${name}`);
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Secret', 'Namespace', 'Ready', 'Age']);
    expect(table.rows[0].cells.slice(0, 4)).toEqual([name, READABLE, SECRETS_NAMESPACE, 'True']);
  });

  it('refuses delete while status.namespaces is not empty, listing them, and accepts it once empty; the Secret stays', async () => {
    const name = `${PREFIX}-readable`;
    await setStatusNamespaces(name, ['tenant-a', 'tenant-b']);
    const refused = await deleteIdentity(name);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`KeystoneClusterIdentity ${name} is in use: its Secret is mirrored into namespaces tenant-a, tenant-b`);
    expect(await exists(RESOURCE, name)).toBe(true);

    await setStatusNamespaces(name, []);
    const accepted = await deleteIdentity(name);
    expect([accepted.code, accepted.stderr.trim()]).toEqual([0, '']);
    expect(await exists(RESOURCE, name)).toBe(false);
    expect(await exists('secret', READABLE, { namespace: SECRETS_NAMESPACE })).toBe(true);
  });

  it('accepts delete of an identity that never had a status', async () => {
    const name = `${PREFIX}-every`;
    const result = await deleteIdentity(name);
    expect([result.code, result.stderr.trim()]).toEqual([0, '']);
  });
});
