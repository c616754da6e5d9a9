/**
 * The operator's Prometheus metrics (prom-client), in a registry of their own, served on `/metrics`:
 *
 * | metric | labels | meaning |
 * | --- | --- | --- |
 * | `keystone_appcred_reconcile_total` | kind, result | finished reconciles; result is success, requeue (success with a wake-up), conflict or error |
 * | `keystone_appcred_reconcile_errors_total` | kind | failed reconciles (conflicts included) |
 * | `keystone_appcred_reconcile_duration_seconds` | kind | histogram of reconcile durations |
 * | `keystone_appcred_workqueue_depth` | kind | keys waiting for a worker |
 * | `keystone_appcred_max_concurrent_reconciles` | kind | the controller's workers |
 * | `keystone_appcred_active_workers` | kind | workers reconciling an object now |
 * | `keystone_appcred_leader` | | 1 while this process holds the Lease |
 * | `keystone_appcred_informer_synced` | kind | 1 once the kind's cache is filled |
 * | `keystone_appcred_informer_objects` | kind | objects in the kind's cache (`Secret/metadata`: the metadata-only one) |
 * | `keystone_appcred_informer_relists_total` | kind, reason | relists after an expired watch or an error |
 * | `keystone_appcred_api_writes_total` | kind, verb | writes to the API server (a steady order causes none) |
 * | `keystone_appcred_keystone_wait_seconds` | endpoint | histogram of the time Keystone requests waited for the limit (`--keystone-rate`, `--keystone-in-flight`) |
 * | `keystone_appcred_keystone_in_flight` | endpoint | Keystone requests in flight now |
 * | `keystone_appcred_keystone_in_flight_peak` | endpoint | the most Keystone requests in flight at once since the start |
 * | `keystone_appcred_keystone_in_flight_limit` | endpoint | the requests in flight allowed now: the paced limit (`--keystone-pacing adaptive`) or `--keystone-in-flight` |
 * | `keystone_appcred_keystone_capacity` | endpoint | adaptive pacing: Keystone's free workers as the operator measured them (absent with fixed pacing) |
 * | `keystone_appcred_keystone_requests_total` | endpoint, result | Keystone requests by result: `success`, or the failure's kind (`transport`, `timeout`, `server`, `unauthorized`, `forbidden`, `not-found`, `conflict`, `bad-request`) |
 * | `keystone_appcred_memory_limit_bytes` | | the container's memory limit (`--memory-limit`), for the heap alert; absent when unknown |
 * | `keystone_appcred_heap_trims_total` | | memory-reducing collections after a burst (`--heap-trim-interval`) |
 * | `keystone_appcred_heap_trimmed_bytes_total` | | held V8 heap those collections gave back |
 * | `keystone_appcred_heap_trim_seconds_total` | | the pauses they took |
 * | `keystone_appcred_build_info` | version | 1; `version` is the operator's (its package.json), as kube's `kubernetes_build_info` |
 * | `keystone_appcred_target_cluster_connected` | cluster | 1 while a registered target cluster's API server answers, 0 while it does not or its kubeconfig is unusable |
 *
 * plus prom-client's default process metrics (`process_resident_memory_bytes`, `nodejs_eventloop_lag_seconds`, ...).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { exposition } from './scraped';

/** The load of one Keystone endpoint. */
export interface KeystoneEndpointLoad {
  readonly endpoint: string;
  readonly inFlight: number;
  readonly peakInFlight: number;
  /** The requests in flight allowed now (0: no limit). */
  readonly limit: number;
  /** Adaptive pacing: Keystone's free workers as measured; undefined with fixed pacing. */
  readonly capacity: number | undefined;
}

/** A controller's queue and workers as it last reported them (workers: undefined until it started). */
interface QueueState {
  depth: number;
  max: number | undefined;
  active: number | undefined;
}

/** How a reconcile ended. */
export type ReconcileOutcome = 'success' | 'requeue' | 'conflict' | 'error';

export class OperatorMetrics {
  readonly registry = new Registry();
  private readonly reconciles: Counter<'kind' | 'result'>;
  private readonly errors: Counter<'kind'>;
  private readonly duration: Histogram<'kind'>;
  /** Each controller's queue depth and workers, by kind, as last reported. */
  private readonly queues = new Map<string, QueueState>();
  private readonly leaderGauge: Gauge;
  private readonly synced: Gauge<'kind'>;
  private cacheSizes: () => Readonly<Record<string, number>> = () => ({});
  private readonly relists: Counter<'kind' | 'reason'>;
  private readonly writes: Counter<'kind' | 'verb'>;
  private readonly keystoneWait: Histogram<'endpoint'>;
  private keystoneEndpoints: () => readonly KeystoneEndpointLoad[] = () => [];
  private readonly targets: Gauge<'cluster'>;
  private readonly trims: Counter;
  private readonly trimmedBytes: Counter;
  private readonly trimSeconds: Counter;
  private readonly keystoneRequests: Counter<'endpoint' | 'result'>;
  private memoryLimitGauge?: Gauge;

