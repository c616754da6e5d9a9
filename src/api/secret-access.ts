/**
 * Where the operator needs Secrets, read from the objects that say so (issue 34): the shared rule of the constructs (which
 * Roles to synthesize), the `manifests` command (which namespaces it was given) and the operator (which namespaces to
 * watch). Written once, here, where neither cdk8s nor the runtime is loaded.
 *
 * Two modes. `cluster-wide` (the default): one ClusterRole rule grants Secrets in every namespace, as before.
 * `namespaced`: no cluster-scoped rule on Secrets at all; a Role and RoleBinding in each namespace that needs them:
 *
 * - the namespace of each ControlPlane (its admin `clouds.yaml` and CA bundle, the children of every order, the mirror
 *   of a KeystoneClusterIdentity it uses);
 * - each namespace a ControlPlane's `namespaceAssignments` consent to on that cluster (the delivered Secrets of its
 *   KeystoneUsers and KeystoneApplicationCredentials; on a target cluster, the target cluster's Roles);
 * - the source Secret of each KeystoneClusterIdentity, read only, by name (a Role restricted to that one Secret, so a
 *   source kept in a shared namespace opens nothing else there);
 * - for the constructs, also each namespace an identity's `allowedNamespaces.list` names (a ControlPlane there will
 *   write its mirror there);
 * - the operator's own namespace keeps its registration Role (the target clusters' kubeconfig Secrets) in both modes.
 *
 * Consent (an assignment) and the grant (the Role) stay two acts: the operator never grants itself anything.
 */

/** How the operator is granted Secrets. */
export const SecretAccessMode = {
  /** One cluster-scoped rule on Secrets in every namespace (the default). */
  ClusterWide: 'cluster-wide',
  /** A Role and RoleBinding per namespace that needs Secrets; no cluster-scoped rule on Secrets. */
  Namespaced: 'namespaced',
} as const;
export type SecretAccessMode = (typeof SecretAccessMode)[keyof typeof SecretAccessMode];

/** The modes, for validation and help texts. */
export const SECRET_ACCESS_MODES: readonly SecretAccessMode[] = [SecretAccessMode.ClusterWide, SecretAccessMode.Namespaced];

/** The name of the Role and RoleBinding that grant the operator `name` its Secrets in a namespace. */
export function secretRoleName(operatorName: string): string {
  return `${operatorName}-secrets`;
}

/** The name of the Role and RoleBinding that grant the operator `name` one source Secret it only reads. */
export function sourceRoleName(operatorName: string, secretName: string): string {
  return `${operatorName}-source-${secretName}`;
}

/** The Role name the operator names in its conditions when none is configured: that of the construct's default name. */
export const DEFAULT_SECRET_ROLE = secretRoleName('keystone-appcred-operator');

/** One Secret, by namespace and name. */
export interface SecretRef {
  readonly namespace: string;
  readonly name: string;
}

/** What the operator is granted on one cluster in the namespaced mode. */
export interface SecretGrants {
  /** Namespaces where it reads and writes Secrets; sorted, each once. */
  readonly namespaces: readonly string[];
  /** Single Secrets it only reads, in namespaces not among `namespaces`; sorted, each once. */
  readonly sources: readonly SecretRef[];
}

/** What of a ControlPlane the grants read. */
export interface ControlPlaneGrantInput {
  readonly metadata: { readonly namespace?: string };
  readonly spec: { readonly namespaceAssignments?: readonly { readonly namespace: string; readonly targetClusterRef?: { readonly name: string } }[] };
}

/** What of a KeystoneClusterIdentity the grants read. */
export interface IdentityGrantInput {
  readonly spec: { readonly secretRef: SecretRef; readonly allowedNamespaces?: { readonly list?: readonly string[] } };
}

/**
 * The grants on the management cluster: the ControlPlanes' namespaces, their assignments on the management cluster,
 * the identities' sources (read only, unless their namespace is granted anyway) and, with `allowedLists`, the namespaces
 * the identities' `allowedNamespaces.list` name (the constructs grant those ahead; the operator watches only where a
 * ControlPlane is).
 */
