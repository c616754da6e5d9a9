/**
 * What a registered target cluster needs (spec: an order "lives in the assigned namespace, on the cluster that namespace
 * is assigned on: the management cluster or a registered target cluster"): the CRDs of the four order kinds, with the
 * same schemas and CRD rules as on the management cluster (a target cluster runs no webhook), and a least-privilege
 * ClusterRole bound to the identity the operator's kubeconfig authenticates as there. Nothing else: the ControlPlane, the
 * KeystoneClusterIdentity, the operator and the children stay on the management cluster.
 *
 * The operator learns of the cluster from a Secret in its own namespace on the management cluster, labelled
 * `sigs.k8s.io/multicluster-runtime-kubeconfig: "true"`, with the kubeconfig under the key `kubeconfig`; the cluster's
 * name is the Secret's name (docs/configure/target-clusters.md shows how to make it).
 */
import { Construct } from 'constructs';
import { CustomResourceDefinition, Kind } from './crd';
import { kubeObject, type Subject } from './kube';
import { policyRule } from './operator';
import { SecretAccessMode, namespaceViolation, secretRoleName } from '../src/api/secret-access';
import { TARGET_CLUSTER_RULES, TARGET_NAMESPACE_SECRET_RULES, TARGET_NAMESPACED_CLUSTER_RULES, type JustifiedRule } from './operator-rbac';
import { EmittedRoles, SecretAccess, SecretAccessRegistry, SecretRole, secretAccessMode } from './secret-access';

/** The order kinds a target cluster serves: KeystoneProject, KeystoneUser, KeystoneRoleAssignment, KeystoneApplicationCredential. */
export const ORDER_KINDS: readonly Kind[] = [Kind.KEYSTONE_PROJECT, Kind.KEYSTONE_USER, Kind.KEYSTONE_ROLE_ASSIGNMENT, Kind.KEYSTONE_APPLICATION_CREDENTIAL];

/**
 * The identity the operator's kubeconfig for the target cluster authenticates as:
 * `TargetClusterSubject.serviceAccount(name, namespace)`, `TargetClusterSubject.user(name)` or
 * `TargetClusterSubject.group(name)`.
 */
export class TargetClusterSubject {
  /** A service account on the target cluster (create it and a token for it: docs/configure/target-clusters.md). */
  public static serviceAccount(name: string, namespace: string): TargetClusterSubject {
    return new TargetClusterSubject('ServiceAccount', name, namespace);
  }

  /** A user the target cluster's authenticator knows (a client certificate's CN, an OIDC claim). */
  public static user(name: string): TargetClusterSubject {
    return new TargetClusterSubject('User', name, undefined);
  }

  /** A group the target cluster's authenticator knows (a client certificate's O, an OIDC claim). */
  public static group(name: string): TargetClusterSubject {
    return new TargetClusterSubject('Group', name, undefined);
  }

  private constructor(
    /** `ServiceAccount`, `User` or `Group`. */
    public readonly kind: string,
    /** The name. */
    public readonly name: string,
    /** The service account's namespace (a service account only). */
    public readonly namespace?: string,
  ) {}
}

/** The RBAC subject of a target cluster's subject. */
export function rbacSubject(subject: TargetClusterSubject): Subject {
  return subject.kind === 'ServiceAccount'
    ? { kind: 'ServiceAccount', name: subject.name, namespace: subject.namespace }
    : { kind: subject.kind, name: subject.name, apiGroup: 'rbac.authorization.k8s.io' };
}

