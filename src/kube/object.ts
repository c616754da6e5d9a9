/**
 * The shapes every Kubernetes object shares, the descriptor that names a kind on the API server (group, version, plural,
 * scope), and the `namespace/name` keys the caches and work queues use.
 */
import { LAST_APPLIED } from '../api/provenance';
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
  /**
   * Read as metadata only (`PartialObjectMetadata`): lists, watches and gets ask the API server for the objects' metadata
   * and never receive the rest (a Secret's data). Made with {@link metadataOf}. @default false
   */
  readonly metadataOnly?: boolean;
  /**
   * What a cache keeps of an object beyond {@link slim}: given the object as read and its slimmed copy, the copy with
   * what the kind's readers need of the dropped fields put back (the order keeps who wrote its defaulted fields:
   * src/api/provenance.ts). @default the slimmed copy
   */
  retain?(full: T, slimmed: T): T;
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

/**
 * An object as the API server's metadata-only view serves it (`meta.k8s.io/v1` `PartialObjectMetadata`): its metadata,
 * nothing else. Which kind it is an object of is the {@link ResourceKind} it was read with.
 */
export interface PartialObjectMetadata extends KubeObject {
  readonly apiVersion: 'meta.k8s.io/v1';
  readonly kind: 'PartialObjectMetadata';
}

const metadataKinds = new WeakMap<ResourceKind<KubeObject>, ResourceKind<PartialObjectMetadata>>();

/**
 * The metadata-only view of a kind: the same resource on the API server, read as `PartialObjectMetadata` (the
 * `as=PartialObjectMetadata;g=meta.k8s.io;v=v1` content type), so a cache of it holds names, labels, owners and
 * resourceVersions but never, say, a Secret's data. Always the same descriptor for the same kind.
 */
export function metadataOf(kind: ResourceKind<KubeObject>): ResourceKind<PartialObjectMetadata> {
  if (kind.metadataOnly) return kind as ResourceKind<PartialObjectMetadata>;
  let view = metadataKinds.get(kind);
  // A metadata view keeps nothing beyond metadata: the kind's `retain` reads the full object.
  const { group, version, kind: name, plural, namespaced } = kind;
  if (!view) metadataKinds.set(kind, (view = defineKind<PartialObjectMetadata>({ group, version, kind: name, plural, namespaced, metadataOnly: true })));
  return view;
}

/** The apiVersion and kind of the objects a kind's reads return: the kind's own, or `PartialObjectMetadata`'s. */
export function typeOf(kind: ResourceKind<KubeObject>): { readonly apiVersion: string; readonly kind: string } {
  return kind.metadataOnly ? { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata' } : { apiVersion: apiVersionOf(kind), kind: kind.kind };
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

/** The annotation `kubectl apply` keeps the applied object in. */
export const LAST_APPLIED_ANNOTATION = LAST_APPLIED;

/**
 * An object as a cache keeps it: without `metadata.managedFields`, which is often larger than the rest of a Secret and
 * which nothing reads from a cache (client-go's informers drop it the same way), nor `kubectl apply`'s last-applied
 * annotation, a second copy of the object as the user applied it (a Secret's data included). The object itself when
 * it has neither.
 */
export function slim<T extends KubeObject>(object: T): T {
  const meta = object.metadata as T['metadata'] & { managedFields?: unknown };
  const annotations = meta.annotations;
  const applied = annotations !== undefined && LAST_APPLIED_ANNOTATION in annotations;
  if (meta.managedFields === undefined && !applied) return object;
  const metadata = without(meta, applied && Object.keys(annotations).length === 1 ? ['managedFields', 'annotations'] : ['managedFields']);
  if (applied && 'annotations' in metadata) (metadata as { annotations?: unknown }).annotations = without(annotations, [LAST_APPLIED_ANNOTATION]);
  return { ...object, metadata };
}

/** An object of `kind` as a cache keeps it: {@link slim}med, with what the kind retains (`ResourceKind.retain`). */
export function slimAs<T extends KubeObject>(kind: ResourceKind<T>, object: T): T {
  const slimmed = slim(object);
  return kind.retain && slimmed !== object ? kind.retain(object, slimmed) : slimmed;
}

/**
 * A copy of `object` without `keys`, built property by property: `delete` would turn the copy into a slow
 * dictionary-mode object, which costs a cache of thousands of objects about three times the memory.
 */
export function without<T extends object>(object: T, keys: readonly string[]): T {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(object)) if (!keys.includes(key)) copy[key] = (object as Record<string, unknown>)[key];
  return copy as T;
}
