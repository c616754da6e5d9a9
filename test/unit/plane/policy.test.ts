/**
 * Fleet defaults (issue 48, src/plane/policy.ts) and the provenance of schema-defaulted fields (src/api/provenance.ts):
 * field by field the order's own value wins, then the namespace assignment's, then the ControlPlane's, then the CRD's;
 * an API server default is not the order's own; status.policy only while defaults apply; a broken combination refused.
 * The same provenance rules against a real API server: test/e2e/fleet-policy.test.ts.
 */
import { authored, slimOrder, type ControlPlane, type KeystoneApplicationCredential, type ManagedFieldsEntry } from '../../../src/api';
import { slim } from '../../../src/kube/object';
import { effectivePolicy } from '../../../src/plane/policy';

const WINDOW = { schedule: '0 2 * * 1-5', timeZone: 'Europe/Berlin', duration: '2h' };

function order(spec: Partial<KeystoneApplicationCredential['spec']> = {}, metadata: Partial<KeystoneApplicationCredential['metadata']> & { managedFields?: ManagedFieldsEntry[] } = {}): KeystoneApplicationCredential {
  return {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneApplicationCredential',
    metadata: { name: 'app', namespace: 'tenant-a', uid: 'uid-1', ...metadata },
    // As the API server stores an order that wrote no rotation: the schema defaults filled in.
    spec: { controlPlaneRef: { name: 'cp', namespace: 'openstack' }, userRef: { name: 'u' }, projectRef: { name: 'p' }, credentialGeneration: 1, rotation: { interval: '720h', gracePeriod: '24h' }, ...spec },
  };
}

function controlPlane(defaults?: ControlPlane['spec']['applicationCredentialDefaults'], assignment?: ControlPlane['spec']['applicationCredentialDefaults']): ControlPlane {
  return {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'ControlPlane',
    metadata: { name: 'cp', namespace: 'openstack' },
    spec: {
      services: { keystone: { external: { authURL: 'https://keystone.example/v3' } } },
      adminCredential: { cloudCredentialsRef: { secretName: 'admin' } },
      namespaceAssignments: [{ namespace: 'tenant-a', ...(assignment ? { applicationCredentialDefaults: assignment } : {}) }, { namespace: 'tenant-b' }],
      ...(defaults ? { applicationCredentialDefaults: defaults } : {}),
    },
  };
}

