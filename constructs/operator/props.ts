/**
 * The operator's props: everything it runs with, and their defaults and rules (an error names the construct, the prop
 * and the value).
 */
import { Construct } from 'constructs';
import { DEFAULT_WORKERS, KEYSTONE_PACINGS, KeystoneLimitDefaults, MAX_WORKERS, ReconciledKinds, type KeystonePacing as EnginePacing } from '../../src/api/operator-env';
import { SecretAccessMode, namespaceViolation, secretNameViolation } from '../../src/api/secret-access';
import type { SecretReference } from '../orders/keystone-cluster-identity';
import { SecretAccess, secretAccessMode } from '../secret-access';

/**
 * The environment variables the operator process reads (its configuration contract). Defined in src/api so the operator
 * command reads the same names without loading cdk8s.
 */
export { OperatorEnv } from '../../src/api/operator-env';
export { ReconciledKinds, type ReconciledKind } from '../../src/api/operator-env';

/** Options of {@link OpenBaoAuth.kubernetes}. */
export interface OpenBaoKubernetesAuthOptions {
  /** The OpenBao role bound to the operator's service account. */
  readonly role: string;
  /** Mount path of the auth method. @default "kubernetes" */
  readonly mountPath?: string;
}

/** Options of {@link OpenBaoAuth.token}. */
export interface OpenBaoTokenAuthOptions {
  /** The Secret in the operator's namespace holding the token. */
  readonly secretName: string;
  /** The Secret's key. @default "token" */
  readonly key?: string;
}

/** How the operator authenticates to OpenBao: `OpenBaoAuth.kubernetes({ role })` or `OpenBaoAuth.token({ secretName })`. */
export class OpenBaoAuth {
  /** Log in with the pod's service account token (OpenBao's Kubernetes auth method). */
  public static kubernetes(options: OpenBaoKubernetesAuthOptions): OpenBaoAuth {
    return new OpenBaoAuth('kubernetes', options.role, options.mountPath, undefined, undefined);
  }

  /** Authenticate with a token read from a Secret in the operator's namespace. */
  public static token(options: OpenBaoTokenAuthOptions): OpenBaoAuth {
    return new OpenBaoAuth('token', undefined, undefined, options.secretName, options.key);
  }

  private constructor(
    /** `kubernetes` or `token` (`KAC_OPENBAO_AUTH_METHOD`). */
    public readonly method: string,
    /** With `kubernetes`: the OpenBao role. */
    public readonly role?: string,
    /** With `kubernetes`: the auth method's mount path, if given. */
    public readonly mountPath?: string,
    /** With `token`: the Secret holding the token. */
    public readonly secretName?: string,
    /** With `token`: the Secret's key, if given. */
    public readonly key?: string,
  ) {}
}

/** When the kubelet pulls the operator's image: the container's `imagePullPolicy`, in Kubernetes' words. */
export enum ImagePullPolicy {
  /** Pull at every container start (a mutable tag). */
  ALWAYS = 'Always',
  /** Pull only when the node does not have the image. */
  IF_NOT_PRESENT = 'IfNotPresent',
  /** Never pull: the image must be on the node. */
  NEVER = 'Never',
}

/** The operator's log level (`KAC_LOG_LEVEL`). */
export enum LogLevel {
  /** Every pass and request. */
  DEBUG = 'debug',
  /** Changes and refusals. */
  INFO = 'info',
  /** What needs attention. */
  WARN = 'warn',
  /** Failures only. */
  ERROR = 'error',
}

/**
 * How the operator holds its requests in flight to one Keystone endpoint (`KAC_KEYSTONE_PACING`; docs/operate/fleet.md); the members' values are the engine's `KeystonePacing` (src/api/operator-env.ts).
 */
export enum KeystonePacing {
  /** To the workers Keystone has free, as its latency tells, less `keystoneSpareWorkers`; at most `keystoneRequestsInFlight`. */
  ADAPTIVE = 'adaptive',
  /** To `keystoneRequestsInFlight`. */
  FIXED = 'fixed',
}

