/**
 * A kind cached by the labels that mark the objects the operator needs whole, and as metadata only for the rest (what
 * cert-manager does for Secrets, see docs/concepts/caches.md): one informer per label key with the
 * selector `key` (the object carries the label; the API server cannot select "this label or that one" in one selector),
 * and one informer of the metadata-only view with the complement `!key1,!key2,…`, so each object is in exactly one
 * cache (for a moment in two, or none, while a relabelled object's watches catch up). The rest never reaches the
 * process whole: its list and watch carry `PartialObjectMetadata`.
 */
import type { Selection } from '../../kube/api';
import { metadataOf, without, type KubeObject, type PartialObjectMetadata, type ResourceKind } from '../../kube/object';
import type { ClusterScope } from './clusters';
import type { Manager } from './manager';

/** The selections of a kind cached by label keys. */
export interface LabelPartitions {
  /** One per label key: the objects carrying it, cached whole. */
  readonly whole: readonly Selection[];
  /** The objects carrying none of the keys. */
  readonly others: Selection;
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** The selections that split a kind by `keys` (in a namespace, or every namespace). */
export function labelPartitions(keys: readonly string[], namespace?: string): LabelPartitions {
  if (keys.length === 0) throw new Error('labelPartitions: at least one label key');
  for (const key of keys) if (!LABEL_KEY.test(key)) throw new Error(`labelPartitions: ${JSON.stringify(key)} is not a label key`);
  const scope = namespace ? { namespace } : {};
  return {
    whole: keys.map((key) => ({ ...scope, labelSelector: key })),
    others: { ...scope, labelSelector: keys.map((key) => `!${key}`).join(',') },
  };
}

/**
 * What a metadata-only cache keeps of an object: its metadata without annotations, which nothing reads from such a
 * cache and which may be large (a `kubectl apply`'d Secret's last-applied annotation is a copy of the whole Secret).
 */
export function withoutAnnotations<T extends KubeObject>(object: T): T {
  if (!object.metadata.annotations) return object;
  return { ...object, metadata: without(object.metadata, ['annotations']) };
}

/**
 * Caches `kind` whole for the objects carrying any of `keys`, and `metadataOf(kind)` (without annotations) for the rest,
 * or nothing of the rest with `others: 'none'`. Reads of `kind` see the objects carrying a key; reads of
 * `metadataOf(kind)` the others' metadata; watch both to hear every object.
 */
export function cacheByLabels(
  manager: Manager,
  kind: ResourceKind<KubeObject>,
  keys: readonly string[],
  options: { readonly namespace?: string; readonly others?: 'metadata' | 'none'; readonly clusters?: ClusterScope } = {},
): void {
  const partitions = labelPartitions(keys, options.namespace);
  const clusters = options.clusters ? { clusters: options.clusters } : {};
  for (const selection of partitions.whole) manager.cache(kind, { ...selection, ...clusters });
  if ((options.others ?? 'metadata') === 'metadata') manager.cache<PartialObjectMetadata>(metadataOf(kind), { ...partitions.others, transform: withoutAnnotations, ...clusters });
}
