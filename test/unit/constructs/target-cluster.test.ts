/**
 * The TargetCluster construct: what a registered target cluster needs and nothing else (the four order CRDs, identical
 * to the management cluster's, and a least-privilege ClusterRole bound to the operator's identity there).
 */
import { Testing } from 'cdk8s';
import { Crds } from '../../../constructs/crds';
import { TARGET_CLUSTER_RULES } from '../../../constructs/operator-rbac';
import { TargetCluster, type TargetClusterProps } from '../../../constructs/target-cluster';

type Json = Record<string, unknown>;

function synth(props?: TargetClusterProps): Json[] {
  const chart = Testing.chart();
  new TargetCluster(chart, 'target', props);
  return Testing.synth(chart) as Json[];
}

describe('TargetCluster', () => {
  const objects = synth();

  it('emits the four order CRDs, a ClusterRole and its binding, nothing else', () => {
    expect(objects.map((o) => `${String(o.kind)}/${String((o.metadata as Json).name)}`)).toEqual([
      'CustomResourceDefinition/keystoneprojects.c5c3.io',
      'CustomResourceDefinition/keystoneusers.c5c3.io',
      'CustomResourceDefinition/keystoneroleassignments.c5c3.io',
      'CustomResourceDefinition/keystoneapplicationcredentials.c5c3.io',
      'ClusterRole/keystone-appcred-operator',
      'ClusterRoleBinding/keystone-appcred-operator',
    ]);
  });

  it('the CRDs are the management cluster\'s, CRD rules and all (a target cluster runs no webhook)', () => {
    const chart = Testing.chart();
    new Crds(chart, 'crds');
    const management = (Testing.synth(chart) as Json[]).filter((o) => o.kind === 'CustomResourceDefinition');
    for (const crd of objects.filter((o) => o.kind === 'CustomResourceDefinition')) {
      expect(crd).toEqual(management.find((m) => (m.metadata as Json).name === (crd.metadata as Json).name));
    }
  });

  it('binds the ClusterRole to the service account keystone-appcred-system/keystone-appcred-operator by default, or to the given user', () => {
    const binding = (o: Json[]) => o.find((x) => x.kind === 'ClusterRoleBinding') as Json;
    expect(binding(objects).subjects).toEqual([{ kind: 'ServiceAccount', name: 'keystone-appcred-operator', namespace: 'keystone-appcred-system' }]);
    expect(binding(synth({ subject: { kind: 'User', name: 'kac-operator' }, name: 'kac' }))).toMatchObject({
      metadata: { name: 'kac' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kac' },
      subjects: [{ kind: 'User', name: 'kac-operator', apiGroup: 'rbac.authorization.k8s.io' }],
    });
  });

  it('grants no wildcard, nothing on ControlPlanes, identities, namespaces or workloads, and a reason for every rule', () => {
    const rules = (objects.find((o) => o.kind === 'ClusterRole') as Json).rules as Json[];
    expect(rules).toHaveLength(TARGET_CLUSTER_RULES.length);
    const resources = rules.flatMap((r) => r.resources as string[]);
    for (const field of ['apiGroups', 'resources', 'verbs']) for (const rule of rules) expect(rule[field] as string[]).not.toContain('*');
    expect(new Set(resources)).toEqual(
      new Set([
        'keystoneapplicationcredentials', 'keystoneusers', 'keystoneprojects', 'keystoneroleassignments',
        'keystoneapplicationcredentials/status', 'keystoneusers/status', 'keystoneprojects/status', 'keystoneroleassignments/status',
        'keystoneapplicationcredentials/finalizers', 'keystoneusers/finalizers', 'secrets', 'events',
      ]),
    );
    const verbs = (resource: string) => rules.filter((r) => (r.resources as string[]).includes(resource)).flatMap((r) => r.verbs as string[]).sort();
    expect(verbs('keystoneapplicationcredentials')).toEqual(['get', 'list', 'patch', 'watch']);
    expect(verbs('secrets')).toEqual(['create', 'delete', 'get', 'list', 'patch', 'watch']);
    for (const rule of TARGET_CLUSTER_RULES) expect(rule.reason.length).toBeGreaterThan(20);
  });

  it('refuses a bad subject or name, naming the prop and the value', () => {
    expect(() => synth({ subject: { kind: 'ServiceAccount', name: 'op', namespace: 'Bad_NS' } })).toThrow('subject.namespace ("Bad_NS") must be a DNS label of at most 63 characters');
    expect(() => synth({ subject: { kind: 'User', name: '' } })).toThrow('subject.name ("") must name the identity');
    expect(() => synth({ name: 'Op' })).toThrow('name ("Op") must be a DNS subdomain');
  });
});
