/**
 * Every kind's definition by its name: the table {@link CustomResourceDefinition} reads a `Kind` from. The definitions
 * are internal data of the library (their schemas carry the rules of src/api); the public API names a kind by the
 * `Kind` enum only.
 */
import type { Kind, KindDefinition } from '../crd';
import { IDENTITY_PLANE } from './identity-plane';
import { KEYSTONE_APPLICATION_CREDENTIAL } from './keystone-application-credential';
import { KEYSTONE_CLUSTER_IDENTITY } from './keystone-cluster-identity';

/** Every kind of the project: the KeystoneApplicationCredential, its four neighbours and the KeystoneClusterIdentity. */
export const ALL_KINDS: readonly KindDefinition[] = [...IDENTITY_PLANE, KEYSTONE_APPLICATION_CREDENTIAL, KEYSTONE_CLUSTER_IDENTITY];

/** The definition of `kind`; throws for a name that is no kind of the project (a JavaScript caller's string). */
export function definitionOf(kind: Kind): KindDefinition {
  const found = ALL_KINDS.find((d) => d.kind === kind);
  if (!found) throw new Error(`kind (${JSON.stringify(kind)}) must be one of ${ALL_KINDS.map((d) => d.kind).join(', ')}`);
  return found;
}