  /**
   * `version`: the operator's version, exported as `keystone_appcred_build_info{version}` (absent without one);
   * `defaultMetrics`: prom-client's process metrics. @default no version; default metrics on
   */
  constructor(options: { defaultMetrics?: boolean; version?: string } = {}) {
    const registers = [this.registry];
    if (options.version !== undefined) {
      new Gauge({ name: 'keystone_appcred_build_info', help: 'Always 1; the version label is the running operator\'s version.', labelNames: ['version'], registers }).set({ version: options.version }, 1);
    }
    this.reconciles = new Counter({ name: 'keystone_appcred_reconcile_total', help: 'Finished reconciles by kind and result.', labelNames: ['kind', 'result'], registers });
    this.errors = new Counter({ name: 'keystone_appcred_reconcile_errors_total', help: 'Failed reconciles by kind.', labelNames: ['kind'], registers });
    this.duration = new Histogram({
      name: 'keystone_appcred_reconcile_duration_seconds',
      help: 'Reconcile durations by kind.',
      labelNames: ['kind'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    // Set at each scrape from what the controllers report (`queueDepth`, `workers`): they change on every key handed
    // out, twice a pass, and setting a labelled gauge hashes its labels each time (about 500 bytes of garbage a pass).
    const queues = this.queues;
    new Gauge({ name: 'keystone_appcred_workqueue_depth', help: 'Keys waiting for a worker, by kind.', labelNames: ['kind'], registers, collect() { for (const [kind, q] of queues) this.set({ kind }, q.depth); } });
    new Gauge({ name: 'keystone_appcred_max_concurrent_reconciles', help: 'Workers of the controller, by kind.', labelNames: ['kind'], registers, collect() { for (const [kind, q] of queues) if (q.max !== undefined) this.set({ kind }, q.max); } });
    new Gauge({ name: 'keystone_appcred_active_workers', help: 'Workers reconciling an object now, by kind.', labelNames: ['kind'], registers, collect() { for (const [kind, q] of queues) if (q.active !== undefined) this.set({ kind }, q.active); } });
    this.leaderGauge = new Gauge({ name: 'keystone_appcred_leader', help: '1 while this process holds the leader election Lease.', registers });
    this.synced = new Gauge({ name: 'keystone_appcred_informer_synced', help: '1 once the kind\'s cache is filled.', labelNames: ['kind'], registers });
    const sizes = () => this.cacheSizes();
    new Gauge({
      name: 'keystone_appcred_informer_objects',
      help: 'Objects in each cache, by kind (Secret/metadata: the Secrets cached as metadata only).',
      labelNames: ['kind'],
      registers,
      collect() {
        for (const [kind, size] of Object.entries(sizes())) this.set({ kind }, size);
      },
    });
    this.relists = new Counter({ name: 'keystone_appcred_informer_relists_total', help: 'Relists by kind and reason (expired, error).', labelNames: ['kind', 'reason'], registers });
    this.writes = new Counter({ name: 'keystone_appcred_api_writes_total', help: 'Writes to the API server by kind and verb.', labelNames: ['kind', 'verb'], registers });
    this.keystoneWait = new Histogram({
      name: 'keystone_appcred_keystone_wait_seconds',
      help: 'Time Keystone requests waited for the per-endpoint limit, by endpoint.',
      labelNames: ['endpoint'],
      buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    const endpoints = () => this.keystoneEndpoints();
    new Gauge({
      name: 'keystone_appcred_keystone_in_flight',
      help: 'Keystone requests in flight now, by endpoint.',
      labelNames: ['endpoint'],
      registers,
      collect() {
        this.reset();
        for (const e of endpoints()) this.set({ endpoint: e.endpoint }, e.inFlight);
      },
    });
    new Gauge({
      name: 'keystone_appcred_keystone_in_flight_peak',
      help: 'The most Keystone requests in flight at once since the start, by endpoint.',
      labelNames: ['endpoint'],
      registers,
      collect() {
        this.reset();
        for (const e of endpoints()) this.set({ endpoint: e.endpoint }, e.peakInFlight);
      },
    });
    new Gauge({
      name: 'keystone_appcred_keystone_in_flight_limit',
      help: 'The Keystone requests in flight allowed now, by endpoint: the paced limit (--keystone-pacing adaptive) or --keystone-in-flight (0: no limit).',
      labelNames: ['endpoint'],
      registers,
      collect() {
        this.reset();
        for (const e of endpoints()) this.set({ endpoint: e.endpoint }, e.limit);
      },
    });
    new Gauge({
      name: 'keystone_appcred_keystone_capacity',
      help: 'Adaptive pacing: the Keystone workers free for this operator as it measured them from their latency, by endpoint.',
      labelNames: ['endpoint'],
      registers,
      collect() {
        this.reset();
        for (const e of endpoints()) if (e.capacity !== undefined) this.set({ endpoint: e.endpoint }, e.capacity);
      },
    });
    this.targets = new Gauge({
      name: 'keystone_appcred_target_cluster_connected',
      help: '1 while a registered target cluster\'s API server answers; 0 while it does not, or its kubeconfig cannot be used.',
      labelNames: ['cluster'],
      registers,
    });
    this.keystoneRequests = new Counter({
      name: 'keystone_appcred_keystone_requests_total',
      help: 'Keystone requests by endpoint and result: success, or the kind of failure (transport, timeout, server, unauthorized, forbidden, not-found, conflict, bad-request).',
      labelNames: ['endpoint', 'result'],
      registers,
    });
    this.trims = new Counter({ name: 'keystone_appcred_heap_trims_total', help: 'Memory-reducing collections run once a burst of work had passed.', registers });
    this.trimmedBytes = new Counter({ name: 'keystone_appcred_heap_trimmed_bytes_total', help: 'Held V8 heap given back by those collections.', registers });
    this.trimSeconds = new Counter({ name: 'keystone_appcred_heap_trim_seconds_total', help: 'The pauses of those collections.', registers });
    this.leaderGauge.set(0);
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** One memory-reducing collection (src/operator/runtime/heap.ts). */
  heapTrimmed(trim: { heldBefore: number; heldAfter: number; seconds: number }): void {
    this.trims.inc();
    this.trimmedBytes.inc(Math.max(0, trim.heldBefore - trim.heldAfter));
    this.trimSeconds.inc(trim.seconds);
  }

  reconciled(kind: string, result: ReconcileOutcome, seconds: number): void {
    this.reconciles.inc({ kind, result });
    if (result === 'error' || result === 'conflict') this.errors.inc({ kind });
    this.duration.observe({ kind }, seconds);
  }

  queueDepth(kind: string, depth: number): void {
    this.queue(kind).depth = depth;
  }

  /** A controller's workers: how many it has, how many reconcile now. */
  workers(kind: string, workers: { readonly max: number; readonly active: number }): void {
    const q = this.queue(kind);
    q.max = workers.max;
    q.active = workers.active;
  }

  /** What a controller last reported of its queue and workers (exported at the next scrape). */
  private queue(kind: string): QueueState {
    let q = this.queues.get(kind);
    if (!q) this.queues.set(kind, (q = { depth: 0, max: undefined, active: undefined }));
    return q;
  }

  leader(isLeader: boolean): void {
    this.leaderGauge.set(isLeader ? 1 : 0);
  }

  informerSynced(kind: string, synced: boolean): void {
    this.synced.set({ kind }, synced ? 1 : 0);
  }

  /** Where `keystone_appcred_informer_objects` reads the caches' sizes from at each scrape. */
  cacheSizesFrom(sizes: () => Readonly<Record<string, number>>): void {
    this.cacheSizes = sizes;
  }

  relisted(kind: string, reason: 'expired' | 'error'): void {
    this.relists.inc({ kind, reason });
  }

  wrote(kind: string, verb: string): void {
    this.writes.inc({ kind, verb });
  }

  /** A Keystone request waited `seconds` for the endpoint's limit. */
  keystoneWaited(endpoint: string, seconds: number): void {
    this.keystoneWait.observe({ endpoint }, seconds);
  }

  /**
   * One Keystone request ended: `success` (a 2xx reply), or the kind of its failure (src/keystone/errors.ts): no answer
   * (`transport`, `timeout`), `server` (5xx, 429), a refusal (`unauthorized`, `forbidden`), or an answer that is part of
   * normal work (`not-found` on a delete, `conflict` on a create) or a rejected input (`bad-request`).
   */
  keystoneRequested(endpoint: string, result: string): void {
    this.keystoneRequests.inc({ endpoint, result });
  }

  /**
   * The container's memory limit in bytes (the heap alert divides the resident memory by it). The gauge exists only
   * once a limit is known: an unlabelled gauge is exported from its creation, and a limit of 0 would read as "full".
   */
  memoryLimit(bytes: number): void {
    this.memoryLimitGauge ??= new Gauge({
      name: 'keystone_appcred_memory_limit_bytes',
      help: 'The container\'s memory limit in bytes (--memory-limit, KAC_MEMORY_LIMIT: the construct passes resources.limits.memory).',
      registers: [this.registry],
    });
    this.memoryLimitGauge.set(bytes);
  }

  /** Where the in-flight gauges read the load of each Keystone endpoint. */
  keystoneLoad(endpoints: () => readonly KeystoneEndpointLoad[]): void {
    this.keystoneEndpoints = endpoints;
  }

  /** A registered target cluster's connection. */
  targetCluster(cluster: string, connected: boolean): void {
    this.targets.set({ cluster }, connected ? 1 : 0);
  }

  /** A target cluster was deregistered: its series goes. */
  forgetTargetCluster(cluster: string): void {
    this.targets.remove({ cluster });
  }

  /** The text exposition format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The same text in pieces, for a response written as it is made (./scraped.ts `exposition`). */
  pieces(): AsyncIterable<string> {
    return exposition(this.registry);
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
