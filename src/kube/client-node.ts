/**
 * The only module that loads `@kubernetes/client-node`: it finds the cluster and the credentials (a kubeconfig, the
 * `KUBECONFIG` files, or the pod's service account), authenticates every request with them (client certificates,
 * tokens, exec and auth-provider plugins, token file rotation, proxies), and streams watches (read here, line by line,
 * so a watch can ask for the metadata-only view: the library's `Watch` sets no `Accept`). The library is ESM-only;
 * Node 24 `require()`s it synchronously, Jest cannot, so it is loaded here, lazily, and nothing else imports it.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as ClientNode from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { withDeadline } from '../http/deadline';
import { KubeApiError } from './errors';
import { textWithoutLastApplied } from './last-applied';
import type { HttpRequest, HttpResponse, Query, Transport, WatchEvent, WatchOptions, WatchStream } from './transport';

/** The parts of the library the transport uses. */
type Library = Pick<typeof ClientNode, 'KubeConfig' | 'RequestContext' | 'IsomorphicFetchHttpLibrary'>;

let loaded: Library | undefined;

/**
 * The library's configuration and HTTP parts, without its generated API. `KubeConfig` (dist/config.js) imports two
 * names from the generated code's index (dist/gen/index.js), which loads every API class and model of Kubernetes: 20 MB
 * of source text and their compiled code, some 44 MiB of the operator's RSS, none of it used here (`makeApiClient` is
 * never called). While the import line is exactly the one this was written against (a version that changes it simply
 * loads the whole library), a resolve hook hands config.js ./client-node-config.mts instead, which exports just those
 * two names from their own files; the hook is removed once the library is loaded.
 */
