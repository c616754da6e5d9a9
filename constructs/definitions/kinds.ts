/**
 * Every kind's definition: the table {@link CustomResourceDefinition} (constructs/crd.ts) reads a `Kind` from. The
 * definitions are internal data of the library (their schemas carry the rules of src/api); the public API names a kind
 * by the `Kind` enum only.
 */
import type { KindDefinition } from './definition';
import { IDENTITY_PLANE } from './identity-plane';
import { KEYSTONE_APPLICATION_CREDENTIAL } from './keystone-application-credential';
import { KEYSTONE_CLUSTER_IDENTITY } from './keystone-cluster-identity';

/** Every kind of the project: the KeystoneApplicationCredential, its four neighbours and the KeystoneClusterIdentity. */
export const ALL_KINDS: readonly KindDefinition[] = [...IDENTITY_PLANE, KEYSTONE_APPLICATION_CREDENTIAL, KEYSTONE_CLUSTER_IDENTITY];
