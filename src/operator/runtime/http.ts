/**
 * The probe and metrics endpoints: `/healthz` (the process serves requests), `/readyz` (every cache has synced; 503 with
 * the kinds still syncing until then) and `/metrics` (Prometheus text). Health and metrics listen on their own ports
 * (the construct's), or share one server when given the same port.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Endpoints {
  /** The kinds whose caches have not synced yet (ready when empty). */
  readonly unsynced: () => readonly string[];
  readonly metrics: () => Promise<{ readonly contentType: string; readonly body: string }>;
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

type Route = (send: (status: number, body: string, contentType?: string) => void) => void | Promise<void>;

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
      send(200, body, contentType);
    });
  }
  return map;
}

function listen(host: string, port: number, table: Map<string, Route>): Promise<Server> {
  const server = createServer((req, res) => {
    const send = (status: number, body: string, contentType = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': contentType });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const route = req.method === 'GET' || req.method === 'HEAD' ? table.get((req.url ?? '/').split('?')[0]) : undefined;
    if (!route) return send(404, 'not found\n');
    Promise.resolve(route(send)).catch((error: unknown) => send(500, `${error instanceof Error ? error.message : String(error)}\n`));
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
