/**
 * The operator's settings: the environment contract the construct's Deployment sets (`OperatorEnv`,
 * src/api/operator-env.ts, shared with constructs/operator/), command-line flags that override it, and defaults for a
 * run from a laptop.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Duration } from '../../api/duration';
import { DEFAULT_WORKERS, KEYSTONE_PACINGS, KeystoneLimitDefaults, MAX_WORKERS, OperatorEnv, ReconciledKinds, type KeystonePacing, type ReconciledKind } from '../../api/operator-env';
import { SECRET_ACCESS_MODES, SecretAccessMode } from '../../api/secret-access';
import { LOG_LEVELS, type LogLevel } from './log';

/** The environment variables the operator reads: the construct's contract (src/api/operator-env.ts). */
export const OPERATOR_ENV = OperatorEnv;

/** Where the backups go; absent when no OpenBao is configured. */
export interface OpenBaoConfig {
  readonly address: string;
  readonly authMethod: 'kubernetes' | 'token';
  readonly authMount: string;
  readonly role?: string;
  /** Never logged. */
  readonly token?: string;
  readonly caFile?: string;
}

export interface OperatorConfig {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace: string;
  readonly identity: string;
  readonly leaseName: string;
  readonly leaderElect: boolean;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly bindAddress: string;
  readonly healthPort: number;
  readonly metricsPort: number;
  readonly logLevel: LogLevel;
  readonly resyncPeriodMs: number;
  readonly shutdownTimeoutMs: number;
  /** Workers of every controller (controller-runtime's MaxConcurrentReconciles). */
  readonly workers: number;
  /** Workers of single kinds, overriding `workers` (controller-runtime's GroupKindConcurrency). */
  readonly workersPerKind: Readonly<Partial<Record<ReconciledKind, number>>>;
  readonly openBao?: OpenBaoConfig;
  /** Roll the workloads that opted in when their delivered Secret switches (docs/configure/handoff.md). */
  readonly consumerHandoff: boolean;
  /** The client-side limit per Keystone endpoint (0: none). */
  readonly keystoneRate: number;
  readonly keystoneInFlight: number;
  /** How the requests in flight are held (src/keystone/pacing.ts), and the workers adaptive pacing leaves spare. */
  readonly keystonePacing: KeystonePacing;
  readonly keystoneSpareWorkers: number;
  /** How often the heap trimmer looks for a passed burst (src/operator/runtime/heap.ts); 0: never. */
  readonly heapTrimIntervalMs: number;
  /** The container's memory limit in bytes, exported for the heap alert; absent: the cgroup's, if any. */
  readonly memoryLimitBytes?: number;
  /** How the operator is granted Secrets: cluster-wide, or per namespace (docs/install/namespaced.md). */
  readonly secretAccess: SecretAccessMode;
  /** The base name of its RBAC objects, which the conditions of a refused namespace name (`<name>-secrets`). */
  readonly rbacName: string;
}

/** One setting: its flag, its environment variable, its default, what it does. */
export interface Setting {
  /** The option's key (commander's camelCase of the flag). */
  readonly key: string;
  readonly flag: string;
  readonly env?: string;
  readonly default?: string;
  readonly description: string;
}

