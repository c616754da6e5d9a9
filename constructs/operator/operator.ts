/**
 * The in-cluster operator: everything it runs with, least privilege and hardened.
 *
 * The image is built from this repository (see docs/install/image.md); its entry point is `node lib/src/cli/main.js operator`.
 * The process serves `/healthz` and `/readyz` on the health port and `/metrics` on the metrics port, elects a leader on
 * a Lease in its own namespace, and reads its settings from the environment variables {@link OperatorEnv} names.
 */
import type { ApiObject, ApiObjectMetadata } from 'cdk8s';
import { Construct } from 'constructs';
import { SecretAccessMode, secretRoleName, sourceRoleName, type SecretRef } from '../../src/api/secret-access';
import { kubeObject, type PolicyRule } from '../kube';
import type { SecretReference } from '../orders/keystone-cluster-identity';
import { CLUSTER_RULES, HANDOFF_RULES, NAMESPACE_SECRET_RULES, NAMESPACED_CLUSTER_RULES, REGISTRATION_RULES, leaseRules, sourceSecretRules, type JustifiedRule } from '../operator-rbac';
import { EmittedRoles, SecretAccess, SecretAccessRegistry, SecretRole } from '../secret-access';
import { OperatorProps, resolve } from './props';
import { podSpec } from './pod';

/**
 * The operator: namespace, ServiceAccount, RBAC (the ClusterRole, the Lease Role and the Role that reads the kubeconfig
 * Secrets registering target clusters), Deployment, metrics Service and PodDisruptionBudget.
 */
export class Operator extends Construct {
  /** The namespace the operator runs in. */
  public readonly namespace: string;
  /** The ServiceAccount the pods run as. */
  public readonly serviceAccountName: string;
  /** The election Lease's name. */
  public readonly leaseName: string;
  /**
   * The cluster-wide rules granted, with their reasons (`CLUSTER_RULES`, or `NAMESPACED_CLUSTER_RULES` with
   * `secretAccess: SecretAccess.NAMESPACED`; plus `HANDOFF_RULES` with `consumerHandoff`).
   */
  public readonly clusterRules: JustifiedRule[];
  /** The rules in the operator's namespace for registering target clusters (the labelled kubeconfig Secrets). */
  public readonly registrationRules: JustifiedRule[] = [...REGISTRATION_RULES];
  /** How the operator is granted Secrets. */
  public readonly secretAccess: SecretAccess;
  /** The rules of each namespace's Role `<name>-secrets` (namespaced mode; none in the cluster-wide mode). */
  public readonly namespaceRules: JustifiedRule[];
  /** The Deployment (`apps/v1`). */
  public readonly deployment: ApiObject;
  /** The base name of every object (the `name` prop): the scrape job's name in the monitoring constructs. */
  public readonly name: string;
  /** The labels of every object; the metrics Service and the pods carry them. */
  public readonly labels: { [key: string]: string };
  /** The labels that select the operator's pods (and, in the metrics Service's namespace, the Service). */
  public readonly selector: { [key: string]: string };
  /** The metrics Service (`v1`), `<name>-metrics`, whose port `metrics` serves `/metrics`. */
  public readonly metricsService: ApiObject;
  private readonly roles = new EmittedRoles();

  public constructor(scope: Construct, id: string, props: OperatorProps) {
    super(scope, id);
    const p = resolve(this, props);
    this.namespace = p.namespace;
    this.serviceAccountName = p.name;
    this.leaseName = `${p.name}-leader`;
    const namespaced = p.secretAccess === SecretAccessMode.Namespaced;
    this.secretAccess = namespaced ? SecretAccess.NAMESPACED : SecretAccess.CLUSTER_WIDE;
    this.namespaceRules = namespaced ? [...NAMESPACE_SECRET_RULES] : [];
    const base = namespaced ? NAMESPACED_CLUSTER_RULES : CLUSTER_RULES;
    this.clusterRules = p.consumerHandoff ? [...base, ...HANDOFF_RULES] : [...base];
    const labels = { 'app.kubernetes.io/name': p.name, 'app.kubernetes.io/component': 'operator', 'app.kubernetes.io/part-of': 'keystone-appcred' };
    const selector = { 'app.kubernetes.io/name': p.name };
    this.name = p.name;
    this.labels = labels;
    this.selector = selector;
    const meta = (name: string): ApiObjectMetadata => ({ name, namespace: p.namespace, labels });

    if (p.createNamespace) {
      kubeObject(this, 'Namespace', 'Namespace', {
        metadata: { name: p.namespace, labels: { ...labels, 'pod-security.kubernetes.io/enforce': 'restricted' } },
      });
    }
    kubeObject(this, 'ServiceAccount', 'ServiceAccount', { metadata: meta(p.name) });
    const subjects = [{ kind: 'ServiceAccount', name: p.name, namespace: p.namespace }];
    kubeObject(this, 'ClusterRole', 'ClusterRole', { metadata: { name: p.name, labels }, rules: this.clusterRules.map(policyRule) });
    kubeObject(this, 'ClusterRoleBinding', 'ClusterRoleBinding', {
      metadata: { name: p.name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: p.name },
      subjects,
    });
    kubeObject(this, 'LeaseRole', 'Role', { metadata: meta(`${p.name}-leader-election`), rules: leaseRules(this.leaseName).map(policyRule) });
    kubeObject(this, 'LeaseRoleBinding', 'RoleBinding', {
      metadata: meta(`${p.name}-leader-election`),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${p.name}-leader-election` },
      subjects,
    });
    kubeObject(this, 'RegistrationRole', 'Role', { metadata: meta(`${p.name}-cluster-registration`), rules: REGISTRATION_RULES.map(policyRule) });
    kubeObject(this, 'RegistrationRoleBinding', 'RoleBinding', {
      metadata: meta(`${p.name}-cluster-registration`),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${p.name}-cluster-registration` },
      subjects,
    });

