/**
 * `keystone-appcred status`: every order of the cluster (KeystoneApplicationCredential, KeystoneUser, KeystoneProject,
 * KeystoneRoleAssignment) and every ControlPlane, with its readiness and reason, its generation, its next rotation and,
 * for a KeystoneApplicationCredential, whether a grace period runs; as a kubectl-style table or as JSON or YAML. The
 * orders of every registered target cluster too (the kubeconfig Secrets in the operator's namespace), with a CLUSTER
 * column; `--cluster NAME` shows one of them.
 *
 * It also holds what `status` and `rotate` share: the `--kubeconfig`/`--context` options, the connection through the
 * project's Kubernetes adapter (src/kube; `@kubernetes/client-node` is loaded only there), and the translation of API
 * errors into messages that name the object and say what to do.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { stringify } from 'yaml';
import {
  DEFAULT_CREDENTIAL_GENERATION,
  DEFAULT_INTERVAL,
  Duration,
  KUBECONFIG_SECRET_KEY,
  KUBECONFIG_SECRET_SELECTOR,
  type Condition,
  type KeystoneApplicationCredential,
} from '../api';
import { PlaneDefaults, type ControlPlane, type KeystoneProject, type KeystoneRoleAssignment, type KeystoneUser } from '../api/identity-plane';
import { KubeApi } from '../kube/api';
import { connect, type ConnectOptions, type Connection } from '../kube/client-node';
import { KubeApiError } from '../kube/errors';
import { Kinds, type Secret } from '../kube/kinds';
import type { KubeObject, ResourceKind } from '../kube/object';
import type { HttpRequest, HttpResponse, Query, Transport, WatchEvent, WatchStream } from '../kube/transport';

// ---------------------------------------------------------------------------------------------------------------------
// Connecting, shared with `rotate`
// ---------------------------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------------------------
// What `status` reads and shows
// ---------------------------------------------------------------------------------------------------------------------

/** The kinds `status` lists, in the order their rows are shown within a namespace (referenced before referrers). */
export const STATUS_KINDS = [
  Kinds.ControlPlane,
  Kinds.KeystoneProject,
  Kinds.KeystoneUser,
  Kinds.KeystoneRoleAssignment,
  Kinds.KeystoneApplicationCredential,
] as const;

/** A kind `status` lists. */
export type StatusKind = (typeof STATUS_KINDS)[number]['kind'];

/** The condition each kind reports its readiness in (the CRDs' Ready printer column reads the same). */
export const READINESS_CONDITION: Readonly<Record<StatusKind, string>> = {
  ControlPlane: 'Ready',
  KeystoneProject: 'ProjectReady',
  KeystoneUser: 'Ready',
  KeystoneRoleAssignment: 'AssignmentReady',
  KeystoneApplicationCredential: 'Ready',
};

/** One row of `status`: what `-o json` and `-o yaml` print for each object. Absent values are null. */
export interface OrderStatus {
  /** The registered target cluster the object lives on; absent for the management cluster. */
  readonly cluster?: string;
  readonly kind: StatusKind;
  readonly namespace: string;
  readonly name: string;
  /** The readiness condition's status (`Ready`; `ProjectReady`, `AssignmentReady`); null before the operator reported. */
  readonly ready: 'True' | 'False' | 'Unknown' | null;
  /**
   * Why: the readiness condition's reason, except that a KeystoneApplicationCredential's `NotAllReady` is replaced by the
   * reason of its first sub-condition (CredentialReady, DeliveryReady) that is not True.
   */
  readonly reason: string | null;
  /** The message of the condition the reason came from. */
  readonly message: string | null;
  /** The generation held: `status.credentialGeneration` or `status.passwordGeneration`; null for the other kinds. */
  readonly generation: number | null;
  /** The generation ordered: `spec.credentialGeneration` or `spec.passwordGeneration` (default 1); null for the other kinds. */
  readonly orderedGeneration: number | null;
  /** `spec.rotation.interval` of a KeystoneApplicationCredential (`0s`: the schedule is off); else null. */
  readonly rotationInterval: string | null;
  /** `status.nextRotation` (RFC 3339). */
  readonly nextRotation: string | null;
  /** A KeystoneApplicationCredential in its grace period: the superseded generation and when it is deleted. */
  readonly gracePeriod: { readonly previousGeneration: number; readonly until: string | null } | null;
}

