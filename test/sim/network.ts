/**
 * The simulated network between an operator process and what it talks to: Keystone and OpenBao reached through the
 * process's own `fetch` (src/operator/controllers.ts `fetch`), the API servers through its own transports. Each
 * dependency has a fault of the moment (it answers, refuses connections, answers a status, or answers late), shared by
 * every process; a process that was killed reaches nothing any more (what it had in flight still lands, as a request on
 * the wire would). Every request is recorded with its process, the dependency, and whom it acts for.
 */
import type { HttpRequest, Query, Transport, WatchEvent, WatchOptions } from '../../src/kube/transport';
import type { FakeApiServer } from '../unit/kube/fake-api-server';
import type { FakeKeystoneServer } from '../support/fake-keystone/server';
import type { FakeOpenBaoServer } from '../support/fake-openbao';
import type { KeystoneWorkers } from '../support/fake-keystone/workers';

/** What a dependency does with a request now. */
export type Fault =
  | { readonly mode: 'up' }
  /** Connections refused. */
  | { readonly mode: 'down' }
  /** Every request answered with this status, without acting (5xx, 429, 401, 403), with a `Retry-After` when given. */
  | { readonly mode: 'status'; readonly status: number; readonly retryAfterSeconds?: number }
  /** Every answer comes this late (beyond the client's timeout: it times out). */
  | { readonly mode: 'slow'; readonly delayMs: number };

export const UP: Fault = { mode: 'up' };

export type Dependency = 'keystone' | 'openbao' | 'api' | 'target';

/** One request as the network carried it. */
export interface Call {
  readonly at: number;
  readonly process: string;
  readonly dependency: Dependency;
  readonly method: string;
  readonly path: string;
  /** The Keystone user it acts as or logs in as, when known. */
  readonly actor?: string;
  /** How it ended: an HTTP status, or `refused` / `timeout`. */
  outcome?: number | 'refused' | 'timeout';
  /** Keystone: its process's requests in flight at Keystone when it arrived, itself included. */
  inFlight?: number;
  /** Keystone: when it ended for its process (answered, or given up). */
  endedAt?: number;
}

/** How long a watch event takes from the API server to a process. */
const WATCH_LATENCY_MS = 5;

export const KEYSTONE_URL = 'http://keystone.sim:5000/v3';
export const OPENBAO_URL = 'http://openbao.sim:8200';

/** The dependencies' faults and the record of every call, shared by the processes of one run. */
export class Network {
  readonly faults: Record<Dependency, Fault> = { keystone: UP, openbao: UP, api: UP, target: UP };
  readonly calls: Call[] = [];
  /**
   * A crash armed for a moment: the first call it matches, once the dependency has acted on it, kills the process that
   * made it before the reply reaches it (`onTrip`), and is disarmed.
   */
  tripwire?: (call: Call) => boolean;
  onTrip?: (process: string) => void;
  /** Keystone's workers (a Keystone of finite capacity); none: Keystone answers at once. */
  keystoneWorkers?: KeystoneWorkers;
  /** Each process's requests in flight at Keystone now (reached it, not yet answered or given up). */
  readonly keystoneInFlight = new Map<string, number>();
  /** Called when a request of a process reaches Keystone (its `inFlight` set). */
  readonly keystoneArrivals: ((call: Call) => void)[] = [];

  constructor(
    readonly keystone: FakeKeystoneServer,
    readonly openBao: FakeOpenBaoServer,
    private readonly now: () => number,
  ) {}

  /** Whether the armed crash fires on `call` (then it has fired: the process is dead). */
  tripped(call: Call): boolean {
    if (!this.tripwire?.(call)) return false;
    this.tripwire = undefined;
    this.onTrip?.(call.process);
    return true;
  }

  /** Whether no dependency has a fault now. */
  get healthy(): boolean {
    return Object.values(this.faults).every((f) => f.mode === 'up');
  }

  /** The `fetch` of a process: Keystone and OpenBao by host; nothing once `alive()` is false. */
  fetchOf(process: string, alive: () => boolean): (url: string, init: RequestInit) => Promise<Response> {
    return async (url, init) => {
      const parsed = new URL(url);
      const dependency: Dependency = parsed.host === new URL(KEYSTONE_URL).host ? 'keystone' : 'openbao';
      const body = typeof init.body === 'string' && init.body.length > 0 ? (JSON.parse(init.body) as unknown) : undefined;
      const headers = new Headers(init.headers);
      const method = init.method ?? 'GET';
      const path = `${parsed.pathname}${parsed.search}`;
      const actor = dependency === 'keystone' ? this.keystone.actor(path, headers, body) : undefined;
      const call: Call = { at: this.now(), process, dependency, method, path: parsed.pathname, ...(actor ? { actor } : {}) };
      this.calls.push(call);
      if (!alive()) return refuse(call, url);
      const fault = this.faults[dependency];
      if (fault.mode === 'down') return refuse(call, url);
      const workers = dependency === 'keystone' ? this.keystoneWorkers : undefined;
      if (workers) return this.paced(call, fault, workers, { url, method, path, headers, body, signal: init.signal ?? undefined });
      if (fault.mode === 'slow') await delay(fault.delayMs, init.signal ?? undefined, call);
      if (fault.mode === 'status') return statusReply(call, fault);
      const response = dependency === 'keystone' ? this.keystone.handle(method, path, headers, body) : this.openBao.handle(method, parsed.pathname, headers, body);
      call.outcome = response.status;
      if (this.tripped(call)) return refuse(call, url);
      return response;
    };
  }

