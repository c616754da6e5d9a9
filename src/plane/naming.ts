/**
 * Names the identity plane fixes (identity-plane.md, Shared behaviour): the teardown finalizer of each order kind, the
 * per-order prefix and the three labels of children in the ControlPlane's namespace, the delivered Secret, and the
 * marker that records in Keystone which order created a user or project; and where an order lives and which
 * ControlPlane it references.
 */
import { Labels as CredentialLabels, TEARDOWN_FINALIZER, orderHash, secretName, type ObjectMeta, type OrderLocation } from '../api';

/** The order kinds: the three of the identity plane and the KeystoneApplicationCredential. */
export type OrderKind = 'KeystoneProject' | 'KeystoneUser' | 'KeystoneRoleAssignment' | 'KeystoneApplicationCredential';

/** The kind segment of child names: the kind without `Keystone`, lower case (`applicationcredential` as in the spec). */
export const KIND_SEGMENT: Readonly<Record<OrderKind, string>> = {
  KeystoneProject: 'project',
  KeystoneUser: 'user',
  KeystoneRoleAssignment: 'roleassignment',
  KeystoneApplicationCredential: 'applicationcredential',
};

/** `c5c3.io/<kind, lower case>-teardown`: the finalizer installed once the order's namespace is assigned. */
export function teardownFinalizer(kind: OrderKind): string {
  return kind === 'KeystoneApplicationCredential' ? TEARDOWN_FINALIZER : `c5c3.io/${kind.toLowerCase()}-teardown`;
}

/** The three labels `c5c3.io/<kind>-name`, `-namespace`, `-cluster` of a kind. */
export function labelKeys(kind: OrderKind): { readonly name: string; readonly namespace: string; readonly cluster: string } {
  if (kind === 'KeystoneApplicationCredential') return CredentialLabels;
  const base = `c5c3.io/${kind.toLowerCase()}`;
  return { name: `${base}-name`, namespace: `${base}-namespace`, cluster: `${base}-cluster` };
}

/** The labels of a child in the ControlPlane's namespace (cluster empty for the management cluster). */
export function childLabels(kind: OrderKind, location: OrderLocation): Record<string, string> {
  const keys = labelKeys(kind);
  return { [keys.name]: location.name, [keys.namespace]: location.namespace, [keys.cluster]: location.cluster ?? '' };
}

/** The labels of the delivered Secret beside the order: name and namespace. */
export function deliveredLabels(kind: OrderKind, location: OrderLocation): Record<string, string> {
  const keys = labelKeys(kind);
  return { [keys.name]: location.name, [keys.namespace]: location.namespace };
}

/** `<order name>-<8 hex of sha256(cluster/namespace/name)>-<kind segment>`: the prefix of every child's name. */
export function planePrefix(kind: OrderKind, location: OrderLocation): string {
  return `${location.name}-${orderHash(location)}-${KIND_SEGMENT[kind]}`;
}

/** The child Secret that parks the password of a KeystoneUser's generation N: `<prefix>-password-v<N>`. */
export function passwordSecretName(location: OrderLocation, generation: number): string {
  return `${planePrefix('KeystoneUser', location)}-password-v${generation}`;
}

/** The generation a parked-password Secret name of this user denotes, or undefined for another name. */
export function passwordGenerationOf(location: OrderLocation, name: string): number | undefined {
  const head = `${planePrefix('KeystoneUser', location)}-password-v`;
  if (!name.startsWith(head)) return undefined;
  const digits = name.slice(head.length);
  return /^[1-9]\d*$/.test(digits) ? Number(digits) : undefined;
}

/** The key of a parked-password Secret. */
export const PASSWORD_KEY = 'password';

/** `<metadata.name>-credentials`, beside the order; a KeystoneApplicationCredential of the same name would collide. */
export const deliveredSecretName = secretName;

/** The delivered Secret's keys of a KeystoneUser, in the order `status.secretKeys` reports them. */
export const USER_SECRET_KEYS = ['clouds.yaml', 'password'] as const;

/**
 * The ownership marker of an order in Keystone: `c5c3.io-owner-<metadata.uid>`. A project carries it as a tag
 * (identity-plane.md); a user, which has no tags, carries it in its description. The UID is unique per object and
 * never reused, so the marker is found again after a crash between "created in Keystone" and "status written", and a
 * user or project without it is not ours: reported as a collision, never adopted, never deleted. Keystone tags may not
 * contain `/` or `,`, hence the dash.
 */
export function ownerMarker(uid: string): string {
  return `c5c3.io-owner-${uid}`;
}

/** The description of a user or project an order creates: readable, and carrying the {@link ownerMarker}. */
export function ownedDescription(kind: OrderKind, location: OrderLocation, uid: string): string {
  const where = location.cluster ? `${location.cluster}/${location.namespace}` : location.namespace;
  return `Managed by keystone-appcred for ${kind} ${where}/${location.name}; deleted with it (${ownerMarker(uid)})`;
}

/** Whether a Keystone description or tag list carries the order's marker. */
export function carriesMarker(uid: string, fields: { readonly description?: string; readonly tags?: readonly string[] }): boolean {
  const marker = ownerMarker(uid);
  return (fields.tags ?? []).some((t) => t.toLowerCase() === marker.toLowerCase()) || (fields.description ?? '').includes(`(${marker})`);
}

/** What every order has: metadata and a `controlPlaneRef` whose namespace may be left out. */
export interface OrderObject {
  readonly metadata: ObjectMeta;
  readonly spec: { readonly controlPlaneRef: { readonly name: string; readonly namespace?: string } };
}

/** Where an order lives; `cluster` is empty or absent for the management cluster. */
export function locationOf(order: OrderObject, cluster?: string): OrderLocation {
  return { namespace: order.metadata.namespace ?? '', name: order.metadata.name, ...(cluster ? { cluster } : {}) };
}

/** The ControlPlane an order references: `controlPlaneRef.namespace` means the order's own namespace when left out. */
export function controlPlaneKey(order: OrderObject): { readonly namespace: string; readonly name: string } {
  return { name: order.spec.controlPlaneRef.name, namespace: order.spec.controlPlaneRef.namespace || (order.metadata.namespace ?? '') };
}
