/**
 * The operator's environment contract: the variables the construct's Deployment sets (constructs/operator/) and the
 * `keystone-appcred operator` command reads (src/operator/runtime/config.ts). Written once, here, where neither side
 * needs cdk8s.
 */
/** The environment variables the operator process reads. */
export const OperatorEnv = {
  /** The namespace the operator runs in (downward API). */
  namespace: 'KAC_NAMESPACE',
  /** The pod's name, the leader election identity (downward API). */
  podName: 'KAC_POD_NAME',
  /** The name of the election Lease in the operator's namespace. */
  leaseName: 'KAC_LEADER_ELECTION_LEASE',
  /** Port of `/healthz` and `/readyz`. */
  healthPort: 'KAC_HEALTH_PORT',
  /** Port of `/metrics`. */
  metricsPort: 'KAC_METRICS_PORT',
  /** `debug`, `info`, `warn` or `error`. */
  logLevel: 'KAC_LOG_LEVEL',
  /** OpenBao's address, e.g. `https://openbao.openbao.svc:8200`. */
  openBaoAddress: 'KAC_OPENBAO_ADDRESS',
  /** `kubernetes` or `token`. */
  openBaoAuthMethod: 'KAC_OPENBAO_AUTH_METHOD',
  /** Mount path of the Kubernetes auth method. */
  openBaoAuthMount: 'KAC_OPENBAO_AUTH_MOUNT',
  /** The OpenBao role the Kubernetes auth method logs in as. */
  openBaoRole: 'KAC_OPENBAO_ROLE',
  /** A token, for token auth (from a Secret). */
  openBaoToken: 'KAC_OPENBAO_TOKEN',
  /** A PEM file with the CA OpenBao's certificate chains to. */
  openBaoCaFile: 'KAC_OPENBAO_CA_FILE',
  /** `true`: roll the workloads that opted in when their delivered Secret switches (the consumer handoff). */
  consumerHandoff: 'KAC_CONSUMER_HANDOFF',
  /** Requests per second to one Keystone endpoint (0: no limit). */
  keystoneRate: 'KAC_KEYSTONE_RATE',
  /** Requests in flight to one Keystone endpoint (0: no limit); with adaptive pacing, the ceiling. */
  keystoneInFlight: 'KAC_KEYSTONE_IN_FLIGHT',
  /** `adaptive` or `fixed`: how the requests in flight to one Keystone endpoint are held. */
  keystonePacing: 'KAC_KEYSTONE_PACING',
  /** Adaptive pacing: the Keystone workers left free for its other users below the capacity measured. */
  keystoneSpareWorkers: 'KAC_KEYSTONE_SPARE_WORKERS',
  /** Workers of every controller: how many objects of one kind are reconciled at once. */
  workers: 'KAC_WORKERS',
  /** Workers of single kinds, overriding `KAC_WORKERS`: `Kind=N` pairs, comma-separated. */
  workersPerKind: 'KAC_WORKERS_PER_KIND',
  /** The container's memory limit in bytes (downward API, `resourceFieldRef` of `limits.memory`), for the heap alert. */
  memoryLimit: 'KAC_MEMORY_LIMIT',
  /** `cluster-wide` or `namespaced`: how the operator is granted Secrets, and so where it lists and watches them. */
  secretAccess: 'KAC_SECRET_ACCESS',
  /** The base name of the operator's RBAC objects (the construct's `name`): the Roles its conditions name. */
  rbacName: 'KAC_RBAC_NAME',
} as const;

/**
 * How the requests in flight to one Keystone endpoint are held (src/keystone/pacing.ts): `adaptive`, to the workers
 * Keystone has free for the operator as its latency tells, less the spare ones, at most the configured number; `fixed`,
 * to the configured number.
 */
export type KeystonePacing = 'adaptive' | 'fixed';

/** The pacings, for validation and help texts. */
export const KEYSTONE_PACINGS: readonly KeystonePacing[] = ['adaptive', 'fixed'];

/**
 * The defaults of the limit per Keystone endpoint (flags, environment and construct props alike). A password login and
 * a credential create each cost Keystone a bcrypt computation (about 280 ms of one core at its default cost 12), so
 * requests that queue at Keystone make everyone else wait: adaptive pacing holds the operator's requests in flight to
 * what Keystone has free, one worker left spare for its other users (on a Keystone of one worker: one request at a
 * time). 8 in flight is the ceiling, and 20 per second leaves room for the cheap calls (lists, token validations)
 * around the bcrypt ones; a big Keystone that other users never crowd is raised with the flags.
 */
export const KeystoneLimitDefaults = {
  requestsPerSecond: 20,
  inFlight: 8,
  pacing: 'adaptive' as KeystonePacing,
  spareWorkers: 1,
} as const;

/** The kinds the operator runs a controller for, by kind name: the kinds `KAC_WORKERS_PER_KIND` may name. */
export const ReconciledKinds = [
  'ControlPlane',
  'KeystoneProject',
  'KeystoneUser',
  'KeystoneRoleAssignment',
  'KeystoneApplicationCredential',
  'KeystoneClusterIdentity',
] as const;

/** A kind the operator runs a controller for. */
export type ReconciledKind = (typeof ReconciledKinds)[number];

/**
 * Workers per controller when neither the construct nor a flag says otherwise (controller-runtime's
 * MaxConcurrentReconciles). One key is never reconciled by two workers at once; different orders are. A new order's
 * pass spends most of its time waiting on Keystone (bcrypt) and on the API server, so with one worker a burst of new
 * orders or a mass rotation waits in one line while Keystone's own workers are idle. A pass has at most one Keystone
 * request in flight, so 8 workers can keep 8 Keystone workers busy (a Keystone of a few cores); what reaches Keystone
 * beyond that is the per-Keystone limit's to decide, not the worker count's.
 */
export const DEFAULT_WORKERS = 8;

/** The most workers a controller may have: beyond a few dozen, more workers only wait on the rate limit. */
export const MAX_WORKERS = 64;

/**
 * The process settings the operator runs with, beside its own variables: the construct's Deployment sets them, and
 * bench/operator.ts runs the operator with them so it measures the same process. glibc keeps at most two malloc arenas
 * (one per thread by default, and most of the memory they hold is free but not returned), allocations of 128 KiB and
 * more are mapped and unmapped on their own and the heap's free top is returned from 128 KiB on (glibc's default
 * raises the first threshold to 32 MiB as soon as such a block is freed, after which the response bodies and list
 * buffers of a burst stay in the arena, free but held), and V8's young generation is kept to 4 MiB semi-spaces (the
 * default grows them to 16 MiB, held for good after a burst). Measured at 500 converged orders on the same bench: RSS
 * 398 MiB against 527 MiB without the arena and semi-space settings; at 5,000 converged orders, two runs side by side,
 * 158 MiB with the two thresholds against 188 MiB without, of which 13 MiB outside V8's heap; resync CPU no worse
 * (docs/benchmarks.md, "The operator").
 */
export const OperatorRuntimeEnv: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '131072',
  NODE_OPTIONS: '--max-semi-space-size=4',
};
