/**
 * `keystone-appcred operator`: the in-cluster operator. In a pod it reads the environment the construct's Deployment
 * sets (constructs/operator/ `OperatorEnv`) and the service account; from a laptop it runs against any cluster with
 * `--kubeconfig` (or KUBECONFIG, ~/.kube/config). Flags override the environment.
 */
import { totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import { KubeApi } from '../kube/api';
import { connect } from '../kube/client-node';
import { registerControllers as registerKindControllers, type ControllerOptions } from '../operator/controllers';
import { reportHandoffOff } from '../operator/handoff/off';
import { describeConfig, resolveConfig, SETTINGS, type Flags, type OperatorConfig } from '../operator/runtime/config';
import { serve } from '../operator/runtime/http';
import { jsonLogger, errorMessage, type Logger } from '../operator/runtime/log';
import { KubeconfigProvider } from '../operator/runtime/kubeconfig-provider';
import { Manager, type ManagerOptions } from '../operator/runtime/manager';
import { HeapTrimmer } from '../operator/runtime/heap';
import { OperatorMetrics } from '../operator/runtime/metrics';
import { connectChecked, EXIT_CONFIGURATION, StartupError, type Started } from './operator-start';
import { packageVersion } from './version';

/** The field manager of every write the operator makes. */
export const FIELD_MANAGER = 'keystone-appcred-operator';

/**
 * Registers the reconcilers: one controller per kind (ControlPlane, KeystoneProject, KeystoneUser,
 * KeystoneRoleAssignment, KeystoneApplicationCredential), and the consumer handoff's with `--consumer-handoff`, see
 * src/operator/controllers.ts.
 */
export function registerControllers(manager: Manager, config: OperatorConfig, identity?: { readonly username?: string }, options: Pick<ControllerOptions, 'fetch'> = {}): void {
  registerKindControllers(manager, {
    ...(config.openBao ? { openBao: config.openBao } : {}),
    consumerHandoff: config.consumerHandoff,
    keystone: { requestsPerSecond: config.keystoneRate, inFlight: config.keystoneInFlight, pacing: config.keystonePacing, spareWorkers: config.keystoneSpareWorkers },
    secretAccess: { mode: config.secretAccess, operator: config.rbacName, ...(identity?.username ? { username: identity.username } : {}) },
    ...options,
  });
}

/** The manager's options of a configuration (the simulation, test/sim/, runs its operators with them too). */
export function managerOptions(config: OperatorConfig, parts: { readonly logger: Logger; readonly metrics: OperatorMetrics }): ManagerOptions {
  return {
    identity: config.identity,
    namespace: config.namespace,
    leaseName: config.leaseName,
    leaderElect: config.leaderElect,
    leaseDurationMs: config.leaseDurationMs,
    renewDeadlineMs: config.renewDeadlineMs,
    retryPeriodMs: config.retryPeriodMs,
    resyncPeriodMs: config.resyncPeriodMs,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    workers: config.workers,
    workersPerKind: config.workersPerKind,
    ...parts,
  };
}

/**
 * Runs until SIGTERM/SIGINT (exit code 0) or until it loses the Lease it held (1). A setup that cannot work ends it at
 * start with one log line and exit code 2 (configuration, credentials) or 1 (no API server), see ./operator-start.ts.
 */
export async function runOperator(config: OperatorConfig): Promise<number> {
  const logger = jsonLogger({ level: config.logLevel });
  const version = packageVersion();
  logger.info('operator starting', { version, ...describeConfig(config) });
  let started: Started;
  try {
    started = await connectChecked(config, { onRetry: (error, attempt) => logger.debug('the API server does not answer yet', { attempt, error }) });
  } catch (error) {
    // One line naming what is missing and the fix; the exit code says configuration (2) or an unreachable server (1).
    const exitCode = error instanceof StartupError ? error.exitCode : EXIT_CONFIGURATION;
    logger.error(`cannot start: ${errorMessage(error)}`, { exitCode });
    return exitCode;
  }
  const { connection, identity } = started;
  logger.info('kubernetes configuration loaded', {
    source: connection.source,
    server: connection.server,
    context: connection.context,
    user: connection.user,
    authenticatedAs: identity?.username,
  });
  const metrics = new OperatorMetrics({ version });
  const memoryLimit = config.memoryLimitBytes ?? cgroupMemoryLimit();
  if (memoryLimit !== undefined) metrics.memoryLimit(memoryLimit);
  const api = new KubeApi(connection.transport, FIELD_MANAGER);
  const manager = new Manager(api, managerOptions(config, { logger, metrics }));
  registerControllers(manager, config, identity);
  // Target clusters: the kubeconfig Secrets in the operator's namespace (docs/configure/target-clusters.md).
  const provider = new KubeconfigProvider(manager, api, {
    namespace: config.namespace,
    connect: (kubeconfig, source) => new KubeApi(connect({ kubeconfigText: { text: kubeconfig, source } }).transport, FIELD_MANAGER),
  });
  const serving = await serve(
    { unsynced: () => manager.unsynced(), metrics: async () => ({ contentType: metrics.contentType, body: metrics.pieces() }) },
    { host: config.bindAddress, healthPort: config.healthPort, metricsPort: config.metricsPort },
  );
  logger.info('serving', { address: config.bindAddress, healthPort: serving.healthPort, metricsPort: serving.metricsPort });
  manager.start();
  const trimmer = new HeapTrimmer({
    intervalMs: config.heapTrimIntervalMs,
    onTrim: (trim) => {
      metrics.heapTrimmed(trim);
      logger.debug('heap trimmed', { heldBeforeMiB: Math.round(trim.heldBefore / 2 ** 20), heldAfterMiB: Math.round(trim.heldAfter / 2 ** 20), pauseMs: Math.round(trim.seconds * 1000) });
    },
  });
  trimmer.start();
  if (!config.consumerHandoff) void reportHandoffOff(api, logger);
  provider.start();
  void manager.waitForCacheSync().then(() => logger.info('ready: caches synced', { sinceProcessStartMs: Math.round(performance.now()) }));

  const code = await new Promise<number>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      logger.info('shutting down', { signal });
      process.once(signal, () => {
        logger.warn('second signal: exiting at once', { signal });
        process.exit(1);
      });
      resolve(0);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    void manager.lostLeadership.then(() => resolve(1));
  });
  trimmer.stop();
  await provider.stop();
  await manager.shutdown();
  await serving.close();
  return code;
}

