import { controlPlaneNamespace, validatePlane, type PlaneKind } from '../../../src/api';

const DNS_LABEL = 'must be a DNS label: at most 63 lowercase letters, digits or hyphens, beginning and ending with a letter or digit';
type Obj = { metadata: { name: string; namespace?: string }; spec: Record<string, unknown> };

/** A valid object of each order kind, in tenant-a, with the given controlPlaneRef. */
function order(kind: Exclude<PlaneKind, 'ControlPlane'>, controlPlaneRef: Record<string, unknown>, extra: Record<string, unknown> = {}): Obj {
  const spec: Record<string, unknown> = { controlPlaneRef, ...extra };
  if (kind === 'KeystoneRoleAssignment') Object.assign(spec, { userRef: { name: 'u' }, projectRef: { name: 'p' }, role: 'member', ...extra });
  return { metadata: { name: 'workflow', namespace: 'tenant-a' }, spec };
}
const rules = (kind: PlaneKind, object: unknown, old?: unknown): string[] => validatePlane(kind, object, old).map((v) => v.rule);
const ORDER_KINDS = ['KeystoneProject', 'KeystoneUser', 'KeystoneRoleAssignment'] as const;

describe.each(ORDER_KINDS)('%s spec.controlPlaneRef.namespace', (kind) => {
  it('may be left out (manifests written for the original kinds leave it out)', () => {
    expect(validatePlane(kind, order(kind, { name: 'cp' }))).toEqual([]);
    expect(validatePlane(kind, order(kind, { name: 'cp' }), order(kind, { name: 'cp' }))).toEqual([]);
  });

  it.each(['Bad_NS', 'Tenant_A', 'tenant-'])('rejects %p, which is not a DNS label, naming the field', (namespace) => {
    expect(validatePlane(kind, order(kind, { name: 'cp', namespace })).map((v) => v.message)).toEqual([
      `spec.controlPlaneRef.namespace (${JSON.stringify(namespace)}): controlPlaneRef.namespace ${DNS_LABEL}`,
    ]);
  });

  it('is immutable when it was left out and is written out later with another namespace', () => {
    expect(rules(kind, order(kind, { name: 'cp', namespace: 'other' }), order(kind, { name: 'cp' }))).toEqual(['controlPlaneRef.namespace is immutable']);
  });

  it('is immutable when it was written out and is left out later', () => {
    expect(validatePlane(kind, order(kind, { name: 'cp' }), order(kind, { name: 'cp', namespace: 'openstack' })).map((v) => v.message)).toEqual([
      'spec.controlPlaneRef.namespace: controlPlaneRef.namespace is immutable',
    ]);
  });

  it('stays immutable when written out both times', () => {
    expect(rules(kind, order(kind, { name: 'cp', namespace: 'b' }), order(kind, { name: 'cp', namespace: 'a' }))).toEqual(['controlPlaneRef.namespace is immutable']);
    expect(rules(kind, order(kind, { name: 'cp', namespace: 'a' }), order(kind, { name: 'cp', namespace: 'a' }))).toEqual([]);
  });
});

describe('ControlPlane namespaceAssignments[].namespace', () => {
  const controlPlane = (namespace: string): unknown => ({
    metadata: { name: 'cp' },
    spec: {
      services: { keystone: { external: { authURL: 'https://keystone.example/v3' } } },
      adminCredential: { cloudCredentialsRef: { secretName: 'admin' } },
      namespaceAssignments: [{ namespace: 'tenant-b' }, { namespace }],
    },
  });

  it.each(['Tenant_A', 'Bad_NS', '-a'])('rejects %p, which is not a DNS label, naming the entry', (namespace) => {
    expect(validatePlane('ControlPlane', controlPlane(namespace)).map((v) => v.message)).toEqual([
      `spec.namespaceAssignments[1].namespace (${JSON.stringify(namespace)}): namespaceAssignments[].namespace ${DNS_LABEL}`,
    ]);
  });

  it('accepts a DNS label', () => {
    expect(validatePlane('ControlPlane', controlPlane('tenant-a1'))).toEqual([]);
  });
});

describe('KeystoneProject spec.projectName', () => {
  it('must not contain a comma, as userName and role', () => {
    expect(validatePlane('KeystoneProject', order('KeystoneProject', { name: 'cp' }, { projectName: 'a,b' })).map((v) => v.message)).toEqual([
      'spec.projectName ("a,b"): projectName must not contain a comma',
    ]);
  });
});

describe('messages of the neighbour kinds', () => {
  it('show a value as JSON in parentheses after its field, and nothing else in parentheses', () => {
    const object = {
      metadata: { name: 'cp' },
      spec: { services: { keystone: { mode: 'Managed', external: { authURL: 'https://keystone.example/v3' } } }, adminCredential: { cloudCredentialsRef: { secretName: 'admin' } } },
    };
    expect(validatePlane('ControlPlane', object).map((v) => v.message)).toEqual([
      'spec.services.keystone.mode ("Managed"): services.keystone.mode must be External: only an existing Keystone is supported',
    ]);
  });

  it('show an absent value as no value, not as "undefined"', () => {
    expect(validatePlane('KeystoneRoleAssignment', { metadata: { name: 'ra' }, spec: { controlPlaneRef: { name: 'cp' }, userRef: {}, projectRef: { name: 'p' }, role: 'r' } }).map((v) => v.message)).toEqual([
      'spec.userRef.name: is required',
    ]);
  });
});

describe('controlPlaneNamespace', () => {
  it('is spec.controlPlaneRef.namespace when given', () => {
    expect(controlPlaneNamespace({ metadata: { name: 'o', namespace: 'tenant-a' }, spec: { controlPlaneRef: { name: 'cp', namespace: 'openstack' } } })).toBe('openstack');
  });

  it('is the order\'s own namespace when left out', () => {
    expect(controlPlaneNamespace({ metadata: { name: 'o', namespace: 'tenant-a' }, spec: { controlPlaneRef: { name: 'cp' } } })).toBe('tenant-a');
  });

  it('throws, naming the order, when neither is known', () => {
    expect(() => controlPlaneNamespace({ metadata: { name: 'o' }, spec: { controlPlaneRef: { name: 'cp' } } })).toThrow(
      'order o: spec.controlPlaneRef.namespace is left out and the order has no metadata.namespace to default it to',
    );
  });
});