const applied = (fields: Record<string, unknown>): ManagedFieldsEntry => ({ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:rotation': fields } } });
const updated = (fields: Record<string, unknown>): ManagedFieldsEntry => ({ manager: 'kubectl-create', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:rotation': fields } } });

describe('which defaulted fields the order wrote', () => {
  it('a value other than the default literal is the author\'s (a Go client writes 720h0m0s)', () => {
    expect(authored(order({ rotation: { interval: '720h0m0s', gracePeriod: '24h' } }), 'interval')).toBe(true);
    expect(authored(order({ rotation: { interval: '168h', gracePeriod: '24h' } }), 'interval')).toBe(true);
    expect(authored(order(), 'interval')).toBe(false);
  });
  it('the default literal is the author\'s when an applier owns it (server-side apply), not when an updater does', () => {
    expect(authored(order({}, { managedFields: [applied({ 'f:interval': {} })] }), 'interval')).toBe(true);
    expect(authored(order({}, { managedFields: [applied({ 'f:interval': {} })] }), 'gracePeriod')).toBe(false);
    // kubectl create / a PUT: the API server defaults before it records the updater's fields, so they tell nothing.
    expect(authored(order({}, { managedFields: [updated({ 'f:interval': {}, 'f:gracePeriod': {} })] }), 'interval')).toBe(false);
  });
  it('the default literal is the author\'s when the last-applied annotation of client-side kubectl apply holds it', () => {
    const annotations = { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec: { rotation: { gracePeriod: '24h' } } }) };
    expect(authored(order({}, { annotations }), 'gracePeriod')).toBe(true);
    expect(authored(order({}, { annotations }), 'interval')).toBe(false);
  });
  it('a cache keeps just what the rules read, and reads the same answer', () => {
    const full = order({ rotation: { interval: '720h', gracePeriod: '12h' } }, {
      managedFields: [applied({ 'f:interval': {}, 'f:gracePeriod': {} }), updated({ 'f:interval': {} }), { manager: 'op', operation: 'Update', fieldsV1: { 'f:status': {} } }],
      annotations: { team: 'a', 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec: { secret: 'x', rotation: { interval: '720h' } } }) },
    });
    const kept = slimOrder(full, slim(full)) as KeystoneApplicationCredential & { metadata: { managedFields?: unknown } };
    expect(kept.metadata.managedFields).toEqual([{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:rotation': { 'f:interval': {} } } } }]);
    expect(kept.metadata.annotations).toEqual({ team: 'a', 'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{"rotation":{"interval":"720h"}}}' });
    for (const field of ['interval', 'gracePeriod'] as const) expect(authored(kept, field)).toBe(authored(full, field));
    // Nothing ambiguous: nothing kept.
    const plain = order({ rotation: { interval: '168h', gracePeriod: '12h' } }, { managedFields: [applied({ 'f:interval': {} })] });
    expect(slimOrder(plain, slim(plain))).toEqual(slim(plain));
  });
});

describe('fleet defaults', () => {
  it('are off by default: without defaults the spec is the order\'s and there is no status.policy', () => {
    const o = order({ rotation: { interval: '168h', gracePeriod: '1h' } });
    expect(effectivePolicy(o, controlPlane())).toEqual({ spec: o.spec });
    expect(effectivePolicy(o, undefined)).toEqual({ spec: o.spec });
  });

  it('fill what the order left out, the namespace assignment\'s before the ControlPlane\'s; the order\'s own win', () => {
    const cp = controlPlane({ rotation: { interval: '168h', gracePeriod: '12h', window: WINDOW, jitterPercent: 10 }, roles: ['reader'] }, { rotation: { gracePeriod: '2h' } });
    const own = order({ rotation: { interval: '720h', gracePeriod: '24h', jitterPercent: 0 }, roles: ['member'] }, { managedFields: [applied({ 'f:interval': {} })] });
    const result = effectivePolicy(own, cp);
    expect(result.spec.rotation).toEqual({ interval: '720h', gracePeriod: '2h', window: WINDOW, jitterPercent: 0 });
    expect(result.spec.roles).toEqual(['member']);
    expect(result.status).toEqual({
      rotation: { interval: '720h', gracePeriod: '2h', window: WINDOW, jitterPercent: 0 },
      roles: ['member'],
      sources: {
        'rotation.interval': 'Order',
        'rotation.gracePeriod': 'NamespaceAssignment',
        'rotation.window': 'ControlPlane',
        'rotation.jitterPercent': 'Order',
        roles: 'Order',
        accessRules: 'Default',
      },
    });
    // Another namespace of the same ControlPlane: the ControlPlane's alone.
    const other = effectivePolicy({ ...order(), metadata: { ...order().metadata, namespace: 'tenant-b' } }, cp);
    expect(other.spec.rotation).toEqual({ interval: '168h', gracePeriod: '12h', window: WINDOW, jitterPercent: 10 });
    expect(other.status?.sources['rotation.interval']).toBe('ControlPlane');
  });

  it('report a field nobody sets as the CRD\'s default', () => {
    const result = effectivePolicy(order(), controlPlane({ rotation: { jitterPercent: 5 } }));
    expect(result.status?.rotation).toEqual({ interval: '720h', gracePeriod: '24h', jitterPercent: 5 });
    expect(result.status?.sources['rotation.interval']).toBe('Default');
  });

  it('are refused when the combination breaks the order\'s rules, naming the rule and where each field came from', () => {
    const own = order({ rotation: { interval: '720h', gracePeriod: '48h' } });
    const result = effectivePolicy(own, controlPlane({ rotation: { interval: '24h' } }));
    expect(result.spec).toEqual(own.spec);
    expect(result.status).toBeUndefined();
    expect(result.refused).toBe(
      'the fleet defaults are not applied: with them, spec.rotation ({"interval":"24h","gracePeriod":"48h"}): rotation.gracePeriod must be shorter than rotation.interval (rotation.interval from ControlPlane, rotation.gracePeriod from Order)',
    );
  });
});
