/**
 * The namespaced Secret access in a cdk8s app (issue 34): the Operator and TargetCluster constructs synthesize a Role
 * and RoleBinding per namespace that needs Secrets from the ControlPlanes and identities declared in the same app, in
 * any declaration order, one per namespace; no cluster-scoped rule on Secrets; the cluster-wide mode stays as it was.
 */
import { ApiObject, Chart, Testing } from 'cdk8s';
import { CLUSTER_RULES, NAMESPACE_SECRET_RULES, NAMESPACED_CLUSTER_RULES, TARGET_CLUSTER_RULES, TARGET_NAMESPACE_SECRET_RULES, TARGET_NAMESPACED_CLUSTER_RULES } from '../../../constructs/operator-rbac';
import { Operator, type OperatorProps } from '../../../constructs/operator';
import { ControlPlane } from '../../../constructs/orders/control-plane';
import { KeystoneClusterIdentity } from '../../../constructs/orders/keystone-cluster-identity';
import { SecretAccess } from '../../../constructs/secret-access';
import { TargetCluster } from '../../../constructs/target-cluster';

type Json = Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string }; rules?: { resources: string[]; verbs: string[]; resourceNames?: string[] }[] };

const OPENBAO = { address: 'https://openbao.example:8200', auth: { method: 'kubernetes', role: 'r' } } as const;
const operatorProps = (props: Partial<OperatorProps> = {}): OperatorProps => ({ image: 'reg/kac', tag: '1', openBao: OPENBAO, secretAccess: SecretAccess.NAMESPACED, ...props });
const controlPlane = (scope: Chart, id: string, namespace: string, assigned: { namespace: string; targetClusterRef?: { name: string } }[]) =>
  new ControlPlane(scope, id, {
    metadata: { name: 'cp', namespace },
    keystone: { authURL: 'https://keystone.example/v3' },
    adminCredential: { cloudCredentialsRef: { secretName: 'admin' } },
    namespaceAssignments: assigned,
  });
const synth = (chart: Chart) => Testing.synth(chart) as Json[];
const roles = (objects: Json[]) => objects.filter((o) => o.kind === 'Role' && o.metadata.name.endsWith('-secrets')).map((o) => o.metadata.namespace);
const onSecrets = (rules: Json['rules']) => (rules ?? []).filter((r) => r.resources.includes('secrets'));

