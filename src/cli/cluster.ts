/**
 * What `status` and `rotate` share: the `--kubeconfig`/`--context` options, the connection through the project's
 * Kubernetes adapter (src/kube; `@kubernetes/client-node` is loaded only there), and the translation of API errors
 * into messages that name the object and say what to do.
 */
import { Command } from 'commander';
import { KubeApi } from '../kube/api';
import { connect, type ConnectOptions, type Connection } from '../kube/client-node';
import { KubeApiError } from '../kube/errors';
import type { KubeObject, ResourceKind } from '../kube/object';
import type { HttpRequest, HttpResponse, Query, Transport, WatchEvent, WatchStream } from '../kube/transport';

/** The field manager of the command line's writes. */
export const CLI_FIELD_MANAGER = 'keystone-appcred-cli';

/** What the commands need of a connection (src/kube/client-node.ts `Connection`). */
export type ClusterConnection = Pick<Connection, 'transport' | 'source' | 'server' | 'context' | 'namespace'>;

/** Opens a connection; the real one is `connect()` of src/kube/client-node.ts, tests pass one over a fake transport. */
export type Connector = (options: ConnectOptions) => ClusterConnection;

/** `--kubeconfig` and `--context`, as kubectl has them. */
export interface ClusterFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** An open cluster: the typed API and where it is, for messages. */
export interface Cluster {
  readonly api: KubeApi;
  /** The API server's URL. */
  readonly server: string;
  /** `context <name> of <source>`, for messages. */
  readonly where: string;
  /** The namespace `-n` defaults to: the context's (or the pod's) namespace, else `default`. */
  readonly defaultNamespace: string;
}

/** The API server could not be reached (network, DNS, TLS, timeout): nothing was read or written. */
export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
}

/** Adds `--kubeconfig` and `--context` to a command. */
export function clusterOptions(command: Command): Command {
  return command
    .option('--kubeconfig <file>', "kubeconfig to use; default: KUBECONFIG, the pod's service account, ~/.kube/config")
    .option('--context <name>', 'kubeconfig context; default: its current context');
}

/**
 * Connects as kubectl would (`--kubeconfig`, else KUBECONFIG, else the pod's service account, else ~/.kube/config; then
 * `--context`). A kubeconfig that cannot be read or names no such context throws an Error saying so; a request that
 * cannot reach the API server later throws an {@link UnreachableError} naming the server and the context.
 */
export function openCluster(flags: ClusterFlags, connector: Connector = connect): Cluster {
  let connection: ClusterConnection;
  try {
    connection = connector({ kubeconfig: flags.kubeconfig, context: flags.context });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'EACCES') {
      throw new Error(`cannot read the kubeconfig ${flags.kubeconfig ?? process.env.KUBECONFIG ?? ''}: ${errorText(error)}; pass --kubeconfig or set KUBECONFIG`);
    }
    throw error;
  }
  const where = `context ${connection.context || '(none)'} of ${connection.source}`;
  const transport = new ReachableTransport(connection.transport, where);
  return { api: new KubeApi(transport, CLI_FIELD_MANAGER), server: connection.server, where, defaultNamespace: connection.namespace || 'default' };
}

/** Turns a failed request (no HTTP answer at all) into an {@link UnreachableError}. */
class ReachableTransport implements Transport {
  constructor(
    private readonly inner: Transport,
    private readonly where: string,
  ) {}

  get server(): string {
    return this.inner.server;
  }

  async request(request: HttpRequest): Promise<HttpResponse> {
    try {
      return await this.inner.request(request);
    } catch (error) {
      throw new UnreachableError(
        `cannot reach the API server ${this.inner.server} (${this.where}): ${errorText(error)}; check that the cluster is up and that --kubeconfig, --context or KUBECONFIG select it`,
      );
    }
  }

  watch(path: string, query: Query, onEvent: (event: WatchEvent) => void, onDone: (error?: Error) => void): Promise<WatchStream> {
    return this.inner.watch(path, query, onEvent, onDone);
  }
}

