/**
 * The operator's permissions, each verb and resource with the reason the reconciler needs it. No wildcards: a permission
 * without a reason here is a permission the operator does not get.
 */
import { ClusterIdentityKind } from '../src/api/cluster-identity';
import { GROUP, PLURAL } from '../src/api/types';
import { PlaneKinds } from '../src/api/identity-plane';
import { KUBECONFIG_SECRET_LABEL } from '../src/api/target-cluster';

/** A `rbac.authorization.k8s.io/v1` PolicyRule with the reason it is granted. */
export interface JustifiedRule {
  /** API groups (`''` is the core group). */
  readonly apiGroups: string[];
  /** Resources, with subresources as `kind/sub`. */
  readonly resources: string[];
  /** Verbs. */
  readonly verbs: string[];
  /** Restricts the rule to these names. @default every name */
  readonly resourceNames?: string[];
  /** Why the reconciler needs it. */
  readonly reason: string;
}

const ORDER_RESOURCES = [PLURAL, PlaneKinds.KeystoneUser.plural, PlaneKinds.KeystoneProject.plural, PlaneKinds.KeystoneRoleAssignment.plural];
const ALL_RESOURCES = [PlaneKinds.ControlPlane.plural, ...ORDER_RESOURCES];

/** The cluster-wide rules: orders live in any assigned namespace, and their children in any ControlPlane's namespace. */
export const CLUSTER_RULES: readonly JustifiedRule[] = [
  {
    apiGroups: [GROUP],
    resources: ALL_RESOURCES,
    verbs: ['get', 'list', 'watch'],
    reason: 'reconcile every order and ControlPlane: informers list and watch them, a pass reads the referenced ones',
  },
  {
    apiGroups: [GROUP],
    resources: ORDER_RESOURCES,
    verbs: ['patch'],
    reason: 'install and release each order kind\'s teardown finalizer (a merge patch of metadata.finalizers); the spec is never written',
  },
  {
    apiGroups: [GROUP],
    resources: ALL_RESOURCES.map((r) => `${r}/status`),
    verbs: ['get', 'patch', 'update'],
    reason: 'write status: conditions, generations, ids and times (update carries resourceVersion for optimistic concurrency)',
  },
  {
    apiGroups: [GROUP],
    resources: [ClusterIdentityKind.plural],
    verbs: ['get', 'list', 'watch'],
    reason:
      'resolve a ControlPlane\'s adminCredential.identityRef: read which Secret and cloud the KeystoneClusterIdentity names and which namespaces it allows, and watch identities so a changed secretRef or allowedNamespaces reconciles every ControlPlane using one; the spec is never written',
  },
  {
    apiGroups: [GROUP],
    resources: [`${ClusterIdentityKind.plural}/status`],
    verbs: ['get', 'patch', 'update'],
    reason: 'write an identity\'s Ready (SecretFound/SecretNotFound) and status.namespaces, the list that refuses its deletion while a mirror is in use',
  },
  {
    apiGroups: [''],
    resources: ['namespaces'],
    verbs: ['get', 'list', 'watch'],
    reason: 'read the labels of a ControlPlane\'s namespace to evaluate allowedNamespaces.selector, and watch them so a relabelled namespace is allowed or revoked without waiting for a resync',
  },
  {
    apiGroups: [GROUP],
    resources: [`${PLURAL}/finalizers`, `${PlaneKinds.KeystoneUser.plural}/finalizers`],
    verbs: ['update'],
    reason: 'set blockOwnerDeletion on the controller owner reference of a delivered Secret, which the OwnerReferencesPermissionEnforcement admission plugin allows only with update on the owner\'s finalizers',
  },
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['get', 'list', 'watch'],
    reason:
      'list and watch whole only the Secrets the operator writes (by their labels: parked and delivered Secrets, mirrors), so an edited or deleted one is repaired; list and watch every other Secret as metadata only (PartialObjectMetadata, never its data), so a foreign Secret at a delivered name is refused and its deletion delivers at once, and a referenced Secret\'s change is seen; get by name the admin clouds.yaml and the Keystone CA bundle a ControlPlane references and a KeystoneClusterIdentity\'s source Secret in any namespace (RBAC has no metadata-only verb: list and watch cover both views)',
  },
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['create', 'patch'],
    reason:
      'park each generation\'s secret before Keystone sees it, deliver <name>-credentials, and write an identity\'s mirror keystone-creds-<identity> into a ControlPlane\'s namespace and rewrite it when the source changes (create and patch, or server-side apply: an apply that creates needs create); update is not needed, and the source Secret is never written',
  },
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['delete'],
    reason:
      'teardown: delete the parked secrets of swept generations and, last, the delivered Secret; delete a mirror when the last ControlPlane stops using its identity there or the namespace is revoked (never the source)',
  },
  {
    apiGroups: ['events.k8s.io'],
    resources: ['events'],
    verbs: ['create', 'patch'],
    reason: 'record rotations, refusals and teardown steps as events on the orders (patch aggregates repeats)',
  },
];

