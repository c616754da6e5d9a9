/**
 * Which Secrets the operator holds whole, and how it reads the rest (docs/concepts/caches.md).
 *
 * Whole, in the informer caches: the Secrets it writes, found by the labels it gives them: an order's `secret-v<N>`
 * children and delivered Secret (`c5c3.io/keystoneapplicationcredential-name`, the spec's "Projected child names" and
 * "Delivered Secret"), a KeystoneUser's password children and delivered Secret (`c5c3.io/keystoneuser-name`), an
 * identity's mirrors (`c5c3.io/mirrored`). Every other Secret of the cluster is cached as metadata only (name, labels,
 * owners, resourceVersion; no annotations): enough to see that a foreign Secret holds an order's delivered name, and
 * to requeue the order the moment it goes, without its data ever reaching the process.
 *
 * Read whole by name, from the API server, and kept while their metadata is unchanged: the Secrets a ControlPlane or a
 * KeystoneClusterIdentity references (admin `clouds.yaml`, CA bundle, an identity's source), a Secret an order
 * controls whose labels were taken off, and the Secret an order that holds no credential yet names to adopt one from
 * (`spec.adopt.secretRef`, issue 49: in the order's own namespace, on its cluster). A change of one shows in the metadata cache within the watch's latency, and
 * the next read fetches the new version.
 */
import type { KeystoneClusterIdentity } from '../api/cluster-identity';
import type { KeystoneApplicationCredential } from '../api/types';
import { MIRRORED_LABEL } from '../api/cluster-identity';
import type { ControlPlane } from '../api/identity-plane';
import { managementGrants, targetGrants } from '../api/secret-access';
import { GROUP } from '../api/types';
import type { ClusterReader } from '../kube/cluster';
import { Kinds, MetadataKinds } from '../kube/kinds';
import type { KubeObject, ResourceKind } from '../kube/object';
import { adminSecretNames } from '../plane/admin-credential';
import { labelKeys } from '../plane/naming';
import type { ObjectKey } from '../plane/ports';
import { MANAGEMENT, type ClusterScope } from './runtime/clusters';
import type { WatchSpec } from './runtime/controller';
import type { Manager } from './runtime/manager';
import type { MapFunction } from './runtime/mapper';
import type { NamespaceAccess, NamespaceShare } from './runtime/namespaces';
import { cacheByLabels, labelPartitions, withoutAnnotations } from './runtime/partition';

/** The label keys of the Secrets the operator writes: a Secret carrying one is cached whole. */
export const OWN_SECRET_LABELS: readonly string[] = [labelKeys('KeystoneApplicationCredential').name, labelKeys('KeystoneUser').name, MIRRORED_LABEL];

/**
 * Declares the operator's Secret caches: whole for its own Secrets (by label), metadata only for every other; with
 * `clusters: 'all'` on every engaged target cluster too (its delivered Secrets, and a foreign Secret of a delivered name).
 * The cluster-wide mode lists and watches every namespace at once; the namespaced mode
 * ({@link cacheSecretsByNamespace}) the same shares in each namespace that needs them, and nowhere else.
 */
export function cacheSecrets(manager: Manager, options: { readonly clusters?: ClusterScope } = {}): void {
  cacheByLabels(manager, Kinds.Secret, OWN_SECRET_LABELS, { others: 'metadata', ...options });
}

/**
 * The shares of a namespace where the operator reads and writes Secrets: the metadata of the Secrets it does not
 * write first (the broadest list: the probe whose refusal says the namespace is not granted), then its own Secrets whole
 * by label, as in the cluster-wide mode.
 */
export function secretNamespaceShares(): NamespaceShare[] {
  const partitions = labelPartitions(OWN_SECRET_LABELS);
  return [
    { kind: MetadataKinds.Secret, labelSelector: partitions.others.labelSelector, transform: withoutAnnotations },
    ...partitions.whole.map((selection) => ({ kind: Kinds.Secret as ResourceKind<KubeObject>, labelSelector: selection.labelSelector })),
  ];
}

/** The share of a Secret the operator only reads by name (a KeystoneClusterIdentity's source): its metadata, selected by name. */
export function sourceSecretShare(name: string): NamespaceShare {
  return { kind: MetadataKinds.Secret, fieldSelector: `metadata.name=${name}`, transform: withoutAnnotations };
}