  /**
   * A request that reached a Keystone of finite capacity (or the proxy in front of it): in flight for its process
   * until it ends, served by Keystone's workers unless the fault of the moment answers it.
   */
  private async paced(call: Call, fault: Fault, workers: KeystoneWorkers, request: { url: string; method: string; path: string; headers: Headers; body: unknown; signal?: AbortSignal }): Promise<Response> {
    const { url, method, path, headers, body, signal } = request;
    const inFlight = (this.keystoneInFlight.get(call.process) ?? 0) + 1;
    this.keystoneInFlight.set(call.process, inFlight);
    call.inFlight = inFlight;
    for (const hook of this.keystoneArrivals) hook(call);
    try {
      if (fault.mode === 'slow') await delay(fault.delayMs, signal, call);
      if (fault.mode === 'status') return statusReply(call, fault);
      const response = await served(workers.serve(call.process, method, path, () => this.keystone.handle(method, path, headers, body), signal), signal, call);
      call.outcome = response.status;
      if (this.tripped(call)) return await refuse(call, url);
      return response;
    } finally {
      call.endedAt = this.now();
      this.keystoneInFlight.set(call.process, (this.keystoneInFlight.get(call.process) ?? 1) - 1);
    }
  }

  /** A process's transport to an API server (`api`: the management cluster's; `target`: a registered target cluster's). */
  transportOf(process: string, alive: () => boolean, server: FakeApiServer, dependency: 'api' | 'target'): Transport {
    const record = (method: string, path: string): Call => {
      const call: Call = { at: this.now(), process, dependency, method, path };
      this.calls.push(call);
      return call;
    };
    const fault = () => this.faults[dependency];
    const tripped = (call: Call) => this.tripped(call);
    const unreachable = () => !alive() || fault().mode === 'down';
    return {
      server: server.server,
      async request(request: HttpRequest) {
        const call = record(request.method, request.path);
        if (unreachable()) throw refusedError(server.server, call);
        const now = fault();
        if (now.mode === 'status') {
          call.outcome = now.status;
          return { status: now.status, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: now.status, reason: 'InternalError', message: 'injected' } };
        }
        if (now.mode === 'slow') await delay(now.delayMs, undefined, call);
        const response = await server.request(request);
        call.outcome = response.status;
        if (tripped(call)) throw refusedError(server.server, call);
        return response;
      },
      async watch(path: string, query: Query, onEvent: (event: WatchEvent) => void, onDone: (error?: Error) => void, options?: WatchOptions) {
        const call = record('WATCH', path);
        if (unreachable() || fault().mode === 'status') throw refusedError(server.server, call);
        // An event reaches the process a moment after the write (as over a real connection), in order.
        const deliver = (event: WatchEvent) => setTimeout(() => (alive() ? onEvent(event) : undefined), WATCH_LATENCY_MS);
        const stream = await server.watch(path, query, deliver, (error) => setTimeout(() => onDone(error), WATCH_LATENCY_MS), options);
        call.outcome = 200;
        return stream;
      },
    };
  }
}

/** The answer of a dependency under a `status` fault (a `Retry-After` with it when the fault gives one). */
function statusReply(call: Call, fault: Extract<Fault, { mode: 'status' }>): Response {
  call.outcome = fault.status;
  const headers = { 'content-type': 'application/json', ...(fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {}) };
  return call.dependency === 'keystone'
    ? new Response(JSON.stringify({ error: { code: fault.status, message: 'injected', title: 'Error' } }), { status: fault.status, headers })
    : new Response(JSON.stringify({ errors: [fault.status === 403 ? 'permission denied' : 'injected'] }), { status: fault.status, headers });
}

function refusedError(server: string, call: Call): Error {
  call.outcome = 'refused';
  return Object.assign(new Error(`connect ECONNREFUSED ${server}`), { code: 'ECONNREFUSED' });
}

function refuse(call: Call, url: string): Promise<never> {
  call.outcome = 'refused';
  return Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error(`connect ECONNREFUSED ${new URL(url).host}`), { code: 'ECONNREFUSED' }) }));
}

/** A reply of Keystone's workers, or the client's abort first (then rejects with its reason, as fetch does). */
function served(reply: Promise<Response>, signal: AbortSignal | undefined, call: Call): Promise<Response> {
  if (!signal) return reply;
  return new Promise((resolve, reject) => {
    const abort = () => {
      call.outcome = 'timeout';
      reject(signal.reason);
    };
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    reply.then(
      (response) => {
        signal.removeEventListener('abort', abort);
        resolve(response);
      },
      (error: unknown) => reject(error as Error),
    );
  });
}

/** Waits `ms` of virtual time, or until `signal` aborts (then rejects with its reason, as fetch does). */
function delay(ms: number, signal: AbortSignal | undefined, call: Call): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      call.outcome = 'timeout';
      reject(signal.reason);
    });
  });
}