/** Every setting, in --help order. */
export const SETTINGS: readonly Setting[] = [
  { key: 'kubeconfig', flag: '--kubeconfig <file>', env: 'KUBECONFIG', description: 'kubeconfig to run against; default: KUBECONFIG, the pod\'s service account, ~/.kube/config' },
  { key: 'context', flag: '--context <name>', description: 'kubeconfig context; default: the current context' },
  { key: 'namespace', flag: '--namespace <ns>', env: OPERATOR_ENV.namespace, default: 'keystone-appcred-system', description: 'namespace of the election Lease (the operator\'s own)' },
  { key: 'identity', flag: '--identity <name>', env: OPERATOR_ENV.podName, default: '<hostname>-<random>', description: 'this replica\'s election identity and Events\' reportingInstance' },
  { key: 'leaseName', flag: '--lease-name <name>', env: OPERATOR_ENV.leaseName, default: 'keystone-appcred-operator-leader', description: 'the election Lease' },
  { key: 'leaderElect', flag: '--no-leader-elect', description: 'reconcile at once, without leader election (one replica only)' },
  { key: 'leaseDuration', flag: '--lease-duration <duration>', default: '15s', description: 'how long a leader\'s claim lasts unrenewed (a standby takes over after it)' },
  { key: 'renewDeadline', flag: '--renew-deadline <duration>', default: '10s', description: 'the leader steps down when it could not renew for this long' },
  { key: 'retryPeriod', flag: '--retry-period <duration>', default: '2s', description: 'pause between attempts to acquire or renew the Lease' },
  { key: 'bindAddress', flag: '--bind-address <address>', default: '0.0.0.0', description: 'address of the health and metrics servers' },
  { key: 'healthPort', flag: '--health-port <port>', env: OPERATOR_ENV.healthPort, default: '8081', description: 'port of /healthz and /readyz (0: any free port)' },
  { key: 'metricsPort', flag: '--metrics-port <port>', env: OPERATOR_ENV.metricsPort, default: '8080', description: 'port of /metrics (0: any free port; the health port: one server)' },
  { key: 'logLevel', flag: '--log-level <level>', env: OPERATOR_ENV.logLevel, default: 'info', description: 'debug, info, warn or error' },
  { key: 'resyncPeriod', flag: '--resync-period <duration>', default: '1h', description: 'reconcile every cached object again this often, from the cache (0s: never)' },
  { key: 'heapTrimInterval', flag: '--heap-trim-interval <duration>', default: '10s', description: 'how often to look whether a burst of work has passed and left heap to give back; a quiet process that grew 32 MiB since the last trim runs one memory-reducing collection (0s: never)' },
  {
    key: 'memoryLimit',
    flag: '--memory-limit <bytes>',
    env: OPERATOR_ENV.memoryLimit,
    default: '<the cgroup\'s>',
    description: 'the container\'s memory limit (bytes, or a quantity such as 512Mi), exported as keystone_appcred_memory_limit_bytes for the heap alert; the construct passes resources.limits.memory',
  },
  { key: 'shutdownTimeout', flag: '--shutdown-timeout <duration>', default: '20s', description: 'on SIGTERM, how long reconciles in flight may take before exit; the Lease is released only when they finished' },
  { key: 'keystoneRate', flag: '--keystone-rate <per-second>', env: OPERATOR_ENV.keystoneRate, default: String(KeystoneLimitDefaults.requestsPerSecond), description: 'requests per second to one Keystone endpoint, logins included, however many workers run (0: no limit); a 429 or 503 with Retry-After pauses the endpoint' },
  { key: 'keystoneInFlight', flag: '--keystone-in-flight <count>', env: OPERATOR_ENV.keystoneInFlight, default: String(KeystoneLimitDefaults.inFlight), description: 'requests in flight to one Keystone endpoint at once (0: no limit); with adaptive pacing, the most it allows' },
  {
    key: 'keystonePacing',
    flag: '--keystone-pacing <pacing>',
    env: OPERATOR_ENV.keystonePacing,
    default: KeystoneLimitDefaults.pacing,
    description: 'adaptive: hold the requests in flight to one Keystone endpoint to the workers it has free, as its latency tells, less --keystone-spare-workers, so its other users never wait behind a mass rotation; fixed: to --keystone-in-flight',
  },
  { key: 'keystoneSpareWorkers', flag: '--keystone-spare-workers <count>', env: OPERATOR_ENV.keystoneSpareWorkers, default: String(KeystoneLimitDefaults.spareWorkers), description: 'adaptive pacing: Keystone workers left free for its other users below the capacity measured (at least one request stays in flight)' },
  { key: 'workers', flag: '--workers <n>', env: OPERATOR_ENV.workers, default: String(DEFAULT_WORKERS), description: `objects of one kind reconciled at once, per kind (1 to ${MAX_WORKERS}); one object never by two workers` },
  { key: 'workersPerKind', flag: '--workers-per-kind <kind=n,...>', env: OPERATOR_ENV.workersPerKind, description: 'workers of single kinds, overriding --workers, e.g. KeystoneApplicationCredential=8,ControlPlane=1' },
  { key: 'openbaoAddress', flag: '--openbao-address <url>', env: OPERATOR_ENV.openBaoAddress, description: 'OpenBao\'s address, for backups' },
  { key: 'openbaoAuthMethod', flag: '--openbao-auth-method <method>', env: OPERATOR_ENV.openBaoAuthMethod, default: 'kubernetes', description: 'kubernetes (the service account token) or token' },
  { key: 'openbaoAuthMount', flag: '--openbao-auth-mount <path>', env: OPERATOR_ENV.openBaoAuthMount, default: 'kubernetes', description: 'mount path of the Kubernetes auth method' },
  { key: 'openbaoRole', flag: '--openbao-role <role>', env: OPERATOR_ENV.openBaoRole, description: 'OpenBao role of the Kubernetes auth method' },
  { key: 'openbaoToken', flag: '', env: OPERATOR_ENV.openBaoToken, description: 'OpenBao token for token auth (environment only: a flag would show in ps)' },
  { key: 'openbaoCaFile', flag: '--openbao-ca-file <file>', env: OPERATOR_ENV.openBaoCaFile, description: 'PEM file with the CA of OpenBao\'s certificate' },
  {
    key: 'secretAccess',
    flag: '--secret-access <mode>',
    env: OPERATOR_ENV.secretAccess,
    default: SecretAccessMode.ClusterWide,
    description: 'cluster-wide: list and watch Secrets in every namespace (a ClusterRole grants them); namespaced: only in the namespaces the ControlPlanes and identities name, each granted by a Role there (an order where none is reads SecretAccessNotGranted)',
  },
  { key: 'rbacName', flag: '--rbac-name <name>', env: OPERATOR_ENV.rbacName, default: 'keystone-appcred-operator', description: 'the base name of the operator\'s RBAC objects (the construct\'s name): the Role <name>-secrets its conditions name where Secrets are not granted' },
  {
    key: 'consumerHandoff',
    flag: '--consumer-handoff',
    env: OPERATOR_ENV.consumerHandoff,
    default: 'false',
    description: 'roll the Deployments, StatefulSets and DaemonSets annotated c5c3.io/rollout-on-credential-switch when their delivered Secret switches (needs get, list, watch and patch on them)',
  },
];