function library(): Library {
  if (loaded) return loaded;
  const dist = join(dirname(require.resolve('@kubernetes/client-node/package.json')), 'dist');
  const base = pathToFileURL(`${dist}/`).href;
  const config = join(dist, 'config.js');
  const slim =
    typeof (nodeModule as { registerHooks?: unknown }).registerHooks === 'function' &&
    existsSync(config) &&
    readFileSync(config, 'utf8').includes("import { createConfiguration, ServerConfiguration, } from './gen/index.js';") &&
    ['gen/configuration.js', 'gen/servers.js', 'gen/http/http.js'].every((file) => existsSync(join(dist, file)));
  /* eslint-disable @typescript-eslint/no-require-imports */
  if (!slim) return (loaded = require('@kubernetes/client-node') as typeof ClientNode);
  const index = pathToFileURL(join(__dirname, existsSync(join(__dirname, 'client-node-config.mjs')) ? 'client-node-config.mjs' : 'client-node-config.mts')).href;
  const hooks = nodeModule.registerHooks({
    resolve: (specifier, context, next) => (specifier === './gen/index.js' && context.parentURL === `${base}config.js` ? { url: index, shortCircuit: true } : next(specifier, context)),
  });
  try {
    const { KubeConfig } = require(config) as Pick<typeof ClientNode, 'KubeConfig'>;
    const { RequestContext, IsomorphicFetchHttpLibrary } = require(join(dist, 'gen/http/http.js')) as Pick<typeof ClientNode, 'RequestContext' | 'IsomorphicFetchHttpLibrary'>;
    return (loaded = { KubeConfig, RequestContext, IsomorphicFetchHttpLibrary });
  } finally {
    hooks.deregister();
  }
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** Where the service account of a pod is mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface ConnectOptions {
  /**
   * A kubeconfig's content (YAML or JSON), e.g. a target cluster's from its registration Secret; wins over everything
   * else. @default none
   */
  readonly kubeconfigText?: { readonly text: string; readonly source: string };
  /** A kubeconfig file; wins over everything else but `kubeconfigText`. */
  readonly kubeconfig?: string;
  /** A context of the kubeconfig. @default its current context */
  readonly context?: string;
  /** The environment to read `KUBECONFIG`, `KUBERNETES_SERVICE_HOST` and `HOME` from. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Timeout of one request. @default 30 s */
  readonly requestTimeoutMs?: number;
  /** A watch that carries nothing for this long is dropped and resumed (the server sends bookmarks every minute). @default 150 s */
  readonly watchInactivityMs?: number;
  /** The root the pod's service account directory is read under (tests give a directory of their own). @default "" (/) */
  readonly serviceAccountRoot?: string;
}

/** A connection to one API server. */
export interface Connection {
  readonly transport: Transport;
  /** Where the configuration came from: `--kubeconfig <file>`, `KUBECONFIG`, `in-cluster` or `~/.kube/config`. */
  readonly source: string;
  readonly server: string;
  readonly context: string;
  readonly user: string;
  /** The namespace of the context, or the pod's namespace in a cluster. */
  readonly namespace?: string;
}

/**
 * Loads the configuration, in this order (as controller-runtime does): `options.kubeconfigText`, `options.kubeconfig`,
 * `KUBECONFIG`, the pod's service account when `KUBERNETES_SERVICE_HOST` is set, `~/.kube/config`.
 */
export function connect(options: ConnectOptions = {}): Connection {
  const env = options.env ?? process.env;
  const saRoot = options.serviceAccountRoot ?? '';
  const k8s = library();
  const kc = new k8s.KubeConfig();
  let source: string;
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  if (options.kubeconfigText) {
    source = options.kubeconfigText.source;
    parsed(source, () => kc.loadFromString(options.kubeconfigText?.text ?? ''));
  } else if (options.kubeconfig) {
    source = `--kubeconfig ${options.kubeconfig}`;
    parsed(source, () => kc.loadFromFile(options.kubeconfig ?? ''));
  } else if (env.KUBECONFIG) {
    const [first, ...rest] = env.KUBECONFIG.split(':').filter((f) => f);
    parsed(`KUBECONFIG ${first}`, () => kc.loadFromFile(first));
    for (const file of rest) {
      const more = new k8s.KubeConfig();
      parsed(`KUBECONFIG ${file}`, () => more.loadFromFile(file));
      kc.mergeConfig(more);
    }
    source = 'KUBECONFIG';
  } else if (env.KUBERNETES_SERVICE_HOST && existsSync(`${saRoot}${SERVICE_ACCOUNT_DIR}/token`)) {
    checkInCluster(env, saRoot);
    kc.loadFromCluster(saRoot);
    source = 'in-cluster';
  } else if (existsSync(home)) {
    source = '~/.kube/config';
    parsed(source, () => kc.loadFromFile(home));
  } else if (env.KUBERNETES_SERVICE_HOST) {
    throw new KubeConfigError(
      `no Kubernetes configuration: KUBERNETES_SERVICE_HOST is set (a pod), but the pod has no service account token at ${SERVICE_ACCOUNT_DIR}/token; ` +
        'set automountServiceAccountToken: true on the pod or its ServiceAccount (the Operator construct sets it), or pass --kubeconfig',
    );
  } else {
    throw new KubeConfigError(
      `no Kubernetes configuration: no --kubeconfig, no KUBECONFIG, no pod service account (KUBERNETES_SERVICE_HOST is not set) and no ${home}; pass --kubeconfig or set KUBECONFIG`,
    );
  }
  if (options.context) {
    if (!kc.getContextObject(options.context)) {
      throw new Error(`--context (${options.context}) is not a context of ${source}; it has ${kc.getContexts().map((c) => c.name).join(', ') || 'none'}`);
    }
    kc.setCurrentContext(options.context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`${source}: the current context names no cluster`);
  const context = kc.getContextObject(kc.getCurrentContext());
  let namespace = context?.namespace;
  if (!namespace && source === 'in-cluster') {
    try {
      namespace = readFileSync(`${saRoot}${SERVICE_ACCOUNT_DIR}/namespace`, 'utf8').trim();
    } catch {
      // No namespace file: the caller's default stands.
    }
  }
  const transport = new ClientNodeTransport(k8s, kc, cluster.server.replace(/\/+$/, ''), options.requestTimeoutMs ?? 30_000, options.watchInactivityMs ?? 150_000);
  return { transport, source, server: transport.server, context: kc.getCurrentContext(), user: kc.getCurrentUser()?.name ?? '', namespace };
}

/** The configuration cannot be found or is incomplete; the message names what is missing and how to fix it. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

/**
 * Runs client-node's loading of a kubeconfig, and turns a YAML error into one that names the source, the reason and
 * the position only. The YAML parser's own message quotes the lines around the error, and a kubeconfig's lines are
 * its tokens, passwords and client keys: that message would carry them into a log line, a start error or an Event on
 * a target cluster's kubeconfig Secret.
 */
function parsed(source: string, load: () => void): void {
  try {
    load();
  } catch (error) {
    const yaml = error as { name?: unknown; reason?: unknown; mark?: { line?: unknown; column?: unknown } };
    if (yaml?.name !== 'YAMLException') throw error;
    const where = typeof yaml.mark?.line === 'number' && typeof yaml.mark.column === 'number' ? ` at line ${yaml.mark.line + 1}, column ${yaml.mark.column + 1}` : '';
    throw new KubeConfigError(`${source} is not valid YAML: ${typeof yaml.reason === 'string' ? yaml.reason : 'it does not parse'}${where}`);
  }
}

/**
 * What client-node's in-cluster loading takes for granted, checked so that a pod missing a piece says which: the
 * service's port beside its host (the kubelet sets both), and the CA file beside the token (the service account's
 * projected volume holds both).
 */
function checkInCluster(env: NodeJS.ProcessEnv, saRoot: string): void {
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!port || !/^\d+$/.test(port)) {
    throw new KubeConfigError(
      `in-cluster configuration: KUBERNETES_SERVICE_HOST is set but KUBERNETES_SERVICE_PORT is ${port ? `"${port}", not a port` : 'not'}; the kubelet sets both for the \`kubernetes\` Service: set both, or pass --kubeconfig`,
    );
  }
  if (!existsSync(`${saRoot}${SERVICE_ACCOUNT_DIR}/ca.crt`)) {
    throw new KubeConfigError(
      `in-cluster configuration: the service account token is at ${SERVICE_ACCOUNT_DIR}/token but ${SERVICE_ACCOUNT_DIR}/ca.crt is missing; mount the whole service account volume (automountServiceAccountToken: true), or pass --kubeconfig`,
    );
  }
}

/** How long one dispatcher serves every request before the next request's own replaces it (see `request`). */
const DISPATCHER_REUSE_MS = 5 * 60_000;

type Dispatcher = NonNullable<ReturnType<ClientNode.RequestContext['getDispatcher']>>;

class ClientNodeTransport implements Transport {
  private readonly http: ClientNode.IsomorphicFetchHttpLibrary;
  /** The dispatcher every request goes through, and since when. */
  private shared?: { readonly dispatcher: Dispatcher; readonly since: number };

  constructor(
    private readonly k8s: Library,
    private readonly kc: ClientNode.KubeConfig,
    readonly server: string,
    private readonly requestTimeoutMs: number,
    private readonly watchInactivityMs: number,
  ) {
    this.http = new k8s.IsomorphicFetchHttpLibrary();
  }

  async request(request: HttpRequest): Promise<HttpResponse> {
    const ctx = new this.k8s.RequestContext(withQuery(`${this.server}${request.path}`, request.query), request.method);
    ctx.setHeaderParam('Accept', request.accept ?? 'application/json');
    if (request.body !== undefined) {
      ctx.setHeaderParam('Content-Type', request.contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(request.body));
    }
    await this.kc.applySecurityAuthentication(ctx);
    this.keepAlive(ctx);
    const { res, text } = await withDeadline(this.requestTimeoutMs, async (signal) => {
      ctx.setSignal(signal);
      const reply = await this.http.send(ctx).toPromise();
      const body = reply.body as unknown as { text(): Promise<string>; stream(): AsyncIterable<Uint8Array> };
      return { res: reply, text: request.omitLastApplied && reply.httpStatusCode === 200 ? await textWithoutLastApplied(body.stream()) : await body.text() };
    });
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: keep the text.
    }
    return { status: res.httpStatusCode, body };
  }

  /**
   * client-node builds a new connection pool (an undici Agent) in every `applySecurityAuthentication`, so each request
   * opened a TCP and TLS connection of its own: a handshake and a parse of the CA per request, most of a write's
   * latency on a busy API server, and native memory churn the collector does not see. Every request goes through one
   * pool instead (kept alive, as client-go's transport is); every 5 minutes the pool a request was given replaces it,
   * so a rotated CA or client certificate of the kubeconfig is picked up, and the old one is closed 30 s later.
   */
  private keepAlive(ctx: ClientNode.RequestContext): void {
    const fresh = ctx.getDispatcher();
    if (!fresh) return; // plain HTTP without TLS options: fetch's global pool already keeps connections alive
    const now = Date.now();
    if (!this.shared || now - this.shared.since >= DISPATCHER_REUSE_MS) {
      const old = this.shared?.dispatcher;
      this.shared = { dispatcher: fresh, since: now };
      // Closed a while later, not now: a request handed the old pool just before may not have reached it yet.
      if (old) setTimeout(() => void old.close().catch(() => undefined), 30_000).unref();
    }
    ctx.setDispatcher(this.shared.dispatcher);
  }

  /**
   * A watch on the shared pool: events are read line by line as they arrive; a stream that carries nothing (not even a
   * bookmark) for `watchInactivityMs` is ended with an error, so the informer resumes it.
   */
  async watch(path: string, query: Query, onEvent: (event: WatchEvent) => void, onDone: (error?: Error) => void, options: WatchOptions = {}): Promise<WatchStream> {
    const ctx = new this.k8s.RequestContext(withQuery(`${this.server}${path}`, { ...query, watch: true }), 'GET');
    ctx.setHeaderParam('Accept', options.accept ?? 'application/json');
    await this.kc.applySecurityAuthentication(ctx);
    this.keepAlive(ctx);
    const controller = new AbortController();
    ctx.setSignal(controller.signal);
    let ended = false;
    let timer: NodeJS.Timeout | undefined;
    const end = () => {
      ended = true;
      clearTimeout(timer);
      controller.abort();
    };
    const finish = (error?: Error) => {
      if (ended) return;
      end();
      onDone(error);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(new Error(`WATCH ${path}: nothing received for ${this.watchInactivityMs} ms`)), this.watchInactivityMs);
      timer.unref();
    };
    arm();
    const read = async () => {
      const reply = await this.http.send(ctx).toPromise();
      const body = reply.body as unknown as { text(): Promise<string>; stream(): AsyncIterable<Uint8Array> };
      if (reply.httpStatusCode !== 200) {
        const text = await body.text();
        let status: unknown = text;
        try {
          status = JSON.parse(text);
        } catch {
          // Not JSON: keep the text.
        }
        finish(KubeApiError.from(reply.httpStatusCode, status, `WATCH ${path}`));
        return;
      }
      const decoder = new TextDecoder();
      let pending = '';
      for await (const chunk of body.stream()) {
        if (ended) return;
        arm();
        pending += decoder.decode(chunk, { stream: true });
        for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          if (!line.trim()) continue;
          let event: WatchEvent;
          try {
            event = JSON.parse(line) as WatchEvent;
          } catch {
            finish(new Error(`WATCH ${path}: an event that is not JSON`));
            return;
          }
          if (ended) return;
          onEvent({ type: event.type, object: event.object });
        }
      }
      finish();
    };
    read().catch((error: unknown) => finish(toError(error, path)));
    return { stop: end };
  }
}

function withQuery(url: string, query: Query | undefined): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
  return u.toString();
}

function toError(error: unknown, path: string): Error | undefined {
  if (error === null || error === undefined) return undefined;
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number') return KubeApiError.from(status, undefined, `WATCH ${path}`);
  return error instanceof Error ? error : new Error(String(error));
}
