/**
 * The operator's controllers: one per kind (ControlPlane, KeystoneProject, KeystoneUser, KeystoneRoleAssignment,
 * KeystoneApplicationCredential), each a thin driver (src/plane/driver, src/operator/credential) over one shared
 * `ClusterPort` on the manager's caches. Which change requeues which object is the identity plane's `dependents` /
 * `secretDependents`, written once: a ControlPlane change requeues its orders, a changed reference requeues the orders
 * that read it, a changed or deleted child or delivered Secret requeues its owner.
 */
import {
  secretName,
  type ControlPlane,
  type KeystoneApplicationCredential,
  type KeystoneProject,
  type KeystoneRoleAssignment,
  type KeystoneUser,
} from '../api';
import type { ClusterReader } from '../kube/cluster';
import { Kinds, MetadataKinds, type Secret } from '../kube/kinds';
import { objectKey, type KubeObject, type ObjectKey, type ResourceKind } from '../kube/object';
import { dependents, secretDependents, type CachedObjects } from '../plane/dependents';
import { ConvergedPasses, reconcileAssignment, reconcileControlPlane, reconcileProject, reconcileUser, type PassResult } from '../plane/driver';
import { KeystoneLimitDefaults } from '../api/operator-env';
import { KeystoneLimits, KeystoneSessions } from '../keystone';
import { keystoneAdmins } from '../plane/keystone-admin';
import type { ObjectKind, PlaneDeps } from '../plane/ports';
import { OpenBao } from './credential/backup';
import { CredentialMetrics } from './credential/metrics';
import { CredentialReconciler } from './credential/reconciler';
import { controlPlaneIdentityWatches, registerClusterIdentityController } from './cluster-identity';
import { registerHandoff } from './handoff/controller';
import { PlaneCluster } from './plane-cluster';
import { withoutAnnotations } from './runtime/partition';
import { cacheSecrets, secretWatches } from './secret-cache';
import type { OpenBaoConfig } from './runtime/config';
import { EventRecorder } from './runtime/events';
import type { Manager } from './runtime/manager';
import type { Result } from './runtime/controller';

/** The kinds the controllers reconcile, by the plane's kind name. */
const KINDS: Readonly<Record<ObjectKind, ResourceKind<KubeObject>>> = {
  ControlPlane: Kinds.ControlPlane,
  KeystoneProject: Kinds.KeystoneProject,
  KeystoneUser: Kinds.KeystoneUser,
  KeystoneRoleAssignment: Kinds.KeystoneRoleAssignment,
  KeystoneApplicationCredential: Kinds.KeystoneApplicationCredential,
};

/** What the controllers need beyond the manager. */
export interface ControllerOptions {
  /** Where the credentials are backed up; absent: no backup. */
  readonly openBao?: OpenBaoConfig;
  /** The clock. @default () => new Date() */
  readonly clock?: () => Date;
  /** Roll the workloads that opted in when their delivered Secret switches (./handoff). @default false */
  readonly consumerHandoff?: boolean;
  /** The client-side limit per Keystone endpoint (0: none). @default KeystoneLimitDefaults */
  readonly keystone?: { readonly requestsPerSecond: number; readonly inFlight: number };
}

/**
 * Registers the five controllers and the KeystoneClusterIdentity controller (./cluster-identity.ts) on `manager`, and
 * with `consumerHandoff` the handoff's controller (./handoff).
 */
