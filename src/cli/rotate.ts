/**
 * `keystone-appcred rotate NAME -n NS [--revoke-previous] [--wait] [--timeout DURATION]`: orders a rotation of one
 * KeystoneApplicationCredential by raising its `spec.credentialGeneration`, and with `--wait` waits until the operator
 * delivered the new generation (the order's status names it and the delivered Secret). With `--revoke-previous` (issue
 * 49) it writes a new value into the order's `c5c3.io/revoke-previous` annotation instead, which rotates at once and
 * deletes the superseded credential as soon as its successor is delivered and backed up, skipping the grace period; the
 * same annotation a GitOps repository may carry, so both ask in one way and the order acts once per value.
 */
import { Command, InvalidArgumentError } from 'commander';
import { Duration, DEFAULT_CREDENTIAL_GENERATION, REVOKE_PREVIOUS_ANNOTATION, revokeRequestOf, type KeystoneApplicationCredential } from '../api';
import { isConflict, isNotFound, KubeApiError } from '../kube/errors';
import { Kinds } from '../kube/kinds';
import { clusterOptions, errorText, explain, missingCrdMessage, openCluster, UnreachableError, type Cluster, type ClusterFlags, type Connector } from './cluster';
import { orderStatus } from './status';

const KIND = Kinds.KeystoneApplicationCredential;

/** How often a write that lost to a concurrent status update is retried. */
const CONFLICT_RETRIES = 5;

/** `KeystoneApplicationCredential tenant-a/app`. */
function describeOrder(namespace: string, name: string): string {
  return `${KIND.kind} ${namespace}/${name}`;
}

/** What {@link raiseGeneration} did. */
export interface Raised {
  /** `spec.credentialGeneration` before. */
  readonly from: number;
  /** `spec.credentialGeneration` now: the generation the rotation creates (or a higher one). */
  readonly to: number;
}

/**
 * The generation a rotation orders: one above the higher of `spec.credentialGeneration` and `status.credentialGeneration`.
 * The schedule raises only the status, so one above the spec alone would often order a generation the order already
 * holds, which rotates nothing.
 */
export function nextGeneration(order: Pick<KeystoneApplicationCredential, 'spec' | 'status'>): number {
  return Math.max(order.spec.credentialGeneration || DEFAULT_CREDENTIAL_GENERATION, order.status?.credentialGeneration ?? 0) + 1;
}

/**
 * Reads the order and raises `spec.credentialGeneration` to {@link nextGeneration} with a JSON merge patch guarded by the
 * resourceVersion it read, so a concurrent write fails the patch instead of being overwritten. A conflict from a status
 * update is retried with a fresh read; a conflict where somebody else raised the spec meanwhile (a concurrent rotate)
 * fails: the user decides whether a second rotation is wanted.
 * @throws Error naming the order when it or its CRD does not exist, it is being deleted, RBAC refuses, or the retries run out
 */
export async function raiseGeneration(cluster: Cluster, namespace: string, name: string): Promise<Raised> {
  const what = describeOrder(namespace, name);
  let first: number | undefined;
  for (let attempt = 0; ; attempt++) {
    const order = await getOrder(cluster, namespace, name);
    const from = order.spec.credentialGeneration || DEFAULT_CREDENTIAL_GENERATION;
    if (first === undefined) first = from;
    else if (from !== first) {
      throw new Error(`${what}: spec.credentialGeneration was raised from ${first} to ${from} by someone else while this rotate ran; not raising it again (run rotate again for one more rotation)`);
    }
    if (order.metadata.deletionTimestamp) throw new Error(`${what} is being deleted; not rotating it`);
    const to = nextGeneration(order);
    const patch = { metadata: { resourceVersion: order.metadata.resourceVersion }, spec: { credentialGeneration: to } };
    try {
      await cluster.api.patch(KIND, namespace, name, patch, { type: 'merge' });
      return { from, to };
    } catch (error) {
      if (isConflict(error) && attempt < CONFLICT_RETRIES) continue;
      if (isConflict(error)) throw new Error(`${what} kept changing while rotate patched it (${CONFLICT_RETRIES + 1} conflicts); try again`);
      if (isNotFound(error)) throw notFound(namespace, name);
      throw explain(error, { verb: 'patch', kind: KIND, namespace, name }, cluster);
    }
  }
}

/** What {@link requestRevoke} did. */
export interface RevokeRequested {
  /** The annotation's value: the request the order records in `status.lastRevokeRequest` once it acts on it. */
  readonly request: string;
  /** The generation the order delivered when asked: the one to be deleted (with any older one in its grace period). */
  readonly revoking?: number;
}

/**
 * Writes a new request into the order's `c5c3.io/revoke-previous` annotation (the time, to the millisecond), with a
 * JSON merge patch guarded by the resourceVersion it read, retried on a conflict with a status update.
 * @throws Error naming the order when it or its CRD does not exist, it is being deleted, RBAC refuses, or the retries run out
 */
