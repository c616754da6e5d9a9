/**
 * Target clusters registered the way multicluster-runtime's kubeconfig provider registers them: a Secret in the
 * operator's namespace on the management cluster, labelled `sigs.k8s.io/multicluster-runtime-kubeconfig: "true"`, with
 * the cluster's kubeconfig under the key `kubeconfig`; the cluster's name is the Secret's name. Creating the Secret
 * engages the cluster with the manager (its watches start), changing its kubeconfig reconnects (the cluster is engaged
 * again with the new one), deleting it disengages the cluster.
 *
 * A kubeconfig that does not parse, or whose API server cannot be reached, is reported, never thrown: a Warning Event on
 * the Secret (from the leader), a log line naming the Secret, and `keystone_appcred_target_cluster_connected{cluster}`
 * at 0; the other clusters carry on, and an unreachable one is retried by its informers until it answers.
 */
import { createHash } from 'node:crypto';
import { EventReason, eventOf, type ReasonedEvent } from '../../api/events';
import { KUBECONFIG_SECRET_KEY, KUBECONFIG_SECRET_SELECTOR } from '../../api/target-cluster';
import type { KubeApi } from '../../kube/api';
import { Kinds, type Secret } from '../../kube/kinds';
import { Informer, listWatchOf } from './informer';
import { errorMessage } from './log';
import type { Manager } from './manager';

/** The Event reasons on a registration Secret, from the table of every Event reason (src/api/events.ts). */
export const RegistrationReason = {
  /** The cluster's API server answered: its orders are served. */
  ClusterConnected: EventReason.ClusterConnected,
  /** The cluster's API server does not answer (its orders wait; the others carry on). */
  ClusterUnreachable: EventReason.ClusterUnreachable,
  /** The kubeconfig is missing, does not parse, or names no usable cluster. */
  KubeconfigInvalid: EventReason.KubeconfigInvalid,
} as const;

export interface KubeconfigProviderOptions {
  /** The namespace of the registration Secrets: the operator's own. */
  readonly namespace: string;
  /** A connection to the cluster a kubeconfig names; throws when the kubeconfig cannot be used. */
  readonly connect: (kubeconfig: string, source: string) => KubeApi;
}

/** A registration as the provider last acted on it. */
interface Registration {
  /** The sha256 of the kubeconfig it was engaged (or refused) with. */
  readonly hash: string;
  readonly secret: Secret;
  /** The last reported connection (undefined until the first report). */
  connected?: boolean;
}

export class KubeconfigProvider {
  private readonly informer: Informer<Secret>;
  private readonly registrations = new Map<string, Registration>();

  /** `api`: the management cluster's, where the registration Secrets are. */
  constructor(
    private readonly manager: Manager,
    api: KubeApi,
    private readonly options: KubeconfigProviderOptions,
  ) {
    const selection = { namespace: options.namespace, labelSelector: KUBECONFIG_SECRET_SELECTOR };
    this.informer = new Informer(Kinds.Secret, listWatchOf(api, Kinds.Secret, selection), { logger: manager.logger.child({ provider: 'kubeconfig' }), resyncPeriodMs: 600_000 });
    this.informer.addHandler({
      added: (secret) => this.sync(secret),
      updated: (_old, secret) => this.sync(secret),
      resynced: (secret) => this.sync(secret),
      deleted: (secret) => void this.remove(secret.metadata.name),
    });
  }

  /** The registered clusters' names (every labelled Secret seen, usable or not). */
  get clusters(): string[] {
    return [...this.registrations.keys()].sort();
  }

  /** Watches the registration Secrets (on every replica, so a standby's caches of the target clusters are warm too). */
  start(): void {
    this.informer.start();
  }

  async stop(): Promise<void> {
    await this.informer.stop();
  }

  private sync(secret: Secret): void {
    const name = secret.metadata.name;
    const encoded = secret.data?.[KUBECONFIG_SECRET_KEY];
    const kubeconfig = encoded === undefined ? '' : Buffer.from(encoded, 'base64').toString('utf8');
    const hash = createHash('sha256').update(kubeconfig).digest('hex');
    const known = this.registrations.get(name);
    if (known?.hash === hash) return; // unchanged (a label, an annotation, a resync)
    const registration: Registration = { hash, secret };
    this.registrations.set(name, registration);
    const where = `${this.options.namespace}/${name}`;
    const log = this.manager.logger;
    let api: KubeApi;
    try {
      if (kubeconfig.trim() === '') throw new Error(`the Secret has no "${KUBECONFIG_SECRET_KEY}" key`);
      api = this.options.connect(kubeconfig, `the kubeconfig Secret ${where}`);
    } catch (error) {
      const message = `the kubeconfig of Secret ${where} cannot be used: ${errorMessage(error)}`;
      log.error('target cluster not registered', { cluster: name, secret: where, error: errorMessage(error) });
      this.manager.metrics.targetCluster(name, false);
      registration.connected = false;
      void this.manager.disengage(name); // a kubeconfig changed into an unusable one no longer serves the old connection
      void this.event(secret, eventOf(RegistrationReason.KubeconfigInvalid, message));
      return;
    }
    log.info(known ? 'target cluster reconnecting: its kubeconfig changed' : 'target cluster registered', { cluster: name, secret: where, server: api.transport.server });
    this.manager
      .engage(name, api, { onHealth: (connected, error) => this.health(name, registration, api.transport.server, connected, error) })
      .catch((error: unknown) => log.debug('target cluster engagement ended before its caches synced', { cluster: name, error: errorMessage(error) }));
  }

  /** A connection transition of a registration still current: metric, log line and Event. */
  private health(name: string, registration: Registration, server: string, connected: boolean, error?: string): void {
    if (this.registrations.get(name) !== registration) return; // superseded by a changed or deleted Secret
    const was = registration.connected;
    registration.connected = connected;
    this.manager.metrics.targetCluster(name, connected);
    const where = `${this.options.namespace}/${name}`;
    if (connected) {
      this.manager.logger.info('target cluster connected', { cluster: name, secret: where, server });
      void this.event(registration.secret, eventOf(RegistrationReason.ClusterConnected, `the API server ${server} of cluster ${name} answers${was === false ? ' again' : ''}`));
    } else {
      this.manager.logger.warn('target cluster unreachable', { cluster: name, secret: where, server, error });
      void this.event(registration.secret, eventOf(RegistrationReason.ClusterUnreachable, `the API server ${server} of cluster ${name} does not answer (${error ?? 'unknown error'}); its orders wait, the other clusters carry on`));
    }
  }

  private async remove(name: string): Promise<void> {
    if (!this.registrations.delete(name)) return;
    this.manager.metrics.forgetTargetCluster(name);
    this.manager.logger.info('target cluster deregistered: its orders are no longer served; their children on the management cluster stay', { cluster: name, secret: `${this.options.namespace}/${name}` });
    await this.manager.disengage(name);
  }

  /** An Event on a registration Secret, recorded by the leader only (a standby would repeat it); best effort. */
  private async event(secret: Secret, spec: ReasonedEvent): Promise<void> {
    if (!this.manager.isLeader) return;
    const regarding = { apiVersion: 'v1', kind: 'Secret', metadata: { ...secret.metadata, namespace: secret.metadata.namespace ?? this.options.namespace } };
    await this.manager.cluster.event(regarding, spec).catch((error: unknown) => this.manager.logger.warn('recording an event failed', { secret: secret.metadata.name, reason: spec.reason, error: errorMessage(error) }));
  }
}
