/**
 * The in-cluster operator: everything it runs with, least privilege and hardened.
 *
 * The image is built from this repository (see docs/constructs.md); its entry point is `node lib/src/cli/main.js operator`.
 * The process serves `/healthz` and `/readyz` on the health port and `/metrics` on the metrics port, elects a leader on
 * a Lease in its own namespace, and reads its settings from the environment variables {@link OperatorEnv} names.
 */
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { DEFAULT_WORKERS, KeystoneLimitDefaults, MAX_WORKERS, OperatorEnv, OperatorRuntimeEnv, ReconciledKinds, type ReconciledKind } from '../src/api/operator-env';
import { SECRET_ACCESS_MODES, SecretAccessMode, namespaceViolation, secretNameViolation, secretRoleName, sourceRoleName, type SecretRef } from '../src/api/secret-access';
import { CLUSTER_RULES, HANDOFF_RULES, NAMESPACE_SECRET_RULES, NAMESPACED_CLUSTER_RULES, REGISTRATION_RULES, leaseRules, sourceSecretRules, type JustifiedRule } from './operator-rbac';
import { EmittedRoles, SecretAccessRegistry, SecretRole } from './secret-access';

/**
 * The environment variables the operator process reads (its configuration contract). Defined in src/api so the operator
 * command reads the same names without loading cdk8s.
 */
export { OperatorEnv } from '../src/api/operator-env';
export { ReconciledKinds, type ReconciledKind } from '../src/api/operator-env';

/** Log in to OpenBao with the pod's service account token (Kubernetes auth method). */
export interface OpenBaoKubernetesAuth {
  /** Selects the Kubernetes auth method. */
  readonly method: 'kubernetes';
  /** The OpenBao role bound to the operator's service account. */
  readonly role: string;
  /** Mount path of the auth method. @default "kubernetes" */
  readonly mountPath?: string;
}

/** Authenticate to OpenBao with a token read from a Secret in the operator's namespace. */
export interface OpenBaoTokenAuth {
  /** Selects token auth. */
  readonly method: 'token';
  /** The Secret holding the token. */
  readonly secretName: string;
  /** The Secret's key. @default "token" */
  readonly key?: string;
}

/** How the operator authenticates to OpenBao. */
export type OpenBaoAuth = OpenBaoKubernetesAuth | OpenBaoTokenAuth;

/** Where the operator backs credentials up. */
export interface OpenBaoSettings {
  /** OpenBao's http or https address, e.g. `https://openbao.openbao.svc:8200`. */
  readonly address: string;
  /** How to authenticate. */
  readonly auth: OpenBaoAuth;
  /** A Secret in the operator's namespace whose key `ca.crt` holds OpenBao's CA. @default the system trust store */
  readonly caSecretName?: string;
}

/** CPU and memory, as Kubernetes quantities. */
export interface ResourceAmounts {
  /** CPU, e.g. `100m`. */
  readonly cpu: string;
  /** Memory, e.g. `128Mi`. */
  readonly memory: string;
}

