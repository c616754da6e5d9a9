/**
 * A controller reconciles the objects of one kind: its informer and the informers of the kinds it watches feed keys
 * (through mappers) into its work queue, and `concurrency` workers call `reconcile` for one key at a time each. A
 * reconcile that returns normally is forgotten by the backoff and, with `requeueAfter`, comes back then; one that
 * throws comes back after the key's next backoff delay, or, when its error names a dependency that did not answer,
 * when that dependency answers again: when a pass (a result's or an error's `answered`) reached it (./dependencies.ts). Every outcome is one JSON log line and a metric sample.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isConflict } from '../../kube/errors';
import { parseKey, type KubeObject, type ObjectKey, type ResourceKind } from '../../kube/object';
import type { BackoffOptions } from './backoff';
import { MANAGEMENT, parseClusterKey, type ClusterScope } from './clusters';
import { answeredOf, dependenciesOf, type DependencyWaits } from './dependencies';
import { errorMessage, type Logger } from './log';
import type { MapFunction, Mapper } from './mapper';
import type { OperatorMetrics, ReconcileOutcome } from './metrics';
import { WorkQueue } from './queue';

/** The object to reconcile. It may no longer exist: read it from the cache and treat "gone" as a normal case. */
export interface Request {
  readonly key: ObjectKey;
  readonly namespace?: string;
  readonly name: string;
  /**
   * The cluster it lives on: {@link MANAGEMENT} (`''`) for the management cluster, else a registered target cluster's
   * name (only for a controller whose `clusters` is `all`).
   */
  readonly cluster: string;
}

/** What a successful reconcile asks for. */
export interface Result {
  /** Reconcile again after this many milliseconds (e.g. at the plan's `wakeAt`); an earlier wake-up wins. */
  readonly requeueAfter?: number;
  /** A short reason for the log line (e.g. the Ready condition's reason). Never a secret. */
  readonly reason?: string;
  /**
   * The dependencies the pass reached and that answered it, named as a failed pass's `waitsOn` names them: every object
   * waiting on one of them is woken (./dependencies.ts). A pass that did not reach a dependency names none.
   * @default none
   */
  readonly answered?: readonly string[];
}

/** Reconciles one object; throws to be retried with backoff (a 409 conflict is retried too, and logged as such). */
export type Reconcile = (request: Request) => Promise<Result | void>;

/** A kind whose changes requeue primary objects. */
export interface WatchSpec<W extends KubeObject = KubeObject> {
  readonly kind: ResourceKind<W>;
  /** The keys of the primary objects a changed object affects (see mapper.ts: byOwner, byLabels, byIndex). */
  readonly map: Mapper<W> | MapFunction<W>;
  /** Watch the kind on every registered target cluster too (`all`), or on the management cluster only. @default "management" */
  readonly clusters?: ClusterScope;
}

export interface ControllerSpec<T extends KubeObject = KubeObject> {
  /** The primary kind: each of its objects is reconciled on every change, on resync and on wake-ups. */
  readonly kind: ResourceKind<T>;
  readonly reconcile: Reconcile;
  /** Other kinds whose changes requeue primary objects. */
  readonly watches?: readonly WatchSpec[];
  /** Name in logs and metrics. @default kind.kind */
  readonly name?: string;
  /**
   * Workers (controller-runtime's MaxConcurrentReconciles): different keys are reconciled in parallel, one key never.
   * @default the manager's `workers` for this controller's name, else 1
   */
  readonly concurrency?: number;
  /** Backoff after a failed reconcile. @default 200 ms doubling to 5 min, +20 % jitter */
  readonly backoff?: BackoffOptions;
  /**
   * Reconcile the primary kind's objects on every registered target cluster too (`all`; requests carry the cluster), or
   * on the management cluster only. @default "management"
   */
  readonly clusters?: ClusterScope;
}

export interface ControllerDeps {
  readonly metrics: OperatorMetrics;
  readonly logger: Logger;
  /** The work-queue keys of every cached primary object (queued when the controller starts). */
  readonly keys: () => readonly string[];
  /**
   * Where a pass that failed on a dependency waits for it (./dependencies.ts): probed and woken with every other object
   * of the manager that waits on it. @default none: every failure is backed off per key
   */
  readonly waits?: DependencyWaits;
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  private running = false;
  private workers: Promise<void>[] = [];
  private active = 0;
  /** Workers started (the spec's concurrency, at least 1). */
  private size = 1;

  constructor(
    readonly spec: ControllerSpec,
    private readonly deps: ControllerDeps,
  ) {
    this.name = spec.name ?? spec.kind.kind;
    this.queue = new WorkQueue({ backoff: spec.backoff, onDepth: (depth) => deps.metrics.queueDepth(this.name, depth) });
  }

  /** Queues a work-queue key (ignored until the controller runs: it queues every object when it starts). */
  enqueue(key: string): void {
    if (this.running) this.queue.add(key);
  }

