/**
 * The shapes every Kubernetes object shares, the descriptor that names a kind on the API server (group, version, plural,
 * scope), and the `namespace/name` keys the caches and work queues use.
 */
import type { ObjectMeta as KindObjectMeta, OwnerReference } from '../api/types';

export type { OwnerReference } from '../api/types';


/** The subset of `metav1.ObjectMeta` the operator reads and writes: the kinds' own, plus owner references. */
export interface ObjectMeta extends KindObjectMeta {
  readonly ownerReferences?: readonly OwnerReference[];
}

/** Any Kubernetes object. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: ObjectMeta;
}

/**
 * What server-side apply sends: the fields the operator owns, with apiVersion, kind, name and (for a namespaced kind)
 * namespace. The API server merges it with what other managers own.
 */
export interface ApplyConfiguration {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    /** A precondition: the apply fails with 409 unless the object is at this resourceVersion. @default none */
    readonly resourceVersion?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly ownerReferences?: readonly OwnerReference[];
  };
  readonly [field: string]: unknown;
}

/**
 * A kind as the API server serves it. `T` is the object type reads return; it exists only at compile time.
 */
export interface ResourceKind<T extends KubeObject = KubeObject> {
  /** The API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** The resource name in URLs, e.g. `secrets`. */
  readonly plural: string;
  /** Whether objects live in a namespace. */
  readonly namespaced: boolean;
  /** Never set: carries `T`. */
  readonly __object?: T;
}

/** Declares a kind; `T` is the object type reads return. */
export function defineKind<T extends KubeObject = KubeObject>(kind: Omit<ResourceKind<T>, '__object'>): ResourceKind<T> {
  return Object.freeze({ ...kind });
}

/** `group/version`, or `version` for the core group. */
export function apiVersionOf(kind: ResourceKind<KubeObject>): string {
  return kind.group ? `${kind.group}/${kind.version}` : kind.version;
}

/** The group of an apiVersion (`''` for `v1`). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** `namespace/name`, or `name` for a cluster-scoped object: the key of caches and work queues. */
export type ObjectKey = string;

/** The key of a namespace and name. */
export function objectKey(namespace: string | undefined, name: string): ObjectKey {
  return namespace ? `${namespace}/${name}` : name;
}

/** The key of an object. */
export function keyOf(object: KubeObject): ObjectKey {
  return objectKey(object.metadata.namespace, object.metadata.name);
}

/** The namespace (undefined when cluster-scoped) and name of a key. */
export function parseKey(key: ObjectKey): { readonly namespace?: string; readonly name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** Whether `object` is of `kind` (same group and kind; any version). */
export function isKind(object: KubeObject, kind: ResourceKind<KubeObject>): boolean {
  return object.kind === kind.kind && groupOf(object.apiVersion) === kind.group;
}

/** `"ControlPlane openstack/cp"`: a kind and key for messages and logs. */
export function describe(kind: ResourceKind<KubeObject>, key: ObjectKey): string {
  return `${kind.kind} ${key}`;
}
