/**
 * Where the operator needs Secrets (src/api/secret-access.ts, issue 34): the grants read from ControlPlanes and
 * identities on the management cluster and on a target cluster, and the `--secret-namespaces` list.
 */
import { managementGrants, parseSecretGrants, secretRoleName, sourceRoleName, targetGrants } from '../../../src/api';

const cp = (namespace: string, assignments: { namespace: string; targetClusterRef?: { name: string } }[]) => ({ metadata: { namespace }, spec: { namespaceAssignments: assignments } });
const identity = (namespace: string, name: string, list?: string[]) => ({ spec: { secretRef: { namespace, name }, ...(list ? { allowedNamespaces: { list } } : {}) } });

describe('the grants on the management cluster', () => {
  it('each ControlPlane\'s namespace and its assignments there, sorted and once; a target cluster\'s assignments are not the management cluster\'s', () => {
    const grants = managementGrants([cp('openstack', [{ namespace: 'tenant-b' }, { namespace: 'tenant-a' }, { namespace: 'edge-only', targetClusterRef: { name: 'edge-1' } }]), cp('openstack', [{ namespace: 'tenant-a' }])], []);
    expect(grants).toEqual({ namespaces: ['openstack', 'tenant-a', 'tenant-b'], sources: [] });
  });

  it('an identity\'s source is read only, unless its namespace is granted anyway; its allowed list only for the constructs', () => {
    const identities = [identity('vault', 'keystone-admin', ['team-x']), identity('openstack', 'admin'), identity('vault', 'keystone-admin')];
    expect(managementGrants([cp('openstack', [])], identities)).toEqual({ namespaces: ['openstack'], sources: [{ namespace: 'vault', name: 'keystone-admin' }] });
    expect(managementGrants([cp('openstack', [])], identities, { allowedLists: true })).toEqual({ namespaces: ['openstack', 'team-x'], sources: [{ namespace: 'vault', name: 'keystone-admin' }] });
  });

  it('extra grants are added to what the objects name', () => {
    expect(managementGrants([], [], { extra: { namespaces: ['x'], sources: [{ namespace: 'y', name: 's' }, { namespace: 'x', name: 'covered' }] } })).toEqual({ namespaces: ['x'], sources: [{ namespace: 'y', name: 's' }] });
  });
});

it('a target cluster\'s grants: the namespaces assigned on it, by its registered name', () => {
  const cps = [cp('openstack', [{ namespace: 'tenant-a' }, { namespace: 'tenant-a', targetClusterRef: { name: 'edge-1' } }, { namespace: 'tenant-c', targetClusterRef: { name: 'edge-2' } }])];
  expect(targetGrants(cps, 'edge-1')).toEqual({ namespaces: ['tenant-a'], sources: [] });
  expect(targetGrants(cps, 'edge-1', ['extra'])).toEqual({ namespaces: ['extra', 'tenant-a'], sources: [] });
  expect(targetGrants(cps, 'edge-3')).toEqual({ namespaces: [], sources: [] });
});

describe('--secret-namespaces', () => {
  it('NAMESPACE grants the namespace, NAMESPACE/SECRET reads that one Secret', () => {
    expect(parseSecretGrants(' tenant-a, openstack ,vault/keystone-admin,openstack/covered,tenant-a')).toEqual({ namespaces: ['openstack', 'tenant-a'], sources: [{ namespace: 'vault', name: 'keystone-admin' }] });
  });

  it('refuses a bad entry, naming it and the rule', () => {
    expect(() => parseSecretGrants('')).toThrow('names no namespace');
    expect(() => parseSecretGrants('Tenant')).toThrow('entry "Tenant": "Tenant" must be a namespace name (a DNS label of at most 63 characters)');
    expect(() => parseSecretGrants('/x')).toThrow('entry "/x": the namespace is empty');
    expect(() => parseSecretGrants('a/')).toThrow('entry "a/": the Secret name after "/" is empty');
    expect(() => parseSecretGrants('a/B_C')).toThrow('entry "a/B_C": "B_C" must be a Secret name');
    expect(() => parseSecretGrants('a,b/c', { sources: false })).toThrow('entry "b/c": a target cluster holds no source Secret');
  });
});

it('the Roles are named after the operator', () => {
  expect(secretRoleName('keystone-appcred-operator')).toBe('keystone-appcred-operator-secrets');
  expect(sourceRoleName('kac', 'admin')).toBe('kac-source-admin');
});
