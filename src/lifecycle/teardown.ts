/**
 * Teardown (spec, Deletion Semantics): what deleting an order does, as actions; under `deletionPolicy: Retain` (issue
 * 49) what it keeps.
 */
import { DeletionPolicy, type KeystoneApplicationCredentialStatus } from '../api';
import { formerTeardown } from './migration';
import type { Action, GenerationRecord, Observations, Plan } from './model';

/**
 * Deletion: every generation the order holds is deleted in Keystone, then the backup (its metadata and every version,
 * whatever the latest version reads: a soft-deleted one reads as empty), the parked secrets, the Secret. While Keystone
 * cannot be listed nothing is deleted and the order is not released: what it holds there is unknown. The path
 * keystone-appcred 0.1.0 backed up to loses the order's document too, when it is the order's own (migration.ts); one
 * that cannot be read holds the teardown as Keystone does.
 */
export function teardown(status: KeystoneApplicationCredentialStatus, world: Observations, policy: DeletionPolicy = DeletionPolicy.Delete): Plan {
  if (world.keystoneError !== undefined) return { status, actions: [] };
  const own = world.generations.flatMap((r) => (r.credential ? [r.credential.id] : []));
  const former = formerTeardown(status, world.formerBackup, own);
  if (former.hold) return { status, actions: [] };
  const { record: kept, released } = policy === DeletionPolicy.Retain ? retained(world) : { released: false };
  const keptBackup = kept !== undefined && world.backup?.credentialId === kept.credential?.id;
  const actions: Action[] = [];
  for (const record of world.generations) {
    if (record.credential && record !== kept) actions.push({ type: 'delete', generation: record.generation, id: record.credential.id, why: kept ? 'teardown: not the retained credential' : 'teardown' });
  }
  if (world.backup !== undefined && !keptBackup) actions.push({ type: 'remove-backup', why: 'teardown' });
  actions.push(...former.actions);
  // The Secret is applied once more without its owner reference, with the document of the parked secret: before it goes.
  if (kept?.credential && !released) actions.push({ type: 'retain', generation: kept.generation, id: kept.credential.id, backup: keptBackup, why: 'deletionPolicy Retain' });
  for (const record of world.generations) {
    if (record.parked || record.failure !== undefined) actions.push({ type: 'discard', generation: record.generation, why: 'teardown' });
  }
  if (!kept && world.delivery.state === 'delivered') actions.push({ type: 'withdraw', why: 'teardown' });
  actions.push({ type: 'release', why: 'teardown done' });
  return { status, actions };
}

/**
 * What `deletionPolicy: Retain` keeps: the credential the order's delivered Secret carries, as Keystone holds it, with
 * the Secret and (when it holds that credential) the backup. Everything else the order holds goes as under `Delete`:
 * the superseded credential in its grace period (its consumers had the switch; the one kept is what the Secret
 * carries), a successor never delivered, the parked secrets. With no delivered Secret of the order's (none yet, a
 * foreign one) there is nothing a consumer holds, and nothing is kept; nor when the delivered credential's parked secret
 * is lost (the Secret cannot be applied once more without its owner reference: the garbage collector takes it).
 *
 * A teardown runs more than one pass (one woken by its own writes from a cache that still shows the order, one after a
 * crash): the Secret an earlier pass released (`released`) reads as foreign then, its parked secret discarded, and it
 * is the order's still when the order's own backup, which only the order writes, holds the credential it names. What
 * that pass kept stays kept; nothing is applied again.
 */
function retained(world: Observations): { readonly record?: GenerationRecord; readonly released: boolean } {
  const delivery = world.delivery;
  if (delivery.state === 'delivered') return { record: world.generations.find((r) => r.credential?.id === delivery.credentialId && r.parked), released: false };
  if (delivery.state !== 'foreign' || delivery.credentialId === undefined || world.backup?.credentialId !== delivery.credentialId) return { released: false };
  return { record: world.generations.find((r) => r.credential?.id === delivery.credentialId), released: true };
}
