/**
 * The objects of a simulated installation, as a platform team writes them: the ControlPlane and its admin Secret, the
 * tenants' namespaces with their KeystoneProject, KeystoneUser and KeystoneRoleAssignment, and the orders. Secrets are
 * written with `data` (base64), as the API server stores them.
 */
import { API_VERSION, REVOKE_PREVIOUS_ANNOTATION, type AdoptSpec, type DeletionPolicy, type RotationWindow, type SecretTemplate } from '../../src/api';
import { Kinds } from '../../src/kube/kinds';
import { WorkloadKinds } from '../../src/operator/handoff/workloads';
import { collectionOf } from '../unit/kube/fake-api-server';
import { KEYSTONE_URL } from './network';

/** The fake API servers' collections of the kinds the simulation writes and reads. */
export const PATHS = {
  controlPlanes: collectionOf(Kinds.ControlPlane),
  projects: collectionOf(Kinds.KeystoneProject),
  users: collectionOf(Kinds.KeystoneUser),
  assignments: collectionOf(Kinds.KeystoneRoleAssignment),
  orders: collectionOf(Kinds.KeystoneApplicationCredential),
  secrets: collectionOf(Kinds.Secret),
  namespaces: collectionOf(Kinds.Namespace),
  events: collectionOf(Kinds.Event),
  leases: collectionOf(Kinds.Lease),
  deployments: collectionOf(WorkloadKinds.Deployment),
} as const;

/** The ControlPlane's namespace and name. */
export const CP = { namespace: 'openstack', name: 'cp' } as const;
export const ADMIN_SECRET = 'keystone-admin';
/** The tenants' namespaces. */
export const TENANTS = ['tenant-a', 'tenant-b'] as const;
export type Tenant = (typeof TENANTS)[number];
/** Every tenant's KeystoneUser, KeystoneProject and KeystoneRoleAssignment are named so. */
export const IDENTITY = { user: 'svc', project: 'proj', assignment: 'member' } as const;

export const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
export const unbase64 = (text: string): string => Buffer.from(text, 'base64').toString('utf8');

export const namespace = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

/** The admin's clouds.yaml: a password, or (issue 42) an application credential of the admin. */
export function adminCloudsYaml(admin: { password: string } | { credentialId: string; secret: string }): string {
  const auth =
    'password' in admin
      ? `      username: admin\n      password: "${admin.password}"\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n`
      : `      application_credential_id: ${admin.credentialId}\n      application_credential_secret: "${admin.secret}"\n`;
  return `clouds:\n  admin:\n${'password' in admin ? '' : '    auth_type: v3applicationcredential\n'}    auth:\n      auth_url: ${KEYSTONE_URL}\n${auth}`;
}

export const adminSecret = (cloudsYaml: string) => ({ apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: ADMIN_SECRET, namespace: CP.namespace }, data: { 'clouds.yaml': base64(cloudsYaml) } });

/**
 * Fleet defaults (issue 48) as the simulation sets them, on the ControlPlane or a namespace assignment: a rotation block
 * (src/plane/policy.ts).
 */
export interface FleetDefaults {
  readonly rotation: { readonly interval?: string; readonly gracePeriod?: string; readonly window?: RotationWindow; readonly jitterPercent?: number };
}

/**
 * The ControlPlane: every tenant namespace assigned (the ones in `target` on the registered target cluster), with the
 * fleet defaults of each assignment and of the ControlPlane (none: the ControlPlane sets none).
 */
export function controlPlane(assigned: readonly { namespace: string; target?: boolean; defaults?: FleetDefaults }[], defaults?: FleetDefaults) {
  return {
    apiVersion: API_VERSION,
    kind: 'ControlPlane',
    metadata: { ...CP },
    spec: {
      services: { keystone: { external: { authURL: KEYSTONE_URL }, publicEndpoint: KEYSTONE_URL } },
      adminCredential: { cloudCredentialsRef: { secretName: ADMIN_SECRET } },
      namespaceAssignments: assigned.map((a) => ({
        namespace: a.namespace,
        ...(a.target ? { targetClusterRef: { name: TARGET_CLUSTER } } : {}),
        allowedRoles: ['member', 'reader'],
        ...(a.defaults ? { applicationCredentialDefaults: a.defaults } : {}),
      })),
      ...(defaults ? { applicationCredentialDefaults: defaults } : {}),
    },
  };
}

