/**
 * The ports of one credential pass, wired from what it read and its gates' verdict (the third step of a pass: read →
 * gates → ports → lifecycle → announce): Keystone as the ordered user (or a port that says why the pass does not reach
 * it, or none to reach once the ControlPlane is gone in a teardown), the `secret-v<N>` children, the delivered Secret
 * and its template (issue 49), the backup at the order's own path and at the one keystone-appcred 0.1.0 wrote, and the
 * order as the lifecycle sees it; Keystone's and OpenBao's calls noted in the pass's reach (./reached.ts). No I/O: the
 * ports act when the lifecycle calls them.
 */
import { backingPath, resolveSpec, secretName, type KeystoneApplicationCredential } from '../../api';
import { deliveredData } from '../../keystone';
import type { LifecycleOrder } from '../../lifecycle/model';
import type { BackupPort, CredentialPort, Ports } from '../../lifecycle/ports';
import type { CredentialRead } from '../../plane/credential-reads';
import type { CredentialGates } from '../../plane/gates';
import type { ClusterPort } from '../../plane/ports';
import { ParkedSecrets } from './children';
import { DeliveredSecret } from './delivery';
import { adoptionOf, revokeRequestOfOrder, templateFields, templatePorts } from './delivery-options';
import type { PassReach } from './reached';
import { abandoned, unreachable, userKeystone, type UserKeystone } from './user-keystone';

/** The ports a pass reads through before it reaches Keystone or OpenBao: what the cache alone settles (settled.ts). */
export type CachedPorts = Pick<Ports, 'secrets' | 'delivery' | 'template' | 'secretMetadata' | 'render' | 'admission' | 'gate' | 'undeliverable'>;

/** What the ports are wired from. */
export interface PassInputs {
  readonly order: KeystoneApplicationCredential;
  readonly read: CredentialRead;
  readonly verdict: CredentialGates;
  /** The management cluster (the children) and the order's cluster (the delivered Secret, an adopted secret). */
  readonly management: ClusterPort;
  readonly orders: ClusterPort;
  /** How the pass reaches Keystone as the ordered user, over a connection the gates allow. */
  readonly asUser: UserKeystone;
  /** The backup at a backing path; absent: no backup is configured. */
  readonly backup?: (path: string) => BackupPort;
  /** Where the pass notes the dependencies its ports reach (./reached.ts). */
  readonly reach: PassReach;
}

/** The ports of a pass, and what the driver needs to know of them. */
export interface PassPorts {
  /** The order as the lifecycle sees it. */
  readonly order: LifecycleOrder;
  readonly cached: CachedPorts;
  /** Keystone as the pass reaches it. */
  readonly keystone: CredentialPort;
  /** The pass reaches Keystone as the ordered user (not a port that fails or holds nothing). */
  readonly reachesKeystone: boolean;
  readonly adoption?: Ports['adoption'];
  /** The backup at the order's own path, when a backup is configured. */
  readonly ownBackup?: BackupPort;
  /** The path keystone-appcred 0.1.0 wrote: looked at until the status records the migration done, and at teardown. */
  readonly formerBackup?: BackupPort;
  /** The status records the backup's migration to the own path done (src/lifecycle/migration.ts). */
  readonly migrated: boolean;
  /** The own backup's backing path, as a Retain teardown's Event names it. */
  readonly backupPath: string;
}

/** The ports of a pass over `inputs.order`; see the module comment. */
export function passPorts(inputs: PassInputs): PassPorts {
  const { order, read, verdict, management, orders, reach } = inputs;
  const deleting = order.metadata.deletionTimestamp !== undefined;
  const { location, prefix } = read.reads;
  const cpNamespace = read.reads.controlPlane.namespace;
  // Keystone as the ordered user, abandoned once the ControlPlane is gone in a teardown.
  const connection = verdict.releasable ? undefined : verdict.connection;
  const asUser = connection ? reach.keystone(connection.authUrl, (onAnswer) => userKeystone(inputs.asUser, connection, prefix, onAnswer)) : undefined;
  const keystone = verdict.releasable ? abandoned() : (asUser ?? unreachable(verdict.unreachable ?? 'Keystone is not reachable'));
  const before = order.status ?? {};
  // The order's uid is its owner id: every credential it mints carries it, and its backup path names it, so another
  // cluster ordering the same names for the same Keystone user never has its credentials or its backup taken
  // (src/lifecycle/ownership.ts).
  const owner = order.metadata.uid;
  // The path 0.1.0 backed up to (the spec's, without the uid): looked at once per process and order until the status
  // records the backup's migration done at the own path (src/lifecycle/migration.ts), and at teardown. Every call
  // either makes that OpenBao does not answer makes the order wait on OpenBao (dependencies.ts).
  const backup = inputs.backup;
  const backupAt = backup ? (path: string) => reach.openBao(backup(path)) : undefined;
  const backupPath = backingPath(cpNamespace, prefix, owner);
  const ownPath = backupAt && owner ? backupPath : undefined;
  const ownBackup = backupAt?.(backupPath);
  const migrated = ownPath !== undefined && before.backupPath === ownPath;
  const formerBackup = backupAt && owner && (deleting || !migrated) ? backupAt(backingPath(cpNamespace, prefix)) : undefined;
  // Issue 49: the template's keys, labels and annotations, and a revoke request (delivery-options.ts).
  const { controlPlane, user, project } = read;
  const shapes = templatePorts(order, templateFields({ ...(controlPlane ? { controlPlane } : {}), ...(user ? { user } : {}), ...(project ? { project } : {}), ...(verdict.document ? { document: verdict.document } : {}) }));
  const revokeRequest = revokeRequestOfOrder(order);
  const { admission, gate, undeliverable } = verdict;
  const adoption = adoptionOf(orders, order);
  return {
    order: {
      prefix,
      ...(owner ? { owner } : {}),
      generation: order.metadata.generation ?? 1,
      spec: resolveSpec(order.spec),
      status: before,
      deleting,
      secretName: secretName(order.metadata.name),
      ...(ownPath !== undefined ? { backupPath: ownPath } : {}),
      secretKeys: shapes.secretKeys,
      ...(revokeRequest !== undefined ? { revokeRequest } : {}),
    },
    cached: {
      secrets: new ParkedSecrets(management, cpNamespace, prefix, location),
      delivery: new DeliveredSecret(orders, order, shapes.secretMetadata),
      template: shapes.template,
      secretMetadata: shapes.secretMetadata,
      // The auth URL is the one published for the order's cluster (spec, Delivered Secret contract), and the region: the
      // document as every release delivered it (the endpoint interface is the template's, not the reference's). With the
      // ControlPlane gone (teardown only) or no endpoint published (nothing is delivered then) no document can be rendered.
      render: (credentialId: string, secret: string) =>
        verdict.document
          ? deliveredData({ authUrl: verdict.document.authUrl, regionName: verdict.document.regionName }, credentialId, secret)
          : { 'clouds.yaml': '', application_credential_id: credentialId, application_credential_secret: secret },
      admission: async () => (deleting ? undefined : admission),
      gate: async () => (deleting ? undefined : gate),
      undeliverable: async () => (deleting ? undefined : undeliverable),
    },
    keystone,
    reachesKeystone: asUser !== undefined,
    ...(adoption ? { adoption } : {}),
    ...(ownBackup ? { ownBackup } : {}),
    ...(formerBackup ? { formerBackup } : {}),
    migrated,
    backupPath,
  };
}