/** Props of {@link TargetCluster}. */
export interface TargetClusterProps {
  /**
   * The identity the ClusterRole is bound to.
   * @default the ServiceAccount `keystone-appcred-operator` in the namespace `keystone-appcred-system`
   */
  readonly subject?: TargetClusterSubject;
  /** The name of the ClusterRole and its binding. @default "keystone-appcred-operator" */
  readonly name?: string;
  /**
   * How the operator is granted Secrets on the target cluster (issue 34). `CLUSTER_WIDE`: the ClusterRole grants them in
   * every namespace. `NAMESPACED`: no cluster-scoped rule on Secrets; a Role and RoleBinding `<name>-secrets` in each
   * namespace the ControlPlanes declared in the same app assign on `clusterName`, and in `secretNamespaces`. It needs
   * the operator to run with `secretAccess: SecretAccess.NAMESPACED` (a cluster-wide operator lists Secrets
   * cluster-wide there).
   * @default SecretAccess.CLUSTER_WIDE
   */
  readonly secretAccess?: SecretAccess;
  /**
   * The cluster's registered name (its kubeconfig Secret's name): with `secretAccess: SecretAccess.NAMESPACED`, the assignments
   * whose `targetClusterRef.name` it is are granted.
   * @default none: only `secretNamespaces`
   */
  readonly clusterName?: string;
  /** With `secretAccess: SecretAccess.NAMESPACED`: namespaces granted beyond the assignments the app declares. @default none */
  readonly secretNamespaces?: string[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The CRDs of the four order kinds and the operator's ClusterRole and binding, for a registered target cluster. */
export class TargetCluster extends Construct {
  /** The emitted CRDs, in the order they are emitted. */
  public readonly definitions: CustomResourceDefinition[];
  /** The cluster-wide rules granted to the operator's identity there, with their reasons. */
  public readonly rules: JustifiedRule[];
  /** The rules of each namespace's Role (namespaced mode; none in the cluster-wide mode). */
  public readonly namespaceRules: JustifiedRule[];
  /** How the operator is granted Secrets there. */
  public readonly secretAccess: SecretAccess;
  private readonly roles = new EmittedRoles();
  /** The identity the ClusterRole is bound to. */
  public readonly subject: TargetClusterSubject;
  /** The name of the ClusterRole and its binding. */
  public readonly roleName: string;

  public constructor(scope: Construct, id: string, props: TargetClusterProps = {}) {
    super(scope, id);
    const fail = (prop: string, value: unknown, rule: string): never => {
      throw new Error(`${this.node.path}: ${prop} (${JSON.stringify(value)}) ${rule}`);
    };
    this.roleName = props.name ?? 'keystone-appcred-operator';
    this.subject = props.subject ?? TargetClusterSubject.serviceAccount('keystone-appcred-operator', 'keystone-appcred-system');
    if (!DNS_SUBDOMAIN.test(this.roleName) || this.roleName.length > 253) fail('name', this.roleName, 'must be a DNS subdomain (lower-case letters, digits, - and .)');
    const subject = this.subject;
    if (!['ServiceAccount', 'User', 'Group'].includes(subject.kind)) fail('subject.kind', subject.kind, 'must be ServiceAccount, User or Group');
    if (!subject.name) fail('subject.name', subject.name, 'must name the identity');
    if (subject.kind === 'ServiceAccount') {
      if (!DNS_SUBDOMAIN.test(subject.name)) fail('subject.name', subject.name, 'must be a service account name (a DNS subdomain)');
      if (!DNS_LABEL.test(subject.namespace ?? '') || (subject.namespace ?? '').length > 63) fail('subject.namespace', subject.namespace, 'must be a DNS label of at most 63 characters');
    }
    const namespaced = secretAccessMode(fail, props.secretAccess ?? SecretAccess.CLUSTER_WIDE) === SecretAccessMode.Namespaced;
    this.secretAccess = namespaced ? SecretAccess.NAMESPACED : SecretAccess.CLUSTER_WIDE;
    const extra = props.secretNamespaces ?? [];
    if (!namespaced && (extra.length > 0 || props.clusterName !== undefined)) fail(extra.length > 0 ? 'secretNamespaces' : 'clusterName', extra.length > 0 ? extra : props.clusterName, "applies only with secretAccess 'namespaced'");
    extra.forEach((namespace, i) => {
      const bad = namespaceViolation(namespace);
      if (bad) fail(`secretNamespaces[${i}]`, namespace, bad);
    });
    if (props.clusterName !== undefined && !DNS_SUBDOMAIN.test(props.clusterName)) fail('clusterName', props.clusterName, 'must be the name of the kubeconfig Secret that registers the cluster (a DNS subdomain)');
    this.rules = [...(namespaced ? TARGET_NAMESPACED_CLUSTER_RULES : TARGET_CLUSTER_RULES)];
    this.namespaceRules = namespaced ? [...TARGET_NAMESPACE_SECRET_RULES] : [];
    this.definitions = ORDER_KINDS.map((kind) => new CustomResourceDefinition(this, kind, { kind }));
    const labels = { 'app.kubernetes.io/name': this.roleName, 'app.kubernetes.io/component': 'target-cluster', 'app.kubernetes.io/part-of': 'keystone-appcred' };
    const role = kubeObject(this, 'ClusterRole', 'ClusterRole', { metadata: { name: this.roleName, labels }, rules: this.rules.map(policyRule) });
    const binding = kubeObject(this, 'ClusterRoleBinding', 'ClusterRoleBinding', {
      metadata: { name: this.roleName, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: this.roleName },
      subjects: [rbacSubject(subject)],
    });
    binding.node.addDependency(role);

    if (namespaced) {
      // The Roles here: one per namespace the app's ControlPlanes assign on this cluster, and the props' own.
      const grant = (namespace: string) =>
        this.roles.namespace(namespace, this, `Secrets-${namespace}`, (owner, id) => new SecretRole(owner, id, { name: secretRoleName(this.roleName), namespace, rules: TARGET_NAMESPACE_SECRET_RULES, subject: rbacSubject(subject), labels, policyRule }));
      for (const namespace of extra) grant(namespace);
      const clusterName = props.clusterName;
      const registry = SecretAccessRegistry.of(this);
      if (clusterName !== undefined) {
        registry.addGrantee({
          grant: () => {
            for (const cp of registry.controlPlanes) for (const a of cp.assignments) if (a.targetClusterRef?.name === clusterName) grant(a.namespace);
          },
        });
      }
    }
  }

  /** The namespaces the operator is granted Secrets in on the target cluster (namespaced mode), sorted. */
  public get secretNamespaces(): string[] {
    return this.roles.granted();
  }
}
