/**
 * The backup holds the delivered credential once a pass succeeds: after every full pass of an order that succeeded,
 * its backup (at its own path, or until its migration after the upgrade, at the path 0.1.0 wrote) holds the credential
 * its delivered Secret carries; and, the spec's "the backup comes
 * first", whenever the operator writes a delivered Secret with a credential, the backup holds that credential already.
 */
import type { Invariant } from '../model';
import { PATHS, unbase64 } from '../objects';
import { ledgerOf, type KnownOrder } from './ledger';

const OPERATOR = 'keystone-appcred-operator';

export const backupHoldsDelivered: Invariant = {
  name: 'backup-holds-delivered',
  description: 'the backup holds the delivered credential once a pass succeeds (and before the Secret carries it)',
  watch(world, report) {
    const ledger = ledgerOf(world);
    // The order's own path; after the upgrade from 0.1.0 and until the order's migration, the path 0.1.0 wrote.
    const backedUp = (order: KnownOrder) => ledger.backedUp(order);
    world.hooks.line.push((line) => {
      if (line.msg !== 'reconcile' || line.controller !== 'KeystoneApplicationCredential' || (line.result !== 'success' && line.result !== 'requeue') || line.reason !== 'Reconciled') return;
      const order = ledger.orders.get(String(line.key));
      const carried = order && ledger.carrying.get(order.key);
      // A tenant whose Secrets the operator may not write (the namespaced mode, its Role taken away) keeps the Secret it had:
      // the backup, written first, may lead it until the Role is back (refused-costs-nothing judges those passes).
      if (!order || !carried || order.deletingSince !== undefined || order.gone || world.secretsRefused.has(order.tenant)) return;
      const held = backedUp(order);
      if (held !== carried.id) report(`${order.key}: a pass succeeded and its backup holds ${held ?? 'nothing'} while the delivered Secret carries ${carried.id}`);
    });
    world.hooks.change.push((change) => {
      if (change.collection !== PATHS.secrets || change.fieldManager !== OPERATOR || !change.object.metadata.name.endsWith('-credentials') || change.type === 'DELETED') return;
      const data = change.object.data as Record<string, string> | undefined;
      const id = data?.application_credential_id ? unbase64(data.application_credential_id) : undefined;
      const before = (change.old?.data as Record<string, string> | undefined)?.application_credential_id;
      if (!id || (before !== undefined && unbase64(before) === id)) return;
      const order = ledger.orders.get(`${change.object.metadata.namespace ?? ''}/${change.object.metadata.name.slice(0, -'-credentials'.length)}`);
      if (order && backedUp(order) !== id) report(`${order.key}: the operator delivered ${id} while the backup holds ${backedUp(order) ?? 'nothing'} (the backup comes first)`);
    });
    return {};
  },
};