/** An object of one of the five kinds. */
export type AnyOrder = ControlPlane | KeystoneProject | KeystoneUser | KeystoneRoleAssignment | KeystoneApplicationCredential;

/** The row of one object (its `kind` says which of the five it is). */
export function orderStatus(object: AnyOrder): OrderStatus {
  const kind = object.kind;
  const conditions = object.status?.conditions ?? [];
  const readiness = conditions.find((c) => c.type === READINESS_CONDITION[kind]);
  let because: Condition | undefined = readiness;
  if (kind === 'KeystoneApplicationCredential' && readiness?.status !== 'True' && (readiness === undefined || readiness.reason === 'NotAllReady')) {
    because = ['CredentialReady', 'DeliveryReady'].map((t) => conditions.find((c) => c.type === t)).find((c) => c !== undefined && c.status !== 'True') ?? readiness;
  }
  const base = {
    kind,
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name,
    ready: readiness?.status ?? null,
    reason: because?.reason || null,
    message: because?.message || null,
  };
  const none = { generation: null, orderedGeneration: null, rotationInterval: null, nextRotation: null, gracePeriod: null };
  if (object.kind === 'KeystoneApplicationCredential') {
    const status = object.status;
    return {
      ...base,
      generation: status?.credentialGeneration ?? null,
      orderedGeneration: object.spec.credentialGeneration || DEFAULT_CREDENTIAL_GENERATION,
      rotationInterval: object.spec.rotation?.interval || DEFAULT_INTERVAL,
      nextRotation: status?.nextRotation ?? null,
      gracePeriod:
        status?.previousCredentialGeneration !== undefined
          ? { previousGeneration: status.previousCredentialGeneration, until: status.previousCredentialDeleteAt ?? null }
          : null,
    };
  }
  if (object.kind === 'KeystoneUser') {
    return { ...none, ...base, generation: object.status?.passwordGeneration ?? null, orderedGeneration: object.spec.passwordGeneration || PlaneDefaults.passwordGeneration };
  }
  return { ...none, ...base };
}

/** Rows in the order `status` prints them: the management cluster's first, then by cluster, namespace, kind (ControlPlane first), name. */
export function sortRows(rows: readonly OrderStatus[]): OrderStatus[] {
  const rank = (kind: StatusKind) => STATUS_KINDS.findIndex((k) => k.kind === kind);
  return [...rows].sort(
    (a, b) => (a.cluster ?? '').localeCompare(b.cluster ?? '') || a.namespace.localeCompare(b.namespace) || rank(a.kind) - rank(b.kind) || a.name.localeCompare(b.name),
  );
}

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
 * {@link UnreachableError} is thrown at once.
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

// ---------------------------------------------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------------------------------------------

/**
 * A duration as kubectl prints ages (`k8s.io/apimachinery/pkg/util/duration.HumanDuration`): `90s`, `5m30s`, `75m`,
 * `5h30m`, `36h`, `3d4h`, `29d`, `2y10d`, `9y`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(Math.abs(ms) / 1000);
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  const years = Math.floor(days / 365);
  if (seconds < 120) return `${seconds}s`;
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  if (days < 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** `2026-07-01T10:00:00Z (in 29d)`, or `(5m ago)` for a time passed; the text as it is when it is no time. */
export function timeCell(time: string, now: Date): string {
  const at = Date.parse(time);
  if (Number.isNaN(at)) return time;
  const delta = at - now.getTime();
  return `${time} (${delta >= 0 ? `in ${humanDuration(delta)}` : `${humanDuration(delta)} ago`})`;
}