/** The registered target cluster's name (its kubeconfig Secret's). */
export const TARGET_CLUSTER = 'edge';

const ref = { controlPlaneRef: { ...CP } };

export const keystoneProject = (ns: string, name: string = IDENTITY.project) => ({ apiVersion: API_VERSION, kind: 'KeystoneProject', metadata: { name, namespace: ns }, spec: { ...ref, projectName: `${ns}-${name}` } });
export const keystoneUser = (ns: string, name: string = IDENTITY.user) => ({ apiVersion: API_VERSION, kind: 'KeystoneUser', metadata: { name, namespace: ns }, spec: { ...ref, userName: `${ns}-${name}` } });
export const roleAssignment = (ns: string, name: string = IDENTITY.assignment, user: string = IDENTITY.user) => ({
  apiVersion: API_VERSION,
  kind: 'KeystoneRoleAssignment',
  metadata: { name, namespace: ns },
  spec: { ...ref, userRef: { name: user }, projectRef: { name: IDENTITY.project }, role: 'member' },
});

/**
 * What an order asks for. Without `interval` the order leaves it to the fleet defaults and the CRD's default (the fake
 * API server writes no schema default); `window` and `jitterPercent` are issue 48's (absent: none).
 */
export interface OrderSpec {
  readonly interval?: string;
  readonly gracePeriod: string;
  readonly credentialGeneration: number;
  readonly window?: RotationWindow;
  readonly jitterPercent?: number;
}

/** The issue-49 fields of an order's spec the simulation sets (./events/delivery.ts); absent: the order names none. */
export interface DeliveryOptions {
  readonly deletionPolicy?: DeletionPolicy;
  readonly secretTemplate?: SecretTemplate;
  readonly adopt?: AdoptSpec;
}

/** The spec keys of {@link DeliveryOptions}: kept when a tenant changes the rest of the spec. */
export const DELIVERY_OPTION_KEYS = ['deletionPolicy', 'secretTemplate', 'adopt'] as const;

/** Whether an order uses an option of issue 49: a delivery option in its spec, or the revoke-previous annotation. */
export function usesDeliveryOptions(object: { readonly metadata: Record<string, unknown>; readonly spec?: unknown }): boolean {
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  const annotations = (object.metadata.annotations ?? {}) as Record<string, unknown>;
  return DELIVERY_OPTION_KEYS.some((key) => spec[key] !== undefined) || annotations[REVOKE_PREVIOUS_ANNOTATION] !== undefined;
}

/** The order's `spec.rotation`: the fields its spec names, and no others. */
const rotationOf = (spec: OrderSpec) => ({
  ...(spec.interval !== undefined ? { interval: spec.interval } : {}),
  gracePeriod: spec.gracePeriod,
  ...(spec.window !== undefined ? { window: spec.window } : {}),
  ...(spec.jitterPercent !== undefined ? { jitterPercent: spec.jitterPercent } : {}),
});

export const order = (ns: string, name: string, spec: OrderSpec, options: DeliveryOptions = {}) => ({
  apiVersion: API_VERSION,
  kind: 'KeystoneApplicationCredential',
  metadata: { name, namespace: ns },
  spec: { ...ref, userRef: { name: IDENTITY.user }, projectRef: { name: IDENTITY.project }, credentialGeneration: spec.credentialGeneration, rotation: rotationOf(spec), ...options },
});

/** The workload consuming an order's delivered Secret, opted in for the consumer handoff (src/handoff/annotations.ts). */
export const consumerDeployment = (ns: string, order: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: `${order}-consumer`, namespace: ns, annotations: { 'c5c3.io/rollout-on-credential-switch': `${order}-credentials` } },
  spec: { replicas: 1, selector: { matchLabels: { app: order } }, template: { metadata: { labels: { app: order } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } } },
});
