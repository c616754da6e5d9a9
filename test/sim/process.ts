/**
 * One operator process (a replica of the Deployment), built as `keystone-appcred operator` builds itself
 * (src/cli/operator.ts: the configuration resolved from the Deployment's environment, the manager, the controllers,
 * the target clusters' provider), on the simulated network: its API servers through its own transports, Keystone and
 * OpenBao through its own `fetch`. Everything it holds lives in memory and dies with it. A kill is SIGKILL: from that
 * instant it reaches nothing; what was on the wire lands. A stop is SIGTERM: the manager's own shutdown.
 */
import { KubeApi } from '../../src/kube/api';
import { FIELD_MANAGER, managerOptions, registerControllers } from '../../src/cli/operator';
import { resolveConfig, type Flags, type OperatorConfig } from '../../src/operator/runtime/config';
import { KubeconfigProvider } from '../../src/operator/runtime/kubeconfig-provider';
import { jsonLogger } from '../../src/operator/runtime/log';
import { Manager } from '../../src/operator/runtime/manager';
import { OperatorMetrics } from '../../src/operator/runtime/metrics';
import type { FakeApiServer } from '../unit/kube/fake-api-server';
import { OPENBAO_URL, type Network } from './network';

/** The operator's namespace (its Lease, its target clusters' kubeconfig Secrets). */
export const OPERATOR_NAMESPACE = 'keystone-appcred-system';
/** The OpenBao token of the operator (token auth). */
export const OPENBAO_TOKEN = 'hvs.sim-operator-token-0f3c9a';

/** How a run's processes are configured (the Deployment's environment, as the construct sets it). */
export interface ProcessSettings {
  /** Back the credentials up in OpenBao. */
  readonly openBao: boolean;
  /** Roll the workloads that opted in (the consumer handoff). */
  readonly consumerHandoff: boolean;
  /** `cluster-wide` or `namespaced` Secret access. */
  readonly secretAccess: 'cluster-wide' | 'namespaced';
  /** Flags of `keystone-appcred operator` beyond the environment (`resyncPeriod: '24h'`). @default none */
  readonly flags?: Flags;
  /** `--keystone-in-flight` (absent: the default). */
  readonly keystoneInFlight?: number;
}

/** One log line, as the process wrote it, parsed. */
export type LogLine = Readonly<Record<string, unknown>> & { readonly process: string; readonly msg: string };

export class OperatorProcess {
  readonly manager: Manager;
  readonly metrics: OperatorMetrics;
  readonly config: OperatorConfig;
  private alive = true;
  private readonly provider: KubeconfigProvider;

  constructor(
    readonly name: string,
    settings: ProcessSettings,
    network: Network,
    servers: { readonly management: FakeApiServer; readonly target: FakeApiServer },
    onLine: (line: LogLine) => void,
  ) {
    const env: NodeJS.ProcessEnv = {
      KAC_NAMESPACE: OPERATOR_NAMESPACE,
      KAC_POD_NAME: name,
      KAC_LOG_LEVEL: 'info',
      KAC_CONSUMER_HANDOFF: String(settings.consumerHandoff),
      KAC_SECRET_ACCESS: settings.secretAccess,
      ...(settings.keystoneInFlight !== undefined ? { KAC_KEYSTONE_IN_FLIGHT: String(settings.keystoneInFlight) } : {}),
      ...(settings.openBao ? { KAC_OPENBAO_ADDRESS: OPENBAO_URL, KAC_OPENBAO_AUTH_METHOD: 'token', KAC_OPENBAO_TOKEN: OPENBAO_TOKEN } : {}),
    };
    this.config = resolveConfig(settings.flags ?? {}, env);
    const alive = () => this.alive;
    const logger = jsonLogger({ level: this.config.logLevel, write: (line) => onLine({ ...(JSON.parse(line) as Record<string, unknown>), process: name } as LogLine) });
    this.metrics = new OperatorMetrics({ version: 'sim', defaultMetrics: false });
    const api = new KubeApi(network.transportOf(name, alive, servers.management, 'api'), FIELD_MANAGER);
    this.manager = new Manager(api, managerOptions(this.config, { logger, metrics: this.metrics }));
    registerControllers(this.manager, this.config, undefined, { fetch: network.fetchOf(name, alive) });
    this.provider = new KubeconfigProvider(this.manager, api, {
      namespace: this.config.namespace,
      connect: () => new KubeApi(network.transportOf(name, alive, servers.target, 'target'), FIELD_MANAGER),
    });
  }

  get running(): boolean {
    return this.alive;
  }

  start(): void {
    this.manager.start();
    this.provider.start();
  }

  /** SIGKILL: nothing reaches anything any more; its loops are stopped in the background (they could only fail). */
  kill(): void {
    if (!this.alive) return;
    this.alive = false;
    void this.provider.stop();
    void this.manager.shutdown();
  }

  /** SIGTERM: the manager's own shutdown (reconciles in flight finish, the Lease is released), then the process exits. */
  async stop(): Promise<void> {
    if (!this.alive) return;
    await this.provider.stop();
    await this.manager.shutdown();
    this.alive = false;
  }
}