/** The flags as commander parsed them: strings, and `leaderElect` as a boolean. */
export type Flags = Readonly<Record<string, string | boolean | undefined>>;

/** Resolves flags over the environment over defaults; an error names the flag or variable, the value and the rule. */
export function resolveConfig(flags: Flags, env: NodeJS.ProcessEnv, defaults: { hostname?: string; random?: () => string } = {}): OperatorConfig {
  const read = (key: string): { value: string; from: string } | undefined => {
    const setting = SETTINGS.find((s) => s.key === key);
    if (!setting) throw new Error(`unknown setting ${key}`);
    const flag = flags[key];
    if (typeof flag === 'string' && flag !== '') return { value: flag, from: setting.flag.split(' ')[0] };
    if (setting.env && setting.env !== 'KUBECONFIG' && env[setting.env]) return { value: env[setting.env] as string, from: setting.env };
    if (setting.default !== undefined && !setting.default.startsWith('<')) return { value: setting.default, from: `the default of ${setting.flag.split(' ')[0]}` };
    return undefined;
  };
  const fail = (got: { value: string; from: string }, rule: string): never => {
    throw new Error(`${got.from} (${got.value}) ${rule}`);
  };
  const port = (key: string): number => {
    const got = read(key) as { value: string; from: string };
    const n = Number(got.value);
    return Number.isInteger(n) && n >= 0 && n <= 65535 && /^\d+$/.test(got.value) ? n : fail(got, 'must be a port number (0 to 65535)');
  };
  const duration = (key: string): number => {
    const got = read(key) as { value: string; from: string };
    let ms: number;
    try {
      ms = Duration.parse(got.value, got.from).milliseconds;
    } catch {
      return fail(got, 'must be a Go duration such as 15s, 1m30s or 1h');
    }
    return ms < 0 ? fail(got, 'must not be negative') : ms;
  };
  const count = (key: string, rule: string, integer: boolean): number => {
    const got = read(key) as { value: string; from: string };
    const n = Number(got.value);
    return /^\d+(\.\d+)?$/.test(got.value) && Number.isFinite(n) && (!integer || Number.isInteger(n)) ? n : fail(got, rule);
  };
  const name = (key: string): string => {
    const got = read(key) as { value: string; from: string };
    return /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(got.value) ? got.value : fail(got, 'must be a Kubernetes name (lowercase letters, digits, - and .)');
  };
  const level = read('logLevel') as { value: string; from: string };
  if (!(LOG_LEVELS as readonly string[]).includes(level.value)) fail(level, `must be one of ${LOG_LEVELS.join(', ')}`);
  const identityGot = read('identity');
  const identity = identityGot?.value ?? `${defaults.hostname ?? hostname()}-${(defaults.random ?? (() => randomBytes(3).toString('hex')))()}`;
  if (identity.length > 128) fail(identityGot as { value: string; from: string }, 'must be at most 128 characters');
  const config: OperatorConfig = {
    kubeconfig: typeof flags.kubeconfig === 'string' ? flags.kubeconfig : undefined,
    context: typeof flags.context === 'string' ? flags.context : undefined,
    namespace: name('namespace'),
    identity,
    leaseName: name('leaseName'),
    leaderElect: flags.leaderElect !== false,
    leaseDurationMs: duration('leaseDuration'),
    renewDeadlineMs: duration('renewDeadline'),
    retryPeriodMs: duration('retryPeriod'),
    bindAddress: (read('bindAddress') as { value: string }).value,
    healthPort: port('healthPort'),
    metricsPort: port('metricsPort'),
    logLevel: level.value as LogLevel,
    resyncPeriodMs: duration('resyncPeriod'),
    shutdownTimeoutMs: duration('shutdownTimeout'),
    heapTrimIntervalMs: duration('heapTrimInterval'),
    workers: workerCount(read('workers') as { value: string; from: string }, fail),
    workersPerKind: workersPerKind(read('workersPerKind'), fail),
    openBao: openBao(read, fail),
    consumerHandoff: flags.consumerHandoff === true || toggle(read('consumerHandoff') as { value: string; from: string }, fail),
    keystoneRate: count('keystoneRate', 'must be a number of requests per second, 0 or more (0: no limit)', false),
    keystoneInFlight: count('keystoneInFlight', 'must be a whole number of requests, 0 or more (0: no limit)', true),
    keystonePacing: keystonePacing(read('keystonePacing') as Got, fail),
    keystoneSpareWorkers: count('keystoneSpareWorkers', 'must be a whole number of Keystone workers, 0 or more', true),
    secretAccess: secretAccessMode(read('secretAccess') as Got, fail),
    rbacName: name('rbacName'),
  };
  const memory = read('memoryLimit');
  return memory ? { ...config, memoryLimitBytes: memoryBytes(memory, fail) } : config;
}

