/**
 * A recording HTTP proxy on 127.0.0.1 in front of one upstream (the test Keystone): every request is forwarded as it is
 * and recorded as `METHOD /path`, so a test counts exactly the calls the code under test made, also from child
 * processes (the Pulumi provider), without sharing a log with other test files.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  readonly method: string;
  readonly path: string;
  readonly status?: number;
  /** When the request arrived (epoch ms). */
  readonly at?: number;
  /** For a password login (`POST /v3/auth/tokens`): the user's id or name from the body (never the password). */
  readonly login?: string;
}

export interface RecordingProxy {
  /** `http://127.0.0.1:<port>` plus the upstream's path (e.g. `/v3`). */
  readonly url: string;
  readonly calls: RecordedCall[];
  /** Calls since `mark` (an index into `calls`). */
  since(mark: number): RecordedCall[];
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
  // eslint-disable-next-line prefer-const -- assigned once the server listens; the handler reads it per request
  let proxy: RecordingProxy;
  let inFlight = 0;
  let peak = 0;
  const server: Server = createServer((req, res) => {
    const call: { method: string; path: string; status?: number; at: number; login?: string } = { method: req.method ?? 'GET', path: req.url ?? '/', at: Date.now() };
    calls.push(call);
    inFlight++;
    peak = Math.max(peak, inFlight);
    res.on('close', () => inFlight--);
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
    if (call.method === 'POST' && call.path.split('?')[0].endsWith('/auth/tokens')) {
      // A login's body is read whole to note whose login it is, then forwarded as it came.
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const who = loginOf(body.toString('utf8'));
        if (who !== undefined) call.login = who;
        forward.end(body);
      });
      return;
    }
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  proxy = {
    url: `http://127.0.0.1:${port}${upstream.pathname.replace(/\/+$/, '')}`,
    calls,
    since: (mark) => calls.slice(mark),
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
