/**
 * The world a schedule runs in (./world.ts), set up as its {@link Setup} says: the ControlPlane with its admin (a
 * password, or an application credential with an expiry), two tenants with their project, user and role assignment
 * (tenant-b on the registered target cluster when the setup says so), the orders, OpenBao, and the operator's replicas.
 * It adds what events and invariants share: where each order lives, the faults with their timeline, each order's
 * consumer (a workload that re-reads the delivered Secret every minute, as the kubelet refreshes a mounted Secret, and
 * holds the pair it read), and the processes' restarts.
 */
import { KUBECONFIG_SECRET_KEY } from '../../src/api/target-cluster';
import type { Obj } from '../unit/kube/fake-api-server';
import type { Setup } from './setup';
import { UP, type Dependency, type Fault } from './network';
import { CP, PATHS, TARGET_CLUSTER, TENANTS, adminCloudsYaml, adminSecret, base64, consumerDeployment, controlPlane, keystoneProject, keystoneUser, namespace, order, roleAssignment, unbase64, DELIVERY_OPTION_KEYS, type DeliveryOptions, type OrderSpec, type Tenant } from './objects';
import { OPERATOR_NAMESPACE } from './process';
import { World } from './world';
import { KeystoneWorkers } from '../support/fake-keystone/workers';

/** Where an order lives. */
export interface OrderRef {
  readonly tenant: Tenant;
  readonly name: string;
}

/** A fault as it was in force: on `dependency` from `from` to `to` (absent: still in force). */
export interface FaultSpan {
  readonly dependency: Dependency;
  readonly fault: Fault;
  readonly from: number;
  to?: number;
}

/** What a consumer holds: the pair it last read from the delivered Secret, and when. */
export interface Held {
  readonly id: string;
  readonly secret: string;
  readonly readAt: number;
}

const ADMIN_PASSWORD = 'sim-admin-password-7d41c2';
/** How often a consumer re-reads its delivered Secret (the kubelet's sync of a mounted Secret is about a minute). */
export const CONSUMER_PERIOD_MS = 60_000;

export class SimWorld extends World {
  readonly faultLog: FaultSpan[] = [];
  /** What each order's consumer holds, by `tenant/name`. */
  readonly consumers = new Map<string, Held>();
  /** When each process start happened (the restarts), with the orders' state just before. */
  readonly restarts: { readonly at: number; readonly process: string }[] = [];
  /**
   * When a process became the leader. A start and the takeover are apart when the leader cannot be elected at once: a
   * standby, or a process started during an API outage, takes over only once the API server answers again.
   */
  readonly takeovers: { readonly at: number; readonly process: string }[] = [];
  /** When each of the schedule's events happened (the runner notes them), and its kind (same index). */
  readonly eventTimes: number[] = [];
  readonly eventKinds: string[] = [];
  /** The spans in which a tenant's namespace was not assigned by the ControlPlane (its orders frozen). */
  readonly frozenLog: { readonly tenant: string; readonly from: number; to?: number }[] = [];
  /** Every status each order had, in order, by `tenant/name` (what a restore from an older backup brings back). */
  readonly statusHistory = new Map<string, unknown[]>();
  /** The credentials another installation minted under the orders' names: never the orders'. */
  readonly foreign = new Set<string>();
  /**
   * The adoptions the schedule ordered (issue 49, `spec.adopt`), by order `tenant/name`: the credential named, and
   * whether the order can prove it its own (a hand-made credential of its user, its secret given) or must refuse it.
   */
  readonly adoptions = new Map<string, { readonly id: string; readonly valid: boolean; readonly at: number }>();
  /** When a tenant deleted each order's delivered Secret, by order `tenant/name` (the last time). */
  readonly tenantDeletedSecret = new Map<string, number>();
  /** The tenants whose Secrets the operator may not read (namespaced Secret access: their Role is missing). */
  readonly secretsRefused = new Set<string>();
  /** The spans in which a tenant's Secrets were refused to the operator (the namespaced mode only: its orders frozen). */
  readonly refusedLog: { readonly tenant: string; readonly from: number; to?: number }[] = [];
  /** The upgrade from 0.1.0 happened (it happens once). */
  upgraded = false;
  /** Where the ControlPlane's admin credential is, when it is an application credential. */
  adminCredential?: { readonly id: string; readonly expiresAt: Date };
  private readonly heals = new Map<Dependency, { readonly timer: NodeJS.Timeout; readonly at: number }>();

