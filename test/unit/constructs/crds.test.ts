import { Testing } from 'cdk8s';
import { Crds } from '../../../constructs/crds';
import { RULES } from '../../../src/api/rules';
import { PLANE_RULES } from '../../../src/api/identity-plane-rules';
import { PlaneKinds, type PlaneKind } from '../../../src/api/identity-plane';
import { CLUSTER_IDENTITY_RULES } from '../../../src/api/cluster-identity-rules';
import { CLUSTER_IDENTITY_POLICY_NAME, NOT_MIRRORED, SECRET_ACCESS } from '../../../constructs/cluster-identity-admission';

type Json = Record<string, unknown>;

function synthCrds(props: ConstructorParameters<typeof Crds>[2] = {}): Json[] {
  const chart = Testing.chart();
  new Crds(chart, 'crds', props);
  return Testing.synth(chart) as Json[];
}

const objects = synthCrds();
const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
const byKind = (kind: string): Json => {
  const crd = crds.find((c) => ((c.spec as Json).names as Json).kind === kind);
  if (!crd) throw new Error(`no CRD for ${kind}`);
  return crd;
};
const version = (kind: string): Json => ((byKind(kind).spec as Json).versions as Json[])[0];
const schemaOf = (kind: string): Json => (version(kind).schema as Json).openAPIV3Schema as Json;

/** The schema node at a rule path (`[]` steps into items). */
function nodeAt(root: Json, path: string): Json {
  let node = root;
  if (path === '') return node;
  for (const segment of path.split('.')) {
    const each = segment.endsWith('[]');
    node = (node.properties as Record<string, Json>)[each ? segment.slice(0, -2) : segment];
    if (each) node = node.items as Json;
  }
  return node;
}

function strings(node: Json, path: string, out: string[] = []): string[] {
  if (node.type === 'string' && node.maxLength === undefined && path !== 'apiVersion' && path !== 'kind' && node.format !== 'date-time') out.push(path);
  for (const [key, child] of Object.entries((node.properties as Record<string, Json>) ?? {})) strings(child, path ? `${path}.${key}` : key, out);
  if (node.items) strings(node.items as Json, `${path}[]`, out);
  if (node.additionalProperties) strings(node.additionalProperties as Json, `${path}{}`, out);
  return out;
}

