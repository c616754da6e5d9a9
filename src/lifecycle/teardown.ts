/**
 * Teardown (spec, Deletion Semantics): what deleting an order does, as actions.
 */
import type { KeystoneApplicationCredentialStatus } from '../api';
import { formerTeardown } from './migration';
import type { Action, Observations, Plan } from './model';

/**
 * Deletion: every generation the order holds is deleted in Keystone, then the backup (its metadata and every version,
 * whatever the latest version reads: a soft-deleted one reads as empty), the parked secrets, the Secret. While Keystone
 * cannot be listed nothing is deleted and the order is not released: what it holds there is unknown. The path
 * keystone-appcred 0.1.0 backed up to loses the order's document too, when it is the order's own (migration.ts); one
 * that cannot be read holds the teardown as Keystone does.
 */
export function teardown(status: KeystoneApplicationCredentialStatus, world: Observations): Plan {
  if (world.keystoneError !== undefined) return { status, actions: [] };
  const own = world.generations.flatMap((r) => (r.credential ? [r.credential.id] : []));
  const former = formerTeardown(status, world.formerBackup, own);
  if (former.hold) return { status, actions: [] };
  const actions: Action[] = [];
  for (const record of world.generations) {
    if (record.credential) actions.push({ type: 'delete', generation: record.generation, id: record.credential.id, why: 'teardown' });
  }
  if (world.backup !== undefined) actions.push({ type: 'remove-backup', why: 'teardown' });
  actions.push(...former.actions);
  for (const record of world.generations) {
    if (record.parked || record.failure !== undefined) actions.push({ type: 'discard', generation: record.generation, why: 'teardown' });
  }
  if (world.delivery.state === 'delivered') actions.push({ type: 'withdraw', why: 'teardown' });
  actions.push({ type: 'release', why: 'teardown done' });
  return { status, actions };
}