export function registerControllers(manager: Manager, options: ControllerOptions = {}): void {
  const cluster = new PlaneCluster(manager.cluster, new EventRecorder(manager.cluster, { logger: manager.logger }));
  const clock = options.clock ?? (() => new Date());
  // One limit per Keystone endpoint and one session per identity, shared by every kind's passes and workers: the
  // admins' and the ordered users' logins are reused for their tokens' lifetimes, and the limit, not the number of
  // workers, decides how much reaches Keystone.
  const limits = new KeystoneLimits({ ...(options.keystone ?? KeystoneLimitDefaults), onWait: (endpoint, seconds) => manager.metrics.keystoneWaited(endpoint, seconds) });
  manager.metrics.keystoneLoad(() => limits.all());
  const sessions = new KeystoneSessions({ limits });
  // The memo of converged passes forgets the plane objects that are gone from the caches (once a minute).
  const planeKinds = [Kinds.ControlPlane, Kinds.KeystoneProject, Kinds.KeystoneUser, Kinds.KeystoneRoleAssignment] as const;
  const live = () => planeKinds.flatMap((kind) => manager.cluster.list<KubeObject>(kind).map((o) => o.metadata.uid));
  const plane: PlaneDeps = { cluster, keystone: keystoneAdmins({ sessions }), clock, memo: new ConvergedPasses({ live }) };
  const openBao = options.openBao ? new OpenBao(openBaoOf(options.openBao)) : undefined;
  const metrics = new CredentialMetrics(manager.metrics.registry);
  const credentials = new CredentialReconciler({
    cluster,
    sessions,
    ...(openBao ? { backup: (path: string) => openBao.at(path) } : {}),
    clock,
    event: (order, event) => manager.cluster.event(order, event),
    onAction: (order, e) => {
      const a = e.action;
      // The action log line: what the operator did, never a secret (actions carry generations and ids only).
      manager.logger.info('action', {
        kind: 'KeystoneApplicationCredential',
        key: objectKey(order.metadata.namespace, order.metadata.name),
        action: a.type,
        ...('generation' in a ? { generation: a.generation } : {}),
        why: a.why,
        outcome: e.outcome,
        ms: Math.round(e.ms),
        ...(e.error ? { error: e.error } : {}),
      });
      if (a.type === 'deliver' && a.why === 'switch' && e.outcome === 'done') metrics.rotated(order.metadata.namespace ?? '', order.metadata.name);
    },
    // The status log line: the status was recorded (generations and the Ready reason; ids and secrets stay out).
    onStatus: (order, status) =>
      manager.logger.info('status', {
        kind: 'KeystoneApplicationCredential',
        key: objectKey(order.metadata.namespace, order.metadata.name),
        ...(status.credentialGeneration !== undefined ? { generation: status.credentialGeneration } : {}),
        ready: status.conditions?.find((c) => c.type === 'Ready')?.reason,
      }),
  });

  // The operator's own Secrets whole (children, delivered Secrets, mirrors), every other Secret as metadata only
  // (./secret-cache.ts); the Namespaces as metadata only (their labels are all an identity's consent reads).
  cacheSecrets(manager);
  manager.cache(MetadataKinds.Namespace, { transform: withoutAnnotations });
  const planeResult = (result: PassResult): Result => ({ ...(result.requeueAfter !== undefined ? { requeueAfter: result.requeueAfter } : {}), reason: result.skipped ? 'Unchanged' : result.actions.length > 0 ? 'Acted' : 'Converged' });
  const key = (request: { namespace?: string; name: string }) => ({ namespace: request.namespace ?? '', name: request.name });

  const reconcilers: Record<ObjectKind, (request: { namespace?: string; name: string }) => Promise<Result>> = {
    ControlPlane: async (r) => planeResult(await reconcileControlPlane(key(r), plane)),
    KeystoneProject: async (r) => planeResult(await reconcileProject(key(r), plane)),
    KeystoneUser: async (r) => planeResult(await reconcileUser(key(r), plane)),
    KeystoneRoleAssignment: async (r) => planeResult(await reconcileAssignment(key(r), plane)),
    KeystoneApplicationCredential: async (r) => {
      const k = key(r);
      try {
        const outcome = await credentials.reconcile(k);
        // A skipped pass found the status its last full pass recorded in the metrics: nothing to set, unless this
        // process meets the order for the first time (settled by the cache) and has recorded nothing yet.
        if (!outcome.skipped || outcome.settled) metrics.observed(k.namespace, k.name, outcome.status);
        if (!outcome.skipped && !outcome.status) metrics.forget(k.namespace, k.name);
        return { ...(outcome.requeueAfterMs !== undefined ? { requeueAfter: outcome.requeueAfterMs } : {}), reason: outcome.skipped ? 'Unchanged' : 'Reconciled' };
      } catch (error) {
        const order = manager.cluster.get(Kinds.KeystoneApplicationCredential, k.namespace, k.name);
        const reason = order?.status?.conditions?.find((c) => c.status === 'False' && c.type !== 'Ready')?.reason ?? 'Error';
        metrics.failed(k.namespace, k.name, reason);
        throw error;
      }
    },
  };

  registerClusterIdentityController(manager, cluster, clock);
  if (options.consumerHandoff) registerHandoff(manager, { clock });
  for (const kind of Object.keys(KINDS) as ObjectKind[]) {
    manager.controller({
      kind: KINDS[kind],
      reconcile: reconcilers[kind],
      watches: [
        ...(Object.keys(KINDS) as ObjectKind[]).filter((k) => k !== kind).map((watched) => ({ kind: KINDS[watched], map: (object: KubeObject, reads: ClusterReader) => keysOf(kind, dependents(watched, object, cached(reads, object, watched))) })),
        ...secretWatches((secret: KubeObject, reads: ClusterReader) => keysOf(kind, secretDependents(secretRefOf(secret as Secret), secretNeighbours(reads, secret)))),
        ...(kind === 'ControlPlane' ? controlPlaneIdentityWatches() : []),
      ],
    });
  }
}

