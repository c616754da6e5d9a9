/**
 * The delivered Secret `<metadata.name>-credentials` beside the order (spec, Delivered Secret contract): applied with
 * server-side apply by the operator's field manager, owning exactly the three keys, the two labels and a controller
 * owner reference to the order, so the garbage collector reaps it with the order and a key somebody else adds stays;
 * and the keys, labels and annotations of the order's template (issue 49), which leave the Secret with the next apply
 * once the template no longer has them. The operator's own two labels win over the template's (the CRD refuses a
 * template that sets them anyway). A Secret of that name without the order's controller reference is foreign: read,
 * reported, never written or deleted. Under `deletionPolicy: Retain` the teardown applies it once more without the
 * owner reference, which the field manager owned, so the API server drops it and the garbage collector leaves the
 * Secret to its consumers.
 *
 * "Never written" holds also for a foreign Secret created while a pass is under way: when the pass observed no Secret,
 * the write first asks the API server itself (not the cache) whether one exists now and refuses a foreign one, and then
 * applies without force, so one created in the instant between conflicts on the order's keys instead of being taken
 * over. The next pass observes it and reports DeliveryRefused.
 */
import { secretName, type KeystoneApplicationCredential } from '../../api';
import type { DeliveryPort, SecretData } from '../../lifecycle/ports';
import type { ObservedSecret, SecretMetadata } from '../../lifecycle/secret-template';
import { deliveredLabels } from '../../plane/naming';
import type { ClusterPort, OwnerReference } from '../../plane/ports';

/** The controller owner reference of a Secret the order delivers. */
export function ownerReferenceOf(order: KeystoneApplicationCredential): OwnerReference {
  return { apiVersion: order.apiVersion, kind: order.kind, name: order.metadata.name, uid: order.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** The delivered Secret of one order, as a {@link DeliveryPort}. */
export class DeliveredSecret implements DeliveryPort {
  private readonly key: { namespace: string; name: string };
  /** The pass observed no Secret of the delivered name (and has not written one since). */
  private observedAbsent = false;

  constructor(
    private readonly cluster: ClusterPort,
    private readonly order: KeystoneApplicationCredential,
    /** The labels and annotations of the order's template. @default none */
    private readonly metadata: SecretMetadata = { labels: {}, annotations: {} },
  ) {
    this.key = { namespace: order.metadata.namespace ?? '', name: secretName(order.metadata.name) };
  }

  async read(): Promise<({ owned: boolean } & ObservedSecret) | undefined> {
    const secret = await this.cluster.getSecret(this.key);
    this.observedAbsent = !secret;
    if (!secret) return undefined;
    const { labels, annotations } = secret.metadata;
    return { owned: this.owns(secret), data: secret.data, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
  }

  /** What the operator applies: the document, the labels (its own two over the template's), the annotations, the owner. */
  private manifest(data: SecretData, owned: boolean) {
    const location = { namespace: this.key.namespace, name: this.order.metadata.name };
    const annotations = this.metadata.annotations;
    return {
      ...this.key,
      labels: { ...this.metadata.labels, ...deliveredLabels('KeystoneApplicationCredential', location) },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ...(owned ? { ownerReferences: [ownerReferenceOf(this.order)] } : {}),
      data,
    };
  }

  async write(data: SecretData): Promise<void> {
    const manifest = this.manifest(data, true);
    if (this.observedAbsent) {
      const now = await this.cluster.readSecret(this.key);
      if (now && !this.owns(now)) throw new Error(`Secret ${this.key.namespace}/${this.key.name} appeared during the pass and is not this order's: not written`);
      // Ours already (the cache lagged behind an earlier write): force as always; none: a create that must not force.
      await this.cluster.applySecret(manifest, { force: now !== undefined });
      this.observedAbsent = false;
      return;
    }
    await this.cluster.applySecret(manifest);
  }

  /** `deletionPolicy: Retain` (issue 49): the same document applied without the owner reference, so it is dropped. */
  async retain(data: SecretData): Promise<void> {
    const secret = await this.cluster.readSecret(this.key);
    if (!secret || !this.owns(secret)) return;
    await this.cluster.applySecret(this.manifest(data, false));
  }

  async remove(): Promise<void> {
    const secret = await this.cluster.getSecret(this.key);
    if (!secret || !this.owns(secret)) return;
    await this.cluster.deleteSecret(this.key, secret.metadata.uid ? { uid: secret.metadata.uid } : undefined);
  }

  /** Whether the Secret carries the order's controller reference. */
  private owns(secret: { readonly metadata: { readonly ownerReferences?: readonly OwnerReference[] } }): boolean {
    return (secret.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === this.order.metadata.uid);
  }
}