describe('the CRDs', () => {
  it('are the six kinds, the five orders namespaced and the KeystoneClusterIdentity cluster-scoped, in c5c3.io/v1alpha1 with a status subresource', () => {
    expect(crds.map((c) => (c.metadata as Json).name)).toEqual([
      'controlplanes.c5c3.io',
      'keystoneprojects.c5c3.io',
      'keystoneusers.c5c3.io',
      'keystoneroleassignments.c5c3.io',
      'keystoneapplicationcredentials.c5c3.io',
      'keystoneclusteridentities.c5c3.io',
    ]);
    for (const crd of crds) {
      const spec = crd.spec as Json;
      expect(spec.group).toBe('c5c3.io');
      expect(spec.scope).toBe((spec.names as Json).kind === 'KeystoneClusterIdentity' ? 'Cluster' : 'Namespaced');
      const v = (spec.versions as Json[])[0];
      expect(v).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
    }
  });

  it('give KeystoneApplicationCredential its names and the seven printer columns of the spec', () => {
    expect((byKind('KeystoneApplicationCredential').spec as Json).names).toMatchObject({
      kind: 'KeystoneApplicationCredential',
      listKind: 'KeystoneApplicationCredentialList',
      plural: 'keystoneapplicationcredentials',
    });
    expect(version('KeystoneApplicationCredential').additionalPrinterColumns).toEqual([
      { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
      { name: 'ControlPlane', type: 'string', jsonPath: '.spec.controlPlaneRef.name' },
      { name: 'User', type: 'string', jsonPath: '.spec.userRef.name' },
      { name: 'Project', type: 'string', jsonPath: '.spec.projectRef.name' },
      { name: 'Generation', type: 'integer', jsonPath: '.status.credentialGeneration' },
      { name: 'NextRotation', type: 'string', jsonPath: '.status.nextRotation' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ]);
  });

  it('carry the defaults and bounds of the spec', () => {
    const spec = nodeAt(schemaOf('KeystoneApplicationCredential'), 'spec');
    expect(spec.required).toEqual(['controlPlaneRef', 'userRef', 'projectRef']);
    for (const ref of ['userRef', 'projectRef']) {
      expect(nodeAt(spec, ref).required).toEqual(['name']);
      expect(nodeAt(spec, `${ref}.name`)).toMatchObject({ type: 'string', minLength: 1, maxLength: 63 });
    }
    expect(nodeAt(spec, 'credentialGeneration')).toMatchObject({ type: 'integer', format: 'int64', default: 1, minimum: 1 });
    expect(nodeAt(spec, 'rotation').default).toEqual({});
    expect(nodeAt(spec, 'rotation.interval')).toMatchObject({ type: 'string', default: '720h' });
    expect(nodeAt(spec, 'rotation.gracePeriod')).toMatchObject({ type: 'string', default: '24h' });
    const conditions = nodeAt(schemaOf('KeystoneApplicationCredential'), 'status.conditions');
    expect(conditions).toMatchObject({ type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });
  });

  it('carry every rule of RULES, at its path, with its message', () => {
    const root = schemaOf('KeystoneApplicationCredential');
    for (const rule of RULES) {
      expect(nodeAt(root, rule.path)['x-kubernetes-validations']).toContainEqual(expect.objectContaining({ rule: rule.cel, message: rule.message }));
    }
    const placed = JSON.stringify(root).match(/"rule":/g)?.length;
    expect(placed).toBe(RULES.length);
  });

  it.each(Object.keys(PlaneKinds) as PlaneKind[])('carry every rule of PLANE_RULES.%s', (kind) => {
    const root = schemaOf(kind);
    for (const rule of PLANE_RULES[kind]) {
      expect(nodeAt(root, rule.path)['x-kubernetes-validations']).toContainEqual(expect.objectContaining({ rule: rule.cel, message: rule.message }));
    }
    expect(JSON.stringify(root).match(/"rule":/g)?.length).toBe(PLANE_RULES[kind].length);
  });

  it.each(['KeystoneApplicationCredential', 'KeystoneProject', 'KeystoneUser', 'KeystoneRoleAssignment'])(
    'let %s leave controlPlaneRef.namespace out, and name it in the immutability rule on controlPlaneRef',
    (kind) => {
      const ref = nodeAt(schemaOf(kind), 'spec.controlPlaneRef');
      expect(ref.required).toEqual(['name']);
      expect(ref['x-kubernetes-validations']).toEqual([expect.objectContaining({ fieldPath: '.namespace', message: 'controlPlaneRef.namespace is immutable' })]);
      expect(nodeAt(ref, 'namespace')['x-kubernetes-validations']).toEqual([
        expect.objectContaining({ rule: "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')", message: expect.stringMatching(/^controlPlaneRef\.namespace must be a DNS label/) }),
      ]);
    },
  );

  it('give KeystoneClusterIdentity its names, the four printer columns, its bounds and every rule of CLUSTER_IDENTITY_RULES', () => {
    expect((byKind('KeystoneClusterIdentity').spec as Json).names).toMatchObject({
      kind: 'KeystoneClusterIdentity',
      listKind: 'KeystoneClusterIdentityList',
      plural: 'keystoneclusteridentities',
      singular: 'keystoneclusteridentity',
      categories: ['c5c3'],
    });
    expect(version('KeystoneClusterIdentity').additionalPrinterColumns).toEqual([
      { name: 'Secret', type: 'string', jsonPath: '.spec.secretRef.name' },
      { name: 'Namespace', type: 'string', jsonPath: '.spec.secretRef.namespace' },
      { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ]);
    const root = schemaOf('KeystoneClusterIdentity');
    const spec = nodeAt(root, 'spec');
    expect(spec.required).toEqual(['secretRef']);
    expect(nodeAt(spec, 'secretRef').required).toEqual(['name', 'namespace']);
    expect(nodeAt(spec, 'secretRef.name')).toEqual(expect.objectContaining({ maxLength: 253, minLength: 1 }));
    expect(nodeAt(spec, 'secretRef.namespace')).toEqual(expect.objectContaining({ maxLength: 63, minLength: 1 }));
    expect(nodeAt(spec, 'secretRef.namespace').default).toBeUndefined();
    expect(nodeAt(spec, 'cloudName').default).toBe('admin');
    expect(nodeAt(spec, 'allowedNamespaces.list')).toMatchObject({ minItems: 1, maxItems: 100, 'x-kubernetes-list-type': 'set' });
    expect(nodeAt(spec, 'allowedNamespaces.selector.matchLabels')).toMatchObject({ type: 'object', maxProperties: 64, additionalProperties: { type: 'string', maxLength: 63 } });
    expect(nodeAt(spec, 'allowedNamespaces.selector.matchExpressions[].operator').enum).toEqual(['In', 'NotIn', 'Exists', 'DoesNotExist']);
    expect(nodeAt(root, 'status.namespaces')).toMatchObject({ maxItems: 1000, 'x-kubernetes-list-type': 'set' });
    expect(nodeAt(root, 'status.conditions')).toMatchObject({ maxItems: 32, 'x-kubernetes-list-map-keys': ['type'] });
    for (const rule of CLUSTER_IDENTITY_RULES) {
      expect(nodeAt(root, rule.path)['x-kubernetes-validations']).toContainEqual(expect.objectContaining({ rule: rule.cel, message: rule.message }));
    }
    expect(JSON.stringify(root).match(/"rule":/g)?.length).toBe(CLUSTER_IDENTITY_RULES.length);
  });

  it('let ControlPlane take cloudCredentialsRef or identityRef, exactly one by a rule on adminCredential', () => {
    const admin = nodeAt(schemaOf('ControlPlane'), 'spec.adminCredential');
    expect(admin.required).toBeUndefined();
    expect(nodeAt(admin, 'identityRef')).toMatchObject({ required: ['name'], properties: { name: { maxLength: 63 } } });
    expect(admin['x-kubernetes-validations']).toEqual([expect.objectContaining({ rule: 'has(self.cloudCredentialsRef) != has(self.identityRef)' })]);
  });

  it('emit the KeystoneClusterIdentity\'s ValidatingAdmissionPolicy and its Deny binding after the CRDs', () => {
    expect(objects.map((o) => o.kind).slice(-2)).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    const [policy, binding] = objects.slice(-2);
    expect(policy.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(policy.metadata).toEqual({ name: CLUSTER_IDENTITY_POLICY_NAME });
    const spec = policy.spec as Json;
    expect(spec.failurePolicy).toBe('Fail');
    expect(spec.matchConstraints).toEqual({
      resourceRules: [{ apiGroups: ['c5c3.io'], apiVersions: ['v1alpha1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['keystoneclusteridentities'], scope: 'Cluster' }],
    });
    const expressions = (spec.validations as Json[]).map((v) => v.expression as string);
    expect(expressions[0]).toContain(SECRET_ACCESS);
    expect(SECRET_ACCESS).toBe(
      "authorizer.group('').resource('secrets').namespace(object.spec.secretRef.namespace).name(object.spec.secretRef.name).check('get').allowed()",
    );
    expect(expressions[1]).toBe(NOT_MIRRORED);
    expect(binding.spec).toEqual({ policyName: CLUSTER_IDENTITY_POLICY_NAME, validationActions: ['Deny'] });
  });

  it('leave the policy out when told, and with applicationCredentialOnly', () => {
    expect(synthCrds({ clusterIdentityAdmission: false }).map((o) => o.kind)).not.toContain('ValidatingAdmissionPolicy');
    expect(synthCrds({ applicationCredentialOnly: true }).map((o) => o.kind)).toEqual(['CustomResourceDefinition']);
  });

  it('bound every string, so the CEL cost estimate passes', () => {
    for (const crd of crds) {
      const kind = ((crd.spec as Json).names as Json).kind as string;
      expect([kind, strings(schemaOf(kind), '')]).toEqual([kind, []]);
    }
  });
});