describe('the Operator with secretAccess namespaced', () => {
  it('no cluster-scoped rule on Secrets; a Role and RoleBinding per namespace the app\'s ControlPlanes name, beside them; the process runs namespaced', () => {
    const app = Testing.app();
    const ops = new Chart(app, 'operator');
    const operator = new Operator(ops, 'Operator', operatorProps());
    const samples = new Chart(app, 'samples');
    for (const ns of ['openstack', 'tenant-a']) new ApiObject(samples, `ns-${ns}`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    controlPlane(samples, 'cp', 'openstack', [{ namespace: 'tenant-a' }, { namespace: 'tenant-x', targetClusterRef: { name: 'edge-1' } }]);
    const opObjects = synth(ops);
    const clusterRole = opObjects.find((o) => o.kind === 'ClusterRole') as Json;
    expect(onSecrets(clusterRole.rules)).toEqual([]);
    expect(operator.clusterRules).toEqual(NAMESPACED_CLUSTER_RULES);
    expect(NAMESPACED_CLUSTER_RULES).toHaveLength(CLUSTER_RULES.length - 3);
    // The Roles live beside the ControlPlane, after the namespaces of its chart; the operator's chart holds none.
    expect(roles(opObjects)).toEqual([]);
    const sampleObjects = synth(samples);
    expect(roles(sampleObjects)).toEqual(['openstack', 'tenant-a']);
    const order = sampleObjects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    expect(order.indexOf('Role/tenant-a/keystone-appcred-operator-secrets')).toBeGreaterThan(order.indexOf('Namespace//tenant-a'));
    const role = sampleObjects.find((o) => o.kind === 'Role' && o.metadata.namespace === 'tenant-a') as Json;
    expect(role.rules).toEqual(NAMESPACE_SECRET_RULES.map((r) => ({ apiGroups: [''], resources: ['secrets'], verbs: [...r.verbs] })));
    const binding = sampleObjects.find((o) => o.kind === 'RoleBinding' && o.metadata.namespace === 'tenant-a') as Json;
    expect(binding).toMatchObject({ roleRef: { kind: 'Role', name: 'keystone-appcred-operator-secrets' }, subjects: [{ kind: 'ServiceAccount', name: 'keystone-appcred-operator', namespace: 'keystone-appcred-system' }] });
    expect(operator.secretNamespaces).toEqual(['openstack', 'tenant-a']);
    const env = ((opObjects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } }).spec.template.spec.containers[0].env);
    expect(env).toEqual(expect.arrayContaining([{ name: 'KAC_SECRET_ACCESS', value: 'namespaced' }, { name: 'KAC_RBAC_NAME', value: 'keystone-appcred-operator' }]));
  });

  it('declared after the ControlPlanes, or before them, or with assignNamespace later: the same Roles, one per namespace however many ControlPlanes name it', () => {
    const grants = (operatorFirst: boolean) => {
      const app = Testing.app();
      const chart = new Chart(app, 'all');
      let operator: Operator | undefined;
      if (operatorFirst) operator = new Operator(chart, 'Operator', operatorProps());
      const a = controlPlane(chart, 'a', 'openstack', [{ namespace: 'tenant-a' }]);
      controlPlane(chart, 'b', 'other', [{ namespace: 'tenant-a' }, { namespace: 'tenant-b' }]);
      if (!operatorFirst) operator = new Operator(chart, 'Operator', operatorProps());
      a.assignNamespace({ namespace: 'tenant-c' });
      return { namespaces: (operator as Operator).secretNamespaces, roles: roles(synth(chart)).sort() };
    };
    const expected = ['openstack', 'other', 'tenant-a', 'tenant-b', 'tenant-c'];
    expect(grants(true)).toEqual({ namespaces: expected, roles: expected });
    expect(grants(false)).toEqual({ namespaces: expected, roles: expected });
  });

  it('a KeystoneClusterIdentity: its allowed list granted; its source read only (that Secret alone), unless its namespace is granted whole', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'all');
    const operator = new Operator(chart, 'Operator', operatorProps({ secretNamespaces: ['extra'], sourceSecrets: [{ namespace: 'other-vault', name: 'admin' }] }));
    new KeystoneClusterIdentity(chart, 'shared', { metadata: { name: 'shared' }, secretRef: { namespace: 'vault', name: 'keystone-admin' }, allowedNamespaces: { list: ['team-x'] } });
    new KeystoneClusterIdentity(chart, 'later', { metadata: { name: 'later' }, secretRef: { namespace: 'openstack', name: 'admin' }, allowedNamespaces: { list: ['openstack'] } });
    const objects = synth(chart);
    expect(operator.secretNamespaces).toEqual(['extra', 'openstack', 'team-x']);
    expect(operator.sourceSecrets).toEqual([{ namespace: 'other-vault', name: 'admin' }, { namespace: 'vault', name: 'keystone-admin' }]);
    const source = objects.find((o) => o.kind === 'Role' && o.metadata.name === 'keystone-appcred-operator-source-keystone-admin') as Json;
    expect(source).toMatchObject({ metadata: { namespace: 'vault' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'], resourceNames: ['keystone-admin'] }] });
    expect(objects.filter((o) => o.kind === 'RoleBinding' && o.metadata.name.includes('-source-')).map((o) => o.metadata.namespace).sort()).toEqual(['other-vault', 'vault']);

    // A source whose namespace is granted whole later: its read-only Role goes.
    controlPlane(chart, 'cp', 'vault', []);
    expect(operator.sourceSecrets).toEqual([{ namespace: 'other-vault', name: 'admin' }]);
    expect(synth(chart).filter((o) => o.metadata.namespace === 'vault').map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ControlPlane/cp',
      'Role/keystone-appcred-operator-secrets',
      'RoleBinding/keystone-appcred-operator-secrets',
    ]);
  });

  it('refuses a bad namespace, the props without the mode, an unknown mode, and a ControlPlane without a namespace', () => {
    const chart = Testing.chart();
    expect(() => new Operator(chart, 'a', operatorProps({ secretNamespaces: ['Bad'] }))).toThrow('secretNamespaces[0] ("Bad") must be a namespace name');
    expect(() => new Operator(chart, 'b', operatorProps({ sourceSecrets: [{ namespace: 'ns', name: 'Bad_' }] }))).toThrow('sourceSecrets[0].name ("Bad_") must be a Secret name');
    expect(() => new Operator(chart, 'c', operatorProps({ secretAccess: SecretAccess.CLUSTER_WIDE, secretNamespaces: ['a'] }))).toThrow('secretNamespaces (["a"]) applies only with secretAccess \'namespaced\'');
    expect(() => new Operator(chart, 'd', operatorProps({ secretAccess: 'everywhere' as never }))).toThrow('secretAccess ("everywhere") must be one of cluster-wide, namespaced');
    const app = Testing.app();
    const all = new Chart(app, 'all');
    new Operator(all, 'Operator', operatorProps());
    new ControlPlane(all, 'cp', { metadata: { name: 'cp' }, keystone: { authURL: 'https://k/v3' }, adminCredential: { cloudCredentialsRef: { secretName: 'a' } } });
    expect(() => synth(all)).toThrow('has no namespace, so secretAccess \'namespaced\' cannot grant the operator its Secrets there');
  });

  it('the cluster-wide mode is unchanged: the ClusterRole grants Secrets, no Role per namespace, no setting', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'all');
    const operator = new Operator(chart, 'Operator', operatorProps({ secretAccess: undefined }));
    controlPlane(chart, 'cp', 'openstack', [{ namespace: 'tenant-a' }]);
    const objects = synth(chart);
    expect(operator.clusterRules).toEqual(CLUSTER_RULES);
    expect(onSecrets((objects.find((o) => o.kind === 'ClusterRole') as Json).rules)).toHaveLength(3);
    expect(roles(objects)).toEqual([]);
    expect(JSON.stringify(objects)).not.toContain('KAC_SECRET_ACCESS');
  });
});

