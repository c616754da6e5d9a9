/**
 * A recording HTTP proxy on 127.0.0.1 in front of one upstream (the test Keystone): every request is forwarded as it is
 * and recorded as `METHOD /path`, so a test counts exactly the calls the code under test made, also from child
 * processes (the Pulumi provider), without sharing a log with other test files.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface RecordedCall {
  readonly method: string;
  readonly path: string;
  readonly status?: number;
  /** When the request arrived (epoch ms). */
  readonly at?: number;
  /** For a password login (`POST /v3/auth/tokens`): the user's id or name from the body (never the password). */
  readonly login?: string;
  /** The proxy was {@link RecordingProxy.down}: the connection was reset, nothing reached the upstream. */
  readonly reset?: boolean;
}

export interface RecordingProxy {
  /** `http://127.0.0.1:<port>` plus the upstream's path (e.g. `/v3`). */
  readonly url: string;
  readonly calls: RecordedCall[];
  /**
   * When each call (same index as `calls`) arrived and when its reply was sent (`performance.now()` ms): the requests
   * the caller had in flight at Keystone at any moment (see {@link inFlightProfile}).
   */
  readonly spans: { readonly start: number; end?: number }[];
  /** Calls since `mark` (an index into `calls`). */
  since(mark: number): RecordedCall[];
  /**
   * A network outage of the upstream while it keeps running: every request that arrives while this is true has its
   * connection reset (the client sees ECONNRESET / socket hang up) and is recorded with `reset`.
   */
  down: boolean;
  /**
   * Fault injection: called for each request before it is forwarded; a status returned is answered instead (with a
   * Keystone-shaped error body) and the request never reaches the upstream.
   */
  fault?: (call: RecordedCall) => number | undefined;
  /**
   * Fault injection after the fact: called for each request; when it returns a status, the request IS forwarded and
   * the upstream acts on it, but its reply is dropped and the status answered instead (a reply lost on the way back).
   */
  faultAfter?: (call: RecordedCall) => number | undefined;
  /**
   * Called once the upstream answered a forwarded request (`status` set), before the reply is relayed; the relay waits
   * for the promise it returns. A test acts on "Keystone did it, the caller does not know yet" here (e.g. kill -9 the
   * caller between a create and its status write).
   */
  onReply?: (call: RecordedCall) => void | Promise<void>;
  /** Requests received and not answered yet. */
  readonly inFlight: number;
  /** The most requests in flight at once since the start or the last {@link resetPeak}. */
  readonly peakInFlight: number;
  resetPeak(): void;
  close(): Promise<void>;
}

