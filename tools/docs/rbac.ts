/**
 * The operator's RBAC, from the rule tables the constructs grant (constructs/operator-rbac.ts): each rule's API group,
 * resources, verbs, names, the role that grants it and the reason it carries. The construct's default name
 * (`keystone-appcred-operator`) names the Lease; the roles are named from `<name>`, as the construct names them.
 */
import {
  CLUSTER_RULES,
  HANDOFF_RULES,
  NAMESPACE_SECRET_RULES,
  REGISTRATION_RULES,
  TARGET_CLUSTER_RULES,
  leaseRules,
  sourceSecretRules,
  type JustifiedRule,
} from '../../constructs/operator-rbac';
import { code, codes, table } from './markdown';

/** The election Lease of an operator of the construct's default name. */
const LEASE = 'keystone-appcred-operator-leader';

/** A rule's row: group, resources, verbs, names, where it is granted, why. */
const row = (rule: JustifiedRule, grantedBy: string): string[] => [
  rule.apiGroups.map((g) => (g === '' ? 'core' : code(g))).join(', '),
  codes(rule.resources),
  rule.verbs.join(', '),
  codes(rule.resourceNames ?? []),
  grantedBy,
  rule.reason,
];

const HEADER = ['API group', 'resources', 'verbs', 'names', 'granted by', 'why'];

/** The cluster-wide mode (the default): the ClusterRole, the handoff's rules, the Lease and registration Roles. */
export function clusterWideRules(): string {
  return table(HEADER, [
    ...CLUSTER_RULES.map((r) => row(r, 'ClusterRole `<name>`')),
    ...HANDOFF_RULES.map((r) => row(r, 'ClusterRole `<name>`, only with the construct\'s `consumerHandoff`')),
    ...leaseRules(LEASE).map((r) => row(r, 'Role `<name>-leader-election` in the operator\'s namespace')),
    ...REGISTRATION_RULES.map((r) => row(r, 'Role `<name>-cluster-registration` in the operator\'s namespace')),
  ]);
}

/** The namespaced mode's Roles: `<name>-secrets` per namespace, `<name>-source-<secret>` per identity source Secret. */
export function namespacedRules(): string {
  return table(HEADER, [
    ...NAMESPACE_SECRET_RULES.map((r) => row(r, 'Role `<name>-secrets` in each namespace that needs Secrets')),
    ...sourceSecretRules('<secret>').map((r) => row(r, 'Role `<name>-source-<secret>` in a source Secret\'s namespace')),
  ]);
}

/** A registered target cluster's ClusterRole, bound to the identity the operator's kubeconfig names there. */
export function targetClusterRules(): string {
  return table(HEADER, TARGET_CLUSTER_RULES.map((r) => row(r, 'ClusterRole `<name>` on the target cluster')));
}