    this.deployment = kubeObject(this, 'Deployment', 'Deployment', {
      metadata: meta(p.name),
      spec: {
        replicas: p.replicas,
        selector: { matchLabels: selector },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: {
          metadata: { labels },
          spec: podSpec(p, this.leaseName, selector),
        },
      },
    });
    this.metricsService = kubeObject(this, 'MetricsService', 'Service', {
      metadata: meta(`${p.name}-metrics`),
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [{ name: 'metrics', port: p.metricsPort, targetPort: 'metrics', protocol: 'TCP' }],
      },
    });
    kubeObject(this, 'PodDisruptionBudget', 'PodDisruptionBudget', {
      metadata: meta(p.name),
      // maxUnavailable 1: a drain may take the standby (or, with one replica, the only pod) but never both at once.
      spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
    });

    if (namespaced) {
      // The Roles of the namespaced mode: the props' own here, the app's ControlPlanes' and identities' beside them.
      const subject = subjects[0];
      const emitRole = (namespace: string) => (owner: Construct, roleId: string) =>
        new SecretRole(owner, roleId, { name: secretRoleName(p.name), namespace, rules: NAMESPACE_SECRET_RULES, subject, labels, policyRule });
      const emitSource = (ref: SecretRef) => (owner: Construct, roleId: string) =>
        new SecretRole(owner, roleId, { name: sourceRoleName(p.name, ref.name), namespace: ref.namespace, rules: sourceSecretRules(ref.name), subject, labels, policyRule });
      const grantNamespace = (namespace: string, owner: Construct) => this.roles.namespace(namespace, owner, `${p.name}-secrets-${namespace}`, emitRole(namespace));
      const grantSource = (ref: SecretRef, owner: Construct) => this.roles.source(ref, owner, `${p.name}-source-${ref.namespace}-${ref.name}`, emitSource(ref));
      for (const namespace of p.secretNamespaces) grantNamespace(namespace, this);
      for (const ref of p.sourceSecrets) grantSource(ref, this);
      const registry = SecretAccessRegistry.of(this);
      registry.addGrantee({
        grant: () => {
          for (const cp of registry.controlPlanes) {
            if (cp.namespace === undefined) continue; // reported by the validation below
            for (const namespace of [cp.namespace, ...cp.assignments.filter((a) => !a.targetClusterRef?.name).map((a) => a.namespace)]) grantNamespace(namespace, cp.construct);
          }
          for (const identity of registry.identities) {
            for (const namespace of identity.allowedList) grantNamespace(namespace, identity.construct);
          }
          for (const identity of registry.identities) grantSource(identity.secretRef, identity.construct);
        },
      });
      this.node.addValidation({
        validate: () => registry.controlPlanes.filter((cp) => cp.namespace === undefined).map((cp) => `ControlPlane ${cp.construct.node.path} has no namespace, so secretAccess 'namespaced' cannot grant the operator its Secrets there: set metadata.namespace or the chart's namespace`),
      });
    }
  }

  /** The namespaces the operator is granted Secrets in (namespaced mode; empty in the cluster-wide mode), sorted. */
  public get secretNamespaces(): string[] {
    return this.roles.granted();
  }

  /** The source Secrets the operator is granted read only (namespaced mode), sorted. */
  public get sourceSecrets(): SecretReference[] {
    return this.roles.grantedSources();
  }
}

/** The RBAC PolicyRule of a justified rule (its reason stays in the code and the docs); internal, not in the library's API. */
export function policyRule(rule: JustifiedRule): PolicyRule {
  return {
    apiGroups: [...rule.apiGroups],
    resources: [...rule.resources],
    verbs: [...rule.verbs],
    ...(rule.resourceNames ? { resourceNames: [...rule.resourceNames] } : {}),
  };
}