const QUANTITY_FACTORS: Readonly<Record<string, number>> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };

/**
 * A memory amount: whole bytes (what the downward API's `resourceFieldRef` of `limits.memory` gives) or a Kubernetes
 * quantity (`512Mi`, `1G`); more than zero.
 */
function memoryBytes(got: Got, fail: (got: Got, rule: string) => never): number {
  const match = /^(\d+(?:\.\d+)?)(k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(got.value.trim());
  const bytes = match ? Math.round(Number(match[1]) * (QUANTITY_FACTORS[match[2] ?? ''] as number)) : Number.NaN;
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : fail(got, 'must be a memory amount in bytes or a quantity such as 512Mi, more than 0');
}

/** A boolean setting from the environment (or its default): `true` or `false`. */
function toggle(got: { value: string; from: string }, fail: (got: { value: string; from: string }, rule: string) => never): boolean {
  const value = got.value.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  return fail(got, 'must be true or false');
}

type Got = { value: string; from: string };

function keystonePacing(got: Got, fail: (got: Got, rule: string) => never): KeystonePacing {
  return (KEYSTONE_PACINGS as readonly string[]).includes(got.value) ? (got.value as KeystonePacing) : fail(got, `must be one of ${KEYSTONE_PACINGS.join(', ')}`);
}

function secretAccessMode(got: Got, fail: (got: Got, rule: string) => never): SecretAccessMode {
  return (SECRET_ACCESS_MODES as readonly string[]).includes(got.value) ? (got.value as SecretAccessMode) : fail(got, `must be one of ${SECRET_ACCESS_MODES.join(', ')}`);
}

function workerCount(got: Got, fail: (got: Got, rule: string) => never, value = got.value): number {
  const n = Number(value);
  return /^\d+$/.test(value) && n >= 1 && n <= MAX_WORKERS ? n : fail(got, `must be a whole number of workers from 1 to ${MAX_WORKERS}`);
}

/** `Kind=N` pairs, comma-separated; a kind named twice, or one the operator does not reconcile, is refused. */
function workersPerKind(got: Got | undefined, fail: (got: Got, rule: string) => never): Partial<Record<ReconciledKind, number>> {
  const out: Partial<Record<ReconciledKind, number>> = {};
  if (!got) return out;
  for (const pair of got.value.split(',').map((p) => p.trim()).filter(Boolean)) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(pair);
    if (!match) fail(got, `must be a comma-separated list of Kind=N, e.g. KeystoneApplicationCredential=8 (got "${pair}")`);
    const [, kind, count] = match as RegExpExecArray;
    if (!(ReconciledKinds as readonly string[]).includes(kind)) fail(got, `names ${kind}, which is not a kind the operator reconciles (${ReconciledKinds.join(', ')})`);
    if ((out as Record<string, number>)[kind] !== undefined) fail(got, `names ${kind} twice`);
    out[kind as ReconciledKind] = workerCount(got, (g, rule) => fail(g, `${kind}: ${rule}`), count.trim());
  }
  return out;
}

