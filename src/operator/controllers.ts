/**
 * The operator's controllers: one per kind (ControlPlane, KeystoneProject, KeystoneUser, KeystoneRoleAssignment,
 * KeystoneApplicationCredential), each a thin driver (src/plane/driver, src/operator/credential) over a `ClusterPort`
 * per cluster on the manager's caches. Which change requeues which object is the identity plane's `dependents` /
 * `secretDependents`, written once: a ControlPlane change requeues its orders, a changed reference requeues the orders
 * that read it, a changed or deleted child or delivered Secret requeues its owner.
 *
 * The four order kinds are reconciled on every registered target cluster too: a request carries its cluster, the
 * driver reads and writes the order through that cluster's port and the ControlPlane and children through the
 * management cluster's (`OrderSite`), a ControlPlane change requeues its orders on every cluster, a child's cluster
 * label names its order's cluster, and an order on a target cluster is looked at again every 10 minutes at the latest.
 */
import { SecretAccessMode, type ControlPlane } from '../api';
import type { ClusterReader } from '../kube/cluster';
import { Kinds, MetadataKinds, type Secret } from '../kube/kinds';
import { objectKey, type KubeObject } from '../kube/object';
import { KINDS, objectDependents, secretAccessDependents, secretDependentKeys } from './watches';
import { ConvergedPasses, reconcileAssignment, reconcileControlPlane, reconcileProject, reconcileUser, type PassResult } from '../plane/driver';
import { KeystoneLimitDefaults, type KeystonePacing } from '../api/operator-env';
import { KeystoneLimits, KeystoneSessions, type FetchLike } from '../keystone';
import { keystoneAdmins } from '../plane/keystone-admin';
import { requeueOn, TARGET_CLUSTER_RECHECK_MS } from '../plane/plan';
import { GRANTED, grantHintOf, pendingPlace, secretPlacesOf, type PlacedObject } from '../plane/secret-access';
import type { SecretAccess } from '../plane/ports';
import type { ClusterPort, ObjectKind, OrderSite, PlaneDeps } from '../plane/ports';
import { OpenBao } from './credential/backup';
import { adminCredentialMetrics } from './admin-credential-metrics';
import { CredentialMetrics } from './credential/metrics';
import { CredentialPassError, CredentialReconciler } from './credential/reconciler';
import { controlPlaneIdentityWatches, identityOf, registerClusterIdentityController } from './cluster-identity';
import { registerHandoff } from './handoff/controller';
import { PlaneCluster } from './plane-cluster';
import { withoutAnnotations } from './runtime/partition';
import { cacheSecrets, cacheSecretsByNamespace, secretWatches } from './secret-cache';
import type { OpenBaoConfig } from './runtime/config';
import { EventRecorder } from './runtime/events';
import type { Cluster } from '../kube/cluster';
import { MANAGEMENT, clusterKey } from './runtime/clusters';
import type { Controller } from './runtime/controller';
import type { Manager } from './runtime/manager';
import type { MapContext } from './runtime/mapper';
import type { Request, Result } from './runtime/controller';


/** What the controllers need beyond the manager. */
export interface ControllerOptions {
  /** Where the credentials are backed up; absent: no backup. */
  readonly openBao?: OpenBaoConfig;
  /** The clock. @default () => new Date() */
  readonly clock?: () => Date;
  /** Roll the workloads that opted in when their delivered Secret switches (./handoff). @default false */
  readonly consumerHandoff?: boolean;
  /** The client-side limit and pacing per Keystone endpoint (0: none). @default KeystoneLimitDefaults */
  readonly keystone?: { readonly requestsPerSecond: number; readonly inFlight: number; readonly pacing?: KeystonePacing; readonly spareWorkers?: number };
  /**
   * How the operator is granted Secrets (issue 34, docs/install/namespaced.md): `cluster-wide` caches them across the
   * cluster; `namespaced` only in the namespaces the ControlPlanes and identities name (src/api/secret-access.ts), where
   * a refused list freezes the orders that need the namespace with `SecretAccessNotGranted`. `operator`: the base name of
   * its RBAC objects, which the conditions name; `username`: the identity the API server authenticated, which they bind.
   * @default { mode: 'cluster-wide' }
   */
  readonly secretAccess?: { readonly mode: SecretAccessMode; readonly operator?: string; readonly username?: string };
  /**
   * The HTTP client of every Keystone and OpenBao request: one per process, so a simulated process (test/sim/) reaches
   * its simulated Keystone and OpenBao, and none after it is killed. @default the global fetch
   */
  readonly fetch?: FetchLike;
}