/** Props of {@link Operator}. */
export interface OperatorProps {
  /** The image repository, without tag, built from this repository (e.g. `registry.example/keystone-appcred`). */
  readonly image: string;
  /** The image tag. */
  readonly tag: string;
  /** OpenBao's address and auth. */
  readonly openBao: OpenBaoSettings;
  /** The namespace the operator runs in. @default "keystone-appcred-system" */
  readonly namespace?: string;
  /** Emit the namespace (with the `restricted` Pod Security level enforced). @default true */
  readonly createNamespace?: boolean;
  /** Base name of every object. @default "keystone-appcred-operator" */
  readonly name?: string;
  /** Replicas; one leader reconciles, the others stand by. @default 2 */
  readonly replicas?: number;
  /** @default "IfNotPresent" */
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Port of `/healthz` and `/readyz`. @default 8081 */
  readonly healthPort?: number;
  /** Port of `/metrics`. @default 8080 */
  readonly metricsPort?: number;
  /**
   * @default { cpu: "100m", memory: "256Mi" } (the largest idle RSS measured: 212 MiB at 2,000 converged orders; unrelated
   * Secrets cost their metadata only; docs/operator.md, "Sizing the memory limit")
   */
  readonly requests?: ResourceAmounts;
  /**
   * @default { cpu: "500m", memory: "512Mi" } (2.3× the largest peak measured, 220 MiB at 2,000 orders; the process that
   * converged 5,000 orders settles at 158 MiB: room for bursts up to 5,000 orders; add 32Mi per 1,000 orders beyond that)
   */
  readonly limits?: ResourceAmounts;
  /** @default "info" */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /**
   * Workers of every controller: how many objects of one kind are reconciled at once (controller-runtime's
   * MaxConcurrentReconciles; `KAC_WORKERS`). One object is never reconciled by two workers at once. The per-Keystone
   * rate limit, not this count, decides how many requests reach Keystone. 1 to 64.
   * @default 8
   */
  readonly workers?: number;
  /**
   * Workers of single kinds, over `workers` (controller-runtime's GroupKindConcurrency; `KAC_WORKERS_PER_KIND`), e.g.
   * `{ KeystoneApplicationCredential: 8 }`.
   * @default every kind runs `workers`
   */
  readonly workersPerKind?: Readonly<Partial<Record<ReconciledKind, number>>>;
  /** The non-root user and group the process runs as (the `node` user of the official Node image). @default 1000 */
  readonly runAsUser?: number;
  /**
   * The consumer handoff: roll the Deployments, StatefulSets and DaemonSets annotated
   * `c5c3.io/rollout-on-credential-switch` when the delivered Secret they name switches to a new generation, and warn
   * when their rollout has not finished halfway through the grace period. Adds `get`, `list`, `watch` and `patch` on
   * those kinds to the ClusterRole (`HANDOFF_RULES`) and sets `KAC_CONSUMER_HANDOFF=true`; without it the operator
   * has no rule on workloads and rolls none.
   * @default false
   */
  readonly consumerHandoff?: boolean;
  /**
   * Requests per second the operator sends to one Keystone endpoint, logins included, however many workers run; 0: no
   * limit. A 429 or 503 with `Retry-After` pauses the endpoint. Raise it for a Keystone with many workers.
   * @default 20
   */
  readonly keystoneRequestsPerSecond?: number;
  /**
   * Requests the operator has in flight to one Keystone endpoint at once; 0: no limit. Each password login and each
   * credential create costs Keystone a bcrypt computation, so this bounds the Keystone workers a burst keeps busy.
   * @default 8
   */
  readonly keystoneRequestsInFlight?: number;
  /**
   * How the operator is granted Secrets (issue 34; docs/operator.md, "RBAC: every rule and why"). `cluster-wide`: the
   * ClusterRole grants Secrets in every namespace. `namespaced`: no cluster-scoped rule on Secrets at all; a Role and
   * RoleBinding `<name>-secrets` in each namespace that needs them, synthesized from the ControlPlanes and
   * KeystoneClusterIdentities declared in the same app (their namespaces, their assignments on the management cluster,
   * the identities' `allowedNamespaces.list`), plus `secretNamespaces`; a read-only Role `<name>-source-<secret>` for an
   * identity's source Secret outside them (and `sourceSecrets`); the operator runs with `KAC_SECRET_ACCESS=namespaced`.
   * A namespace assigned elsewhere needs its Role added there: until then its orders read `SecretAccessNotGranted`.
   * @default "cluster-wide"
   */
  readonly secretAccess?: SecretAccessMode;
  /**
   * With `secretAccess: 'namespaced'`: namespaces granted beyond those the app's ControlPlanes and identities name
   * (ControlPlanes and assignments applied by other means).
   * @default none
   */
  readonly secretNamespaces?: readonly string[];
  /**
   * With `secretAccess: 'namespaced'`: KeystoneClusterIdentity source Secrets granted read only beyond those the app's
   * identities name.
   * @default none
   */
  readonly sourceSecrets?: readonly SecretRef[];
}