  /** Queues every cached primary object and starts the workers. */
  start(): void {
    if (this.running || this.queue.shuttingDown) return;
    this.running = true;
    for (const key of this.deps.keys()) this.queue.add(key);
    this.size = Math.max(1, Math.floor(this.spec.concurrency ?? 1));
    this.deps.metrics.workers(this.name, { max: this.size, active: 0 });
    this.workers = Array.from({ length: this.size }, () => this.work());
    this.deps.logger.info('controller started', { controller: this.name, workers: this.size, queued: this.queue.depth });
  }

  /** Stops handing out keys and waits for the reconciles in flight; false when `timeoutMs` passed first. */
  async stop(timeoutMs: number): Promise<boolean> {
    this.running = false;
    const drained = await this.queue.drain(timeoutMs);
    if (drained) await Promise.all(this.workers);
    return drained;
  }

  /** Workers reconciling a key now. */
  get activeWorkers(): number {
    return this.active;
  }

  /**
   * One worker: takes a key, reconciles it, marks it done. The queue hands a key to one worker at a time (a key added
   * while it is reconciled waits for `done`), so whatever a pass keeps per key (the reconcilers' converged passes,
   * parked children, status writes guarded by the resourceVersion the pass read) is touched by one pass at a time.
   */
  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      if (this.queue.shuttingDown) {
        // Handed out just before the stop, and not started: a stopping controller (one that lost its Lease) starts
        // nothing more. The key goes with the queue; the next leader queues every object when it starts.
        this.queue.done(key);
        return;
      }
      this.setActive(+1);
      try {
        await this.process(key);
      } finally {
        this.setActive(-1);
        this.queue.done(key);
      }
      // A pass that needs no I/O (a converged order, read from the caches) resolves in microtasks alone, and so does the
      // next key's `get`: without a turn of the event loop between passes, a queue of thousands of such keys held timers
      // and sockets for its whole length (the Lease's renewal lost after 10 s at a start with 20,000 converged orders;
      // health probes and watch events waited alike). One turn per pass costs microseconds.
      await nextTurn();
    }
  }

  private setActive(delta: number): void {
    this.active += delta;
    this.deps.metrics.workers(this.name, { max: this.size, active: this.active });
  }

  private async process(queued: string): Promise<void> {
    const { cluster, key } = parseClusterKey(queued);
    const { namespace, name } = parseKey(key);
    const started = performance.now();
    let outcome: ReconcileOutcome;
    const fields: Record<string, string | number | undefined> = { controller: this.name, ...(cluster !== MANAGEMENT ? { cluster } : {}), key };
    // This controller's object: another controller's pass on an object of the same name neither answers nor ends its wait.
    const waiter = { controller: this.name, key: queued };
    try {
      const result = (await this.spec.reconcile({ key, namespace, name, cluster })) ?? {};
      this.queue.forget(queued);
      this.deps.waits?.release(waiter);
      this.deps.waits?.answered(result.answered ?? []);
      const after = result.requeueAfter;
      if (after !== undefined && Number.isFinite(after) && after >= 0) {
        this.queue.addAfter(queued, after);
        fields.requeueAfterMs = Math.round(after);
        outcome = 'requeue';
      } else {
        outcome = 'success';
      }
      fields.reason = result.reason;
    } catch (error) {
      // A conflict, also one a reconciler's error wraps as its cause (the credential reconciler's pass error)
      outcome = isConflict(error) || (error instanceof Error && isConflict(error.cause)) ? 'conflict' : 'error';
      const waitsOn = this.deps.waits ? dependenciesOf(error) : [];
      let retryInMs: number;
      if (waitsOn.length > 0) {
        // A dependency did not answer: the key waits on it, woken when it answers (its probe is one waiter's pass).
        this.deps.waits?.wait(waiter, waitsOn, () => this.enqueue(queued));
        retryInMs = this.queue.addAfterLongest(queued);
      } else {
        this.deps.waits?.release(waiter);
        retryInMs = this.queue.addRateLimited(queued);
      }
      // What the failed pass reached and was answered by answers for the objects waiting on it.
      this.deps.waits?.answered(answeredOf(error));
      fields.retries = this.queue.retries(queued);
      fields.retryInMs = retryInMs;
      if (waitsOn.length > 0) fields.waitsOn = waitsOn.join(', ');
      fields.error = errorMessage(error);
    }
    const seconds = (performance.now() - started) / 1000;
    fields.durationMs = Math.round(seconds * 10_000) / 10;
    this.deps.metrics.reconciled(this.name, outcome, seconds);
    const line = { ...fields, result: outcome };
    // A skipped steady-state pass is the bulk of a resync (one per converged object): debug, so a resync logs nothing.
    if (outcome === 'error') this.deps.logger.warn('reconcile', line);
    else if (fields.reason === 'Unchanged') this.deps.logger.debug('reconcile', line);
    else this.deps.logger.info('reconcile', line);
  }
}
