/**
 * The project's {@link Transport} to the test API server, as the admin (its client certificate), for tests that drive
 * `KubeApi` against the real server inside Jest, where `@kubernetes/client-node` (src/kube/client-node.ts) cannot load
 * (it registers module hooks, which Jest refuses): requests with `kubeRequest` (./kubectl.ts), watches as the streamed
 * newline-delimited JSON events the API server sends.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { KubeApiError } from '../../src/kube/errors';
import type { HttpRequest, HttpResponse, Query, Transport, WatchEvent, WatchOptions, WatchStream } from '../../src/kube/transport';
import { kubeRequest } from './kubectl';

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: start the test file with a \`// @needs kube\` line`);
  return value;
};

/** A path with its query (undefined values left out). */
function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** The test API server as the admin. */
export function adminTransport(): Transport {
  return {
    server: required('KAC_KUBE_SERVER'),
    async request(r: HttpRequest): Promise<HttpResponse> {
      const res = await kubeRequest(r.method, withQuery(r.path, r.query), {
        ...(r.body !== undefined ? { body: r.body } : {}),
        headers: { Accept: r.accept ?? 'application/json', ...(r.body !== undefined ? { 'Content-Type': r.contentType ?? 'application/json' } : {}) },
      });
      let body: unknown = res.body;
      try {
        body = JSON.parse(res.body);
      } catch {
        // not JSON: the text
      }
      return { status: res.status, body };
    },
    watch(path: string, query: Query, onEvent: (event: WatchEvent) => void, onDone: (error?: Error) => void, options: WatchOptions = {}): Promise<WatchStream> {
      return new Promise((resolve, reject) => {
        const req = request(new URL(withQuery(path, { ...query, watch: true }), required('KAC_KUBE_SERVER')), {
          headers: { Accept: options.accept ?? 'application/json' },
          ca: readFileSync(required('KAC_KUBE_CA_FILE')),
          cert: readFileSync(required('KAC_KUBE_ADMIN_CERT_FILE')),
          key: readFileSync(required('KAC_KUBE_ADMIN_KEY_FILE')),
        });
        let stopped = false;
        req.on('response', (res) => {
          if (res.statusCode !== 200) {
            let text = '';
            res.setEncoding('utf8').on('data', (d: string) => (text += d));
            res.on('end', () => onDone(KubeApiError.from(res.statusCode ?? 0, text ? (JSON.parse(text) as unknown) : undefined, `WATCH ${path}`)));
            resolve({ stop: () => void req.destroy() });
            return;
          }
          let buffer = '';
          res.setEncoding('utf8').on('data', (chunk: string) => {
            buffer += chunk;
            for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
              const line = buffer.slice(0, newline).trim();
              buffer = buffer.slice(newline + 1);
              if (line && !stopped) onEvent(JSON.parse(line) as WatchEvent);
            }
          });
          res.on('end', () => !stopped && onDone());
          res.on('error', (error) => !stopped && onDone(error));
          resolve({
            stop: () => {
              stopped = true;
              req.destroy();
            },
          });
        });
        req.on('error', (error) => (stopped ? undefined : reject(error)));
        req.end();
      });
    },
  };
}
