/**
 * Names the spec fixes: the delivered Secret, its keys and labels, the per-order prefix of the children, the backing
 * path in OpenBao, and the deterministic Keystone name of each credential generation (spec, Delivered Secret contract and
 * Projected child names).
 */
import { createHash } from 'node:crypto';

/** The delivered Secret's data keys, in the order `status.secretKeys` reports them. */
export const SECRET_KEYS = ['clouds.yaml', 'application_credential_id', 'application_credential_secret'] as const;
export type SecretKey = (typeof SECRET_KEYS)[number];

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
  const input = `${location.cluster ?? ''}/${location.namespace}/${location.name}`;
  let hash = hashes.get(input);
  if (hash === undefined) {
    hash = createHash('sha256').update(input).digest('hex').slice(0, 8);
    if (hashes.size >= HASHES_KEPT) hashes.clear();
    hashes.set(input, hash);
  }
  return hash;
}

/** Hashes computed, by input: every pass of every order names its children, and a sha256 each time showed in a resync. */
const hashes = new Map<string, string>();
const HASHES_KEPT = 20_000;

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

/** The generation a Keystone credential name of this prefix denotes, or undefined for a foreign name. */
export function generationOf(prefix: string, name: string): number | undefined {
  const head = `${prefix}-credential-v`;
  if (!name.startsWith(head)) return undefined;
  const digits = name.slice(head.length);
  return /^[1-9]\d*$/.test(digits) ? Number(digits) : undefined;
}

/**
 * The backing path in OpenBao:
 * `openstack/keystone/<controlplane namespace>/<prefix>/service-accounts/application-credential`.
 * The first segment is the KV v2 mount.
 */
export function backingPath(controlPlaneNamespace: string, prefix: string): string {
  return `openstack/keystone/${controlPlaneNamespace}/${prefix}/service-accounts/application-credential`;
}