/** The keys of the objects of `kind` among `refs`. */
function keysOf(kind: ObjectKind, refs: readonly { kind: ObjectKind; namespace: string; name: string; cluster?: string }[]): ObjectKey[] {
  return refs.filter((r) => r.kind === kind && !r.cluster).map((r) => objectKey(r.namespace, r.name));
}

/**
 * The cached objects `dependents` reads: a ControlPlane's orders anywhere; for an order, only the role assignments and
 * credentials of its namespace that name its user (and project), selected by the store's field indexes. Listing the
 * whole namespace for every event of every order made a relist of 5,000 orders cost minutes of CPU.
 */
function cached(reads: ClusterReader, object: KubeObject, changed: ObjectKind): CachedObjects {
  if (changed === 'ControlPlane' || object.metadata.namespace === undefined) {
    return {
      controlPlanes: reads.list(Kinds.ControlPlane) as ControlPlane[],
      users: reads.list(Kinds.KeystoneUser) as KeystoneUser[],
      projects: reads.list(Kinds.KeystoneProject) as KeystoneProject[],
      assignments: reads.list(Kinds.KeystoneRoleAssignment) as KeystoneRoleAssignment[],
      credentials: reads.list(Kinds.KeystoneApplicationCredential) as KeystoneApplicationCredential[],
    };
  }
  const namespace = object.metadata.namespace;
  const naming = (fields: Record<string, string>): CachedObjects => ({
    assignments: reads.list(Kinds.KeystoneRoleAssignment, { namespace, fields }) as KeystoneRoleAssignment[],
    credentials: reads.list(Kinds.KeystoneApplicationCredential, { namespace, fields }) as KeystoneApplicationCredential[],
  });
  if (changed === 'KeystoneUser') return naming({ 'spec.userRef.name': object.metadata.name });
  if (changed === 'KeystoneProject') return naming({ 'spec.projectRef.name': object.metadata.name });
  const { userRef, projectRef } = (object as KeystoneRoleAssignment | KeystoneApplicationCredential).spec;
  return naming({ 'spec.userRef.name': userRef.name, 'spec.projectRef.name': projectRef.name });
}

const DELIVERED_SUFFIX = secretName('');

/**
 * The cached objects `secretDependents` reads: the ControlPlanes of the Secret's namespace and the credential order
 * whose delivered name the Secret has (found by name: a namespace may hold thousands of orders and Secrets).
 */
function secretNeighbours(reads: ClusterReader, secret: KubeObject): CachedObjects {
  const namespace = secret.metadata.namespace ?? '';
  const name = secret.metadata.name;
  const order = name.endsWith(DELIVERED_SUFFIX) ? reads.get(Kinds.KeystoneApplicationCredential, namespace, name.slice(0, -DELIVERED_SUFFIX.length)) : undefined;
  return {
    controlPlanes: reads.list(Kinds.ControlPlane, { namespace }) as ControlPlane[],
    credentials: order ? [order as KeystoneApplicationCredential] : [],
  };
}

/** What `secretDependents` reads of a Secret: its name, labels and owners (never its data). */
function secretRefOf(secret: Secret) {
  return {
    metadata: {
      name: secret.metadata.name,
      namespace: secret.metadata.namespace ?? '',
      ...(secret.metadata.labels ? { labels: secret.metadata.labels } : {}),
      ...(secret.metadata.ownerReferences ? { ownerReferences: secret.metadata.ownerReferences } : {}),
    },
    data: {},
  };
}

/** The runtime's OpenBao settings as the backup's login. */
function openBaoOf(config: OpenBaoConfig) {
  return {
    address: config.address,
    login:
      config.authMethod === 'token'
        ? ({ method: 'token', token: config.token ?? '' } as const)
        : ({ method: 'kubernetes', role: config.role ?? '', mount: config.authMount } as const),
    ...(config.caFile ? { caFile: config.caFile } : {}),
  };
}