/**
 * The namespaces whose Secrets the operator caches on `cluster` in the namespaced mode, each with its shares: on the
 * management cluster the ControlPlanes' namespaces, their assignments there, and the identities' sources (by name); on
 * a target cluster the namespaces the ControlPlanes assign on it (src/api/secret-access.ts).
 */
export function wantedSecretNamespaces(reads: ClusterReader, cluster: string): Map<string, NamespaceShare[]> {
  const controlPlanes = reads.list(Kinds.ControlPlane) as ControlPlane[];
  const grants = cluster === MANAGEMENT ? managementGrants(controlPlanes, reads.list(Kinds.KeystoneClusterIdentity) as KeystoneClusterIdentity[]) : targetGrants(controlPlanes, cluster);
  const wanted = new Map<string, NamespaceShare[]>();
  for (const namespace of grants.namespaces) wanted.set(namespace, secretNamespaceShares());
  for (const source of grants.sources) wanted.set(source.namespace, [...(wanted.get(source.namespace) ?? []), sourceSecretShare(source.name)]);
  return wanted;
}

/**
 * Declares the namespaced mode's Secret caches (issue 34): per namespace, only where {@link wantedSecretNamespaces}
 * says, on the management cluster and every target cluster, following the ControlPlanes and identities as they change.
 */
export function cacheSecretsByNamespace(manager: Manager, options: { readonly onAccess?: (cluster: string, namespace: string, access: NamespaceAccess) => void } = {}): void {
  manager.cacheByNamespace({
    kinds: [Kinds.Secret, MetadataKinds.Secret],
    clusters: 'all',
    dependsOn: [Kinds.ControlPlane, Kinds.KeystoneClusterIdentity],
    wanted: (cluster) => wantedSecretNamespaces(manager.cluster, cluster),
    ...(options.onAccess ? { onAccess: options.onAccess } : {}),
  });
}

/**
 * A watch of every Secret: of the whole cache and of the metadata cache, with one `map` (which reads the metadata
 * only: names, labels, owners).
 */
export function secretWatches(map: MapFunction, options: { readonly clusters?: ClusterScope } = {}): WatchSpec[] {
  return [
    { kind: Kinds.Secret, map, ...options },
    { kind: MetadataKinds.Secret, map, ...options },
  ];
}

/** Whether the Secret carries one of the operator's labels. */
export function carriesOwnLabel(secret: KubeObject): boolean {
  const labels = secret.metadata.labels;
  return labels !== undefined && OWN_SECRET_LABELS.some((key) => key in labels);
}

/** Whether an object of this project's group controls the Secret (an order's delivered Secret, labelled or not). */
export function controlledByOrder(secret: KubeObject): boolean {
  return (secret.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.apiVersion.startsWith(`${GROUP}/`));
}

/** Whether a ControlPlane (its admin `clouds.yaml` or CA bundle) or a KeystoneClusterIdentity (its source) names the Secret. */
export function isReferenced(reads: ClusterReader, key: ObjectKey): boolean {
  for (const controlPlane of reads.list(Kinds.ControlPlane, { namespace: key.namespace }) as ControlPlane[]) {
    const names = adminSecretNames(controlPlane);
    if (names.cloudCredentials === key.name || names.caBundle === key.name) return true;
  }
  return (reads.list(Kinds.KeystoneClusterIdentity) as KeystoneClusterIdentity[]).some((i) => i.spec.secretRef.namespace === key.namespace && i.spec.secretRef.name === key.name);
}

/**
 * Whether the operator reads the data of this Secret (known by its cached metadata). `references: false` on a target
 * cluster, which holds no ControlPlane or KeystoneClusterIdentity to reference one.
 */
export function readsWhole(reads: ClusterReader, secret: KubeObject, references = true): boolean {
  const key = { namespace: secret.metadata.namespace ?? '', name: secret.metadata.name };
  return carriesOwnLabel(secret) || controlledByOrder(secret) || namedForAdoption(reads, key) || (references && isReferenced(reads, key));
}

/**
 * Whether an order of the Secret's namespace that holds no credential yet names it in `spec.adopt.secretRef` (issue 49):
 * the one Secret of a tenant the operator reads the data of, and only until the order has adopted (or minted).
 */
export function namedForAdoption(reads: ClusterReader, key: ObjectKey): boolean {
  return (reads.list(Kinds.KeystoneApplicationCredential, { namespace: key.namespace }) as KeystoneApplicationCredential[]).some(
    (order) => order.spec.adopt?.secretRef.name === key.name && order.status?.credentialGeneration === undefined,
  );
}
