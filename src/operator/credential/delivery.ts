/**
 * The delivered Secret `<metadata.name>-credentials` beside the order (spec, Delivered Secret contract): applied with
 * server-side apply by the operator's field manager, owning exactly the three keys, the two labels and a controller
 * owner reference to the order, so the garbage collector reaps it with the order and a key somebody else adds stays. A
 * Secret of that name without the order's controller reference is foreign: read, reported, never written or deleted.
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

  constructor(
    private readonly cluster: ClusterPort,
    private readonly order: KeystoneApplicationCredential,
  ) {
    this.key = { namespace: order.metadata.namespace ?? '', name: secretName(order.metadata.name) };
  }

  async read(): Promise<{ owned: boolean; data: Readonly<Record<string, string>> } | undefined> {
    const secret = await this.cluster.getSecret(this.key);
    if (!secret) return undefined;
    const owned = (secret.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === this.order.metadata.uid);
    return { owned, data: secret.data };
  }

  async write(data: SecretData): Promise<void> {
    const location = { namespace: this.key.namespace, name: this.order.metadata.name };
    await this.cluster.applySecret({ ...this.key, labels: deliveredLabels('KeystoneApplicationCredential', location), ownerReferences: [ownerReferenceOf(this.order)], data });
  }

  async remove(): Promise<void> {
    const secret = await this.cluster.getSecret(this.key);
    if (!secret || !(secret.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === this.order.metadata.uid)) return;
    await this.cluster.deleteSecret(this.key, secret.metadata.uid ? { uid: secret.metadata.uid } : undefined);
  }
}
