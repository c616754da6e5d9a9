/**
 * The bench's objects in the API server: where they live (the API group, the namespaces, the control plane's
 * reference), requests with retries, creating many at once, and waiting until they are Ready (by polling, or through a
 * watch where the waiting itself would load the API server).
 */
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubeRequest, type KubeObject } from '../../test/support/kubectl';

/** The API group and version of the orders and the identity plane's kinds. */
export const API = 'c5c3.io/v1alpha1';
/** The control plane's namespace (the ControlPlane, the Keystone admin's clouds.yaml). */
export const CP_NS = 'bench-cp';
/** The tenant's namespace: the project, the users, their role assignments, the orders and their Secrets. */
export const NS = 'bench-tenant';
/** The operator's namespace (its Lease). */
export const OP_NS = 'bench-operator';
/** The ControlPlane every identity object and order refers to. */
export const CP_REF = { name: 'cp', namespace: CP_NS };
/** Where the unrelated Secrets of part 6 live. */
export const UNRELATED_NS = 'bench-unrelated';

/** An order as the bench reads it: its generation and conditions. */
export interface Order extends KubeObject {
  status?: { credentialGeneration?: number; conditions?: { type: string; status: string }[] };
}

/** A request that must succeed: retried on a 5xx (up to 5 times), a 409 on a create taken as done; its body. */
export async function ok(method: string, path: string, body?: unknown): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const res = await kubeRequest(method, path, body === undefined ? {} : { body, headers: method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json' } : {} });
    if (res.status < 300) return res.body;
    if (res.status === 409 && method === 'POST') return res.body; // already there
    if (attempt >= 5 || res.status < 500) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
    await sleep(200);
  }
}

/** The collection path of one of the API group's kinds (plural) in a namespace. */
export const path = (kind: string, namespace: string) => `/apis/${API.split('/')[0]}/v1alpha1/namespaces/${namespace}/${kind}`;

/** Creates objects through the API, `parallel` requests in flight. */
export async function createAll(objects: readonly KubeObject[], parallel = 8): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < objects.length) {
        const o = objects[next++];
        const plural = `${o.kind.toLowerCase()}s`;
        await ok('POST', o.kind === 'Secret' ? `/api/v1/namespaces/${o.metadata.namespace}/secrets` : path(plural, o.metadata.namespace as string), o);
      }
    }),
  );
}

/** Whether an order is Ready at `generation` or later. */
export const ready = (o: Order, generation = 1) => (o.status?.credentialGeneration ?? 0) >= generation && o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** Waits until every listed object of `kind` with the label selector is Ready; polls every `everyMs`. */
export async function untilReady(kind: string, selector: string, count: number, timeoutMs: number, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = JSON.parse(await ok('GET', `${path(kind, NS)}?labelSelector=${encodeURIComponent(selector)}`)) as { items: Order[] };
    const n = list.items.filter((o) => (kind === 'keystoneapplicationcredentials' ? ready(o) : o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))).length;
    if (n >= count) return;
    if (Date.now() > deadline) throw new Error(`${kind} ${selector}: ${n} of ${count} Ready after ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/**
 * {@link untilReady} through a watch: one list, then the API server's events, so that waiting for a convergence costs
 * the API server (on the cores the operator's writes need) one list and a stream, not a list of every order of the
 * batch every 100 ms. A watch that ends early is opened again from a fresh list. Ready means Ready at `generation` or
 * later (a raise waits for the raised one).
 */
export async function untilReadyWatched(selector: string, count: number, timeoutMs: number, generation = 1): Promise<void> {
  const kind = 'keystoneapplicationcredentials';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = JSON.parse(await ok('GET', `${path(kind, NS)}?labelSelector=${encodeURIComponent(selector)}`)) as { metadata: { resourceVersion: string }; items: Order[] };
    const readyNames = new Set(list.items.filter((o) => ready(o, generation)).map((o) => o.metadata.name));
    if (readyNames.size >= count) return;
    const done = await new Promise<boolean>((resolveWatch, rejectWatch) => {
      const server = new URL(`${path(kind, NS)}?watch=1&allowWatchBookmarks=true&resourceVersion=${list.metadata.resourceVersion}&labelSelector=${encodeURIComponent(selector)}&timeoutSeconds=${Math.max(1, Math.ceil((deadline - Date.now()) / 1000))}`, process.env.KAC_KUBE_SERVER as string);
      const req = httpsRequest(server, { ca: readFileSync(process.env.KAC_KUBE_CA_FILE as string), cert: readFileSync(process.env.KAC_KUBE_ADMIN_CERT_FILE as string), key: readFileSync(process.env.KAC_KUBE_ADMIN_KEY_FILE as string) }, (res) => {
        let buffer = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          buffer += chunk;
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (!line.trim()) continue;
            const event = JSON.parse(line) as { type: string; object: Order };
            if (event.type === 'ERROR') return void req.destroy();
            if (event.type === 'BOOKMARK') continue;
            if (event.type !== 'DELETED' && ready(event.object, generation)) readyNames.add(event.object.metadata.name);
            else readyNames.delete(event.object.metadata.name);
            if (readyNames.size >= count) {
              req.destroy();
              return void resolveWatch(true);
            }
          }
        });
        res.on('end', () => resolveWatch(false));
        res.on('error', () => resolveWatch(false));
      });
      req.on('error', (error) => (readyNames.size >= count ? resolveWatch(true) : Date.now() > deadline ? rejectWatch(error) : resolveWatch(false)));
      req.end();
    });
    if (done) return;
    if (Date.now() > deadline) throw new Error(`${kind} ${selector}: ${readyNames.size} of ${count} Ready after ${timeoutMs} ms`);
  }
}