describe('the TargetCluster with secretAccess namespaced', () => {
  it('no cluster-scoped rule on Secrets; a Role per namespace the app\'s ControlPlanes assign on that cluster, and the given ones', () => {
    const app = Testing.app();
    const management = new Chart(app, 'management');
    controlPlane(management, 'cp', 'openstack', [{ namespace: 'tenant-a' }, { namespace: 'tenant-e', targetClusterRef: { name: 'edge-1' } }, { namespace: 'tenant-f', targetClusterRef: { name: 'edge-2' } }]);
    const edge = new Chart(app, 'edge-1');
    const target = new TargetCluster(edge, 'target', { secretAccess: SecretAccess.NAMESPACED, clusterName: 'edge-1', secretNamespaces: ['extra'] });
    const objects = synth(edge);
    expect(onSecrets((objects.find((o) => o.kind === 'ClusterRole') as Json).rules)).toEqual([]);
    expect(target.rules).toEqual(TARGET_NAMESPACED_CLUSTER_RULES);
    expect(target.namespaceRules).toEqual(TARGET_NAMESPACE_SECRET_RULES);
    expect(roles(objects)).toEqual(['extra', 'tenant-e']);
    expect(target.secretNamespaces).toEqual(['extra', 'tenant-e']);
    expect(objects.find((o) => o.kind === 'RoleBinding' && o.metadata.namespace === 'tenant-e')).toMatchObject({ subjects: [{ kind: 'ServiceAccount', name: 'keystone-appcred-operator', namespace: 'keystone-appcred-system' }] });
    // The management cluster's chart holds no Role of the target cluster.
    expect(roles(synth(management))).toEqual([]);
  });

  it('cluster-wide by default; the namespaced props refused without the mode', () => {
    const chart = Testing.chart();
    expect(new TargetCluster(chart, 'a').rules).toEqual(TARGET_CLUSTER_RULES);
    expect(() => new TargetCluster(chart, 'b', { clusterName: 'edge-1' })).toThrow('clusterName ("edge-1") applies only with secretAccess \'namespaced\'');
    expect(() => new TargetCluster(chart, 'c', { secretAccess: SecretAccess.NAMESPACED, secretNamespaces: ['x_y'] })).toThrow('secretNamespaces[0] ("x_y") must be a namespace name');
  });
});