/** The entry point of the image: the operator command of the project's CLI. */
export const OPERATOR_COMMAND: readonly string[] = ['node', 'lib/src/cli/main.js', 'operator'];

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;

/**
 * The operator: namespace, ServiceAccount, RBAC (the ClusterRole, the Lease Role and the Role that reads the kubeconfig
 * Secrets registering target clusters), Deployment, metrics Service and PodDisruptionBudget.
 */
export class Operator extends Construct {
  /** The namespace the operator runs in. */
  readonly namespace: string;
  /** The ServiceAccount the pods run as. */
  readonly serviceAccountName: string;
  /** The election Lease's name. */
  readonly leaseName: string;
  /**
   * The cluster-wide rules granted, with their reasons (`CLUSTER_RULES`, or `NAMESPACED_CLUSTER_RULES` with
   * `secretAccess: 'namespaced'`; plus `HANDOFF_RULES` with `consumerHandoff`).
   */
  readonly clusterRules: readonly JustifiedRule[];
  /** The rules in the operator's namespace for registering target clusters (the labelled kubeconfig Secrets). */
  readonly registrationRules: readonly JustifiedRule[] = REGISTRATION_RULES;
  /** How the operator is granted Secrets. */
  readonly secretAccess: SecretAccessMode;
  /** The rules of each namespace's Role `<name>-secrets` (namespaced mode; none in the cluster-wide mode). */
  readonly namespaceRules: readonly JustifiedRule[];
  /** The Deployment. */
  readonly deployment: k8s.KubeDeployment;
  /** The base name of every object (the `name` prop): the scrape job's name in the monitoring constructs. */
  readonly name: string;
  /** The labels of every object; the metrics Service and the pods carry them. */
  readonly labels: Readonly<Record<string, string>>;
  /** The labels that select the operator's pods (and, in the metrics Service's namespace, the Service). */
  readonly selector: Readonly<Record<string, string>>;
  /** The metrics Service, `<name>-metrics`, whose port `metrics` serves `/metrics`. */
  readonly metricsService: k8s.KubeService;
  private readonly roles = new EmittedRoles();

