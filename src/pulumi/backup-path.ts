/**
 * An explicit `backup.path` that somebody else's backup holds. The default path names the resource's owner id
 * (`keystone/pulumi/<prefix>/<owner>/service-accounts/application-credential`), so two stacks of the same names in two
 * backends never meet on it; a path the program gives is used as given, and two stacks that give the same one would
 * read each other's document as their record (the lifecycle counts the backup's credential as the order's own) and
 * overwrite each other's backup. So a resource refuses a path whose document belongs to another owner: `pulumi preview`
 * and `pulumi up` fail naming the path and the fix before anything is created or written, and `pulumi destroy` leaves
 * that document alone. Who a document belongs to: the owner id its metadata names (written with every document since
 * this rule, `custom_metadata.owner`), or, for a document written before, whether its credential is one the state
 * records (docs/configure/pulumi.md, "OpenBao backup").
 */
import type { BackupPort } from '../lifecycle';

/** The backup as the Pulumi face reads it: the document's credential id, and the owner its metadata names. */
export interface OwnedBackup extends BackupPort {
  /** The owner id the path's metadata names, if any (OpenBao: `custom_metadata.owner`). Absent: never known. */
  readOwner?(): Promise<string | undefined>;
}

/** Who holds a path that is not this resource's: the owner its metadata names, or the credential of its document. */
export interface PathHolder {
  readonly owner?: string;
  readonly credentialId?: string;
}

/**
 * The holder of the backup's path when the path is not this resource's to use, else undefined (no document, or its
 * metadata names `owner`, or it carries no owner and holds a credential in `recorded`, the ids the state records).
 * `recorded` undefined: nothing is known of the state, so only an owner the metadata names is judged (a preview of an
 * existing resource whose inputs predate the owner).
 */
export async function foreignHolder(backup: OwnedBackup, owner: string, recorded: ReadonlySet<string> | undefined): Promise<PathHolder | undefined> {
  const holder = await backup.readOwner?.();
  if (holder !== undefined) return holder === owner ? undefined : { owner: holder };
  if (recorded === undefined) return undefined;
  const credentialId = await backup.read();
  if (credentialId === undefined || recorded.has(credentialId)) return undefined;
  return { credentialId };
}

/** What a refused path says: the path, whose document is there, why that is refused, and the two ways out. */
export function sharedPathMessage(where: { readonly mount: string; readonly path: string }, holder: PathHolder, owner: string): string {
  const whose = holder.owner !== undefined ? `the backup of owner ${holder.owner}` : `a document this resource did not write (credential ${holder.credentialId ?? 'unknown'})`;
  return (
    `backup.path ("${where.path}", mount "${where.mount}") holds ${whose}, not this resource's (owner ${owner}): two resources that share a backup path ` +
    "would read each other's document as their own record and overwrite each other's backup, so it is refused. Give this resource a backup.path of its " +
    'own, or leave backup.path unset: the default path, keystone/pulumi/<prefix>/<owner>/service-accounts/application-credential, names the owner' +
    (holder.owner === undefined
      ? ''
      : `. If ${holder.owner} is the owner of this stack's own interrupted create (Pulumi warns of a pending create of this resource; ` +
        `its \`owner\` input in \`pulumi stack export\`), the document is its leftover: remove it with \`bao kv metadata delete -mount=${where.mount} ${where.path}\``)
  );
}
