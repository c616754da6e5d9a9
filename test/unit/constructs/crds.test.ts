import { Testing } from 'cdk8s';
import { Crds } from '../../../constructs/crds';
import { RULES } from '../../../src/api/rules';
import { PLANE_RULES } from '../../../src/api/identity-plane-rules';
import { PlaneKinds, type PlaneKind } from '../../../src/api/identity-plane';

type Json = Record<string, unknown>;

function synthCrds(): Json[] {
  const chart = Testing.chart();
  new Crds(chart, 'crds');
  return Testing.synth(chart) as Json[];
}

const crds = synthCrds();
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
  return out;
}

describe('the CRDs', () => {
  it('are the five kinds, namespaced, in c5c3.io/v1alpha1 with a status subresource', () => {
    expect(crds.map((c) => (c.metadata as Json).name)).toEqual([
      'controlplanes.c5c3.io',
      'keystoneprojects.c5c3.io',
      'keystoneusers.c5c3.io',
      'keystoneroleassignments.c5c3.io',
      'keystoneapplicationcredentials.c5c3.io',
    ]);
    for (const crd of crds) {
      const spec = crd.spec as Json;
      expect(spec.group).toBe('c5c3.io');
      expect(spec.scope).toBe('Namespaced');
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

  it('bound every string, so the CEL cost estimate passes', () => {
    for (const crd of crds) {
      const kind = ((crd.spec as Json).names as Json).kind as string;
      expect([kind, strings(schemaOf(kind), '')]).toEqual([kind, []]);
    }
  });
});
