/**
 * A cuttable HTTP proxy in front of a real service (Keystone, OpenBao): a network outage the tests switch on and off
 * while the service keeps running (a shared Keystone or OpenBao cannot be stopped and started again with its data).
 * While `down`, every request it receives has its connection reset (the client sees ECONNRESET / socket hang up) and is
 * recorded; `onReply` may cut the line right as the upstream answers, so that reply is lost too.
 */
import { createServer as createHttpServer, request as httpRequest, type Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';

export interface Call {
  readonly at: number;
  readonly method: string;
  readonly path: string;
  /** The upstream's status, or 'reset' when the proxy was down and reset the connection. */
  outcome?: number | 'reset';
}

export interface CutProxy {
  readonly url: string;
  readonly calls: Call[];
  down: boolean;
  /** Called once the upstream answered, before the reply is relayed; when `down` is true afterwards, the reply is lost. */
  onReply?: (call: Call) => void | Promise<void>;
  close(): Promise<void>;
}

export async function startCutProxy(upstreamUrl: string): Promise<CutProxy> {
  const upstream = new URL(upstreamUrl);
  const calls: Call[] = [];
  const sockets = new Set<Socket>();
  // eslint-disable-next-line prefer-const -- assigned once listening; the handler reads it per request
  let proxy: CutProxy;
  const server: HttpServer = createHttpServer((req, res) => {
    const call: Call = { at: Date.now(), method: req.method ?? 'GET', path: req.url ?? '/' };
    calls.push(call);
    if (proxy.down) {
      call.outcome = 'reset';
      req.socket.resetAndDestroy();
      return;
    }
    const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } }, (up) => {
      call.outcome = up.statusCode;
      const relay = () => {
        if (proxy.down) {
          up.resume();
          req.socket.resetAndDestroy();
          return;
        }
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      };
      if (!proxy.onReply) relay();
      else void Promise.resolve(proxy.onReply(call)).then(relay, relay);
    });
    forward.on('error', () => req.socket.resetAndDestroy());
    req.pipe(forward);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  proxy = {
    url: `http://127.0.0.1:${port}${upstream.pathname.replace(/\/+$/, '')}`,
    calls,
    down: false,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  return proxy;
}
