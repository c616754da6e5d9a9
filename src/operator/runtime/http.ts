/**
 * The probe and metrics endpoints: `/healthz` (the process serves requests), `/readyz` (every cache has synced; 503 with
 * the kinds still syncing until then) and `/metrics` (Prometheus text). Health and metrics listen on their own ports
 * (the construct's), or share one server when given the same port.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Endpoints {
  /** The kinds whose caches have not synced yet (ready when empty). */
  readonly unsynced: () => readonly string[];
  /** The metrics text, whole or in pieces written as they come (./scraped.ts `exposition`). */
  readonly metrics: () => Promise<{ readonly contentType: string; readonly body: string | AsyncIterable<string> }>;
}

export interface ServeOptions {
  readonly host: string;
  readonly healthPort: number;
  readonly metricsPort: number;
}

/** Running servers and the ports they got (0 asks for a free one). */
export interface Serving {
  readonly healthPort: number;
  readonly metricsPort: number;
  close(): Promise<void>;
}

type Send = (status: number, body: string | AsyncIterable<string>, contentType?: string) => void | Promise<void>;
type Route = (send: Send) => void | Promise<void>;

function routes(endpoints: Endpoints, health: boolean, metrics: boolean): Map<string, Route> {
  const map = new Map<string, Route>();
  if (health) {
    map.set('/healthz', (send) => send(200, 'ok\n'));
    map.set('/readyz', (send) => {
      const waiting = endpoints.unsynced();
      if (waiting.length === 0) send(200, 'ok\n');
      else send(503, `caches not synced: ${waiting.join(', ')}\n`);
    });
  }
  if (metrics) {
    map.set('/metrics', async (send) => {
      const { contentType, body } = await endpoints.metrics();
      await send(200, body, contentType);
    });
  }
  return map;
}

function listen(host: string, port: number, table: Map<string, Route>): Promise<Server> {
  const server = createServer((req, res) => {
    const send: Send = async (status, body, contentType = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': contentType });
      if (req.method === 'HEAD') return void res.end();
      if (typeof body === 'string') return void res.end(body);
      // In pieces, each written before the next is made, waiting while the client reads (a scrape of 20,000 orders is
      // 16 MB); a client gone stops the making.
      for await (const piece of body) {
        if (res.destroyed) return;
        if (!res.write(piece)) await drained(res);
      }
      res.end();
    };
    const route = req.method === 'GET' || req.method === 'HEAD' ? table.get((req.url ?? '/').split('?')[0]) : undefined;
    const failed = (error: unknown) => {
      const message = `${error instanceof Error ? error.message : String(error)}\n`;
      // Failed after the status went out (a piece of the metrics): the response cannot say so but by ending short.
      if (res.headersSent) res.destroy();
      else void send(500, message);
    };
    if (!route) return void send(404, 'not found\n');
    Promise.resolve(route(send)).catch(failed);
  });
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/** Until the response may be written again, or is closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;
const close = (server: Server) => new Promise<void>((resolve) => {
  server.close(() => resolve());
  server.closeAllConnections();
});

/** Starts the servers. */
export async function serve(endpoints: Endpoints, options: ServeOptions): Promise<Serving> {
  if (options.healthPort === options.metricsPort && options.healthPort !== 0) {
    const server = await listen(options.host, options.healthPort, routes(endpoints, true, true));
    return { healthPort: portOf(server), metricsPort: portOf(server), close: () => close(server) };
  }
  const health = await listen(options.host, options.healthPort, routes(endpoints, true, false));
  try {
    const metrics = await listen(options.host, options.metricsPort, routes(endpoints, false, true));
    return { healthPort: portOf(health), metricsPort: portOf(metrics), close: async () => void (await Promise.all([close(health), close(metrics)])) };
  } catch (error) {
    await close(health);
    throw error;
  }
}