// The enum is the engine's set of pacings under jsii's naming, checked when this file compiles.
const ENGINE_PACING: { readonly [pacing in KeystonePacing]: EnginePacing } = { [KeystonePacing.ADAPTIVE]: 'adaptive', [KeystonePacing.FIXED]: 'fixed' };

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
  /** When the kubelet pulls the image. @default ImagePullPolicy.IF_NOT_PRESENT */
  readonly imagePullPolicy?: ImagePullPolicy;
  /** Port of `/healthz` and `/readyz`. @default 8081 */
  readonly healthPort?: number;
  /** Port of `/metrics`. @default 8080 */
  readonly metricsPort?: number;
  /**
   * @default { cpu: "100m", memory: "256Mi" } (the largest idle RSS measured: 212 MiB at 2,000 converged orders; unrelated
   * Secrets cost their metadata only; docs/operate/what-to-do-when.md, "Sizing the memory limit")
   */
  readonly requests?: ResourceAmounts;
  /**
   * @default { cpu: "500m", memory: "512Mi" } (2.3× the largest peak measured, 220 MiB at 2,000 orders; the process that
   * converged 5,000 orders settles at 158 MiB: room for bursts up to 5,000 orders; add 32Mi per 1,000 orders beyond that)
   */
  readonly limits?: ResourceAmounts;
  /** @default LogLevel.INFO */
  readonly logLevel?: LogLevel;
  /**
   * Workers of every controller: how many objects of one kind are reconciled at once (controller-runtime's
   * MaxConcurrentReconciles; `KAC_WORKERS`). One object is never reconciled by two workers at once. The per-Keystone
   * rate limit, not this count, decides how many requests reach Keystone. 1 to 64.
   * @default 8
   */
  readonly workers?: number;
  /**
   * Workers of single kinds, over `workers` (controller-runtime's GroupKindConcurrency; `KAC_WORKERS_PER_KIND`), e.g.
   * `{ KeystoneApplicationCredential: 8 }`; a key that names no kind the operator reconciles is refused.
   * @default every kind runs `workers`
   */
  readonly workersPerKind?: { [kind: string]: number };
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
   * credential create costs Keystone a bcrypt computation, so this bounds the Keystone workers a burst keeps busy;
   * with adaptive pacing it is the most the pacing allows.
   * @default 8
   */
  readonly keystoneRequestsInFlight?: number;
  /**
   * How the requests in flight to one Keystone endpoint are held: `ADAPTIVE` measures from Keystone's latency how many
   * workers it has free for the operator and keeps `keystoneSpareWorkers` of them free for Keystone's other users (one
   * request at a time on a Keystone of one worker), so a mass rotation never makes them wait; `FIXED` holds them to
   * `keystoneRequestsInFlight`.
   * @default KeystonePacing.ADAPTIVE
   */
  readonly keystonePacing?: KeystonePacing;
  /**
   * Adaptive pacing: the Keystone workers left free for its other users below the capacity the operator measured; at
   * least one request stays in flight whatever it measures. 0 or more.
   * @default 1
   */
  readonly keystoneSpareWorkers?: number;
  /**
   * How the operator is granted Secrets (issue 34; docs/install/namespaced.md, docs/reference/rbac.md). `CLUSTER_WIDE`: the
   * ClusterRole grants Secrets in every namespace. `NAMESPACED`: no cluster-scoped rule on Secrets at all; a Role and
   * RoleBinding `<name>-secrets` in each namespace that needs them, synthesized from the ControlPlanes and
   * KeystoneClusterIdentities declared in the same app (their namespaces, their assignments on the management cluster,
   * the identities' `allowedNamespaces.list`), plus `secretNamespaces`; a read-only Role `<name>-source-<secret>` for an
   * identity's source Secret outside them (and `sourceSecrets`); the operator runs with `KAC_SECRET_ACCESS=namespaced`.
   * A namespace assigned elsewhere needs its Role added there: until then its orders read `SecretAccessNotGranted`.
   * @default SecretAccess.CLUSTER_WIDE
   */
  readonly secretAccess?: SecretAccess;
  /**
   * With `secretAccess: SecretAccess.NAMESPACED`: namespaces granted beyond those the app's ControlPlanes and identities name
   * (ControlPlanes and assignments applied by other means).
   * @default none
   */
  readonly secretNamespaces?: string[];
  /**
   * With `secretAccess: SecretAccess.NAMESPACED`: KeystoneClusterIdentity source Secrets granted read only beyond those the app's
   * identities name.
   * @default none
   */
  readonly sourceSecrets?: SecretReference[];
}

/** The entry point of the image: the operator command of the project's CLI. */
export const OPERATOR_COMMAND: readonly string[] = ['node', 'lib/src/cli/main.js', 'operator'];

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;

/** The props with their defaults filled in, as the construct and its pod read them. */
export type Resolved = Required<Omit<OperatorProps, 'openBao' | 'secretAccess' | 'workersPerKind'>> & {
  readonly openBao: OpenBaoSettings;
  /** The engine's mode, as `KAC_SECRET_ACCESS` carries it. */
  readonly secretAccess: SecretAccessMode;
  readonly workersPerKind: { readonly [kind: string]: number };
};

/** Fills in defaults and checks every prop; an error names the construct, the prop and the value. */
export function resolve(scope: Construct, props: OperatorProps): Resolved {
  const fail = (prop: string, value: unknown, rule: string): never => {
    throw new Error(`${scope.node.path}: ${prop} (${JSON.stringify(value)}) ${rule}`);
  };
  const p: Resolved = {
    namespace: 'keystone-appcred-system',
    createNamespace: true,
    name: 'keystone-appcred-operator',
    replicas: 2,
    imagePullPolicy: ImagePullPolicy.IF_NOT_PRESENT,
    healthPort: 8081,
    metricsPort: 8080,
    requests: { cpu: '100m', memory: '256Mi' },
    limits: { cpu: '500m', memory: '512Mi' },
    logLevel: LogLevel.INFO,
    workers: DEFAULT_WORKERS,
    workersPerKind: {},
    runAsUser: 1000,
    consumerHandoff: false,
    keystoneRequestsPerSecond: KeystoneLimitDefaults.requestsPerSecond,
    keystoneRequestsInFlight: KeystoneLimitDefaults.inFlight,
    keystonePacing: KeystonePacing.ADAPTIVE,
    keystoneSpareWorkers: KeystoneLimitDefaults.spareWorkers,
    secretNamespaces: [],
    sourceSecrets: [],
    ...stripUndefined(props),
    secretAccess: secretAccessMode(fail, props.secretAccess ?? SecretAccess.CLUSTER_WIDE),
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
  if (!(Object.values(ImagePullPolicy) as string[]).includes(p.imagePullPolicy)) fail('imagePullPolicy', p.imagePullPolicy, `must be one of ${Object.values(ImagePullPolicy).join(', ')}`);
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
  if (ENGINE_PACING[p.keystonePacing] === undefined) fail('keystonePacing', p.keystonePacing, `must be one of ${KEYSTONE_PACINGS.join(', ')}`);
  if (!Number.isInteger(p.keystoneSpareWorkers) || p.keystoneSpareWorkers < 0) fail('keystoneSpareWorkers', p.keystoneSpareWorkers, 'must be a whole number of Keystone workers, 0 or more');
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