  constructor(readonly setup: Setup) {
    super(setup.seed, {
      openBao: true,
      consumerHandoff: setup.consumerHandoff,
      secretAccess: setup.secretAccess,
      ...(setup.operatorFlags ? { flags: setup.operatorFlags } : {}),
      ...(setup.keystone ? { keystoneInFlight: setup.keystone.inFlight } : {}),
    });
    if (setup.keystone) this.network.keystoneWorkers = new KeystoneWorkers(setup.keystone.workers, () => this.time.now());
    this.network.onTrip = (process) => this.crash(process);
    this.hooks.line.push((line) => {
      if (line.msg === 'became the leader') this.takeovers.push({ at: this.time.now(), process: line.process });
    });
    this.hooks.change.push((change) => {
      if (change.collection === PATHS.controlPlanes) this.consentChanged(change.object);
      if (change.collection === PATHS.deployments && change.type !== 'DELETED') this.rollOut(change.cluster, change.object);
      if (change.collection !== PATHS.orders || change.object.status === undefined) return;
      const key = `${change.object.metadata.namespace ?? ''}/${change.object.metadata.name}`;
      const history = this.statusHistory.get(key) ?? [];
      if (JSON.stringify(history[history.length - 1]) !== JSON.stringify(change.object.status)) history.push(change.object.status);
      this.statusHistory.set(key, history);
    });
  }

  /** Builds the installation as the setup says (nothing runs yet: the invariants watch it being built, and {@link start}). */
  static create(setup: Setup): SimWorld {
    const world = new SimWorld(setup);
    world.build();
    return world;
  }

  /** Starts the replicas, the consumers and the API servers' bookkeeping. */
  async start(): Promise<void> {
    for (let i = 0; i < this.setup.replicas; i++) this.startProcess();
    if (this.setup.consumers !== false) this.startConsumers();
    this.startCompaction();
    await this.time.settle();
  }

  /** The API server an order's tenant lives on, and that cluster's name for the invariants. */
  serverOf(tenant: Tenant) {
    return tenant === 'tenant-b' && this.setup.targetCluster ? this.target : this.management;
  }

  /** Every order that exists now. */
  orders(): (OrderRef & { readonly object: Obj })[] {
    return TENANTS.flatMap((tenant) => this.serverOf(tenant).list(PATHS.orders).filter((o) => o.metadata.namespace === tenant).map((object) => ({ tenant, name: object.metadata.name, object })));
  }

  order(ref: OrderRef): Obj | undefined {
    return this.serverOf(ref.tenant).object(PATHS.orders, ref.tenant, ref.name);
  }

  /** The delivered Secret's three keys, decoded. */
  delivered(ref: OrderRef): Record<string, string> | undefined {
    const secret = this.serverOf(ref.tenant).object(PATHS.secrets, ref.tenant, `${ref.name}-credentials`);
    const data = secret?.data as Record<string, string> | undefined;
    return data && Object.fromEntries(Object.entries(data).map(([k, v]) => [k, unbase64(v)]));
  }

