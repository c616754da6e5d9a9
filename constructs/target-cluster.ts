/**
 * What a registered target cluster needs (spec: an order "lives in the assigned namespace, on the cluster that namespace
 * is assigned on: the management cluster or a registered target cluster"): the CRDs of the four order kinds, with the
 * same schemas and CRD rules as on the management cluster (a target cluster runs no webhook), and a least-privilege
 * ClusterRole bound to the identity the operator's kubeconfig authenticates as there. Nothing else: the ControlPlane, the
 * KeystoneClusterIdentity, the operator and the children stay on the management cluster.
 *
 * The operator learns of the cluster from a Secret in its own namespace on the management cluster, labelled
 * `sigs.k8s.io/multicluster-runtime-kubeconfig: "true"`, with the kubeconfig under the key `kubeconfig`; the cluster's
 * name is the Secret's name (docs/operator.md, "Target clusters", shows how to make it).
 */
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { CustomResourceDefinition, type KindDefinition } from './crd';
import { KEYSTONE_PROJECT, KEYSTONE_ROLE_ASSIGNMENT, KEYSTONE_USER } from './definitions/identity-plane';
import { KEYSTONE_APPLICATION_CREDENTIAL } from './definitions/keystone-application-credential';
import { policyRule } from './operator';
import { TARGET_CLUSTER_RULES, type JustifiedRule } from './operator-rbac';

/** The order kinds a target cluster serves: KeystoneProject, KeystoneUser, KeystoneRoleAssignment, KeystoneApplicationCredential. */
export const ORDER_KINDS: readonly KindDefinition[] = [KEYSTONE_PROJECT, KEYSTONE_USER, KEYSTONE_ROLE_ASSIGNMENT, KEYSTONE_APPLICATION_CREDENTIAL];

/** A service account on the target cluster (create it and a token for it: docs/operator.md, "Target clusters"). */
export interface TargetClusterServiceAccount {
  /** Selects a service account. */
  readonly kind: 'ServiceAccount';
  /** The service account's name. */
  readonly name: string;
  /** Its namespace on the target cluster. */
  readonly namespace: string;
}

/** A user or group the target cluster's authenticator knows (a client certificate's CN or O, an OIDC claim). */
export interface TargetClusterPrincipal {
  /** Selects a user or a group. */
  readonly kind: 'User' | 'Group';
  /** The user's or group's name. */
  readonly name: string;
}

/** The identity the operator's kubeconfig for the target cluster authenticates as. */
export type TargetClusterSubject = TargetClusterServiceAccount | TargetClusterPrincipal;

/** Props of {@link TargetCluster}. */
export interface TargetClusterProps {
  /**
   * The identity the ClusterRole is bound to.
   * @default the ServiceAccount `keystone-appcred-operator` in the namespace `keystone-appcred-system`
   */
  readonly subject?: TargetClusterSubject;
  /** The name of the ClusterRole and its binding. @default "keystone-appcred-operator" */
  readonly name?: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The CRDs of the four order kinds and the operator's ClusterRole and binding, for a registered target cluster. */
export class TargetCluster extends Construct {
  /** The emitted CRDs, by kind. */
  readonly definitions: ReadonlyMap<string, CustomResourceDefinition>;
  /** The rules granted to the operator's identity there, with their reasons. */
  readonly rules: readonly JustifiedRule[] = TARGET_CLUSTER_RULES;
  /** The identity the ClusterRole is bound to. */
  readonly subject: TargetClusterSubject;
  /** The name of the ClusterRole and its binding. */
  readonly roleName: string;

  constructor(scope: Construct, id: string, props: TargetClusterProps = {}) {
    super(scope, id);
    const fail = (prop: string, value: unknown, rule: string): never => {
      throw new Error(`${this.node.path}: ${prop} (${JSON.stringify(value)}) ${rule}`);
    };
    this.roleName = props.name ?? 'keystone-appcred-operator';
    this.subject = props.subject ?? { kind: 'ServiceAccount', name: 'keystone-appcred-operator', namespace: 'keystone-appcred-system' };
    if (!DNS_SUBDOMAIN.test(this.roleName) || this.roleName.length > 253) fail('name', this.roleName, 'must be a DNS subdomain (lower-case letters, digits, - and .)');
    const subject = this.subject;
    if (!['ServiceAccount', 'User', 'Group'].includes(subject.kind)) fail('subject.kind', subject.kind, 'must be ServiceAccount, User or Group');
    if (!subject.name) fail('subject.name', subject.name, 'must name the identity');
    if (subject.kind === 'ServiceAccount') {
      if (!DNS_SUBDOMAIN.test(subject.name)) fail('subject.name', subject.name, 'must be a service account name (a DNS subdomain)');
      if (!DNS_LABEL.test(subject.namespace ?? '') || subject.namespace.length > 63) fail('subject.namespace', subject.namespace, 'must be a DNS label of at most 63 characters');
    }
    this.definitions = new Map(ORDER_KINDS.map((d) => [d.kind, new CustomResourceDefinition(this, d.kind, { definition: d })]));
    const labels = { 'app.kubernetes.io/name': this.roleName, 'app.kubernetes.io/component': 'target-cluster', 'app.kubernetes.io/part-of': 'keystone-appcred' };
    const role = new k8s.KubeClusterRole(this, 'ClusterRole', { metadata: { name: this.roleName, labels }, rules: TARGET_CLUSTER_RULES.map(policyRule) });
    const binding = new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata: { name: this.roleName, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: this.roleName },
      subjects: [
        subject.kind === 'ServiceAccount'
          ? { kind: 'ServiceAccount', name: subject.name, namespace: subject.namespace }
          : { kind: subject.kind, name: subject.name, apiGroup: 'rbac.authorization.k8s.io' },
      ],
    });
    binding.node.addDependency(role);
  }
}