/** The value of an absent field, as kubectl prints it. */
const NONE = '<none>';
/** A column that does not apply to the kind. */
const NOT_APPLICABLE = '-';

/** The table's cells of one row. */
function cells(row: OrderStatus, now: Date): string[] {
  const credential = row.kind === 'KeystoneApplicationCredential';
  const hasGeneration = row.orderedGeneration !== null;
  let generation = NOT_APPLICABLE;
  if (hasGeneration) {
    generation = row.generation === null ? NONE : String(row.generation);
    if (row.orderedGeneration !== null && (row.generation === null || row.orderedGeneration > row.generation)) generation += ` (ordered ${row.orderedGeneration})`;
  }
  let next = NOT_APPLICABLE;
  if (credential) {
    const off = row.rotationInterval !== null && isZeroDuration(row.rotationInterval);
    next = row.nextRotation !== null ? timeCell(row.nextRotation, now) : off ? 'off' : NONE;
  }
  let grace = NOT_APPLICABLE;
  if (credential) {
    grace = row.gracePeriod === null ? 'none' : row.gracePeriod.until !== null ? `until ${timeCell(row.gracePeriod.until, now)}` : `generation ${row.gracePeriod.previousGeneration}`;
  }
  return [row.kind, row.name, row.ready ?? NONE, row.reason ?? NONE, generation, next, grace];
}

function isZeroDuration(text: string): boolean {
  try {
    return Duration.parse(text).isZero();
  } catch {
    return false;
  }
}

/** Columns padded to the widest cell plus three spaces, as kubectl aligns them; no trailing blanks. */
export function alignColumns(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] + 3))).join('').trimEnd() + '\n').join('');
}

/** The CLUSTER cell of a row of the management cluster (a Secret's name, a cluster's, never has parentheses). */
export const MANAGEMENT_CLUSTER = '(management)';

/**
 * The kubectl-style table; a NAMESPACE column first when `allNamespaces`, and before it a CLUSTER column when `clusters`
 * (target clusters are registered).
 */
export function formatTable(rows: readonly OrderStatus[], options: { allNamespaces: boolean; now: Date; clusters?: boolean }): string {
  const header = ['KIND', 'NAME', 'READY', 'REASON', 'GENERATION', 'NEXT ROTATION', 'GRACE PERIOD'];
  const lead = (row: OrderStatus): string[] => [...(options.clusters ? [row.cluster ?? MANAGEMENT_CLUSTER] : []), ...(options.allNamespaces ? [row.namespace] : [])];
  const head = [...(options.clusters ? ['CLUSTER'] : []), ...(options.allNamespaces ? ['NAMESPACE'] : [])];
  return alignColumns([[...head, ...header], ...rows.map((row) => [...lead(row), ...cells(row, options.now)])]);
}

/** The output formats of `-o`. */
export const OUTPUT_FORMATS = ['json', 'yaml'] as const;
/** An output format of `-o`. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The machine output: `{ "items": [OrderStatus...] }` as JSON (indented, with a final newline) or YAML. */
export function formatMachine(rows: readonly OrderStatus[], format: OutputFormat): string {
  const document = { items: rows };
  return format === 'json' ? `${JSON.stringify(document, null, 2)}\n` : stringify(document);
}

// ---------------------------------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------------------------------

/** Where {@link statusCommand} writes and how it connects; every field defaults to the real thing. */
export interface StatusIo {
  /** Receives the output. @default process.stdout.write */
  readonly write?: (text: string) => void;
  /** Receives notes such as "No orders found". @default process.stderr.write */
  readonly note?: (text: string) => void;
  /** @default connect() of src/kube/client-node.ts */
  readonly connect?: Connector;
  /** The time relative times are computed from. @default new Date() */
  readonly now?: () => Date;
}

