/**
 * `spec.deletionPolicy` (issue 49, not the reference's; External Secrets' `deletionPolicy`): what deleting an order does
 * to the credential its delivered Secret carries. `Delete`, the default, is the reference's Deletion Semantics: every
 * credential, the backup, the parked secrets and the delivered Secret go. `Retain` keeps the delivered credential in
 * Keystone, the delivered Secret (its owner reference removed, so the garbage collector leaves it) and the backup
 * holding it, and deletes only what is superseded and the order's other children (src/lifecycle/teardown.ts), so an
 * order pruned by Argo CD or Flux by mistake does not revoke the credential production runs on.
 */
import type { FieldBound } from './field-rules';

/** The deletion policies. */
export const DeletionPolicy = {
  /** The reference's teardown: everything the order holds is deleted. */
  Delete: 'Delete',
  /** The delivered credential, its Secret and its backup stay; what is superseded and the other children go. */
  Retain: 'Retain',
} as const;
export type DeletionPolicy = (typeof DeletionPolicy)[keyof typeof DeletionPolicy];

/** The policies, for the schema's enum. */
export const DELETION_POLICIES: readonly DeletionPolicy[] = [DeletionPolicy.Delete, DeletionPolicy.Retain];

/** The policy of an order that names none. */
export const DEFAULT_DELETION_POLICY: DeletionPolicy = DeletionPolicy.Delete;

/** The schema bound of `spec.deletionPolicy`. */
export const DELETION_POLICY_BOUNDS: readonly FieldBound[] = [{ path: 'spec.deletionPolicy', type: 'string', enum: DELETION_POLICIES }];