  constructor(scope: Construct, id: string, props: OperatorProps) {
    super(scope, id);
    const p = resolve(this, props);
    this.namespace = p.namespace;
    this.serviceAccountName = p.name;
    this.leaseName = `${p.name}-leader`;
    this.secretAccess = p.secretAccess;
    const namespaced = p.secretAccess === SecretAccessMode.Namespaced;
    this.namespaceRules = namespaced ? NAMESPACE_SECRET_RULES : [];
    const base = namespaced ? NAMESPACED_CLUSTER_RULES : CLUSTER_RULES;
    this.clusterRules = p.consumerHandoff ? [...base, ...HANDOFF_RULES] : base;
    const labels = { 'app.kubernetes.io/name': p.name, 'app.kubernetes.io/component': 'operator', 'app.kubernetes.io/part-of': 'keystone-appcred' };
    const selector = { 'app.kubernetes.io/name': p.name };
    this.name = p.name;
    this.labels = labels;
    this.selector = selector;
    const meta = (name: string): k8s.ObjectMeta => ({ name, namespace: p.namespace, labels });

    if (p.createNamespace) {
      new k8s.KubeNamespace(this, 'Namespace', {
        metadata: { name: p.namespace, labels: { ...labels, 'pod-security.kubernetes.io/enforce': 'restricted' } },
      });
    }
    new k8s.KubeServiceAccount(this, 'ServiceAccount', { metadata: meta(p.name) });
    const subjects = [{ kind: 'ServiceAccount', name: p.name, namespace: p.namespace }];
    new k8s.KubeClusterRole(this, 'ClusterRole', { metadata: { name: p.name, labels }, rules: this.clusterRules.map(policyRule) });
    new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata: { name: p.name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: p.name },
      subjects,
    });
    new k8s.KubeRole(this, 'LeaseRole', { metadata: meta(`${p.name}-leader-election`), rules: leaseRules(this.leaseName).map(policyRule) });
    new k8s.KubeRoleBinding(this, 'LeaseRoleBinding', {
      metadata: meta(`${p.name}-leader-election`),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${p.name}-leader-election` },
      subjects,
    });
    new k8s.KubeRole(this, 'RegistrationRole', { metadata: meta(`${p.name}-cluster-registration`), rules: REGISTRATION_RULES.map(policyRule) });
    new k8s.KubeRoleBinding(this, 'RegistrationRoleBinding', {
      metadata: meta(`${p.name}-cluster-registration`),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${p.name}-cluster-registration` },
      subjects,
    });

    this.deployment = new k8s.KubeDeployment(this, 'Deployment', {
      metadata: meta(p.name),
      spec: {
        replicas: p.replicas,
        selector: { matchLabels: selector },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: k8s.IntOrString.fromNumber(1), maxUnavailable: k8s.IntOrString.fromNumber(0) } },
        template: {
          metadata: { labels },
          spec: podSpec(p, this.leaseName, selector),
        },
      },
    });
    this.metricsService = new k8s.KubeService(this, 'MetricsService', {
      metadata: meta(`${p.name}-metrics`),
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [{ name: 'metrics', port: p.metricsPort, targetPort: k8s.IntOrString.fromString('metrics'), protocol: 'TCP' }],
      },
    });
    new k8s.KubePodDisruptionBudget(this, 'PodDisruptionBudget', {
      metadata: meta(p.name),
      // maxUnavailable 1: a drain may take the standby (or, with one replica, the only pod) but never both at once.
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector } },
    });

    if (namespaced) {
      // The Roles of the namespaced mode: the props' own here, the app's ControlPlanes' and identities' beside them.
      const subject = subjects[0] as { kind: 'ServiceAccount'; name: string; namespace: string };
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
            for (const namespace of [cp.namespace, ...(cp.spec.namespaceAssignments ?? []).filter((a) => !a.targetClusterRef?.name).map((a) => a.namespace)]) grantNamespace(namespace, cp as unknown as Construct);
          }
          for (const identity of registry.identities) {
            for (const namespace of identity.spec.allowedNamespaces?.list ?? []) grantNamespace(namespace, identity as unknown as Construct);
          }
          for (const identity of registry.identities) grantSource(identity.spec.secretRef, identity as unknown as Construct);
        },
      });
      this.node.addValidation({
        validate: () => registry.controlPlanes.filter((cp) => cp.namespace === undefined).map((cp) => `ControlPlane ${cp.node.path} has no namespace, so secretAccess 'namespaced' cannot grant the operator its Secrets there: set metadata.namespace or the chart's namespace`),
      });
    }
  }

  /** The namespaces the operator is granted Secrets in (namespaced mode; empty in the cluster-wide mode), sorted. */
  get secretNamespaces(): readonly string[] {
    return this.roles.granted();
  }

  /** The source Secrets the operator is granted read only (namespaced mode), sorted. */
  get sourceSecrets(): readonly SecretRef[] {
    return this.roles.grantedSources();
  }
}

type Resolved = Required<Omit<OperatorProps, 'openBao'>> & { readonly openBao: OpenBaoSettings };

