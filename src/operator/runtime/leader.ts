/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's leaderelection does it: a candidate takes the
 * Lease when it is free (no holder) or when its holder has not renewed it for `leaseDurationMs` as measured on the
 * candidate's own clock (from the moment it observed the last change, so clock skew between replicas does not matter);
 * the leader renews every `retryPeriodMs` and steps down when it could not renew for `renewDeadlineMs`; `release()`
 * clears `holderIdentity` so a standby takes over at once. Every write carries the resourceVersion it read, so two
 * candidates never both win.
 */
import type { KubeApi } from '../../kube/api';
import { isNotFound } from '../../kube/errors';
import { Kinds, type Lease, type LeaseSpec } from '../../kube/kinds';
import { microTime } from '../../kube/live-cluster';
import { errorMessage, silentLogger, type Logger } from './log';

/** The three calls election makes on its Lease. */
export interface LeaseClient {
  get(): Promise<Lease | undefined>;
  create(lease: Lease): Promise<Lease>;
  /** Fails with 409 when `lease.metadata.resourceVersion` is stale. */
  update(lease: Lease): Promise<Lease>;
}

/** The Lease `namespace/name` through the API. */
export function leaseClientOf(api: KubeApi, namespace: string, name: string): LeaseClient {
  return {
    get: () => api.get(Kinds.Lease, namespace, name),
    create: (lease) => api.create(Kinds.Lease, lease),
    update: (lease) => api.replace(Kinds.Lease, lease),
  };
}

export interface LeaderElectionOptions {
  /** This candidate's identity (the pod's name). */
  readonly identity: string;
  readonly namespace: string;
  /** The Lease's name. */
  readonly name: string;
  /** How long a holder's claim lasts without renewal. @default 15 000 */
  readonly leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it steps down. @default 10 000 */
  readonly renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew. @default 2 000 */
  readonly retryPeriodMs?: number;
  readonly logger?: Logger;
  /** Milliseconds since the epoch. @default Date.now */
  readonly now?: () => number;
  readonly random?: () => number;
}

/** Checks the durations as client-go does; an error names the option and its value. */
export function checkElectionDurations(leaseMs: number, renewMs: number, retryMs: number): void {
  if (!(retryMs > 0)) throw new Error(`retry period (${retryMs} ms) must be positive`);
  if (!(renewMs > retryMs * 1.2)) throw new Error(`renew deadline (${renewMs} ms) must be longer than 1.2 × the retry period (${retryMs} ms)`);
  if (!(leaseMs > renewMs)) throw new Error(`lease duration (${leaseMs} ms) must be longer than the renew deadline (${renewMs} ms)`);
  if (leaseMs < 1000) throw new Error(`lease duration (${leaseMs} ms) must be at least 1 s (the Lease counts whole seconds)`);
}

