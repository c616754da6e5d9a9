/**
 * Builders of the four kinds of the identity plane and of a credential order, and the world's fixed names.
 */
import { API_VERSION, type ControlPlane, type KeystoneApplicationCredential, type KeystoneProject, type KeystoneRoleAssignment, type KeystoneUser } from '../../../../src/api';

export const T0 = new Date('2026-12-01T00:00:00Z');
export const NS = 'tenant-a';
export const CP_NS = 'cp-system';
export const ADMIN_PASSWORD = 'admin-pw';
export const AUTH_URL = 'https://keystone.example.com/v3';

/** The admin clouds.yaml. */
export function adminCloudsYaml(password = ADMIN_PASSWORD, cloudName = 'admin'): string {
  return `clouds:\n  ${cloudName}:\n    auth:\n      auth_url: ${AUTH_URL}\n      username: admin\n      password: ${password}\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n`;
}

/** A ControlPlane in CP_NS assigning NS on the management cluster, allowed roles member and reader. */
export function controlPlane(patch: { spec?: Partial<ControlPlane['spec']>; name?: string } = {}): ControlPlane {
  return {
    apiVersion: API_VERSION,
    kind: 'ControlPlane',
    metadata: { name: patch.name ?? 'cp', namespace: CP_NS },
    spec: {
      services: { keystone: { external: { authURL: AUTH_URL } } },
      adminCredential: { cloudCredentialsRef: { secretName: 'admin-cloud' } },
      namespaceAssignments: [{ namespace: NS, allowedRoles: ['member', 'reader'] }],
      ...patch.spec,
    },
  };
}

/** A ControlPlane status with AdminCredentialReady True. */
export const adminReady = (reason = 'AdminCredentialReady', status: 'True' | 'False' = 'True'): ControlPlane['status'] => ({
  conditions: [{ type: 'AdminCredentialReady', status, reason, message: 'm', lastTransitionTime: T0.toISOString() }],
});

const ref = { name: 'cp', namespace: CP_NS };

export function project(name = 'proj', spec: Partial<KeystoneProject['spec']> = {}): KeystoneProject {
  return { apiVersion: API_VERSION, kind: 'KeystoneProject', metadata: { name, namespace: NS }, spec: { controlPlaneRef: ref, ...spec } };
}

export function user(name = 'alice', spec: Partial<KeystoneUser['spec']> = {}): KeystoneUser {
  return { apiVersion: API_VERSION, kind: 'KeystoneUser', metadata: { name, namespace: NS }, spec: { controlPlaneRef: ref, ...spec } };
}

export function assignment(name = 'alice-member', spec: Partial<KeystoneRoleAssignment['spec']> = {}): KeystoneRoleAssignment {
  return {
    apiVersion: API_VERSION,
    kind: 'KeystoneRoleAssignment',
    metadata: { name, namespace: NS },
    spec: { controlPlaneRef: ref, userRef: { name: 'alice' }, projectRef: { name: 'proj' }, role: 'member', ...spec },
  };
}

export function credential(name = 'app', spec: Partial<KeystoneApplicationCredential['spec']> = {}): KeystoneApplicationCredential {
  return {
    apiVersion: API_VERSION,
    kind: 'KeystoneApplicationCredential',
    metadata: { name, namespace: NS, uid: `uid-kac-${name}` },
    spec: { controlPlaneRef: ref, userRef: { name: 'alice' }, projectRef: { name: 'proj' }, ...spec },
  };
}

/** The condition of a type. */
export function condition(object: { status?: { conditions?: readonly { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[] } } | undefined, type: string) {
  return object?.status?.conditions?.find((c) => c.type === type);
}