function help(): string {
  const rows = SETTINGS.filter((s) => s.env && s.env !== 'KUBECONFIG').map((s) => `  ${s.env!.padEnd(26)} ${s.flag ? s.flag.split(' ')[0] : '(no flag)'}`);
  return [
    '',
    'Environment (the construct\'s Deployment sets it; a flag wins over its variable):',
    ...rows,
    '',
    'Out of cluster: keystone-appcred operator --kubeconfig ~/.kube/config --health-port 8081 --metrics-port 8080',
    'Endpoints: /healthz and /readyz on the health port, /metrics on the metrics port. See docs/reference/cli.md.',
  ].join('\n');
}

export function operatorCommand(): Command {
  const cmd: Command = new Command('operator').description('run the operator: reconcile the c5c3.io orders of the cluster (one leader among the replicas)');
  for (const setting of SETTINGS) {
    if (!setting.flag) continue;
    const from = [setting.env && setting.env !== 'KUBECONFIG' ? `env ${setting.env}` : '', setting.default ? `default ${setting.default}` : ''].filter(Boolean).join(', ');
    cmd.option(setting.flag, from ? `${setting.description} (${from})` : setting.description);
  }
  cmd.addHelpText('after', help());
  cmd.action(async (flags: Flags) => {
    let config: OperatorConfig;
    try {
      config = resolveConfig(flags, process.env);
    } catch (error) {
      cmd.error(`keystone-appcred operator: ${errorMessage(error)}`, { exitCode: 2 });
    }
    process.exitCode = await runOperator(config);
  });
  return cmd;
}

/**
 * The memory limit the kernel imposes on the process (its cgroup's), when there is one: Node reports 0 without a
 * constraint, and a cgroup v1 without a limit reads as a huge number, which neither is a limit worth alerting on.
 */
function cgroupMemoryLimit(): number | undefined {
  const limit = process.constrainedMemory();
  return limit > 0 && limit < totalmem() ? limit : undefined;
}
