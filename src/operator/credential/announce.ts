/**
 * What a credential pass announces, the last step of a pass (read → gates → ports → lifecycle → announce): the Events of
 * the lifecycle's moments (spec, Observability: Minted, Switched, Swept, CredentialFailed, TornDown), a repaired
 * Secret, a foreign document at the backup path keystone-appcred 0.1.0 wrote, and what issue 49's delivery options did
 * (delivery-options.ts). Pure: each function says which Events a moment makes, from the table of every Event reason
 * (src/api/events.ts); the reconciler records them. Never a secret in a note.
 */
import { EventReason, eventOf, secretName, type KeystoneApplicationCredential } from '../../api';
import type { FormerBackup } from '../../lifecycle/migration';
import { shownCredentialId } from '../../lifecycle/ownership';
import type { ActionEvent } from '../../lifecycle/runner';
import { deliveryOptionEvent, type CredentialEvent, type RetainContext } from './delivery-options';

/**
 * The Events of one lifecycle action, in the order they are recorded. `replacing`: the pass found a delivered Secret,
 * so a delivery that switches replaces a credential (observed, not taken from the status, which a restored cluster
 * does not have). A failed action records none (the conditions say what is wrong).
 */
export function actionEvents(order: KeystoneApplicationCredential, e: ActionEvent, replacing: boolean, context: RetainContext): CredentialEvent[] {
  const a = e.action;
  if (e.outcome === 'failed') return [];
  const option = deliveryOptionEvent(order, e, context);
  if (option) return [option];
  const events: CredentialEvent[] = [];
  const cluster = context.cluster;
  if (a.type === 'deliver' && a.unowned !== undefined) {
    // A tenant may edit the delivered Secret: an id that is none of the order's was never counted (src/lifecycle/observe.ts).
    const secret = `${order.metadata.namespace ?? ''}/${secretName(order.metadata.name)}${cluster ? ` on cluster ${cluster}` : ''}`;
    const note = `the delivered Secret ${secret} named application credential ${shownCredentialId(a.unowned)}, which is not this order's; rewritten with generation ${a.generation}, and nothing was recorded, adopted or deleted for that id`;
    events.push(eventOf(EventReason.SecretRepaired, note));
  }
  if (a.type === 'mint' && e.outcome === 'done') events.push(eventOf(EventReason.Minted, `created generation ${a.generation} in Keystone (${a.why})`));
  else if (a.type === 'mint' && e.outcome === 'refused') events.push(eventOf(EventReason.CredentialFailed, `Keystone refused generation ${a.generation}`));
  // A first delivery is no switch (nothing was delivered before): the Minted Event says it, one API write fewer.
  else if (a.type === 'deliver' && a.why === 'switch' && replacing) events.push(eventOf(EventReason.Switched, `the delivered Secret carries generation ${a.generation}`));
  else if (a.type === 'delete' && order.metadata.deletionTimestamp === undefined) events.push(eventOf(EventReason.Swept, `deleted generation ${a.generation} in Keystone (${a.why})`));
  return events;
}

/** The Event of a finished teardown. */
export function tornDownEvent(): CredentialEvent {
  return eventOf(EventReason.TornDown, 'every credential, the backup, the parked secrets and the delivered Secret are gone');
}

/**
 * The Event of the path keystone-appcred 0.1.0 wrote, once it was looked at: a document there the order cannot account
 * for is left alone and reported with a Warning naming the path's credential (once per process: `reported`).
 */
export function formerBackupEvent(former: FormerBackup | undefined, reported: boolean): CredentialEvent | undefined {
  if (reported || former?.state !== 'foreign') return undefined;
  const note =
    `the backup path keystone-appcred 0.1.0 wrote for this order (without its uid) holds credential ${former.credentialId}, which this order does not record: ` +
    'left alone (another installation sharing this OpenBao may have written it); remove it with bao kv metadata delete once you know whose it is';
  return eventOf(EventReason.ForeignBackup, note);
}
