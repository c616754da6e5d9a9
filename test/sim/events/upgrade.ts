/**
 * The upgrade from keystone-appcred 0.1.0: the processes stop, the state is what 0.1.0's rules would have left
 * (its credentials carry no marks, the backup is at the spec's path without the order's uid, and, for one order, a
 * successor 0.1.0 minted and parked but did not switch to: its backup was refused when the upgrade came), and the
 * processes of this release start.
 */
import fc from 'fast-check';
import { backingPath, childPrefix, credentialName, resolveSpec } from '../../../src/api';
import { expiryFor } from '../../../src/lifecycle/rotation';
import { childLabels } from '../../../src/plane/naming';
import type { EventKind } from '../model';
import { base64, CP, PATHS, TARGET_CLUSTER, usesDeliveryOptions } from '../objects';
import type { SimWorld, OrderRef } from '../sim-world';
import { orderRefArb } from './orders';

type Upgrade = { kind: 'upgrade'; successor?: OrderRef };

/** The status fields 0.1.0 wrote (src/api/types.ts at 8f3fd1c); whatever this release added is not there. */
const FORMER_STATUS_FIELDS = ['conditions', 'observedGeneration', 'credentialID', 'credentialGeneration', 'credentialExpiresAt', 'lastRotation', 'nextRotation', 'previousCredentialID', 'previousCredentialGeneration', 'previousCredentialDeleteAt', 'secretName', 'secretKeys'];

/** What 0.1.0 described its credentials with: no owner, no proof. */
export const FORMER_DESCRIPTION = 'managed by keystone-appcred';

export const upgrade: EventKind<Upgrade> = {
  kind: 'upgrade',
  description: "the upgrade from 0.1.0: unmarked credentials, the backup at 0.1.0's path, a successor parked but not switched",
  weight: 1,
  generate: () => fc.option(orderRefArb, { nil: undefined }).map((successor) => ({ kind: 'upgrade' as const, ...(successor ? { successor } : {}) })),
  apply: (world, e) => {
    // Once: after it the installation runs this release (a second "upgrade" would be a downgrade first).
    if (world.upgraded) return;
    // 0.1.0 knew none of issue 49's options: an installation whose orders use one runs this release already.
    if (world.orders().some((o) => usesDeliveryOptions(o.object))) return;
    world.upgraded = true;
    for (const p of world.running) p.kill();
    for (const o of world.orders()) asFormerRelease(world, o, e.successor?.tenant === o.tenant && e.successor.name === o.name);
    for (let i = 0; i < world.setup.replicas; i++) world.startProcess();
  },
};

/** Rewrites one order's state as 0.1.0 would have left it. */
function asFormerRelease(world: SimWorld, ref: OrderRef & { object: { metadata: { uid?: string } } }, parkSuccessor: boolean): void {
  const location = { ...(world.serverOf(ref.tenant) === world.target ? { cluster: TARGET_CLUSTER } : {}), namespace: ref.tenant, name: ref.name };
  const prefix = childPrefix(location);
  const uid = ref.object.metadata.uid ?? '';
  for (const c of world.keystone.credentials.values()) if (c.name.startsWith(`${prefix}-credential-v`) && c.description?.includes(`owner=${uid}`)) world.keystone.describe(c.id, FORMER_DESCRIPTION);
  const own = backingPath(CP.namespace, prefix, uid);
  const document = world.openBao.document(own);
  world.openBao.remove(own);
  if (document) world.openBao.put(backingPath(CP.namespace, prefix), { ...document });
  const object = world.order(ref);
  if (object?.status !== undefined) {
    const former = Object.fromEntries(Object.entries(object.status as Record<string, unknown>).filter(([k]) => FORMER_STATUS_FIELDS.includes(k)));
    world.serverOf(ref.tenant).seed(PATHS.orders, { ...object, status: former }, 'keystone-appcred-0.1.0');
  }
  const status = (world.order(ref)?.status ?? {}) as { credentialGeneration?: number; credentialID?: string; previousCredentialID?: string };
  const delivered = status.credentialID ? world.keystone.credentials.get(status.credentialID) : undefined;
  // 0.1.0 started a rotation only once the previous one's grace period was over, as this release does.
  if (!parkSuccessor || status.credentialGeneration === undefined || !delivered || status.previousCredentialID !== undefined) return;
  // 0.1.0 parked and minted the next generation (the user raised it), and its backup was refused: not switched.
  const next = status.credentialGeneration + 1;
  const secret = `former-parked-${world.seed}-${ref.tenant}-${ref.name}-${next}-4be1c0d7`;
  world.management.seed(PATHS.secrets, { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: `${prefix}-secret-v${next}`, namespace: CP.namespace, labels: childLabels('KeystoneApplicationCredential', location) }, data: { value: base64(secret) } });
  const spec = world.order(ref)?.spec as { credentialGeneration?: number; rotation: { interval: string; gracePeriod: string } };
  const expiresAt = expiryFor(new Date(world.time.now()), resolveSpec(spec));
  world.keystone.addCredential({ name: credentialName(prefix, next), userId: delivered.userId, projectId: delivered.projectId, secret, description: FORMER_DESCRIPTION, ...(expiresAt ? { expiresAt } : {}) });
  world.putOrder(ref, { ...spec.rotation, credentialGeneration: Math.max(next, spec.credentialGeneration ?? 1) });
}