/**
 * Registers the five controllers and the KeystoneClusterIdentity controller (./cluster-identity.ts) on `manager`, and
 * with `consumerHandoff` the handoff's controller (./handoff).
 */
export function registerControllers(manager: Manager, options: ControllerOptions = {}): void {
  // The namespaced Secret access: what the per-namespace caches know, as the plane reads it (src/plane/secret-access.ts).
  const namespaced = options.secretAccess?.mode === SecretAccessMode.Namespaced;
  const hint = grantHintOf(options.secretAccess?.operator ?? DEFAULT_OPERATOR_NAME, options.secretAccess?.username);
  const accessOf = (clusterName: string, namespace: string): SecretAccess => {
    const known = namespaced ? manager.namespaceAccess(clusterName, namespace) : undefined;
    if (!known || known.state === 'synced') return GRANTED;
    return known.state === 'denied' ? { state: 'denied', detail: known.error, grant: hint } : known;
  };
  const access = (clusterName: string) => (namespaced ? { access: (namespace: string) => accessOf(clusterName, namespace) } : {});
  const cluster = new PlaneCluster(manager.cluster, new EventRecorder(manager.cluster, { logger: manager.logger }), access(MANAGEMENT));
  const clock = options.clock ?? (() => new Date());
  // One limit per Keystone endpoint and one session per identity, shared by every kind's passes and workers: the
  // admins' and the ordered users' logins are reused for their tokens' lifetimes, and the limit, not the number of
  // workers, decides how much reaches Keystone.
  const limits = new KeystoneLimits({
    ...(options.keystone ?? KeystoneLimitDefaults),
    onWait: (endpoint, seconds) => manager.metrics.keystoneWaited(endpoint, seconds),
    onResult: (endpoint, result) => manager.metrics.keystoneRequested(endpoint, result),
  });
  manager.metrics.keystoneLoad(() => limits.all());
  const sessions = new KeystoneSessions({ limits, ...(options.fetch ? { fetch: options.fetch } : {}) });
  // The memo of converged passes forgets the plane objects that are gone from the caches (once a minute): the
  // management cluster's ControlPlanes and orders, and the orders of every engaged target cluster.
  const planeKinds = [Kinds.ControlPlane, Kinds.KeystoneProject, Kinds.KeystoneUser, Kinds.KeystoneRoleAssignment] as const;
  const live = () => [
    ...planeKinds.flatMap((kind) => manager.cluster.list<KubeObject>(kind).map((o) => o.metadata.uid)),
    ...manager.targetClusters().flatMap((name) => planeKinds.slice(1).flatMap((kind) => manager.clusterNamed(name)?.list<KubeObject>(kind).map((o) => o.metadata.uid) ?? [])),
  ];
  const plane: PlaneDeps = { cluster, keystone: keystoneAdmins({ sessions }), clock, memo: new ConvergedPasses({ live }) };
  const openBao = options.openBao ? new OpenBao({ ...openBaoOf(options.openBao), ...(options.fetch ? { fetch: options.fetch } : {}) }) : undefined;
  const metrics = new CredentialMetrics(manager.metrics.registry);
  adminCredentialMetrics(manager.metrics.registry, { controlPlanes: () => manager.cluster.list<ControlPlane>(Kinds.ControlPlane), leading: () => manager.isLeader });

  // One port per engaged cluster (a re-engaged cluster is a new Cluster, so a new port): its caches, its writes, its Events.
  const ports = new WeakMap<Cluster, PlaneCluster>();
  const portOf = (name: string): ClusterPort | undefined => {
    if (name === MANAGEMENT) return cluster;
    const target = manager.clusterNamed(name);
    if (!target) return undefined;
    let port = ports.get(target);
    if (!port) ports.set(target, (port = new PlaneCluster(target, new EventRecorder(target, { logger: manager.logger.child({ cluster: name }) }), { references: false, ...access(name) })));
    return port;
  };
  const siteOf = (name: string): OrderSite | undefined => {
    const orders = portOf(name);
    return orders ? { ...(name ? { cluster: name } : {}), orders } : undefined;
  };
  const where = (order: KubeObject, name?: string) => ({ ...(name ? { cluster: name } : {}), key: objectKey(order.metadata.namespace, order.metadata.name) });

  const credentials = new CredentialReconciler({
    cluster,
    sessions,
    ...(openBao ? { backup: (path: string) => openBao.at(path) } : {}),
    clock,
    event: async (order, event, name) => {
      // What a Retain teardown left and the commands that remove it, a skipped grace period, an adoption: in the log too.
      if (event.logged) manager.logger.info('event', { kind: 'KeystoneApplicationCredential', ...where(order, name), reason: event.reason, note: event.note });
      const target = manager.clusterNamed(name ?? MANAGEMENT);
      if (target) await target.event(order, event);
    },
    onAction: (order, e, name) => {
      const a = e.action;
      // The action log line: what the operator did, never a secret (actions carry generations and ids only).
      manager.logger.info('action', {
        kind: 'KeystoneApplicationCredential',
        ...where(order, name),
        action: a.type,
        ...('generation' in a ? { generation: a.generation } : {}),
        why: a.why,
        outcome: e.outcome,
        ms: Math.round(e.ms),
        ...(e.error ? { error: e.error } : {}),
      });
      const ns = order.metadata.namespace ?? '';
      if (a.type === 'deliver' && a.why === 'switch' && e.outcome === 'done') metrics.rotated(ns, order.metadata.name, name);
      // What Keystone holds between lists, and which generation is delivered, as each happens (not after the pass): a
      // scrape during a rotation sees the successor as soon as it exists (the alerts' "expires without a successor").
      if ((a.type === 'mint' || a.type === 'delete') && e.outcome === 'done') metrics.changedInKeystone(ns, order.metadata.name, a.generation, a.type === 'mint' ? 'minted' : 'deleted', name);
      if (a.type === 'deliver' && e.outcome === 'done') metrics.delivered(ns, order.metadata.name, a.generation, name);
    },
    onKeystoneListed: (order, generations, name) => metrics.listed(order.metadata.namespace ?? '', order.metadata.name, generations, name),
    // The status log line: the status was recorded (generations and the Ready reason; ids and secrets stay out).
    onStatus: (order, status, name) =>
      manager.logger.info('status', {
        kind: 'KeystoneApplicationCredential',
        ...where(order, name),
        ...(status.credentialGeneration !== undefined ? { generation: status.credentialGeneration } : {}),
        ready: status.conditions?.find((c) => c.type === 'Ready')?.reason,
      }),
  });

  // The operator's own Secrets whole (children, delivered Secrets, mirrors), every other Secret as metadata only
  // (./secret-cache.ts), on the management cluster and on every target cluster (its delivered Secrets, and a foreign
  // Secret of a delivered name); the Namespaces as metadata only (their labels are all an identity's consent reads).
  // In the namespaced mode the same caches per namespace, only where the ControlPlanes and identities say; a namespace's
  // cache filled or refused reconciles what waits on it (accessChanged, below).
  const controllers = new Map<string, Controller>();
  if (namespaced) cacheSecretsByNamespace(manager, { onAccess: (clusterName, namespace) => accessChanged(clusterName, namespace) });
  else cacheSecrets(manager, { clusters: 'all' });
  manager.cache(MetadataKinds.Namespace, { transform: withoutAnnotations });
  const planeResult = (result: PassResult): Result => ({ ...(result.requeueAfter !== undefined ? { requeueAfter: result.requeueAfter } : {}), reason: result.skipped ? 'Unchanged' : result.actions.length > 0 ? 'Acted' : 'Converged' });
  const key = (request: { namespace?: string; name: string }) => ({ namespace: request.namespace ?? '', name: request.name });

  /**
   * The site of a request's order, or the result when there is none to reconcile: a cluster deregistered since the key
   * was queued (nothing to do), or one whose API server does not answer (nothing can be read or written there; its
   * orders are queued again when it answers).
   */
  const served = async (kind: ObjectKind, request: Request, reconcile: (site: OrderSite) => Promise<Result>): Promise<Result> => {
    const site = siteOf(request.cluster);
    if (!site) return { reason: 'ClusterNotRegistered' };
    if (!manager.connected(request.cluster)) return { requeueAfter: TARGET_CLUSTER_RECHECK_MS, reason: 'ClusterUnreachable' };
    if (waitsForSecrets(kind, request)) return { reason: WAITING_FOR_SECRETS };
    const result = await reconcile(site);
    const requeueAfter = requeueOn(request.cluster, result.requeueAfter);
    return { ...result, ...(requeueAfter !== undefined ? { requeueAfter } : {}) };
  };

  /**
   * Whether a pass of the request's object must wait for a namespace's Secret cache to fill (the namespaced mode): it
   * would read "no Secret" where there may be one. It writes nothing; the namespace's fill reconciles it.
   */
  const waitsForSecrets = (kind: ObjectKind, request: Request): boolean => {
    if (!namespaced) return false;
    const object = manager.clusterNamed(request.cluster)?.get(KINDS[kind], request.namespace, request.name);
    if (!object) return false;
    const identity = kind === 'ControlPlane' ? identityOf(object as ControlPlane) : undefined;
    const source = identity !== undefined ? manager.cluster.get(Kinds.KeystoneClusterIdentity, undefined, identity)?.spec.secretRef.namespace : undefined;
    return pendingPlace(secretPlacesOf(kind, object as PlacedObject, request.cluster, source), (p) => accessOf(p.cluster, p.namespace)) !== undefined;
  };

  /**
   * A namespace's Secret cache was filled, refused or dropped: every object a pass of which reads or writes Secrets there
   * is reconciled again, from scratch (what its last pass remembered did not know the namespace's access).
   */
  const accessChanged = (clusterName: string, namespace: string): void => {
    for (const { kind, cluster: where, object } of secretAccessDependents(manager, clusterName, namespace)) {
      const k = objectKey(object.metadata.namespace, object.metadata.name);
      // Met anew: a pass that ran before knew nothing of the namespace's access; the cache may settle the next one, as
      // after a restart (a filled namespace must not cost every order it concerns a pass to Keystone).
      if (object.metadata.uid) plane.memo?.forget(object.metadata.uid, { anew: true });
      if (kind === 'KeystoneApplicationCredential') credentials.forget({ namespace: object.metadata.namespace ?? '', name: object.metadata.name }, where, { anew: true });
      controllers.get(kind)?.enqueue(clusterKey(where, k));
    }
  };

  /** The status of a request's order as the cache holds it (what the order says before a pass decides anything). */
  const cachedStatus = (r: Request) => manager.clusterNamed(r.cluster)?.get(Kinds.KeystoneApplicationCredential, r.namespace ?? '', r.name)?.status;

  const reconcilers: Record<ObjectKind, (request: Request) => Promise<Result>> = {
    ControlPlane: async (r) => (waitsForSecrets('ControlPlane', r) ? { reason: WAITING_FOR_SECRETS } : planeResult(await reconcileControlPlane(key(r), plane))),
    KeystoneProject: (r) => served('KeystoneProject', r, async (site) => planeResult(await reconcileProject(key(r), plane, site))),
    KeystoneUser: (r) => served('KeystoneUser', r, async (site) => planeResult(await reconcileUser(key(r), plane, site))),
    KeystoneRoleAssignment: (r) => served('KeystoneRoleAssignment', r, async (site) => planeResult(await reconcileAssignment(key(r), plane, site))),
    KeystoneApplicationCredential: async (r) => {
      const result = await served('KeystoneApplicationCredential', r, async (site) => {
        const k = key(r);
        const name = r.cluster || undefined;
        // A target cluster deregistered while the pass ran: its orders' series went with it (manager.onClusterGone).
        const gone = () => name !== undefined && !manager.clusterNamed(name);
        try {
          const outcome = await credentials.reconcile(k, site);
          // A skipped pass found the status its last full pass recorded in the metrics: nothing to set, unless this
          // process meets the order for the first time (settled by the cache) and has recorded nothing yet.
          if (!outcome.skipped || outcome.settled) metrics.observed(k.namespace, k.name, outcome.status, name);
          if ((!outcome.skipped && !outcome.status) || gone()) metrics.forget(k.namespace, k.name, name);
          return {
            ...(outcome.requeueAfterMs !== undefined ? { requeueAfter: outcome.requeueAfterMs } : {}),
            reason: outcome.skipped ? 'Unchanged' : 'Reconciled',
            // What the pass reached and was answered by wakes the orders waiting on it (runtime/dependencies.ts).
            ...(outcome.answered ? { answered: outcome.answered } : {}),
          };
        } catch (error) {
          // A failed pass: the series follow the status it recorded (or would have, had its write failed too), so an
          // alert reads what the order says while every pass fails (BackupNotSynced while OpenBao refuses, CredentialError
          // while Keystone is down); before the pass decided one, what the cache holds.
          const status = (error instanceof CredentialPassError ? error.status : undefined) ?? cachedStatus(r);
          if (status && !gone()) metrics.observed(k.namespace, k.name, status, name);
          metrics.failed(k.namespace, k.name, status?.conditions?.find((c) => c.status === 'False' && c.type !== 'Ready')?.reason ?? 'Error', name);
          if (gone()) metrics.forget(k.namespace, k.name, name);
          throw error;
        }
      });
      // A pass that waits for its namespace's Secret cache to fill (the namespaced mode: after a restart or a failover,
      // for as long as the lists take, which a slow API server makes minutes): the series say what the cached status
      // says meanwhile, as for a failed pass, rather than nothing; an alert reading them would otherwise lose the time
      // it has been pending at every restart.
      const status = result.reason === WAITING_FOR_SECRETS ? cachedStatus(r) : undefined;
      if (status) metrics.observed(r.namespace ?? '', r.name, status, r.cluster || undefined);
      return result;
    },
  };

  // A deregistered target cluster's orders are not served any more: their series go (they would stay, and alert, until
  // a restart), and so does what the reconciler remembers of them (registered again, each is met anew).
  manager.onClusterGone((name) => {
    metrics.forgetCluster(name);
    credentials.forgetCluster(name);
  });

  controllers.set('KeystoneClusterIdentity', registerClusterIdentityController(manager, cluster, clock, namespaced ? { access: (namespace) => accessOf(MANAGEMENT, namespace) } : {}));
  if (options.consumerHandoff) registerHandoff(manager, { clock });
  for (const kind of Object.keys(KINDS) as ObjectKind[]) {
    const order = kind !== 'ControlPlane';
    const controller = manager.controller({
      kind: KINDS[kind],
      reconcile: reconcilers[kind],
      // The orders live on every cluster; the ControlPlanes on the management cluster only.
      ...(order ? { clusters: 'all' as const } : {}),
      watches: [
        ...(Object.keys(KINDS) as ObjectKind[])
          .filter((k) => k !== kind)
          .map((watched) => ({
            kind: KINDS[watched],
            ...(order && watched !== 'ControlPlane' ? { clusters: 'all' as const } : {}),
            map: (object: KubeObject, reads: ClusterReader, context?: MapContext) => objectDependents(kind, watched, object, reads, context),
          })),
        ...secretWatches((secret: KubeObject, reads: ClusterReader, context?: MapContext) => secretDependentKeys(kind, secret as Secret, reads, context), order ? { clusters: 'all' } : {}),
        ...(kind === 'ControlPlane' ? controlPlaneIdentityWatches() : []),
      ],
    });
    controllers.set(kind, controller);
  }
}

/** The reason a pass logs when it waits for a namespace's Secret cache to fill. */
export const WAITING_FOR_SECRETS = 'WaitingForSecrets';

/** The base name of the operator's RBAC objects when none is configured (the construct's default `name`). */
const DEFAULT_OPERATOR_NAME = 'keystone-appcred-operator';

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
