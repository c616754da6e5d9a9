/**
 * The delivered Secret `<metadata.name>-credentials` beside the order (spec, Delivered Secret contract): applied with
 * server-side apply by the operator's field manager, owning exactly the three keys, the two labels and a controller
 * owner reference to the order, so the garbage collector reaps it with the order and a key somebody else adds stays. A
 * Secret of that name without the order's controller reference is foreign: read, reported, never written or deleted.
 *
 * "Never written" holds also for a foreign Secret created while a pass is under way: when the pass observed no Secret,
 * the write first asks the API server itself (not the cache) whether one exists now and refuses a foreign one, and then
 * applies without force, so one created in the instant between conflicts on the order's keys instead of being taken
 * over. The next pass observes it and reports DeliveryRefused.
 */
import { secretName, type KeystoneApplicationCredential } from '../../api';
import type { DeliveryPort, SecretData } from '../../lifecycle/ports';
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
  ) {
    this.key = { namespace: order.metadata.namespace ?? '', name: secretName(order.metadata.name) };
  }

  async read(): Promise<{ owned: boolean; data: Readonly<Record<string, string>> } | undefined> {
    const secret = await this.cluster.getSecret(this.key);
    this.observedAbsent = !secret;
    if (!secret) return undefined;
    return { owned: this.owns(secret), data: secret.data };
  }

  async write(data: SecretData): Promise<void> {
    const location = { namespace: this.key.namespace, name: this.order.metadata.name };
    const manifest = { ...this.key, labels: deliveredLabels('KeystoneApplicationCredential', location), ownerReferences: [ownerReferenceOf(this.order)], data };
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