export class LeaderElector {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  private readonly logger: Logger;
  private readonly now: () => number;
  private leading = false;
  private stopped = false;
  private lease: Lease | undefined;
  private observed: { resourceVersion?: string; at: number } | undefined;
  private lastLeader: string | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly client: LeaseClient,
    private readonly options: LeaderElectionOptions,
  ) {
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    checkElectionDurations(this.leaseDurationMs, this.renewDeadlineMs, this.retryPeriodMs);
    this.logger = (options.logger ?? silentLogger).child({ lease: `${options.namespace}/${options.name}`, identity: options.identity });
    this.now = options.now ?? Date.now;
  }

  /** Whether this candidate holds the Lease. */
  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * Campaigns until it holds the Lease, calls `onStartedLeading`, renews until it cannot (then `onStoppedLeading`) or
   * until {@link stop}. Resolves when it stops leading or is stopped.
   */
  async run(callbacks: { onStartedLeading(): void; onStoppedLeading(): void }): Promise<void> {
    this.stopped = false;
    this.logger.info('campaigning for the lease');
    while (!this.stopped && !(await this.tryAcquireOrRenew())) {
      await this.sleep(this.retryPeriodMs * (1 + 0.2 * (this.options.random ?? Math.random)()));
    }
    if (this.stopped) return;
    this.leading = true;
    this.logger.info('became the leader');
    callbacks.onStartedLeading();
    let renewed = this.now();
    while (!this.stopped) {
      await this.sleep(this.retryPeriodMs);
      if (this.stopped) return;
      const left = this.renewDeadlineMs - (this.now() - renewed);
      if (await withTimeout(this.tryAcquireOrRenew(), Math.max(0, left))) {
        renewed = this.now();
      } else if (this.now() - renewed >= this.renewDeadlineMs) {
        if (this.stopped) return;
        this.leading = false;
        this.logger.error('lost the lease: could not renew it within the renew deadline', { renewDeadlineMs: this.renewDeadlineMs });
        callbacks.onStoppedLeading();
        return;
      }
    }
  }

  /** Ends {@link run} without releasing the Lease. */
  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  /** Stops and, when leading, clears `holderIdentity` so a standby takes over at once; true when released. */
  async release(): Promise<boolean> {
    this.stop();
    if (!this.leading) return false;
    this.leading = false;
    const now = microTime(new Date(this.now()));
    let lease = this.lease;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        lease ??= await this.client.get();
        if (lease?.spec?.holderIdentity !== this.options.identity) return false;
        // No holderIdentity: the Lease is free; a standby takes it on its next attempt.
        const spec: LeaseSpec = { leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: lease.spec.leaseTransitions ?? 0 };
        this.lease = await this.client.update({ ...lease, spec });
        this.logger.info('released the lease');
        return true;
      } catch (error) {
        lease = undefined;
        if (attempt === 1) this.logger.warn('could not release the lease; it expires on its own', { error: errorMessage(error) });
      }
    }
    return false;
  }

  /** One attempt: take the Lease when free or expired, or renew it when held. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.now();
    const seconds = Math.ceil(this.leaseDurationMs / 1000);
    const id = this.options.identity;
    if (this.leading && this.lease) {
      // Fast path: the leader renews its own last write without reading first.
      try {
        this.lease = await this.client.update({ ...this.lease, spec: { ...this.lease.spec, holderIdentity: id, leaseDurationSeconds: seconds, renewTime: microTime(new Date(now)) } });
        this.observed = { resourceVersion: this.lease.metadata.resourceVersion, at: now };
        return true;
      } catch (error) {
        this.logger.warn('renewing the lease failed', { error: errorMessage(error) });
        this.lease = undefined;
        return false;
      }
    }
    let current: Lease | undefined;
    try {
      current = await this.client.get();
      if (!current) {
        const spec: LeaseSpec = { holderIdentity: id, leaseDurationSeconds: seconds, acquireTime: microTime(new Date(now)), renewTime: microTime(new Date(now)), leaseTransitions: 0 };
        this.lease = await this.client.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.options.name, namespace: this.options.namespace }, spec });
        this.observed = { resourceVersion: this.lease.metadata.resourceVersion, at: now };
        this.newLeader(id);
        return true;
      }
    } catch (error) {
      if (!isNotFound(error)) this.logger.warn('reading or creating the lease failed', { error: errorMessage(error) });
      return false;
    }
    const spec = current.spec ?? {};
    if (!this.observed || this.observed.resourceVersion !== current.metadata.resourceVersion) {
      this.observed = { resourceVersion: current.metadata.resourceVersion, at: now };
    }
    const holder = spec.holderIdentity;
    if (holder) this.newLeader(holder);
    const heldFor = (spec.leaseDurationSeconds ?? seconds) * 1000;
    if (holder && holder !== id && this.observed.at + heldFor > now) return false;
    const next: LeaseSpec = {
      holderIdentity: id,
      leaseDurationSeconds: seconds,
      acquireTime: holder === id && spec.acquireTime ? spec.acquireTime : microTime(new Date(now)),
      renewTime: microTime(new Date(now)),
      leaseTransitions: holder === id ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
    };
    try {
      this.lease = await this.client.update({ ...current, spec: next });
      this.observed = { resourceVersion: this.lease.metadata.resourceVersion, at: now };
      this.newLeader(id);
      return true;
    } catch (error) {
      this.logger.debug('taking the lease failed', { error: errorMessage(error) });
      return false;
    }
  }

  private newLeader(identity: string): void {
    if (identity === this.lastLeader) return;
    this.lastLeader = identity;
    if (identity !== this.options.identity) this.logger.info('the lease is held by another candidate', { leader: identity });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

function withTimeout(promise: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