export function managementGrants(
  controlPlanes: readonly ControlPlaneGrantInput[],
  identities: readonly IdentityGrantInput[],
  options: { readonly allowedLists?: boolean; readonly extra?: Partial<SecretGrants> } = {},
): SecretGrants {
  const namespaces = new Set<string>(options.extra?.namespaces ?? []);
  for (const cp of controlPlanes) {
    if (cp.metadata.namespace) namespaces.add(cp.metadata.namespace);
    for (const a of cp.spec.namespaceAssignments ?? []) if (!a.targetClusterRef?.name) namespaces.add(a.namespace);
  }
  if (options.allowedLists) for (const identity of identities) for (const ns of identity.spec.allowedNamespaces?.list ?? []) namespaces.add(ns);
  const sources = [...(options.extra?.sources ?? []), ...identities.map((i) => i.spec.secretRef)];
  return normalized([...namespaces], sources);
}

/** The namespaces the ControlPlanes assign on the target cluster `cluster` (with `extra`): where its Roles go. */
export function targetGrants(controlPlanes: readonly ControlPlaneGrantInput[], cluster: string, extra: readonly string[] = []): SecretGrants {
  const namespaces = new Set(extra);
  for (const cp of controlPlanes) for (const a of cp.spec.namespaceAssignments ?? []) if (a.targetClusterRef?.name === cluster) namespaces.add(a.namespace);
  return normalized([...namespaces], []);
}

/** Sorted and unique; a source in a granted namespace is covered by that namespace's Role. */
function normalized(namespaces: readonly string[], sources: readonly SecretRef[]): SecretGrants {
  const granted = [...new Set(namespaces)].sort();
  const set = new Set(granted);
  const seen = new Set<string>();
  const kept: SecretRef[] = [];
  for (const s of [...sources].sort((a, b) => (a.namespace === b.namespace ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.namespace < b.namespace ? -1 : 1))) {
    const key = `${s.namespace}/${s.name}`;
    if (set.has(s.namespace) || seen.has(key)) continue;
    seen.add(key);
    kept.push({ namespace: s.namespace, name: s.name });
  }
  return { namespaces: granted, sources: kept };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** Why a namespace or Secret name is refused, or undefined when it is valid. */
export function namespaceViolation(namespace: string): string | undefined {
  return DNS_LABEL.test(namespace) && namespace.length <= 63 ? undefined : 'must be a namespace name (a DNS label of at most 63 characters)';
}

/** Why a Secret name is refused, or undefined when it is valid. */
export function secretNameViolation(name: string): string | undefined {
  return DNS_SUBDOMAIN.test(name) && name.length <= 253 ? undefined : 'must be a Secret name (a DNS subdomain of at most 253 characters)';
}

/**
 * The grants a comma-separated list names, as `manifests --secret-namespaces` takes it: `NAMESPACE` grants Secrets in
 * the namespace, `NAMESPACE/SECRET` only reads that one Secret (a KeystoneClusterIdentity's source). `sources: false`
 * refuses the second form (a target cluster holds no source). Throws an Error naming the entry and the rule.
 */
export function parseSecretGrants(text: string, options: { readonly sources?: boolean } = {}): SecretGrants {
  const namespaces: string[] = [];
  const sources: SecretRef[] = [];
  const entries = text.split(',').map((e) => e.trim());
  if (entries.every((e) => e === '')) throw new Error('names no namespace: give a comma-separated list such as openstack,tenant-a');
  for (const entry of entries) {
    if (entry === '') continue;
    const slash = entry.indexOf('/');
    const namespace = slash < 0 ? entry : entry.slice(0, slash);
    const bad = namespaceViolation(namespace);
    if (bad) throw new Error(`entry ${JSON.stringify(entry)}: ${namespace === '' ? 'the namespace is empty' : `${JSON.stringify(namespace)} ${bad}`}`);
    if (slash < 0) {
      namespaces.push(namespace);
      continue;
    }
    if (options.sources === false) throw new Error(`entry ${JSON.stringify(entry)}: a target cluster holds no source Secret; give namespaces only`);
    const name = entry.slice(slash + 1);
    const badName = secretNameViolation(name);
    if (badName) throw new Error(`entry ${JSON.stringify(entry)}: ${name === '' ? 'the Secret name after "/" is empty' : `${JSON.stringify(name)} ${badName}`}`);
    sources.push({ namespace, name });
  }
  return normalized(namespaces, sources);
}
