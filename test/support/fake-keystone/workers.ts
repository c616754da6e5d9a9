/**
 * Keystone's finite capacity, for the fake (./server.ts): W workers (the processes or threads of its WSGI server), each
 * serving one request at a time for the request's service time, and a FIFO queue in front of them for the requests
 * that find every worker busy, as uWSGI's listen queue or mod_wsgi's daemon processes hold them. A bcrypt request (a
 * password or application credential login, an application credential create: Keystone hashes a secret) costs far more
 * than a read; what a request does happens when its service ends.
 *
 * The service runs on the global timers, so in the simulation (test/sim/) it runs on the virtual clock: no wall time,
 * the same seed the same queue. The server itself stays instant (test/e2e/fakes-conformance.test.ts compares its
 * answers, not their timing): the simulation's network (test/sim/network.ts) sends Keystone's requests through here.
 *
 * Every request is recorded as the workers saw it (who sent it, when it arrived, began service and ended, and when its
 * client gave up on it: a timed-out request still holds its worker to the end, as Keystone does not notice a client
 * that left mid-bcrypt), so that the simulation's invariants judge a client's pacing by what Keystone saw.
 */

/** The cost class of a request: `bcrypt` hashes or checks a secret, `read` does not. */
export type ServiceClass = 'bcrypt' | 'read';

/** The service times of the classes, ms. */
export interface ServiceTimes {
  readonly bcrypt: number;
  readonly read: number;
}

/**
 * Keystone's cost per request on one worker at bcrypt cost 12 (docs/operate/fleet.md: about 0.4 s of one worker per
 * rotation), and a read's (a list, a token validation, a GET by id).
 */
export const SERVICE_TIMES: ServiceTimes = { bcrypt: 400, read: 30 };

/** One request as the workers saw it. */
export interface ServedRequest {
  /** Who sent it: an operator process's name, or another user of Keystone. */
  readonly client: string;
  readonly method: string;
  readonly path: string;
  readonly serviceClass: ServiceClass;
  /** When it arrived (ms, the clock of the timers). */
  readonly arrivedAt: number;
  /** When a worker took it. */
  startedAt?: number;
  /** When its service ended (its answer left). */
  endedAt?: number;
  /** When its client gave up on it (a timeout): from then on it is not the client's any more. */
  abandonedAt?: number;
}

/** The class of a request by its method and path: logins and credential creates hash a secret. */
export function serviceClassOf(method: string, path: string): ServiceClass {
  const bare = path.split('?')[0] ?? path;
  if (method === 'POST' && /\/v3\/auth\/tokens\/?$/.test(bare)) return 'bcrypt';
  if (method === 'POST' && /\/v3\/users\/[^/]+\/application_credentials\/?$/.test(bare)) return 'bcrypt';
  return 'read';
}

export class KeystoneWorkers {
  /** Every request, in the order it arrived. */
  readonly requests: ServedRequest[] = [];
  /** Called when a worker takes a request (its `startedAt` set). */
  readonly started: ((request: ServedRequest) => void)[] = [];
  /** Every service time is this many times its class's (Keystone slowed by other load on its hosts). */
  slowdown = 1;
  private readonly queue: { readonly request: ServedRequest; readonly begin: () => void }[] = [];
  private busy = 0;
  private count: number;

  constructor(
    workers: number,
    private readonly now: () => number,
    readonly times: ServiceTimes = SERVICE_TIMES,
  ) {
    this.count = KeystoneWorkers.checked(workers);
  }

  /** The workers Keystone runs now. */
  get workers(): number {
    return this.count;
  }

  /** Scales Keystone to `workers`: more take from the queue at once; fewer let the requests in service finish. */
  set workers(workers: number) {
    this.count = KeystoneWorkers.checked(workers);
    this.dispatch();
  }

  /**
   * Serves one request: waits for a worker (FIFO), holds it for the request's service time, then `act` makes its
   * answer. `signal` is the client's: when it aborts, the client has left (the request is still served).
   */
  serve<T>(client: string, method: string, path: string, act: () => T, signal?: AbortSignal): Promise<T> {
    const serviceClass = serviceClassOf(method, path);
    const request: ServedRequest = { client, method, path: path.split('?')[0] ?? path, serviceClass, arrivedAt: this.now() };
    this.requests.push(request);
    signal?.addEventListener(
      'abort',
      () => {
        if (request.endedAt !== undefined || request.abandonedAt !== undefined) return;
        request.abandonedAt = this.now();
      },
      { once: true },
    );
    return new Promise<T>((resolve, reject) => {
      const begin = () => {
        request.startedAt = this.now();
        for (const hook of this.started) hook(request);
        setTimeout(() => {
          request.endedAt = this.now();
          this.busy--;
          this.dispatch();
          try {
            resolve(act());
          } catch (error) {
            reject(error as Error);
          }
        }, this.serviceMs(serviceClass));
      };
      this.queue.push({ request, begin });
      this.dispatch();
    });
  }

  /** How long a request of `serviceClass` holds its worker now. */
  serviceMs(serviceClass: ServiceClass): number {
    return this.times[serviceClass] * this.slowdown;
  }

  /** Starts queued requests while a worker is free. */
  private dispatch(): void {
    while (this.busy < this.count && this.queue.length > 0) {
      const next = this.queue.shift();
      if (!next) break;
      this.busy++;
      next.begin();
    }
  }

  private static checked(workers: number): number {
    if (!Number.isInteger(workers) || workers < 1) throw new Error(`Keystone workers (${workers}) must be a whole number, 1 or more`);
    return workers;
  }
}