function openBao(
  read: (key: string) => { value: string; from: string } | undefined,
  fail: (got: { value: string; from: string }, rule: string) => never,
): OpenBaoConfig | undefined {
  const address = read('openbaoAddress');
  if (!address) return undefined;
  if (!/^https?:\/\/[^/\s?#]+(\/[^\s?#]*)?$/.test(address.value)) fail(address, 'must be an http or https URL');
  const method = read('openbaoAuthMethod') as { value: string; from: string };
  if (method.value !== 'kubernetes' && method.value !== 'token') fail(method, 'must be kubernetes or token');
  const role = read('openbaoRole')?.value;
  const token = read('openbaoToken')?.value;
  if (method.value === 'kubernetes' && !role) fail(method, `needs a role: set ${OPERATOR_ENV.openBaoRole} or --openbao-role`);
  if (method.value === 'token' && !token) fail(method, `needs a token: set ${OPERATOR_ENV.openBaoToken}`);
  return {
    address: address.value.replace(/\/+$/, ''),
    authMethod: method.value as 'kubernetes' | 'token',
    authMount: (read('openbaoAuthMount') as { value: string }).value,
    role,
    token,
    caFile: read('openbaoCaFile')?.value,
  };
}

/** The configuration as a log line may show it: everything but the OpenBao token. */
export function describeConfig(config: OperatorConfig): Record<string, string | number | boolean | undefined> {
  const { openBao, workersPerKind, ...rest } = config;
  const perKind = Object.entries(workersPerKind).map(([kind, n]) => `${kind}=${n}`).join(',');
  return {
    ...rest,
    ...(perKind ? { workersPerKind: perKind } : {}),
    openBaoAddress: openBao?.address,
    openBaoAuthMethod: openBao?.authMethod,
    openBaoToken: openBao?.token ? '(set)' : undefined,
  };
}
