/**
 * Which objects to reconcile again when a watched object changes (issue: "a ControlPlane change requeues its orders, a
 * changed or deleted child or delivered Secret requeues its owner"), written once from the references the rules read.
 * Pure: the runtime hands in the changed object and the orders its cache holds.
 */
import { GROUP, secretName, type ControlPlane, type KeystoneApplicationCredential, type KeystoneProject, type KeystoneRoleAssignment, type KeystoneUser } from '../api';
import { adminSecretNames } from './admin-credential';
import { controlPlaneKey, labelKeys, type OrderKind, type OrderObject } from './naming';
import type { ObjectKind, SecretObject } from './ports';

/** An object to reconcile. */
export interface ObjectRef {
  readonly kind: ObjectKind;
  readonly namespace: string;
  readonly name: string;
  /**
   * The cluster it lives on, when another than the changed object's: a child in the ControlPlane's namespace (on the
   * management cluster) names the target cluster of its order in its cluster label. Absent: the changed object's cluster.
   */
  readonly cluster?: string;
}

/** The orders (and ControlPlanes) the cache holds; pass those of the changed object's namespace, or all. */
export interface CachedObjects {
  readonly controlPlanes?: readonly ControlPlane[];
  readonly users?: readonly KeystoneUser[];
  readonly projects?: readonly KeystoneProject[];
  readonly assignments?: readonly KeystoneRoleAssignment[];
  readonly credentials?: readonly KeystoneApplicationCredential[];
}

const ORDER_KINDS: readonly OrderKind[] = ['KeystoneUser', 'KeystoneProject', 'KeystoneRoleAssignment', 'KeystoneApplicationCredential'];
const refOf = (kind: ObjectKind, o: { metadata: { namespace?: string; name: string } }): ObjectRef => ({ kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name });
const same = (namespace: string | undefined) => (o: { metadata: { namespace?: string } }) => (o.metadata.namespace ?? '') === (namespace ?? '');

function unique(refs: ObjectRef[]): ObjectRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = `${r.cluster ?? ''}:${r.kind}/${r.namespace}/${r.name}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** The orders referencing a ControlPlane (every kind): its consent, admin credential and endpoints decide theirs. */
function ordersOf(controlPlane: ControlPlane, cache: CachedObjects): ObjectRef[] {
  const mine = (o: OrderObject) => {
    const key = controlPlaneKey(o);
    return key.namespace === controlPlane.metadata.namespace && key.name === controlPlane.metadata.name;
  };
  return [
    ...(cache.users ?? []).filter(mine).map((o) => refOf('KeystoneUser', o)),
    ...(cache.projects ?? []).filter(mine).map((o) => refOf('KeystoneProject', o)),
    ...(cache.assignments ?? []).filter(mine).map((o) => refOf('KeystoneRoleAssignment', o)),
    ...(cache.credentials ?? []).filter(mine).map((o) => refOf('KeystoneApplicationCredential', o)),
  ];
}

/**
 * The objects to reconcile when `object` of `kind` was added, changed or deleted (the object itself included):
 * - a ControlPlane: every order referencing it;
 * - a KeystoneUser / KeystoneProject: the assignments and credentials naming it (gates; a deletion they hold);
 * - a KeystoneRoleAssignment: its user and project (holds), the credentials of that user and project (role gate), the
 *   assignments of the same user and project (duplicates, hand-over);
 * - a KeystoneApplicationCredential: its user, project and their assignments (holds).
 */
export function dependents(kind: ObjectKind, object: { metadata: { namespace?: string; name: string } }, cache: CachedObjects): ObjectRef[] {
  const self = refOf(kind, object);
  const ns = same(object.metadata.namespace);
  const name = object.metadata.name;
  const assignments = (cache.assignments ?? []).filter(ns);
  const credentials = (cache.credentials ?? []).filter(ns);
  switch (kind) {
    case 'ControlPlane':
      return unique([self, ...ordersOf(object as ControlPlane, cache)]);
    case 'KeystoneUser':
      return unique([
        self,
        ...assignments.filter((a) => a.spec.userRef.name === name).map((a) => refOf('KeystoneRoleAssignment', a)),
        ...credentials.filter((c) => c.spec.userRef.name === name).map((c) => refOf('KeystoneApplicationCredential', c)),
      ]);
    case 'KeystoneProject':
      return unique([
        self,
        ...assignments.filter((a) => a.spec.projectRef.name === name).map((a) => refOf('KeystoneRoleAssignment', a)),
        ...credentials.filter((c) => c.spec.projectRef.name === name).map((c) => refOf('KeystoneApplicationCredential', c)),
      ]);
    case 'KeystoneRoleAssignment':
    case 'KeystoneApplicationCredential': {
      const { userRef, projectRef } = (object as KeystoneRoleAssignment | KeystoneApplicationCredential).spec;
      const pair = (o: { spec: { userRef: { name: string }; projectRef: { name: string } } }) => o.spec.userRef.name === userRef.name && o.spec.projectRef.name === projectRef.name;
      return unique([
        self,
        { kind: 'KeystoneUser', namespace: self.namespace, name: userRef.name },
        { kind: 'KeystoneProject', namespace: self.namespace, name: projectRef.name },
        ...assignments.filter(pair).map((a) => refOf('KeystoneRoleAssignment', a)),
        ...credentials.filter(pair).map((c) => refOf('KeystoneApplicationCredential', c)),
      ]);
    }
  }
}

/**
 * The objects a changed or deleted Secret concerns: the order controlling it (a delivered Secret, on the order's own
 * cluster), the order whose child it is (by the three labels; a child with a cluster label concerns the order of that
 * name and namespace on that target cluster), and the ControlPlanes whose admin `clouds.yaml` or CA bundle it is (pass
 * `controlPlanes` only for a Secret of the management cluster).
 */
export function secretDependents(secret: SecretObject, cache: CachedObjects): ObjectRef[] {
  const out: ObjectRef[] = [];
  for (const owner of secret.metadata.ownerReferences ?? []) {
    if (owner.controller && owner.apiVersion.startsWith(`${GROUP}/`) && (ORDER_KINDS as readonly string[]).includes(owner.kind)) {
      out.push({ kind: owner.kind as ObjectKind, namespace: secret.metadata.namespace, name: owner.name });
    }
  }
  const labels = secret.metadata.labels ?? {};
  for (const kind of ORDER_KINDS) {
    const keys = labelKeys(kind);
    const name = labels[keys.name];
    const namespace = labels[keys.namespace];
    const cluster = labels[keys.cluster];
    if (name && namespace) out.push({ kind, namespace, name, ...(cluster ? { cluster } : {}) });
  }
  // A Secret of an order's delivered name, whoever's it is: a foreign one created, changed or deleted decides whether the
  // order may deliver (refused while it stands, delivered once it is gone), and it carries neither owner nor labels.
  for (const order of cache.credentials ?? []) {
    if ((order.metadata.namespace ?? '') === secret.metadata.namespace && secretName(order.metadata.name) === secret.metadata.name) out.push(refOf('KeystoneApplicationCredential', order));
  }
  for (const cp of cache.controlPlanes ?? []) {
    if ((cp.metadata.namespace ?? '') !== secret.metadata.namespace) continue;
    const names = adminSecretNames(cp);
    // The ControlPlane checks the credential again; its orders follow when its status changes.
    if (names.cloudCredentials === secret.metadata.name || names.caBundle === secret.metadata.name) out.push(refOf('ControlPlane', cp));
  }
  return unique(out);
}
