/**
 * Names the spec fixes: the delivered Secret, its keys and labels, the per-order prefix of the children, the backing
 * path in OpenBao, and the deterministic Keystone name of each credential generation (spec, Delivered Secret contract and
 * Projected child names).
 */
import { createHash } from 'node:crypto';

/** The delivered Secret's data keys, in the order `status.secretKeys` reports them. */
export const SECRET_KEYS = ['clouds.yaml', 'application_credential_id', 'application_credential_secret'] as const;
export type SecretKey = (typeof SECRET_KEYS)[number];

/** A DNS subdomain (RFC 1123), what Kubernetes requires of most object names; the 253-character bound is the schema's. */
export const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/**
 * The annotation that asks an order to revoke now (issue 49): a new value (any text: a time, a ticket) rotates at once
 * and deletes the superseded credential as soon as its successor is delivered and backed up, skipping the grace period.
 * The order records the value it acted on in `status.lastRevokeRequest`, so each value fires once.
 */
export const REVOKE_PREVIOUS_ANNOTATION = 'c5c3.io/revoke-previous';

/** The longest request `status.lastRevokeRequest` records as written; a longer one is recorded by its digest. */
export const REVOKE_REQUEST_MAX_LENGTH = 253;

/**
 * The revoke request a value makes (the annotation's, the Pulumi input's): the value without blanks around it, or by its
 * digest (`sha256:` and 32 hex digits) when it is longer than {@link REVOKE_REQUEST_MAX_LENGTH}; none for a value that
 * is empty or only blanks.
 */
export function revokeRequestOf(value: string | undefined): string | undefined {
  const request = value?.trim();
  if (!request) return undefined;
  return request.length <= REVOKE_REQUEST_MAX_LENGTH ? request : `sha256:${createHash('sha256').update(request).digest('hex').slice(0, 32)}`;
}

/** Labels every child and the delivered Secret carry. */
export const Labels = {
  name: 'c5c3.io/keystoneapplicationcredential-name',
  namespace: 'c5c3.io/keystoneapplicationcredential-namespace',
  /** Empty for the management cluster; children only. */
  cluster: 'c5c3.io/keystoneapplicationcredential-cluster',
} as const;

/** Where an order lives: the cluster (empty for the management cluster), its namespace and name. */
export interface OrderLocation {
  readonly cluster?: string;
  readonly namespace: string;
  readonly name: string;
}

/** `<metadata.name>-credentials`: the Secret beside the order. */
export function secretName(orderName: string): string {
  return `${orderName}-credentials`;
}

/** The 8 hex digits of sha256(`<cluster>/<namespace>/<name>`), as for every order kind. */
export function orderHash(location: OrderLocation): string {
  // Joined, not concatenated: a flat string, as it is kept as a key (a template's rope of three is larger).
  const input = [location.cluster ?? '', location.namespace, location.name].join('/');
  let hash = hashes.get(input);
  if (hash === undefined) {
    hash = formerHashes.get(input) ?? createHash('sha256').update(input).digest('hex').slice(0, 8);
    if (hashes.size >= HASHES_KEPT) [formerHashes, hashes] = [hashes, new Map()];
    hashes.set(input, hash);
  }
  return hash;
}

/**
 * Hashes computed, by input: every pass of every order names its children, and a sha256 each time showed in a resync.
 * Two generations, the former read through (a hit moves to the current one): the orders that exist stay served however
 * the cache turns over, and orders deleted long ago fall out with the former generation. A single map emptied at its
 * bound hashed anew on nearly every pass once the objects outnumbered it (20,000 orders and their 2,000 users and role
 * assignments named 24,000 inputs against a bound of 20,000): at most 2 × {@link HASHES_KEPT} inputs are kept.
 */
let hashes = new Map<string, string>();
let formerHashes = new Map<string, string>();
const HASHES_KEPT = 32_768;

/** `<metadata.name>-<8 hex>-applicationcredential`: the prefix of every child name. */
export function childPrefix(location: OrderLocation): string {
  return `${location.name}-${orderHash(location)}-applicationcredential`;
}

/** The child discriminators of the spec's Projected child names. */
export type Discriminator = 'mint-cloud' | 'source' | 'backup' | `secret-v${number}` | `credential-v${number}`;

/** `<prefix>-<discriminator>`. */
export function childName(prefix: string, discriminator: Discriminator): string {
  return `${prefix}-${discriminator}`;
}

/**
 * The Keystone name of credential generation N: the name of its `credential-v<N>` child. Deterministic, so a credential
 * that exists in Keystone can always be matched to its generation, also after a crash between create and record.
 */
export function credentialName(prefix: string, generation: number): string {
  return childName(prefix, `credential-v${generation}`);
}

/**
 * The name generation N takes when its deterministic name is held by a credential the order did not mint (another
 * installation orders the same names for the same Keystone user, which keeps one name per user):
 * `<prefix>-credential-v<N>-<8 hex>`, the hex a digest of the order's owner id, so two installations never meet on it.
 */
export function alternateCredentialName(prefix: string, generation: number, owner: string): string {
  return `${credentialName(prefix, generation)}-${createHash('sha256').update(owner).digest('hex').slice(0, 8)}`;
}

/** What follows `<prefix>-credential-v` in a credential name: the generation, and the alternate name's 8-hex suffix. */
const GENERATION_TAIL = '([1-9]\\d*)(?:-[0-9a-f]{8})?';

/** The tail alone, as {@link generationOf} matches it. */
const TAIL = new RegExp(`^${GENERATION_TAIL}$`);

/** A credential name of any order: `<name>-<8 hex>-applicationcredential-credential-v<N>`, or its alternate. */
const ANY_CREDENTIAL_NAME = new RegExp(`-[0-9a-f]{8}-applicationcredential-credential-v${GENERATION_TAIL}$`);

/**
 * The generation a Keystone credential name of this prefix denotes (its deterministic name, or the alternate one with
 * an 8-hex suffix), or undefined for any other name. A name says which generation a credential would be, never whose
 * it is: src/lifecycle/ownership.ts decides that.
 */
export function generationOf(prefix: string, name: string): number | undefined {
  const head = `${prefix}-credential-v`;
  if (!name.startsWith(head)) return undefined;
  const match = TAIL.exec(name.slice(head.length));
  return match ? Number(match[1]) : undefined;
}

/**
 * Whether a Keystone credential name is an order's credential name ({@link credentialName}, {@link alternateCredentialName}),
 * whatever the order's prefix: an order of some installation, of any face and any release, minted it. Not whose it is
 * (src/lifecycle/ownership.ts decides that for the order's own names); what an adoption refuses (src/lifecycle/adoption.ts).
 */
export function isCredentialName(name: string): boolean {
  return ANY_CREDENTIAL_NAME.test(name);
}

/**
 * The backing path in OpenBao:
 * `openstack/keystone/<controlplane namespace>/<prefix>/<owner>/service-accounts/application-credential`, the spec's
 * path with the order's owner id (its `metadata.uid`) as one more segment after the prefix. The first segment is the KV v2 mount.
 * The owner segment makes the path as unique as the credential it holds: two clusters whose orders share a
 * ControlPlane namespace, order namespace and name (so a prefix) and one OpenBao never write the same path. Without an
 * owner (a face that has none) the path is the spec's.
 */
export function backingPath(controlPlaneNamespace: string, prefix: string, owner?: string): string {
  return `openstack/keystone/${controlPlaneNamespace}/${prefix}${owner ? `/${owner}` : ''}/service-accounts/application-credential`;
}
