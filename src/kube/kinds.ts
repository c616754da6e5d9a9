/**
 * The kinds the operator reads and writes, as the API server serves them.
 */
import { slimOrder } from '../api/provenance';
import { GROUP, KIND, PLURAL, VERSION, type KeystoneApplicationCredential } from '../api/types';
import { PlaneKinds, type ControlPlane, type KeystoneProject, type KeystoneRoleAssignment, type KeystoneUser } from '../api/identity-plane';
import { ClusterIdentityKind, type KeystoneClusterIdentity } from '../api/cluster-identity';
import { defineKind, metadataOf, type KubeObject, type ObjectMeta } from './object';

/** A core/v1 Secret (data values are base64). */
export interface Secret extends KubeObject {
  readonly type?: string;
  readonly data?: Readonly<Record<string, string>>;
  readonly immutable?: boolean;
}

/** `coordination.k8s.io/v1` LeaseSpec; times are MicroTime (RFC 3339 with six fraction digits). */
export interface LeaseSpec {
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly leaseTransitions?: number;
}

/** A `coordination.k8s.io/v1` Lease. */
export interface Lease extends KubeObject {
  readonly spec?: LeaseSpec;
}

/** `v1.ObjectReference` as an Event's `regarding`. */
export interface ObjectReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

/** An `events.k8s.io/v1` Event. */
export interface Event extends KubeObject {
  readonly metadata: ObjectMeta & { readonly generateName?: string };
  readonly eventTime: string;
  readonly reportingController: string;
  readonly reportingInstance: string;
  readonly action: string;
  readonly reason: string;
  readonly regarding: ObjectReference;
  readonly related?: ObjectReference;
  readonly note?: string;
  readonly type: 'Normal' | 'Warning';
}

const plane = <T extends KubeObject>(name: keyof typeof PlaneKinds) =>
  defineKind<T>({ group: GROUP, version: VERSION, kind: PlaneKinds[name].kind, plural: PlaneKinds[name].plural, namespaced: true });

/** The kinds, by kind name. */
export const Kinds = {
  Secret: defineKind<Secret>({ group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true }),
  Lease: defineKind<Lease>({ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true }),
  Event: defineKind<Event>({ group: 'events.k8s.io', version: 'v1', kind: 'Event', plural: 'events', namespaced: true }),
  ControlPlane: plane<ControlPlane>('ControlPlane'),
  KeystoneProject: plane<KeystoneProject>('KeystoneProject'),
  KeystoneUser: plane<KeystoneUser>('KeystoneUser'),
  KeystoneRoleAssignment: plane<KeystoneRoleAssignment>('KeystoneRoleAssignment'),
  KeystoneClusterIdentity: defineKind<KeystoneClusterIdentity & KubeObject>({ group: GROUP, version: VERSION, kind: ClusterIdentityKind.kind, plural: ClusterIdentityKind.plural, namespaced: false }),
  Namespace: defineKind<KubeObject>({ group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false }),
  KeystoneApplicationCredential: defineKind<KeystoneApplicationCredential>({ group: GROUP, version: VERSION, kind: KIND, plural: PLURAL, namespaced: true, retain: slimOrder }),
} as const;

/**
 * The metadata-only views the operator caches (see {@link metadataOf}): the Secrets it neither writes nor must read
 * (their names, labels and owners, never their data), and the Namespaces (their labels decide an identity's consent).
 */
export const MetadataKinds = {
  Secret: metadataOf(Kinds.Secret),
  Namespace: metadataOf(Kinds.Namespace),
} as const;