export async function requestRevoke(cluster: Cluster, namespace: string, name: string, now: () => Date = () => new Date()): Promise<RevokeRequested> {
  const what = describeOrder(namespace, name);
  for (let attempt = 0; ; attempt++) {
    const order = await getOrder(cluster, namespace, name);
    if (order.metadata.deletionTimestamp) throw new Error(`${what} is being deleted; not revoking`);
    const request = now().toISOString();
    const patch = { metadata: { resourceVersion: order.metadata.resourceVersion, annotations: { [REVOKE_PREVIOUS_ANNOTATION]: request } } };
    try {
      await cluster.api.patch(KIND, namespace, name, patch, { type: 'merge' });
      const revoking = order.status?.credentialGeneration;
      return { request, ...(revoking !== undefined ? { revoking } : {}) };
    } catch (error) {
      if (isConflict(error) && attempt < CONFLICT_RETRIES) continue;
      if (isConflict(error)) throw new Error(`${what} kept changing while rotate patched it (${CONFLICT_RETRIES + 1} conflicts); try again`);
      if (isNotFound(error)) throw notFound(namespace, name);
      throw explain(error, { verb: 'patch', kind: KIND, namespace, name }, cluster);
    }
  }
}

/** Whether the order has carried out the revoke request: recorded, rotated, and nothing below the new generation held. */
export function revoked(order: Pick<KeystoneApplicationCredential, 'status'>, request: string): boolean {
  const status = order.status ?? {};
  return status.lastRevokeRequest === revokeRequestOf(request) && status.revokeGeneration === undefined && status.previousCredentialID === undefined && Boolean(status.secretName);
}

/** Reads the order; a missing order or CRD, or a refusal, is an Error that says so. */
async function getOrder(cluster: Cluster, namespace: string, name: string): Promise<KeystoneApplicationCredential> {
  let order: KeystoneApplicationCredential | undefined;
  try {
    order = await cluster.api.get(KIND, namespace, name);
  } catch (error) {
    throw explain(error, { verb: 'get', kind: KIND, namespace, name }, cluster);
  }
  if (order !== undefined) return order;
  // A 404 on the object is also what a server without the CRD answers: ask the collection which it is.
  const probe = await cluster.api.transport.request({ method: 'GET', path: cluster.api.path(KIND, namespace), query: { limit: 1 } });
  if (probe.status === 404) throw new Error(missingCrdMessage([KIND], cluster.server));
  throw notFound(namespace, name);
}

function notFound(namespace: string, name: string): Error {
  return new Error(`${describeOrder(namespace, name)} not found: check the name and -n (keystone-appcred status -n ${namespace} lists the orders there)`);
}

/** What {@link waitForDelivery} needs besides the cluster. */
export interface WaitOptions {
  readonly timeoutMs: number;
  /** Between two reads. @default 2000 */
  readonly pollMs?: number;
  /** @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Milliseconds of a monotonic clock. @default Date.now */
  readonly clock?: () => number;
}

/** What the order reported when the wait ended. */
export interface Delivered {
  readonly generation: number;
  readonly secretName: string;
}

/**
 * Polls the order until `status.credentialGeneration` is at least `generation` and `status.secretName` is set (the
 * operator sets both together once the delivered Secret carries that generation). A failed read that never reached the
 * API server is retried until the timeout; the order vanishing or RBAC refusing fails at once.
 * @throws Error at the timeout naming the order, the generation it holds and its last Ready status and reason
 */
export async function waitForDelivery(
  cluster: Cluster,
  namespace: string,
  name: string,
  generation: number,
  options: WaitOptions & { readonly revoke?: string },
): Promise<Delivered> {
  const what = describeOrder(namespace, name);
  const clock = options.clock ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = clock() + options.timeoutMs;
  let last: KeystoneApplicationCredential | undefined;
  let lastError: string | undefined;
  for (;;) {
    try {
      const order = await cluster.api.get(KIND, namespace, name);
      if (order === undefined) throw new Error(`${what} was deleted while waiting for generation ${generation}`);
      last = order;
      lastError = undefined;
      const status = order.status;
      const done = options.revoke !== undefined ? revoked(order, options.revoke) : (status?.credentialGeneration ?? 0) >= generation && Boolean(status?.secretName);
      if (done && status?.secretName) return { generation: status.credentialGeneration ?? generation, secretName: status.secretName };
    } catch (error) {
      if (!(error instanceof UnreachableError)) throw error instanceof KubeApiError ? explain(error, { verb: 'get', kind: KIND, namespace, name }, cluster) : error;
      lastError = errorText(error);
    }
    const left = deadline - clock();
    if (left <= 0) throw new Error(timeoutMessage(what, generation, options.timeoutMs, last, lastError));
    await sleep(Math.min(options.pollMs ?? 2000, left));
  }
}

