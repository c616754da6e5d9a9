/**
 * Whole copies of objects that the caches hold as metadata only, read from the API server by name when a reconciler
 * asks for one, and kept while the cached metadata says they are current (same uid, a resourceVersion not newer than
 * the copy's). An object read on every pass, such as a ControlPlane's CA bundle, costs one GET per change of it, and a
 * change is seen on the first read after the metadata watch reported it. Concurrent reads of one object share a GET.
 */
import type { Cluster } from './cluster';
import { keyOf, objectKey, parseKey, slimAs, type KubeObject, type ObjectKey, type ResourceKind } from './object';
import { newerOf } from './store';

export class ReadThrough<T extends KubeObject> {
  private readonly copies = new Map<ObjectKey, T>();
  private readonly pending = new Map<ObjectKey, Promise<T | undefined>>();

  constructor(
    private readonly cluster: Pick<Cluster, 'read'>,
    /** The kind read whole (not its metadata view). */
    private readonly kind: ResourceKind<T>,
  ) {}

  /** The number of copies kept. */
  get size(): number {
    return this.copies.size;
  }

  /** The copy of the object `metadata` (as the cache holds it) describes, when there is a current one. */
  current(metadata: KubeObject): T | undefined {
    const copy = this.copies.get(keyOf(metadata));
    return copy && copy.metadata.uid === metadata.metadata.uid && newerOf(copy, metadata) === copy ? copy : undefined;
  }

  /** The whole object `metadata` (as the cache holds it) describes: the copy when current, else read now. */
  get(metadata: KubeObject): Promise<T | undefined> {
    const key = keyOf(metadata);
    const copy = this.current(metadata);
    if (copy) return Promise.resolve(copy);
    let read = this.pending.get(key);
    if (!read) {
      read = this.read(key).finally(() => this.pending.delete(key));
      this.pending.set(key, read);
    }
    return read;
  }

  /** Drops the copies whose key `keep` rejects (e.g. no longer referenced, or gone from the metadata cache). */
  retain(keep: (key: ObjectKey) => boolean): void {
    for (const key of [...this.copies.keys()]) if (!keep(key)) this.copies.delete(key);
  }

  private async read(key: ObjectKey): Promise<T | undefined> {
    const { namespace, name } = parseKey(key);
    const read = await this.cluster.read(this.kind, namespace, name);
    const object = read ? slimAs(this.kind, read) : undefined;
    if (object) this.copies.set(objectKey(namespace, name), object);
    else this.copies.delete(key);
    return object;
  }
}