interface StatusFlags extends ClusterFlags {
  readonly namespace?: string;
  readonly allNamespaces?: boolean;
  readonly output?: OutputFormat;
  readonly cluster?: string;
  readonly operatorNamespace: string;
}

/** The operator's namespace when `--operator-namespace` is not given (the construct's default). */
export const DEFAULT_OPERATOR_NAMESPACE = 'keystone-appcred-system';

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
async function readTarget(registration: Registration, namespace: string | undefined, connector: Connector, operatorNamespace: string): Promise<{ rows: OrderStatus[]; failure?: string }> {
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

function outputFormat(value: string): OutputFormat {
  if (!(OUTPUT_FORMATS as readonly string[]).includes(value)) throw new InvalidArgumentError(`use json or yaml (or leave -o out for a table)`);
  return value as OutputFormat;
}

/**
 * The `status` subcommand, for `program().addCommand(...)`. Prints the rows it could read; when a kind could not be
 * listed (its CRD is missing, RBAC refuses it) it fails after printing, with one message naming every such kind and
 * what to do. An unreachable API server fails at once; an unreachable target cluster is named after the rows.
 */
export function statusCommand(io: StatusIo = {}): Command {
  const write = io.write ?? ((text: string): void => void process.stdout.write(text));
  const note = io.note ?? ((text: string): void => void process.stderr.write(text));
  const command = new Command('status')
    .description('show every order and ControlPlane: Ready and reason, generation, next rotation, grace period')
    .addOption(new Option('-n, --namespace <namespace>', "the namespace; default: the context's namespace").conflicts('allNamespaces'))
    .option('-A, --all-namespaces', 'every namespace')
    .option('-o, --output <format>', 'json or yaml instead of the table', outputFormat)
    .option('--cluster <name>', 'only the orders of this registered target cluster (the name of its kubeconfig Secret)')
    .option('--operator-namespace <namespace>', "the operator's namespace, where kubeconfig Secrets register target clusters", DEFAULT_OPERATOR_NAMESPACE);
  return clusterOptions(command).action(async (flags: StatusFlags) => {
    const cluster = openCluster(flags, io.connect);
    const namespace = flags.allNamespaces ? undefined : (flags.namespace ?? cluster.defaultNamespace);
    const management = flags.cluster === undefined ? await readStatus(cluster, namespace) : { rows: [], failures: [] };
    const registered = await readRegistrations(cluster, flags.operatorNamespace);
    const selected = flags.cluster === undefined ? registered.registrations : registered.registrations.filter((r) => r.name === flags.cluster);
    if (flags.cluster !== undefined && selected.length === 0) {
      throw new Error(
        registered.unreadable !== undefined
          ? registered.unreadable.trim()
          : `cluster ${flags.cluster} is not registered: no Secret ${flags.cluster} labelled ${KUBECONFIG_SECRET_SELECTOR} in namespace ${flags.operatorNamespace}`,
      );
    }
    const targets = await Promise.all(selected.map((r) => readTarget(r, namespace, io.connect ?? connect, flags.operatorNamespace)));
    const rows = sortRows([...management.rows, ...targets.flatMap((t) => t.rows)]);
    const failures = [
      ...(management.failures.length > 0 ? [failureMessage(management.failures, cluster.server, namespace)] : []),
      ...targets.flatMap((t) => (t.failure !== undefined ? [t.failure] : [])),
    ];
    if (selected.length === 0 && management.failures.length === STATUS_KINDS.length) throw new Error(failures[0]);
    if (flags.output !== undefined) write(formatMachine(rows, flags.output));
    else if (rows.length > 0) write(formatTable(rows, { allNamespaces: namespace === undefined, clusters: selected.length > 0, now: (io.now ?? (() => new Date()))() }));
    else note(namespace === undefined ? 'No orders found.\n' : `No orders found in namespace ${namespace}.\n`);
    if (registered.unreadable !== undefined) note(registered.unreadable);
    if (failures.length > 0) throw new Error(failures.join('; '));
  });
}