function timeoutMessage(what: string, generation: number, timeoutMs: number, order: KeystoneApplicationCredential | undefined, lastError: string | undefined): string {
  const after = `timed out after ${Duration.ofMilliseconds(timeoutMs).toString()} waiting for ${what} to deliver generation ${generation}`;
  const hint = 'the rotation stays ordered; see keystone-appcred status and the operator\'s logs';
  if (lastError !== undefined) return `${after}: the last read failed: ${lastError}; ${hint}`;
  if (order === undefined) return `${after}; ${hint}`;
  const row = orderStatus(order);
  const held = order.status?.credentialGeneration;
  const state =
    row.ready === null
      ? 'it has no Ready condition yet (is the operator running?)'
      : `Ready is ${row.ready}${row.reason ? `, reason ${row.reason}` : ''}${row.message ? ` (${row.message})` : ''}`;
  return `${after}: it holds generation ${held ?? 'none'}${order.status?.secretName ? '' : ', no delivered Secret'}; ${state}; ${hint}`;
}

/** Where {@link rotateCommand} writes and how it connects and waits; every field defaults to the real thing. */
export interface RotateIo {
  /** Receives the output. @default process.stdout.write */
  readonly write?: (text: string) => void;
  /** @default connect() of src/kube/client-node.ts */
  readonly connect?: Connector;
  readonly pollMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly clock?: () => number;
}

interface RotateFlags extends ClusterFlags {
  readonly namespace?: string;
  readonly revokePrevious?: boolean;
  readonly wait?: boolean;
  readonly timeout: Duration;
}

function timeout(value: string): Duration {
  let parsed: Duration;
  try {
    parsed = Duration.parse(value, '--timeout');
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
  if (parsed.isNegative() || parsed.isZero()) throw new InvalidArgumentError('--timeout must be above zero, like 5m or 90s');
  return parsed;
}

function waitOptions(flags: RotateFlags, io: RotateIo): WaitOptions {
  return {
    timeoutMs: flags.timeout.milliseconds,
    ...(io.pollMs !== undefined ? { pollMs: io.pollMs } : {}),
    ...(io.sleep ? { sleep: io.sleep } : {}),
    ...(io.clock ? { clock: io.clock } : {}),
  };
}

/**
 * The `rotate` subcommand, for `program().addCommand(...)`. Prints the generation ordered; with `--wait`, then the
 * generation delivered and its Secret. Fails (non-zero exit) with a message naming the order for a missing order or
 * CRD, an RBAC refusal, an unreachable API server, and a `--wait` that times out.
 */
export function rotateCommand(io: RotateIo = {}): Command {
  const write = io.write ?? ((text: string): void => void process.stdout.write(text));
  const command = new Command('rotate')
    .description('rotate a KeystoneApplicationCredential now: raise spec.credentialGeneration by one above the generation it holds')
    .argument('<name>', 'the KeystoneApplicationCredential')
    .option('-n, --namespace <namespace>', "its namespace; default: the context's namespace")
    .option(
      '--revoke-previous',
      `revoke now: set the ${REVOKE_PREVIOUS_ANNOTATION} annotation instead, which rotates at once and deletes the delivered credential as soon as its successor is delivered and backed up, skipping the grace period (a Warning Event GraceSkipped says so)`,
    )
    .option('--wait', 'return only when the delivered Secret carries the new generation')
    .option('--timeout <duration>', 'how long --wait waits, Go format', timeout, Duration.parse('5m'));
  return clusterOptions(command).action(async (name: string, flags: RotateFlags) => {
    const cluster = openCluster(flags, io.connect);
    const namespace = flags.namespace ?? cluster.defaultNamespace;
    const what = describeOrder(namespace, name);
    if (flags.revokePrevious) {
      const asked = await requestRevoke(cluster, namespace, name);
      const was = asked.revoking !== undefined ? `generation ${asked.revoking}` : 'the delivered credential';
      write(`${what}: ${REVOKE_PREVIOUS_ANNOTATION} set to ${asked.request}: rotates at once and deletes ${was} as soon as its successor is delivered and backed up\n`);
      if (!flags.wait) return;
      const delivered = await waitForDelivery(cluster, namespace, name, (asked.revoking ?? 0) + 1, { ...waitOptions(flags, io), revoke: asked.request });
      write(`${what}: generation ${delivered.generation} delivered in Secret ${delivered.secretName}; ${was} is deleted\n`);
      return;
    }
    const raised = await raiseGeneration(cluster, namespace, name);
    write(`${what}: spec.credentialGeneration raised from ${raised.from} to ${raised.to}\n`);
    if (!flags.wait) return;
    const delivered = await waitForDelivery(cluster, namespace, name, raised.to, waitOptions(flags, io));
    write(`${what}: generation ${delivered.generation} delivered in Secret ${delivered.secretName}\n`);
  });
}
