/**
 * The backup's move from the path keystone-appcred 0.1.0 wrote to the order's own (issue 41). 0.1.0 backed every order up
 * at the spec's backing path, `openstack/keystone/<controlplane namespace>/<prefix>/service-accounts/application-credential`;
 * since 0.2.0 the path carries the order's owner id after the prefix (src/api/naming.ts `backingPath`), because two
 * installations ordering the same names share the spec's path. After an upgrade:
 *
 * - the order's own path gets the delivered document at the order's first pass, without Keystone: the delivered
 *   generation's parked secret and the recorded credential id are all it takes (an OpenBao write);
 * - a document at the former path is removed once it is proven the order's own: its credential id is one the order
 *   records (`status.credentialID`, `status.previousCredentialID`) or one of its own generations Keystone holds
 *   (ownership.ts), and only once the own path holds the delivered document (the backup comes first, always);
 * - a document there whose id the order cannot account for is another installation's (two clusters sharing one
 *   OpenBao both wrote that path under 0.1.0) or a leftover nobody can vouch for: it is left alone and reported.
 *
 * Teardown removes the former path's document too when it is the order's own, so an order deleted after the upgrade
 * leaves both paths empty. These rules are pure; the runner and the drivers only read the two paths and run the actions.
 *
 * A face that meets its orders again and again (the operator, at every start) records that the migration is done
 * (`status.backupPath`, issue 46): the pass that looked at both paths and leaves the own one holding the delivered
 * document and the former one nothing of the order's records the own path, and a process that meets the order with
 * that record reads neither path for it. The record is only ever a reason to look at less: a status that lost it (a
 * lost write, a restore without status) or names another path (a restored order has a new uid, so a new own path) looks
 * at both paths again, and the migration deletes nothing but the former path's document of the order's own, and that
 * only once the own path holds the delivered document.
 */
import type { KeystoneApplicationCredentialStatus } from '../api';
import type { Action, BackupObservation } from './model';

type Status = KeystoneApplicationCredentialStatus;

/** What the document at the former path is to the order. */
export type FormerBackup =
  /** Nothing is there (or the face does not look: same path, no backup). */
  | { readonly state: 'empty' }
  /** It cannot be read this pass: whether it is the order's is unknown. */
  | { readonly state: 'unknown'; readonly error: string }
  /** Its credential id is one the order records or owns: the order's own, to be removed once the own path holds the document. */
  | { readonly state: 'own'; readonly credentialId: string }
  /** Its credential id is none the order records or owns: left alone, reported. */
  | { readonly state: 'foreign'; readonly credentialId: string };

/** The ids an order can account for: those its status records and those of its own generations Keystone holds. */
export function accountedIds(status: Status, ownCredentialIds: readonly string[] = []): ReadonlySet<string> {
  return new Set([status.credentialID, status.previousCredentialID, ...ownCredentialIds].filter((id): id is string => id !== undefined && id !== ''));
}

/** Sorts the document at the former path by the ids the order can account for. */
export function formerBackup(observed: BackupObservation | undefined, accounted: ReadonlySet<string>): FormerBackup {
  if (observed === undefined) return { state: 'empty' };
  if (observed.error !== undefined) return { state: 'unknown', error: observed.error };
  const id = observed.credentialId;
  if (id === undefined) return { state: 'empty' };
  return accounted.has(id) ? { state: 'own', credentialId: id } : { state: 'foreign', credentialId: id };
}

/** What the migration needs to know of an order and its two paths. */
export interface MigrationInput {
  /** The status as the pass holds it (recorded, or rebuilt from what it observed). */
  readonly status: Status;
  /** Whether the delivered generation's secret is parked (the document can be rendered without Keystone). */
  readonly deliveredParked: boolean;
  /** The own path; absent: no backup configured (then there is nothing to migrate). */
  readonly backup?: BackupObservation;
  /** The former path; absent: not looked at this pass. */
  readonly former?: BackupObservation;
  /** Ids of the order's own generations Keystone holds this pass, when it was listed. @default none */
  readonly ownCredentialIds?: readonly string[];
  /** The pass already writes the own path with the delivered document (a switch or a repair). @default false */
  readonly writesBackup?: boolean;
  /** Whether the own path may be written at all (false while no document can be rendered where the order lives). @default true */
  readonly deliverable?: boolean;
}

