/**
 * What a missing Secret grant means for an object (issue 34, the namespaced Secret access; the grants themselves are
 * src/api/secret-access.ts). Pure: the operator hands in what its caches know of each namespace.
 *
 * - A pass of an object reads or writes Secrets in a few places ({@link secretPlacesOf}): its ControlPlane's namespace
 *   on the management cluster for every kind (admin credential, children), and its own namespace on its own cluster for
 *   the kinds that deliver a Secret there (KeystoneUser, KeystoneApplicationCredential).
 * - While the cache of such a place is being filled (`pending`), the pass waits: it would read "no Secret" where there
 *   may be one, and a delivery or a repair must never be decided on that. It writes nothing and is run again once the
 *   cache is filled or refused; the operator starts no retry of its own (no retry storm).
 * - When the API server refused the list there (`denied`: no Role grants it), the order is not admitted: its consent
 *   reads `SecretAccessNotGranted` with a message that names the namespace, the Role and how to add it, and nothing
 *   else happens (no finalizer, nothing created, delivered, repaired or swept: frozen, as without consent). Consent
 *   comes first: an order in a namespace no ControlPlane assigns reads `NamespaceNotAssigned` as before.
 * - A ControlPlane whose own namespace (or whose identity's source Secret) is refused reports
 *   `AdminCredentialReady=False/SecretAccessNotGranted`; its orders wait on it with `WaitingForAdminCredential`.
 */
import { secretRoleName, sourceRoleName } from '../api/secret-access';
import type { ObjectKind, SecretAccess, SecretGrantHint } from './ports';

/** Every namespace is granted: the cluster-wide mode, and ports that do not know better. */
export const GRANTED: SecretAccess = { state: 'granted' };

/** A namespace on a cluster (`cluster` empty for the management cluster). */
export interface SecretPlace {
  readonly cluster: string;
  readonly namespace: string;
}

/** What of an object {@link secretPlacesOf} reads. */
export interface PlacedObject {
  readonly metadata: { readonly namespace?: string };
  /** An order's spec carries `controlPlaneRef`; a ControlPlane's does not. */
  readonly spec?: object;
}

/** The kinds that deliver a Secret beside the order. */
const DELIVERING: ReadonlySet<ObjectKind> = new Set<ObjectKind>(['KeystoneUser', 'KeystoneApplicationCredential']);

/**
 * Where a pass of `object` (of `kind`, on `cluster`) reads or writes Secrets: a ControlPlane's own namespace (and
 * `source`, the source Secret's namespace of the identity it uses); an order's ControlPlane namespace on the management
 * cluster and, for a KeystoneUser or KeystoneApplicationCredential, its own namespace on its cluster.
 */
export function secretPlacesOf(kind: ObjectKind, object: PlacedObject, cluster = '', source?: string): SecretPlace[] {
  const namespace = object.metadata.namespace ?? '';
  if (kind === 'ControlPlane') return unique([{ cluster: '', namespace }, ...(source !== undefined ? [{ cluster: '', namespace: source }] : [])]);
  const ref = (object.spec as { readonly controlPlaneRef?: { readonly name: string; readonly namespace?: string } } | undefined)?.controlPlaneRef;
  const controlPlaneNamespace = ref?.namespace || namespace;
  return unique([{ cluster: '', namespace: controlPlaneNamespace }, ...(DELIVERING.has(kind) ? [{ cluster, namespace }] : [])]);
}

function unique(places: SecretPlace[]): SecretPlace[] {
  const seen = new Set<string>();
  return places.filter((p) => {
    const key = `${p.cluster}\u0000${p.namespace}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The first place whose cache is being filled: a pass that needs it waits (writes nothing) until it is filled or refused. */
export function pendingPlace(places: readonly SecretPlace[], accessOf: (place: SecretPlace) => SecretAccess): SecretPlace | undefined {
  return places.find((p) => accessOf(p).state === 'pending');
}

/**
 * The kubectl commands that grant the operator Secrets in `place` (the RoleBinding only when the subject is known); with
 * `source`, only the read of that one Secret (a KeystoneClusterIdentity's source).
 */
export function grantCommands(place: SecretPlace, grant: SecretGrantHint, source?: string): string {
  const context = place.cluster ? ` --context ${place.cluster}` : '';
  const role = source !== undefined ? sourceRoleName(grant.operator, source) : secretRoleName(grant.operator);
  const rule = source !== undefined ? `--verb=get,list,watch --resource=secrets --resource-name=${source}` : '--verb=get,list,watch,create,patch,delete --resource=secrets';
  const create = `kubectl${context} create role ${role} -n ${place.namespace} ${rule}`;
  const subject = grant.subject;
  if (!subject) return `${create}, and a RoleBinding ${role} of it to the operator's identity`;
  const who = subject.kind === 'ServiceAccount' ? `--serviceaccount=${subject.namespace}:${subject.name}` : `--user=${subject.name}`;
  return `${create} && kubectl${context} create rolebinding ${role} -n ${place.namespace} --role=${role} ${who}`;
}

/**
 * The message of a refused grant: which namespace (and cluster), what the operator needs there, the API server's words,
 * which Role and RoleBinding are missing, and the command or construct that adds them; consent and the grant are two
 * acts. `source`: the place holds only the source Secret of that name, which the operator reads and nothing else.
 */
export function deniedMessage(place: SecretPlace, access: Extract<SecretAccess, { state: 'denied' }>, what: string, source?: string): string {
  const where = place.cluster ? `namespace ${place.namespace} on cluster ${place.cluster}` : `namespace ${place.namespace}`;
  const role = source !== undefined ? sourceRoleName(access.grant.operator, source) : secretRoleName(access.grant.operator);
  const entry = source !== undefined ? `${place.namespace}/${source}` : place.namespace;
  const construct = place.cluster
    ? `the TargetCluster construct with secretAccess 'namespaced', or keystone-appcred manifests --target-cluster --secret-namespaces ${entry} | kubectl --context ${place.cluster} apply --server-side -f -`
    : `the Operator construct with secretAccess 'namespaced' (its Roles follow the ControlPlanes and identities declared in the same app), or keystone-appcred manifests --secret-namespaces with ${entry} in the list`;
  return (
    `the operator is not granted Secrets in ${where}, which it needs for ${what} (${access.detail}); ` +
    `the Role and RoleBinding ${role} there are missing (granting is an act of its own, beside the ControlPlane's assignment): ` +
    `${grantCommands(place, access.grant, source)}; or ${construct}`
  );
}

/** The grant hint of an identity the API server authenticated (`system:serviceaccount:<ns>:<name>` or a user name). */
export function grantHintOf(operator: string, username: string | undefined): SecretGrantHint {
  if (!username) return { operator };
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(username);
  return { operator, subject: sa ? { kind: 'ServiceAccount', namespace: sa[1], name: sa[2] } : { kind: 'User', name: username } };
}