/** Fills in defaults and checks every prop; an error names the construct, the prop and the value. */
function resolve(scope: Construct, props: OperatorProps): Resolved {
  const fail = (prop: string, value: unknown, rule: string): never => {
    throw new Error(`${scope.node.path}: ${prop} (${JSON.stringify(value)}) ${rule}`);
  };
  const p: Resolved = {
    namespace: 'keystone-appcred-system',
    createNamespace: true,
    name: 'keystone-appcred-operator',
    replicas: 2,
    imagePullPolicy: 'IfNotPresent',
    healthPort: 8081,
    metricsPort: 8080,
    requests: { cpu: '100m', memory: '256Mi' },
    limits: { cpu: '500m', memory: '512Mi' },
    logLevel: 'info',
    workers: DEFAULT_WORKERS,
    workersPerKind: {},
    runAsUser: 1000,
    consumerHandoff: false,
    keystoneRequestsPerSecond: KeystoneLimitDefaults.requestsPerSecond,
    keystoneRequestsInFlight: KeystoneLimitDefaults.inFlight,
    secretAccess: SecretAccessMode.ClusterWide,
    secretNamespaces: [],
    sourceSecrets: [],
    ...stripUndefined(props),
    image: props.image,
    tag: props.tag,
    openBao: props.openBao,
  };
  const lastSegment = (p.image ?? '').split('/').pop() ?? '';
  if (!/^[a-z0-9]([-a-z0-9._/:]*[a-z0-9])?$/.test(p.image ?? '') || lastSegment.includes(':')) {
    fail('image', p.image, 'must be an image repository without tag or digest (give the tag in `tag`)');
  }
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(p.tag)) fail('tag', p.tag, 'must be a Docker tag: letters, digits, _ . -, at most 128 characters');
  if (!DNS_LABEL.test(p.namespace) || p.namespace.length > 63) fail('namespace', p.namespace, 'must be a DNS label of at most 63 characters');
  if (!DNS_LABEL.test(p.name) || p.name.length > 52) fail('name', p.name, 'must be a DNS label of at most 52 characters (suffixes are appended)');
  if (!Number.isInteger(p.replicas) || p.replicas < 1) fail('replicas', p.replicas, 'must be an integer of at least 1');
  for (const [prop, port] of [['healthPort', p.healthPort], ['metricsPort', p.metricsPort]] as const) {
    if (!Number.isInteger(port) || port < 1024 || port > 65535) fail(prop, port, 'must be an unprivileged port (1024 to 65535): the process runs as non-root');
  }
  if (p.healthPort === p.metricsPort) fail('metricsPort', p.metricsPort, 'must differ from healthPort');
  for (const [prop, amounts] of [['requests', p.requests], ['limits', p.limits]] as const) {
    if (!QUANTITY.test(amounts.cpu)) fail(`${prop}.cpu`, amounts.cpu, 'must be a Kubernetes quantity like 100m or 1');
    if (!QUANTITY.test(amounts.memory)) fail(`${prop}.memory`, amounts.memory, 'must be a Kubernetes quantity like 128Mi');
  }
  if (!(Number.isFinite(p.keystoneRequestsPerSecond) && p.keystoneRequestsPerSecond >= 0)) fail('keystoneRequestsPerSecond', p.keystoneRequestsPerSecond, 'must be a number of requests per second, 0 or more (0: no limit)');
  if (!Number.isInteger(p.keystoneRequestsInFlight) || p.keystoneRequestsInFlight < 0) fail('keystoneRequestsInFlight', p.keystoneRequestsInFlight, 'must be a whole number of requests, 0 or more (0: no limit)');
  const workerRule = `must be a whole number of workers from 1 to ${MAX_WORKERS}`;
  const badWorkers = (n: unknown) => !Number.isInteger(n) || (n as number) < 1 || (n as number) > MAX_WORKERS;
  if (badWorkers(p.workers)) fail('workers', p.workers, workerRule);
  for (const [kind, n] of Object.entries(p.workersPerKind)) {
    if (!(ReconciledKinds as readonly string[]).includes(kind)) fail(`workersPerKind.${kind}`, n, `names no kind the operator reconciles (${ReconciledKinds.join(', ')})`);
    if (badWorkers(n)) fail(`workersPerKind.${kind}`, n, workerRule);
  }
  if (!Number.isInteger(p.runAsUser) || p.runAsUser < 1) fail('runAsUser', p.runAsUser, 'must be a non-root user id (an integer of at least 1)');
  if (!/^https?:\/\/[^/\s?#]+(\/[^\s?#]*)?$/.test(p.openBao.address)) fail('openBao.address', p.openBao.address, 'must be an http or https URL');
  const auth = p.openBao.auth;
  if (auth.method === 'kubernetes') {
    if (!auth.role) fail('openBao.auth.role', auth.role, 'must name the OpenBao role bound to the operator\'s service account');
    if (auth.mountPath !== undefined && !/^[A-Za-z0-9_-][A-Za-z0-9_/-]*$/.test(auth.mountPath)) fail('openBao.auth.mountPath', auth.mountPath, 'must be an OpenBao mount path');
  } else if (auth.method === 'token') {
    if (!DNS_LABEL.test(auth.secretName ?? '')) fail('openBao.auth.secretName', auth.secretName, 'must name a Secret in the operator\'s namespace');
  } else {
    fail('openBao.auth.method', (auth as { method?: unknown }).method, 'must be kubernetes or token');
  }
  if (p.openBao.caSecretName !== undefined && !DNS_LABEL.test(p.openBao.caSecretName)) {
    fail('openBao.caSecretName', p.openBao.caSecretName, 'must name a Secret in the operator\'s namespace');
  }
  if (!SECRET_ACCESS_MODES.includes(p.secretAccess)) fail('secretAccess', p.secretAccess, `must be one of ${SECRET_ACCESS_MODES.join(', ')}`);
  const namespaced = p.secretAccess === SecretAccessMode.Namespaced;
  if (!namespaced && p.secretNamespaces.length > 0) fail('secretNamespaces', p.secretNamespaces, "applies only with secretAccess 'namespaced'");
  if (!namespaced && p.sourceSecrets.length > 0) fail('sourceSecrets', p.sourceSecrets, "applies only with secretAccess 'namespaced'");
  p.secretNamespaces.forEach((namespace, i) => {
    const bad = namespaceViolation(namespace);
    if (bad) fail(`secretNamespaces[${i}]`, namespace, bad);
  });
  p.sourceSecrets.forEach((ref, i) => {
    const bad = namespaceViolation(ref?.namespace ?? '');
    if (bad) fail(`sourceSecrets[${i}].namespace`, ref?.namespace, bad);
    const badName = secretNameViolation(ref?.name ?? '');
    if (badName) fail(`sourceSecrets[${i}].name`, ref?.name, badName);
  });
  return p;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The RBAC PolicyRule of a justified rule (its reason stays in the code and the docs). */
export function policyRule(rule: JustifiedRule): k8s.PolicyRule {
  return {
    apiGroups: [...rule.apiGroups],
    resources: [...rule.resources],
    verbs: [...rule.verbs],
    ...(rule.resourceNames ? { resourceNames: [...rule.resourceNames] } : {}),
  };
}

const CA_DIR = '/etc/keystone-appcred/openbao-ca';

/** `KAC_WORKERS_PER_KIND` (`Kind=N,…`), only when a kind is set apart. */
function workersPerKindEnv(perKind: Readonly<Partial<Record<ReconciledKind, number>>>): k8s.EnvVar[] {
  const pairs = Object.entries(perKind).filter(([, n]) => n !== undefined).map(([kind, n]) => `${kind}=${n}`);
  return pairs.length > 0 ? [{ name: OperatorEnv.workersPerKind, value: pairs.join(',') }] : [];
}

function openBaoEnv(settings: OpenBaoSettings): k8s.EnvVar[] {
  const env: k8s.EnvVar[] = [
    { name: OperatorEnv.openBaoAddress, value: settings.address },
    { name: OperatorEnv.openBaoAuthMethod, value: settings.auth.method },
  ];
  if (settings.auth.method === 'kubernetes') {
    env.push({ name: OperatorEnv.openBaoAuthMount, value: settings.auth.mountPath ?? 'kubernetes' });
    env.push({ name: OperatorEnv.openBaoRole, value: settings.auth.role });
  } else {
    env.push({ name: OperatorEnv.openBaoToken, valueFrom: { secretKeyRef: { name: settings.auth.secretName, key: settings.auth.key ?? 'token' } } });
  }
  if (settings.caSecretName) env.push({ name: OperatorEnv.openBaoCaFile, value: `${CA_DIR}/ca.crt` });
  return env;
}

function podSpec(p: Resolved, leaseName: string, selector: Record<string, string>): k8s.PodSpec {
  const probe = (path: string, period: number): k8s.Probe => ({
    httpGet: { path, port: k8s.IntOrString.fromString('health') },
    periodSeconds: period,
    timeoutSeconds: 2,
    failureThreshold: 3,
  });
  const volumes: k8s.Volume[] = [{ name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } }];
  const mounts: k8s.VolumeMount[] = [{ name: 'tmp', mountPath: '/tmp' }];
  if (p.openBao.caSecretName) {
    volumes.push({ name: 'openbao-ca', secret: { secretName: p.openBao.caSecretName, items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
    mounts.push({ name: 'openbao-ca', mountPath: CA_DIR, readOnly: true });
  }
  const quantities = (a: ResourceAmounts): Record<string, k8s.Quantity> => ({ cpu: k8s.Quantity.fromString(a.cpu), memory: k8s.Quantity.fromString(a.memory) });
  return {
    serviceAccountName: p.name,
    automountServiceAccountToken: true, // the API client and OpenBao's Kubernetes auth both use the token
    terminationGracePeriodSeconds: 30,
    securityContext: { runAsNonRoot: true, runAsUser: p.runAsUser, runAsGroup: p.runAsUser, seccompProfile: { type: 'RuntimeDefault' } },
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } } },
        ],
      },
    },
    containers: [
      {
        name: 'operator',
        image: `${p.image}:${p.tag}`,
        imagePullPolicy: p.imagePullPolicy,
        command: [...OPERATOR_COMMAND],
        env: [
          // apiVersion spelled out: the API server defaults it, and fieldRef is atomic under server-side apply, so a
          // manifest without it conflicts with any other applier of the same manifest that the server defaulted.
          { name: OperatorEnv.namespace, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
          { name: OperatorEnv.podName, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
          { name: OperatorEnv.leaseName, value: leaseName },
          { name: OperatorEnv.healthPort, value: String(p.healthPort) },
          { name: OperatorEnv.metricsPort, value: String(p.metricsPort) },
          { name: OperatorEnv.logLevel, value: p.logLevel },
          { name: OperatorEnv.keystoneRate, value: String(p.keystoneRequestsPerSecond) },
          { name: OperatorEnv.keystoneInFlight, value: String(p.keystoneRequestsInFlight) },
          { name: OperatorEnv.workers, value: String(p.workers) },
          // The memory limit in bytes, exported as keystone_appcred_memory_limit_bytes: the heap alert compares the
          // process's resident memory with it. Divisor spelled out for the same reason as fieldRef's apiVersion.
          { name: OperatorEnv.memoryLimit, valueFrom: { resourceFieldRef: { containerName: 'operator', resource: 'limits.memory', divisor: k8s.Quantity.fromString('1') } } },
          ...workersPerKindEnv(p.workersPerKind),
          ...openBaoEnv(p.openBao),
          ...(p.consumerHandoff ? [{ name: OperatorEnv.consumerHandoff, value: 'true' }] : []),
          // The namespaced Secret access: where to watch Secrets, and the Role name its conditions name.
          ...(p.secretAccess === SecretAccessMode.Namespaced
            ? [
                { name: OperatorEnv.secretAccess, value: SecretAccessMode.Namespaced },
                { name: OperatorEnv.rbacName, value: p.name },
              ]
            : []),
          ...Object.entries(OperatorRuntimeEnv).map(([name, value]) => ({ name, value })),
        ],
        ports: [
          { name: 'health', containerPort: p.healthPort, protocol: 'TCP' },
          { name: 'metrics', containerPort: p.metricsPort, protocol: 'TCP' },
        ],
        // A container that fails at start (a setup to fix) shows its last log lines, which name the fix, as the
        // termination message in the pod's status (`kubectl describe pod`), not only in the log of a restarted container.
        terminationMessagePolicy: 'FallbackToLogsOnError',
        livenessProbe: { ...probe('/healthz', 10), initialDelaySeconds: 10 },
        readinessProbe: probe('/readyz', 5),
        resources: { requests: quantities(p.requests), limits: quantities(p.limits) },
        securityContext: {
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        },
        volumeMounts: mounts,
      },
    ],
    volumes,
  };
}