/** The most calls that arrived within any `windowMs` (e.g. 1000: the highest request rate per second). */
export function peakRate(calls: readonly RecordedCall[], windowMs = 1000): number {
  const times = calls.map((c) => c.at ?? 0).sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; j < times.length; j++) {
    while (times[j] - times[i] >= windowMs) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

/** The user a password login names, from its JSON body; undefined for anything else. */
function loginOf(body: string): string | undefined {
  try {
    const user = (JSON.parse(body) as { auth?: { identity?: { password?: { user?: { id?: string; name?: string } } } } }).auth?.identity?.password?.user;
    return user?.id ?? user?.name;
  } catch {
    return undefined;
  }
}

/** Writes: anything but GET/HEAD, except logins (`POST /v3/auth/tokens`). */
export function isWrite(call: RecordedCall): boolean {
  return call.method !== 'GET' && call.method !== 'HEAD' && !call.path.startsWith('/v3/auth/tokens');
}

export async function startRecordingProxy(upstreamUrl: string): Promise<RecordingProxy> {
  const upstream = new URL(upstreamUrl);
  const calls: RecordedCall[] = [];
  const spans: { start: number; end?: number }[] = [];
  // eslint-disable-next-line prefer-const -- assigned once the server listens; the handler reads it per request
  let proxy: RecordingProxy;
  let inFlight = 0;
  let peak = 0;
  const server: Server = createServer((req, res) => {
    const call: { method: string; path: string; status?: number; at: number; login?: string; reset?: boolean } = { method: req.method ?? 'GET', path: req.url ?? '/', at: Date.now() };
    calls.push(call);
    const span: { start: number; end?: number } = { start: performance.now() };
    spans.push(span);
    if (call.method === 'POST' && call.path.split('?')[0].endsWith('/auth/tokens')) {
      // A login's body is read whole to note whose login it is (also when it is reset or answered by a fault), then
      // forwarded as it came.
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const who = loginOf(body.toString('utf8'));
        if (who !== undefined) call.login = who;
        handle(req, res, call, span, body);
      });
      return;
    }
    handle(req, res, call, span);
  });

  /** Resets, answers a fault or forwards one request (`body`: already read, else piped from `req`). */
  function handle(req: IncomingMessage, res: ServerResponse, call: { status?: number; reset?: boolean } & RecordedCall, span: { start: number; end?: number }, body?: Buffer): void {
    if (proxy.down) {
      call.reset = true;
      span.end = performance.now();
      req.socket.resetAndDestroy();
      return;
    }
    inFlight++;
    peak = Math.max(peak, inFlight);
    res.on('close', () => {
      inFlight--;
      span.end = performance.now();
    });
    const answer = (status: number) => {
      call.status = status;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: status, title: 'Injected', message: 'fault injected by the test proxy' } }));
    };
    const injected = proxy.fault?.(call);
    if (injected !== undefined) {
      req.resume();
      answer(injected);
      return;
    }
    const lost = proxy.faultAfter?.(call);
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (up) => {
        if (lost !== undefined) {
          up.resume();
          up.on('end', () => answer(lost));
          return;
        }
        call.status = up.statusCode;
        const relay = () => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        };
        if (!proxy.onReply) relay();
        else void Promise.resolve(proxy.onReply(call)).then(relay, relay);
      },
    );
    forward.on('error', (error) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(error));
    });
    if (body) forward.end(body);
    else req.pipe(forward);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  proxy = {
    url: `http://127.0.0.1:${port}${upstream.pathname.replace(/\/+$/, '')}`,
    calls,
    spans,
    since: (mark) => calls.slice(mark),
    down: false,
    get inFlight() {
      return inFlight;
    },
    get peakInFlight() {
      return peak;
    },
    resetPeak: () => {
      peak = inFlight;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return proxy;
}

/** How many requests were in flight over a time window: the peak, and the share of the window at each count. */
export interface InFlightProfile {
  readonly peak: number;
  /** `share[n]`: the fraction of the window with exactly n requests in flight. */
  readonly share: readonly number[];
}

/** The requests in flight between `from` and `to` (`performance.now()` ms) of a proxy's spans. */
export function inFlightProfile(spans: readonly { readonly start: number; readonly end?: number }[], from: number, to: number): InFlightProfile {
  const events: [number, number][] = [];
  for (const span of spans) {
    const end = span.end ?? to;
    if (end <= from || span.start >= to) continue;
    events.push([Math.max(from, span.start), +1], [Math.min(to, end), -1]);
  }
  // At one instant, ends before starts: a request answered as the next one arrives was never in flight beside it.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const time: number[] = [];
  let level = 0;
  let peak = 0;
  let at = from;
  for (const [t, delta] of events) {
    time[level] = (time[level] ?? 0) + (t - at);
    at = t;
    level += delta;
    peak = Math.max(peak, level);
  }
  time[level] = (time[level] ?? 0) + (to - at);
  const total = Math.max(1e-9, to - from);
  return { peak, share: Array.from({ length: time.length }, (_, n) => (time[n] ?? 0) / total) };
}

/** `peak 4; 0: 3%, 1: 12%, …` for a report. */
export function describeInFlight(flight: InFlightProfile): string {
  const shares = flight.share.map((x, n) => (x >= 0.005 ? `${n}: ${Math.round(x * 100)}%` : '')).filter(Boolean);
  return `peak ${flight.peak}; share of the time at each count: ${shares.join(', ')}`;
}
