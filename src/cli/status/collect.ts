/**
 * What `status` reads: the rows of the five kinds on the management cluster (and which kinds could not be listed, and
 * why), the target clusters registered with the operator, and the rows of each.
 */
import { KUBECONFIG_SECRET_KEY, KUBECONFIG_SECRET_SELECTOR } from '../../api';
import { KubeApiError } from '../../kube/errors';
import { Kinds, type Secret } from '../../kube/kinds';
import type { KubeObject, ResourceKind } from '../../kube/object';
import { type Cluster, type Connector, INSTALL_HINT, errorText, explain, forbiddenMessage, missingCrdMessage, openCluster, resourceName, serverMessage } from '../cluster';
import { STATUS_KINDS, orderStatus, sortRows, type AnyOrder, type OrderStatus } from './columns';

/** A kind that could not be listed, and why. */
export interface KindFailure {
  readonly kind: ResourceKind<KubeObject>;
  /** `missing`: the kind is not served (404), its CRD is not installed; `forbidden`: RBAC refused the list (403). */
  readonly cause: 'missing' | 'forbidden' | 'other';
  /** The error a user reads for this kind alone. */
  readonly error: Error;
  /** The API server's message. */
  readonly said: string;
}

/** What {@link readStatus} read. */
export interface StatusReading {
  readonly rows: OrderStatus[];
  readonly failures: KindFailure[];
}

/**
 * Lists the five kinds in one namespace (or every namespace when `namespace` is undefined). A kind that fails is a
 * {@link KindFailure} (a 404 on the list: its CRD is not installed), the others still give their rows; an
 * `UnreachableError` (src/cli/cluster.ts) is thrown at once.
 */
export async function readStatus(cluster: Cluster, namespace: string | undefined, target?: string): Promise<StatusReading> {
  // A target cluster holds the four order kinds; its ControlPlanes are on the management cluster.
  const kinds = target === undefined ? STATUS_KINDS : STATUS_KINDS.filter((k) => k !== Kinds.ControlPlane);
  const results = await Promise.all(
    kinds.map(async (kind) => {
      try {
        const { items } = await cluster.api.list<AnyOrder>(kind, namespace === undefined ? {} : { namespace });
        return { rows: items.map((item) => (target === undefined ? orderStatus(item) : { cluster: target, ...orderStatus(item) })) };
      } catch (error) {
        if (!(error instanceof KubeApiError)) throw error;
        const cause = error.status === 404 ? 'missing' : error.status === 403 ? 'forbidden' : 'other';
        const failure: KindFailure = { kind, cause, error: explain(error, { verb: 'list', kind, namespace }, cluster), said: serverMessage(error) };
        return { failure };
      }
    }),
  );
  return {
    rows: sortRows(results.flatMap((r) => r.rows ?? [])),
    failures: results.flatMap((r) => (r.failure ? [r.failure] : [])),
  };
}

/**
 * One error message for the kinds that could not be listed: the missing CRDs together, the RBAC refusals together, then
 * each other failure; joined by "; ".
 */
export function failureMessage(failures: readonly KindFailure[], server: string, namespace: string | undefined): string {
  const of = (cause: KindFailure['cause']) => failures.filter((f) => f.cause === cause);
  const missing = of('missing').map((f) => f.kind);
  const forbidden = of('forbidden');
  const resources = forbidden.map((f) => resourceName(f.kind));
  return [
    ...(missing.length > 0 ? [missingCrdMessage(missing, server)] : []),
    ...(forbidden.length > 0 ? [forbiddenMessage('list', resources, resources, namespace, forbidden[0].said)] : []),
    ...of('other').map((f) => f.error.message),
  ].join('; ');
}


/** A registered target cluster: the name of its registration Secret and the kubeconfig it holds. */
export interface Registration {
  readonly name: string;
  readonly kubeconfig: string;
}

/** The target clusters registered in the operator's namespace, or why they could not be read. */
export interface RegistrationReading {
  readonly registrations: Registration[];
  /** The registration Secrets could not be listed (RBAC): the target clusters are not shown. */
  readonly unreadable?: string;
}

/**
 * The target clusters registered with the operator: the Secrets labelled `sigs.k8s.io/multicluster-runtime-kubeconfig=true`
 * in its namespace on the management cluster, sorted by name. A Secret without a `kubeconfig` key registers a cluster the
 * operator cannot reach; it is listed with an empty kubeconfig, so its failure is shown.
 */
export async function readRegistrations(cluster: Cluster, operatorNamespace: string): Promise<RegistrationReading> {
  try {
    const { items } = await cluster.api.list<Secret>(Kinds.Secret, { namespace: operatorNamespace, labelSelector: KUBECONFIG_SECRET_SELECTOR });
    const registrations = items
      .map((secret) => ({ name: secret.metadata.name, kubeconfig: Buffer.from(secret.data?.[KUBECONFIG_SECRET_KEY] ?? '', 'base64').toString('utf8') }))
      .sort((a, b) => a.name.localeCompare(b.name));
    return { registrations };
  } catch (error) {
    if (!(error instanceof KubeApiError) || error.status !== 403) throw explain(error, { verb: 'list', kind: Kinds.Secret, namespace: operatorNamespace }, cluster);
    return {
      registrations: [],
      unreadable: `target clusters not shown: not allowed to list secrets in namespace ${operatorNamespace}, where their kubeconfig Secrets register them (${serverMessage(error)}); pass --operator-namespace if the operator runs elsewhere\n`,
    };
  }
}

/** The rows of one registered target cluster, or the message of what failed there (its name first). */
export async function readTarget(registration: Registration, namespace: string | undefined, connector: Connector, operatorNamespace: string): Promise<{ rows: OrderStatus[]; failure?: string }> {
  const where = `cluster ${registration.name}`;
  let target: Cluster;
  try {
    if (registration.kubeconfig.trim() === '') throw new Error(`the Secret has no ${KUBECONFIG_SECRET_KEY} key`);
    target = openCluster({}, () => connector({ kubeconfigText: { text: registration.kubeconfig, source: `the kubeconfig Secret ${operatorNamespace}/${registration.name}` } }));
  } catch (error) {
    return { rows: [], failure: `${where}: its kubeconfig Secret ${operatorNamespace}/${registration.name} is not usable: ${errorText(error)}` };
  }
  try {
    const { rows, failures } = await readStatus(target, namespace, registration.name);
    if (failures.length === 0) return { rows };
    const missing = failures.filter((f) => f.cause === 'missing');
    const message = [
      ...(missing.length > 0 ? [missingCrdMessage(missing.map((f) => f.kind), target.server).replace(INSTALL_HINT, 'run `keystone-appcred manifests --target-cluster | kubectl apply --server-side -f -` against it')] : []),
      ...(failures.length > missing.length ? [failureMessage(failures.filter((f) => f.cause !== 'missing'), target.server, namespace)] : []),
    ].join('; ');
    return { rows, failure: `${where}: ${message}` };
  } catch (error) {
    return { rows: [], failure: `${where}: ${errorText(error)}` };
  }
}

