/**
 * The operator's first steps before it serves or watches anything: load the Kubernetes configuration and prove it with
 * one request. A setup that cannot work stops the process here with one log line that names what is missing and the
 * fix, and an exit code that says which kind of problem it is, instead of a process that runs, is never ready, and
 * logs a failed list per informer until the kubelet kills it for failing its liveness probe.
 *
 * - exit 2, the configuration: no kubeconfig and no service account token, an incomplete in-cluster environment, a
 *   kubeconfig that cannot be read, credentials the API server refuses (401);
 * - exit 1, the API server does not answer (or answers 5xx) for {@link RETRY_WINDOW_MS}: the kubelet restarts the pod
 *   with its backoff, the reason stays the last line of the log.
 */
import { readFileSync } from 'node:fs';
import { connect, SERVICE_ACCOUNT_DIR, type ConnectOptions, type Connection } from '../kube/client-node';
import { KubeApiError } from '../kube/errors';
import { serviceAccountOfToken, whoAmI, type Identity } from '../kube/identity';
import { errorMessage } from '../operator/runtime/log';
import { errorText } from './cluster';

/** Exit code of a setup to fix (configuration, credentials). */
export const EXIT_CONFIGURATION = 2;
/** Exit code of an API server that did not answer. */
export const EXIT_UNREACHABLE = 1;

/**
 * How long an unanswered API server is retried at start: less than the construct's liveness probe allows before the
 * kubelet kills the container (10 s initial delay + 3 failures 10 s apart), so the reason is logged by the process.
 */
export const RETRY_WINDOW_MS = 15_000;

/** A start that cannot go on: the message names what is missing and the fix. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export interface StartOptions {
  /** @default connect of src/kube/client-node.ts */
  readonly connect?: (options: ConnectOptions) => Connection;
  /** @default {@link RETRY_WINDOW_MS} */
  readonly retryWindowMs?: number;
  /** @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The service account token file, to name its ServiceAccount in messages. @default the pod's */
  readonly tokenFile?: string;
  /** Each failed attempt (the last one is the error). */
  readonly onRetry?: (error: string, attempt: number) => void;
  /** @default process.env */
  readonly env?: NodeJS.ProcessEnv;
}

/** The connection and the identity the API server authenticated (undefined where it cannot say). */
export interface Started {
  readonly connection: Connection;
  readonly identity?: Identity;
}

/** Connects with `kubeconfig`/`context` (or what connect finds) and checks the credentials; see the module comment. */
export async function connectChecked(target: { kubeconfig?: string; context?: string }, options: StartOptions = {}): Promise<Started> {
  const env = options.env ?? process.env;
  let connection: Connection;
  try {
    connection = (options.connect ?? connect)({ kubeconfig: target.kubeconfig, context: target.context, env });
  } catch (error) {
    throw new StartupError(errorMessage(error), EXIT_CONFIGURATION);
  }
  const inCluster = connection.source === 'in-cluster';
  const credentials = inCluster
    ? `the service account token at ${SERVICE_ACCOUNT_DIR}/token${serviceAccountOf(options.tokenFile ?? `${SERVICE_ACCOUNT_DIR}/token`)}`
    : `the user ${connection.user || '(none)'} of context ${connection.context || '(none)'} in ${connection.source}`;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const window = options.retryWindowMs ?? RETRY_WINDOW_MS;
  const started = Date.now();
  for (let attempt = 1, delay = 500; ; attempt++, delay = Math.min(delay * 2, 4_000)) {
    let failure: string;
    try {
      return { connection, identity: await whoAmI(connection.transport) };
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 401) {
        const fix = inCluster
          ? 'the token is not valid for this API server (its ServiceAccount was deleted, or it was issued by another cluster): check that the ServiceAccount exists and restart the pod for a fresh token'
          : 'renew them (an expired token or client certificate, or an exec plugin that must log in again)';
        throw new StartupError(`the API server ${connection.server} refused ${credentials} (401 Unauthorized); ${fix}`, EXIT_CONFIGURATION);
      }
      failure = error instanceof KubeApiError ? error.message : errorText(error);
    }
    if (Date.now() - started + delay > window) {
      const fix = inCluster
        ? `check KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT (${env.KUBERNETES_SERVICE_HOST ?? ''}:${env.KUBERNETES_SERVICE_PORT ?? ''}) and that no NetworkPolicy blocks the pod's egress to the API server`
        : 'check that the cluster is up and that --kubeconfig, --context or KUBECONFIG select it';
      throw new StartupError(`cannot reach the API server ${connection.server} (${connection.source}) for ${Math.round((Date.now() - started) / 1000)} s, ${attempt} attempts: ${failure}; ${fix}`, EXIT_UNREACHABLE);
    }
    options.onRetry?.(failure, attempt);
    await sleep(delay);
  }
}

/** ` (ServiceAccount <ns>/<name>)` of the token in `tokenFile`, or '' when it cannot be read. The token is never shown. */
function serviceAccountOf(tokenFile: string): string {
  try {
    const account = serviceAccountOfToken(readFileSync(tokenFile, 'utf8'));
    return account ? ` (ServiceAccount ${account.namespace}/${account.name})` : '';
  } catch {
    return '';
  }
}