/** Whether a rule grants something on Secrets. */
const onSecrets = (rule: JustifiedRule): boolean => rule.apiGroups.includes('') && rule.resources.includes('secrets');

/**
 * The cluster-wide rules of the namespaced Secret access (issue 34): {@link CLUSTER_RULES} without any rule on Secrets.
 * What stays cluster-scoped is what is: the orders and ControlPlanes in every namespace (an order in a namespace without
 * a grant must still be told so), the KeystoneClusterIdentities, the Namespaces' labels, the finalizers, the Events.
 */
export const NAMESPACED_CLUSTER_RULES: readonly JustifiedRule[] = CLUSTER_RULES.filter((rule) => !onSecrets(rule));

/**
 * The rules of the Role `<name>-secrets` in each namespace that needs Secrets in the namespaced mode: a ControlPlane's
 * namespace and each namespace it assigns (src/api/secret-access.ts says which).
 */
export const NAMESPACE_SECRET_RULES: readonly JustifiedRule[] = [
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['get', 'list', 'watch'],
    reason:
      'in this namespace only: list and watch whole the Secrets the operator writes (by their labels: parked and delivered Secrets, mirrors), so an edited or deleted one is repaired, and every other Secret here as metadata only (never its data), so a foreign Secret at a delivered name is refused and a referenced one\'s change is seen; get by name the admin clouds.yaml and CA bundle of a ControlPlane here. The first list is also the probe that tells the operator it is granted the namespace',
  },
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['create', 'patch'],
    reason: 'in this namespace only: park each generation\'s secret (a ControlPlane\'s namespace), deliver <name>-credentials (an assigned namespace), write a mirror keystone-creds-<identity> (server-side apply; an apply that creates needs create)',
  },
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['delete'],
    reason: 'in this namespace only: discard a swept generation\'s parked secret, withdraw a delivered Secret at teardown (the order\'s own, with a uid precondition), delete a revoked mirror',
  },
];

/**
 * The rule of the Role `<name>-source-<secret>` in the namespace of a KeystoneClusterIdentity's source Secret that holds
 * no ControlPlane (namespaced mode): that one Secret, read only. A list or watch restricted by name passes RBAC only with
 * the field selector `metadata.name=<secret>`, which is how the operator watches it.
 */
export function sourceSecretRules(secretName: string): readonly JustifiedRule[] {
  return [
    {
      apiGroups: [''],
      resources: ['secrets'],
      verbs: ['get', 'list', 'watch'],
      resourceNames: [secretName],
      reason: 'read a KeystoneClusterIdentity\'s source Secret to mirror it into the namespaces of the ControlPlanes using the identity, and watch it (by name) so a changed source is mirrored again; never written, nothing else in the namespace is read',
    },
  ];
}

/** The workload kinds the consumer handoff rolls (`apps`). */
const WORKLOAD_RESOURCES = ['deployments', 'statefulsets', 'daemonsets'];

/**
 * The cluster-wide rules of the consumer handoff, granted only with the construct's `consumerHandoff` (without it the
 * operator neither reads nor writes any workload). Workloads live in every namespace that orders credentials.
 */
export const HANDOFF_RULES: readonly JustifiedRule[] = [
  {
    apiGroups: ['apps'],
    resources: WORKLOAD_RESOURCES,
    verbs: ['get', 'list', 'watch'],
    reason:
      'consumer handoff: list and watch the workloads as metadata only (PartialObjectMetadata) to find those annotated c5c3.io/rollout-on-credential-switch in an order\'s namespace; get an opted-in one by name to read its pod template and rollout status',
  },
  {
    apiGroups: ['apps'],
    resources: WORKLOAD_RESOURCES,
    verbs: ['patch'],
    reason:
      'consumer handoff: write the delivered generation into an opted-in workload\'s pod-template annotation c5c3.io/credential-generations (a server-side apply of that one field), which rolls it; nothing else of a workload is written',
  },
];

