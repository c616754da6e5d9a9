/**
 * What the Pulumi face says of the credentials under a resource's names that it did not mint: one of them may be the
 * leftover of this stack's own create, when `pulumi` was killed after Keystone created the credential and before the
 * engine saved the state (docs/concepts/lifecycle.md, Crash-safety). The engine keeps that create as a pending operation, with
 * the inputs it recorded before it called Create, the owner id `check` drew among them (`pulumi stack export` shows it),
 * and warns of it on every later `up`; no later call of the provider ever gets those inputs (not `up`, which creates
 * the resource anew with a new owner, nor `pulumi refresh --import-pending-creates`, which drops the pending create
 * without a read in Pulumi 3.276). So the provider cannot tell the leftover from another stack's credential under the
 * same names; it reports each with its owner and the exact commands that remove it, and the owner in the pending
 * create says which one is the leftover.
 */
import { backingPath } from '../api';
import type { ForeignCredential } from '../lifecycle';

/** The backup a leftover of `owner` may have written: at the default path, which names the owner. */
export interface LeftoverBackup {
  readonly mount: string;
  /** The resource's explicit `backup.path`; absent: the default path of each owner. */
  readonly path?: string;
}

/** The commands that remove the leftover of owner `f.owner`: its credential, the backup it wrote, the pending create. */
function removal(f: ForeignCredential, prefix: string, backup: LeftoverBackup | undefined): string {
  const steps = [`\`openstack application credential delete ${f.id}\``];
  if (backup !== undefined) {
    const path = backup.path ?? backingPath('pulumi', prefix, f.owner).split('/').slice(1).join('/');
    steps.push(`\`bao kv metadata delete -mount=${backup.mount} ${path}\` (if that path's metadata names owner ${f.owner as string})`);
  }
  return `owner ${f.owner as string}: ${steps.join(', then ')}`;
}

/**
 * The note that tells the leftover of an interrupted create apart and removes it; undefined when no foreign credential
 * carries an owner (a leftover always does).
 */
export function leftoverNote(foreign: readonly ForeignCredential[], prefix: string, backup: LeftoverBackup | undefined): string | undefined {
  const marked = foreign.filter((f) => f.owner !== undefined);
  if (marked.length === 0) return undefined;
  return (
    'a `pulumi up` killed after Keystone created a credential leaves one like this behind: Pulumi then warns on every `up` of a pending create of this ' +
    "resource, and that pending create's `owner` input (`pulumi stack export | grep '\"owner\"'`) is the leftover's owner. To remove the leftover of " +
    `${marked.map((f) => removal(f, prefix, backup)).join('; of ')}; then drop the pending create with \`pulumi refresh --clear-pending-creates --yes\`. ` +
    "A credential whose owner is no pending create's is another stack's: leave it"
  );
}