/** The migration's actions (OpenBao only, never Keystone) and the verdict on the former path's document. */
export interface Migration {
  readonly actions: readonly Action[];
  readonly former: FormerBackup;
  /**
   * Done once the actions ran: both paths were looked at, the own one holds the delivered document and the former one
   * holds nothing of the order's (empty, removed, or another's, left alone).
   */
  readonly done: boolean;
}

const WHY_WRITE = 'the own backup path does not hold the delivered document';
const WHY_REMOVE = 'the path keystone-appcred 0.1.0 backed up to holds a document of this order; the own path holds it now';

/**
 * The actions that put the delivered document at the own path and clear the order's document from the former path:
 * the own path is written when it does not hold the delivered credential (and the pass does not write it anyway), then
 * the former path's document is removed when it is the order's own. Nothing while the own path cannot be read, nothing
 * while no credential is delivered.
 */
export function migration(input: MigrationInput): Migration {
  const former = formerBackup(input.former, accountedIds(input.status, input.ownCredentialIds));
  const backup = input.backup;
  const id = input.status.credentialID;
  const generation = input.status.credentialGeneration;
  if (backup === undefined || backup.error !== undefined || id === undefined || generation === undefined) return { actions: [], former, done: false };
  const actions: Action[] = [];
  let holds = backup.credentialId === id || input.writesBackup === true;
  if (!holds && input.deliveredParked && input.deliverable !== false) {
    actions.push({ type: 'backup', generation, credentialId: id, why: WHY_WRITE });
    holds = true;
  }
  if (holds && former.state === 'own') actions.push({ type: 'remove-former-backup', credentialId: former.credentialId, why: WHY_REMOVE });
  return { actions, former, done: holds && input.former !== undefined && former.state !== 'unknown' };
}

/**
 * The status with the migration's record: `status.backupPath` is `path` (the own path, when the face records one) once
 * the migration is done, and stays as recorded otherwise (see the module comment).
 */
export function recordMigration(status: Status, path: string | undefined, done: boolean): Status {
  return path !== undefined && done && status.backupPath !== path ? { ...status, backupPath: path } : status;
}

/**
 * Whether a pass may leave the order's own backup path unread once it knows the order cannot act (not admitted, or
 * gated: waiting for its admin credential, its user, its project): such a pass neither switches nor repairs (decide.ts,
 * step.ts), so only the migration could ask for the backup, and the status records the migration done at that path.
 * A restart during a Keystone outage then costs a converged order no OpenBao read (issue 46.1). Teardown reads it always.
 */
export function backupIdleWhileStopped(order: { readonly status: Status; readonly backupPath?: string; readonly deleting?: boolean }): boolean {
  return order.deleting !== true && order.backupPath !== undefined && order.status.backupPath === order.backupPath;
}

/**
 * Teardown's part: the former path's document goes with the order when it is the order's own; while it cannot be read,
 * the teardown waits (`hold`), as it waits for a Keystone it cannot list.
 */
export function formerTeardown(status: Status, former: BackupObservation | undefined, ownCredentialIds: readonly string[]): { readonly actions: readonly Action[]; readonly hold: boolean; readonly former: FormerBackup } {
  const verdict = formerBackup(former, accountedIds(status, ownCredentialIds));
  if (verdict.state === 'unknown') return { actions: [], hold: true, former: verdict };
  const actions: Action[] = verdict.state === 'own' ? [{ type: 'remove-former-backup', credentialId: verdict.credentialId, why: 'teardown' }] : [];
  return { actions, hold: false, former: verdict };
}