/** The most specific text of an error: the innermost cause's message or code (`fetch failed` says nothing). */
export function errorText(error: unknown): string {
  let text = error instanceof Error ? error.message : String(error);
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && cause instanceof Error; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (cause.message) text = cause.message;
    else if (typeof code === 'string') text = code;
    cause = (cause as { cause?: unknown }).cause;
  }
  return text;
}

/** `keystoneapplicationcredentials.c5c3.io`: the resource as RBAC rules and CRDs name it. */
export function resourceName(kind: ResourceKind<KubeObject>): string {
  return kind.group ? `${kind.plural}.${kind.group}` : kind.plural;
}

/** The command that installs the CRDs, for messages. */
export const INSTALL_HINT = 'run `keystone-appcred manifests --image IMAGE | kubectl apply --server-side -f -`';

/** The message for kinds the API server does not serve: their CRDs are missing. */
export function missingCrdMessage(kinds: readonly ResourceKind<KubeObject>[], server: string): string {
  const names = kinds.map((k) => k.kind);
  const list = names.length === 1 ? `the ${names[0]} CRD is` : `the ${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} CRDs are`;
  return `${list} not installed on ${server}: ${INSTALL_HINT}`;
}

/** What a request tried, to explain its failure. */
export interface Attempt {
  /** The RBAC verb: get, list, patch, ... */
  readonly verb: string;
  readonly kind: ResourceKind<KubeObject>;
  /** Undefined: every namespace. */
  readonly namespace?: string;
  readonly name?: string;
}

/**
 * The error a user reads for a failed request: RBAC denial names the verb and the resource and says whom to ask; a
 * refused login says to renew the credentials; anything else names the object and the API server's answer. An
 * {@link UnreachableError} or a non-API error is returned as it is.
 */
export function explain(error: unknown, attempt: Attempt, cluster: Pick<Cluster, 'server' | 'where'>): Error {
  if (!(error instanceof KubeApiError)) return error instanceof Error ? error : new Error(String(error));
  const resource = resourceName(attempt.kind);
  const said = serverMessage(error);
  switch (error.status) {
    case 401:
      return new Error(`the API server ${cluster.server} refused the credentials of ${cluster.where} (401 Unauthorized): renew them or pick another --context`);
    case 403: {
      const target = attempt.name !== undefined ? `${resource} ${attempt.name}` : resource;
      return new Error(forbiddenMessage(attempt.verb, [target], [resource], attempt.namespace, said));
    }
    default: {
      const scope = attempt.namespace === undefined ? 'in every namespace' : `in namespace ${attempt.namespace}`;
      const object = attempt.name !== undefined ? `${attempt.kind.kind} ${attempt.namespace ?? ''}/${attempt.name}` : `${resource} ${scope}`;
      return new Error(`${attempt.verb} ${object}: the API server answered ${error.status} ${error.reason}${said ? `: ${said}` : ''}`);
    }
  }
}

/**
 * RBAC refused `verb` on the targets (`keystoneapplicationcredentials.c5c3.io app`, or several resources of one listing):
 * names them, the scope and the API server's words, and says whom to ask for which grant.
 */
export function forbiddenMessage(verb: string, targets: readonly string[], resources: readonly string[], namespace: string | undefined, said: string): string {
  const scope = namespace === undefined ? 'in every namespace' : `in namespace ${namespace}`;
  const words = said ? ` (${said}${targets.length > 1 ? '; likewise for the others' : ''})` : '';
  const ask = `ask a cluster admin for a Role granting "${verb}" on ${resources.join(', ')}`;
  return `not allowed to ${verb} ${targets.join(', ')} ${scope}${words}: ${ask}${namespace === undefined ? ', or pass -n with a namespace you may read' : ''}`;
}

/** The API server's own message in a {@link KubeApiError} (its text after `<request>: <status> <reason>: `). */
export function serverMessage(error: KubeApiError): string {
  return error.message.slice(`${error.request}: ${error.status} ${error.reason}: `.length).trim();
}