  /**
   * Creates or changes an order as the tenant would (`kubectl apply`), and with the handoff on, its consumer's
   * Deployment. The order keeps the delivery options (issue 49) it has unless `options` names them (`null` drops one).
   */
  putOrder(ref: OrderRef, spec: OrderSpec, options: { readonly [K in keyof DeliveryOptions]?: DeliveryOptions[K] | null } = {}): void {
    const server = this.serverOf(ref.tenant);
    const existing = this.order(ref);
    const had = (existing?.spec ?? {}) as Record<string, unknown>;
    const kept = Object.fromEntries(DELIVERY_OPTION_KEYS.flatMap((key) => {
      const value = key in options ? options[key] : had[key];
      return value === undefined || value === null ? [] : [[key, value]];
    })) as DeliveryOptions;
    const object = order(ref.tenant, ref.name, spec, kept);
    server.seed(PATHS.orders, existing ? { ...existing, spec: object.spec } : object, 'kubectl');
    if (this.setup.consumerHandoff && !server.object(PATHS.deployments, ref.tenant, `${ref.name}-consumer`)) server.seed(PATHS.deployments, consumerDeployment(ref.tenant, ref.name), 'kubectl');
  }

  /** The deployment controller, as far as the handoff reads it: a new pod template is rolled out 20 s later. */
  private rollOut(cluster: 'management' | 'target', deployment: Obj): void {
    const generation = deployment.metadata.generation as number | undefined;
    if (generation === undefined || (deployment.status as { observedGeneration?: number } | undefined)?.observedGeneration === generation) return;
    const server = cluster === 'target' ? this.target : this.management;
    setTimeout(() => {
      const now = server.object(PATHS.deployments, deployment.metadata.namespace, deployment.metadata.name);
      if (now?.metadata.generation !== generation) return;
      server.seed(PATHS.deployments, { ...now, status: { observedGeneration: generation, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [{ type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' }] } }, 'kube-controller-manager');
    }, 20_000).unref();
  }

  /** Sets a dependency's fault now; it heals by itself after `ms` (none: it stays until healed). */
  fault(dependency: Dependency, fault: Fault, ms?: number): void {
    this.heal(dependency);
    if (fault.mode === 'up') return;
    this.network.faults[dependency] = fault;
    this.faultLog.push({ dependency, fault, from: this.time.now() });
    if (dependency === 'api' || dependency === 'target') this.serverFor(dependency).closeWatches(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    if (ms !== undefined) this.heals.set(dependency, { timer: setTimeout(() => this.heal(dependency), ms), at: this.time.now() + ms });
  }

  /** Ends a dependency's fault. */
  heal(dependency: Dependency): void {
    clearTimeout(this.heals.get(dependency)?.timer);
    this.heals.delete(dependency);
    if (this.network.faults[dependency].mode === 'up') return;
    this.network.faults[dependency] = UP;
    const span = [...this.faultLog].reverse().find((s) => s.dependency === dependency && s.to === undefined);
    if (span) span.to = this.time.now();
  }

  /** How long until every fault in force has ended by itself (0: none is). */
  get faultsLeftMs(): number {
    return Math.max(0, ...[...this.heals.values()].map((h) => h.at - this.time.now()));
  }

  /** Whether a fault was in force at any time in [from, to]. */
  faultedBetween(from: number, to: number, dependencies?: readonly Dependency[]): boolean {
    return this.faultLog.some((s) => (!dependencies || dependencies.includes(s.dependency)) && s.from <= to && (s.to === undefined || s.to >= from));
  }

  /**
   * Whether a request of an operator process to `dependency` went unanswered within the client's timeout at any time in
   * [from, to] without a fault of the schedule: a Keystone of finite capacity that others' load keeps busy past the
   * timeout (a bystander's logins outpacing its workers) answers too late, as a `slow` outage does.
   */
  timedOutBetween(dependency: Dependency, from: number, to: number): boolean {
    return this.network.calls.some((c) => c.dependency === dependency && c.outcome === 'timeout' && c.at <= to && (c.endedAt ?? to) >= from);
  }

  /**
   * Whether the operator was refused the tenant's Secrets at any time in [from, to] (the namespaced mode, its Role
   * taken away): its orders are frozen with what they have, nothing swept, as without consent (docs/install/namespaced.md).
   */
  refusedBetween(tenant: string, from: number, to: number): boolean {
    return this.refusedLog.some((s) => s.tenant === tenant && s.from <= to && (s.to === undefined || s.to >= from));
  }

  /** Whether the tenant's namespace was unassigned (its orders frozen) at any time in [from, to]. */
  frozenBetween(tenant: string, from: number, to: number): boolean {
    return this.frozenLog.some((s) => s.tenant === tenant && s.from <= to && (s.to === undefined || s.to >= from));
  }

  /**
   * Whether a process started (a restart, a failover's new standby, an upgrade) or became the leader in [from, to]:
   * either way a leader's first passes, which know nothing of what the one before learned (its backoffs, its waits).
   */
  restartedBetween(from: number, to: number): boolean {
    return [...this.restarts, ...this.takeovers].some((r) => r.at >= from && r.at <= to);
  }

  /** Whether the informers of a process that ran then resynced (handed every object to its controllers) in [from, to]. */
  resyncedBetween(from: number, to: number): boolean {
    return this.processes.some((p) => {
      const started = this.restarts.find((r) => r.process === p.name)?.at ?? 0;
      const period = p.config.resyncPeriodMs;
      // The first resync at or after `from`: the start plus a whole number (≥ 1) of periods.
      return period > 0 && started + Math.max(1, Math.ceil((from - started) / period)) * period <= to;
    });
  }

  /** When the first of the schedule's events after `at` happened, if one did. */
  nextEventAfter(at: number): number | undefined {
    return this.eventTimes.find((t) => t > at);
  }

  private consentChanged(cp: Obj): void {
    const assigned = new Set(((cp.spec as { namespaceAssignments?: { namespace: string }[] } | undefined)?.namespaceAssignments ?? []).map((a) => a.namespace));
    const now = this.time.now();
    for (const tenant of TENANTS) {
      const open = this.frozenLog.find((s) => s.tenant === tenant && s.to === undefined);
      if (!assigned.has(tenant) && !open) this.frozenLog.push({ tenant, from: now });
      if (assigned.has(tenant) && open) open.to = now;
    }
  }

  /** Kills every process and starts the replicas again (a crash of all, a rollout). */
  restartAll(): void {
    for (const p of this.running) p.kill();
    for (let i = 0; i < this.setup.replicas; i++) this.startProcess();
  }

  /** Kills the leader; with one replica a new process starts (the kubelet), with two the standby takes over and a new standby starts. */
  failover(): void {
    const leader = this.leader;
    if (!leader) return;
    this.crash(leader.name);
  }

  override startProcess() {
    const process = super.startProcess();
    this.restarts.push({ at: this.time.now(), process: process.name });
    return process;
  }

  /** A process dies (SIGKILL) and the kubelet starts it again. */
  crash(name: string): void {
    const process = this.processes.find((p) => p.name === name && p.running);
    if (!process) return;
    process.kill();
    this.startProcess();
  }

  private serverFor(dependency: 'api' | 'target') {
    return dependency === 'api' ? this.management : this.target;
  }

  /** Grants or refuses the operator a tenant's Secrets, as its Role there does (the namespaced Secret access). */
  grantSecrets(tenant: string, granted: boolean): void {
    if (granted) this.secretsRefused.delete(tenant);
    else this.secretsRefused.add(tenant);
    if (this.setup.secretAccess !== 'namespaced') return;
    const open = this.refusedLog.find((s) => s.tenant === tenant && s.to === undefined);
    if (!granted && !open) this.refusedLog.push({ tenant, from: this.time.now() });
    if (granted && open) open.to = this.time.now();
  }

  private build(): void {
    // RBAC, as far as the operator meets it: in the namespaced mode, a tenant's Secrets only while its Role is there.
    if (this.setup.secretAccess === 'namespaced') for (const server of [this.management, this.target]) server.authorize = (r) => r.plural !== 'secrets' || !r.namespace || !this.secretsRefused.has(r.namespace);
    const keystone = this.keystone;
    const adminId = keystone.addUser('admin', ADMIN_PASSWORD);
    const adminProject = keystone.addProject('admin');
    keystone.grant(adminId, adminProject, 'admin');
    let cloud = adminCloudsYaml({ password: ADMIN_PASSWORD });
    if (this.setup.admin === 'application-credential') {
      const expiresAt = new Date(this.time.now() + 90 * 86_400_000);
      const credential = keystone.addCredential({ name: 'admin-plane', userId: adminId, projectId: adminProject, secret: 'sim-admin-credential-secret-52be', expiresAt, roles: ['admin', 'member', 'reader'] });
      this.adminCredential = { id: credential.id, expiresAt };
      cloud = adminCloudsYaml({ credentialId: credential.id, secret: credential.secret });
    }
    const m = this.management;
    for (const ns of [CP.namespace, OPERATOR_NAMESPACE, ...TENANTS]) m.seed(PATHS.namespaces, namespace(ns));
    m.seed(PATHS.secrets, adminSecret(cloud));
    m.seed(PATHS.controlPlanes, controlPlane(TENANTS.map((ns) => ({ namespace: ns, target: ns === 'tenant-b' && this.setup.targetCluster }))));
    if (this.setup.targetCluster) {
      this.target.seed(PATHS.namespaces, namespace('tenant-b'));
      m.seed(PATHS.secrets, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: TARGET_CLUSTER, namespace: OPERATOR_NAMESPACE, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
        data: { [KUBECONFIG_SECRET_KEY]: base64('apiVersion: v1\nkind: Config\nclusters: [{name: edge, cluster: {server: "https://edge.sim"}}]\n') },
      });
    }
    for (const tenant of TENANTS) {
      const server = this.serverOf(tenant);
      server.seed(PATHS.projects, keystoneProject(tenant));
      server.seed(PATHS.users, keystoneUser(tenant));
      server.seed(PATHS.assignments, roleAssignment(tenant));
    }
    for (const o of this.setup.orders) this.putOrder(o, { interval: o.interval, gracePeriod: o.gracePeriod, credentialGeneration: 1 });
    for (let i = 1; i <= (this.setup.keystone?.fleet ?? 0); i++) this.putOrder({ tenant: 'tenant-a', name: `fleet-${i}` }, { interval: '0s', gracePeriod: '2m', credentialGeneration: 1 });
  }

  /**
   * As etcd and the API server do: every minute a bookmark to every watch (their informers' resourceVersions stay
   * current), every five minutes the history compacted (a watch resumed from before it gets 410 Gone).
   */
  private startCompaction(): void {
    let minutes = 0;
    const timer = setInterval(() => {
      const compact = ++minutes % 5 === 0;
      for (const server of [this.management, this.target]) {
        server.bookmark();
        if (compact) server.compact();
      }
    }, 60_000);
    timer.unref();
  }

  /** Every minute, each consumer re-reads its delivered Secret (unless the API server of its cluster is down). */
  private startConsumers(): void {
    const timer = setInterval(() => {
      for (const { tenant, name } of this.orders()) {
        const dependency: Dependency = this.serverOf(tenant) === this.target ? 'target' : 'api';
        if (this.network.faults[dependency].mode !== 'up') continue;
        const data = this.delivered({ tenant, name });
        const id = data?.application_credential_id;
        const secret = data?.application_credential_secret;
        if (id && secret && this.keystone.authenticates(id, secret)) this.consumers.set(`${tenant}/${name}`, { id, secret, readAt: this.time.now() });
      }
    }, CONSUMER_PERIOD_MS);
    timer.unref();
  }
}