/**
 * The rules in the operator's own namespace for registering target clusters: the Secrets labelled
 * `sigs.k8s.io/multicluster-runtime-kubeconfig: "true"` there, each holding a target cluster's kubeconfig under the key
 * `kubeconfig` (the cluster's name is the Secret's name). RBAC cannot select by label: the operator's informer does
 * (`labelSelector=sigs.k8s.io/multicluster-runtime-kubeconfig=true` in this namespace only), and the rule names the
 * namespace, so nothing else is read for this purpose.
 */
export const REGISTRATION_RULES: readonly JustifiedRule[] = [
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['get', 'list', 'watch'],
    reason:
      `register target clusters: list and watch the Secrets labelled ${KUBECONFIG_SECRET_LABEL}=true in the operator's own namespace (a new one registers a cluster, a changed one reconnects, a deleted one deregisters); never written`,
  },
];

/**
 * The cluster-wide rules on a registered target cluster, for the identity the operator's kubeconfig authenticates as
 * there: the four order kinds (no ControlPlane and no KeystoneClusterIdentity: those live on the management cluster),
 * their status and finalizers, the delivered Secrets beside them, and Events on them. Nothing else: no namespaces, no
 * workloads, no write to any spec.
 */
export const TARGET_CLUSTER_RULES: readonly JustifiedRule[] = [
  {
    apiGroups: [GROUP],
    resources: ORDER_RESOURCES,
    verbs: ['get', 'list', 'watch'],
    reason: 'reconcile the orders of the target cluster: informers list and watch the four order kinds, a pass reads the referenced ones',
  },
  {
    apiGroups: [GROUP],
    resources: ORDER_RESOURCES,
    verbs: ['patch'],
    reason: 'install and release each order kind\'s teardown finalizer (a merge patch of metadata.finalizers); the spec is never written',
  },
  {
    apiGroups: [GROUP],
    resources: ORDER_RESOURCES.map((r) => `${r}/status`),
    verbs: ['get', 'patch', 'update'],
    reason: 'write the orders\' status on the cluster they live on',
  },
  {
    apiGroups: [GROUP],
    resources: [`${PLURAL}/finalizers`, `${PlaneKinds.KeystoneUser.plural}/finalizers`],
    verbs: ['update'],
    reason: 'set blockOwnerDeletion on the controller owner reference of a delivered Secret (OwnerReferencesPermissionEnforcement allows it only with update on the owner\'s finalizers)',
  },
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['get', 'list', 'watch'],
    reason: 'watch the delivered Secrets beside the orders (and any Secret of a delivered name, which the order must never take over) so an edited or deleted one is repaired',
  },
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['create', 'patch'],
    reason: 'deliver <name>-credentials beside the order by server-side apply (an apply that creates needs create); the children stay on the management cluster',
  },
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['delete'],
    reason: 'teardown: withdraw the delivered Secret (only the order\'s own, with a uid precondition)',
  },
  {
    apiGroups: ['events.k8s.io'],
    resources: ['events'],
    verbs: ['create', 'patch'],
    reason: 'record condition transitions, rotations and teardown steps as Events on the orders of the target cluster',
  },
];

/** {@link TARGET_CLUSTER_RULES} without any rule on Secrets: the target cluster's ClusterRole in the namespaced mode. */
export const TARGET_NAMESPACED_CLUSTER_RULES: readonly JustifiedRule[] = TARGET_CLUSTER_RULES.filter((rule) => !onSecrets(rule));

/** The rules of the Role `<name>-secrets` in each namespace a target cluster's assignments name (namespaced mode). */
export const TARGET_NAMESPACE_SECRET_RULES: readonly JustifiedRule[] = TARGET_CLUSTER_RULES.filter(onSecrets).map((rule) => ({ ...rule, reason: `in this namespace only: ${rule.reason}` }));

/** The rules in the operator's own namespace: leader election on one Lease. */
export function leaseRules(leaseName: string): readonly JustifiedRule[] {
  return [
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: ['create'],
      reason: 'create the election Lease the first time (create cannot be restricted by name)',
    },
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: ['get', 'update'],
      resourceNames: [leaseName],
      reason: 'read, acquire and renew the election Lease; only one replica reconciles at a time',
    },
  ];
}
