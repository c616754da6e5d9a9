import { OperatorEnv } from '../../../../constructs/operator';
import { describeConfig, OPERATOR_ENV, resolveConfig, SETTINGS } from '../../../../src/operator/runtime/config';

const defaults = { hostname: 'laptop', random: () => 'abc123' };

describe('operator configuration', () => {
  it('reads exactly the environment contract of the construct', () => {
    expect(OPERATOR_ENV).toEqual(OperatorEnv);
    const documented = SETTINGS.map((s) => s.env).filter(Boolean);
    for (const name of Object.values(OperatorEnv)) expect(documented).toContain(name);
  });

  it('has defaults for a laptop', () => {
    expect(resolveConfig({}, {}, defaults)).toEqual({
      kubeconfig: undefined,
      context: undefined,
      namespace: 'keystone-appcred-system',
      identity: 'laptop-abc123',
      leaseName: 'keystone-appcred-operator-leader',
      leaderElect: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      bindAddress: '0.0.0.0',
      healthPort: 8081,
      metricsPort: 8080,
      logLevel: 'info',
      resyncPeriodMs: 3_600_000,
      shutdownTimeoutMs: 20_000,
      heapTrimIntervalMs: 10_000,
      workers: 8,
      workersPerKind: {},
      openBao: undefined,
      consumerHandoff: false,
      keystoneRate: 20,
      keystoneInFlight: 8,
      keystonePacing: 'adaptive',
      keystoneSpareWorkers: 1,
      secretAccess: 'cluster-wide',
      rbacName: 'keystone-appcred-operator',
    });
  });

  it('reads the Secret access mode and the RBAC name from flags or the environment, and refuses anything else', () => {
    expect(resolveConfig({ secretAccess: 'namespaced' }, {}, defaults).secretAccess).toBe('namespaced');
    expect(resolveConfig({}, { KAC_SECRET_ACCESS: 'namespaced', KAC_RBAC_NAME: 'kac' }, defaults)).toMatchObject({ secretAccess: 'namespaced', rbacName: 'kac' });
    expect(resolveConfig({ secretAccess: 'cluster-wide' }, { KAC_SECRET_ACCESS: 'namespaced' }, defaults).secretAccess).toBe('cluster-wide');
    expect(() => resolveConfig({}, { KAC_SECRET_ACCESS: 'Namespaced' }, defaults)).toThrow('KAC_SECRET_ACCESS (Namespaced) must be one of cluster-wide, namespaced');
    expect(() => resolveConfig({ rbacName: 'Kac' }, {}, defaults)).toThrow('--rbac-name (Kac) must be a Kubernetes name');
  });

  it('turns the consumer handoff on with the flag or KAC_CONSUMER_HANDOFF=true, and refuses another value', () => {
    expect(resolveConfig({ consumerHandoff: true }, {}, defaults).consumerHandoff).toBe(true);
    expect(resolveConfig({}, { KAC_CONSUMER_HANDOFF: 'true' }, defaults).consumerHandoff).toBe(true);
    expect(resolveConfig({}, { KAC_CONSUMER_HANDOFF: 'False' }, defaults).consumerHandoff).toBe(false);
    expect(resolveConfig({ consumerHandoff: true }, { KAC_CONSUMER_HANDOFF: 'false' }, defaults).consumerHandoff).toBe(true);
    expect(() => resolveConfig({}, { KAC_CONSUMER_HANDOFF: 'yes' }, defaults)).toThrow('KAC_CONSUMER_HANDOFF (yes) must be true or false');
  });

  it('reads the Keystone limit from flags or the environment, and refuses what is not a count', () => {
    expect(resolveConfig({ keystoneRate: '2.5' }, { KAC_KEYSTONE_IN_FLIGHT: '3' }, defaults)).toMatchObject({ keystoneRate: 2.5, keystoneInFlight: 3 });
    expect(resolveConfig({ keystoneRate: '0', keystoneInFlight: '0' }, {}, defaults)).toMatchObject({ keystoneRate: 0, keystoneInFlight: 0 });
    expect(() => resolveConfig({ keystoneRate: '-1' }, {}, defaults)).toThrow('--keystone-rate (-1) must be a number of requests per second, 0 or more (0: no limit)');
    expect(() => resolveConfig({}, { KAC_KEYSTONE_IN_FLIGHT: '2.5' }, defaults)).toThrow('KAC_KEYSTONE_IN_FLIGHT (2.5) must be a whole number of requests, 0 or more (0: no limit)');
  });

  it('reads the Keystone pacing and its spare workers from flags or the environment, and refuses anything else', () => {
    expect(resolveConfig({ keystonePacing: 'fixed' }, { KAC_KEYSTONE_SPARE_WORKERS: '2' }, defaults)).toMatchObject({ keystonePacing: 'fixed', keystoneSpareWorkers: 2 });
    expect(resolveConfig({ keystoneSpareWorkers: '0' }, { KAC_KEYSTONE_PACING: 'adaptive' }, defaults)).toMatchObject({ keystonePacing: 'adaptive', keystoneSpareWorkers: 0 });
    expect(() => resolveConfig({ keystonePacing: 'aimd' }, {}, defaults)).toThrow('--keystone-pacing (aimd) must be one of adaptive, fixed');
    expect(() => resolveConfig({}, { KAC_KEYSTONE_SPARE_WORKERS: '1.5' }, defaults)).toThrow('KAC_KEYSTONE_SPARE_WORKERS (1.5) must be a whole number of Keystone workers, 0 or more');
  });

  it('reads the memory limit in bytes (the downward API) or as a quantity, and refuses what is not one', () => {
    expect(resolveConfig({}, { KAC_MEMORY_LIMIT: '536870912' }, defaults).memoryLimitBytes).toBe(536870912);
    expect(resolveConfig({ memoryLimit: '64Mi' }, { KAC_MEMORY_LIMIT: '536870912' }, defaults).memoryLimitBytes).toBe(64 * 2 ** 20);
    expect(resolveConfig({ memoryLimit: '1.5Gi' }, {}, defaults).memoryLimitBytes).toBe(1.5 * 2 ** 30);
    expect(resolveConfig({ memoryLimit: '1G' }, {}, defaults).memoryLimitBytes).toBe(1e9);
    expect(resolveConfig({}, {}, defaults).memoryLimitBytes).toBeUndefined();
    expect(() => resolveConfig({ memoryLimit: 'lots' }, {}, defaults)).toThrow('--memory-limit (lots) must be a memory amount in bytes or a quantity such as 512Mi, more than 0');
    expect(() => resolveConfig({}, { KAC_MEMORY_LIMIT: '0' }, defaults)).toThrow('KAC_MEMORY_LIMIT (0) must be a memory amount');
  });

  it('takes the workers of every kind and of single kinds from the environment or the flags', () => {
    expect(resolveConfig({}, { KAC_WORKERS: '8', KAC_WORKERS_PER_KIND: 'KeystoneApplicationCredential=16, ControlPlane=1' }, defaults)).toMatchObject({
      workers: 8,
      workersPerKind: { KeystoneApplicationCredential: 16, ControlPlane: 1 },
    });
    expect(resolveConfig({ workers: '2', workersPerKind: 'KeystoneUser=3' }, { KAC_WORKERS: '8', KAC_WORKERS_PER_KIND: 'ControlPlane=1' }, defaults)).toMatchObject({
      workers: 2,
      workersPerKind: { KeystoneUser: 3 },
    });
    expect(describeConfig(resolveConfig({ workersPerKind: 'KeystoneUser=3,ControlPlane=2' }, {}, defaults))).toMatchObject({ workers: 8, workersPerKind: 'KeystoneUser=3,ControlPlane=2' });
  });

  it.each([
    [{ workers: '0' }, {}, '--workers (0) must be a whole number of workers from 1 to 64'],
    [{}, { KAC_WORKERS: '65' }, 'KAC_WORKERS (65) must be a whole number of workers from 1 to 64'],
    [{ workers: '2.5' }, {}, '--workers (2.5) must be a whole number of workers from 1 to 64'],
    [{ workersPerKind: 'KeystoneUser' }, {}, '--workers-per-kind (KeystoneUser) must be a comma-separated list of Kind=N, e.g. KeystoneApplicationCredential=8 (got "KeystoneUser")'],
    [{}, { KAC_WORKERS_PER_KIND: 'Secret=2' }, 'KAC_WORKERS_PER_KIND (Secret=2) names Secret, which is not a kind the operator reconciles (ControlPlane, KeystoneProject, KeystoneUser, KeystoneRoleAssignment, KeystoneApplicationCredential, KeystoneClusterIdentity)'],
    [{ workersPerKind: 'KeystoneUser=2,KeystoneUser=3' }, {}, '--workers-per-kind (KeystoneUser=2,KeystoneUser=3) names KeystoneUser twice'],
    [{ workersPerKind: 'KeystoneUser=none' }, {}, '--workers-per-kind (KeystoneUser=none) KeystoneUser: must be a whole number of workers from 1 to 64'],
  ])('refuses the workers %j %j: %s', (flags, env, message) => {
    expect(() => resolveConfig(flags, env, defaults)).toThrow(message);
  });

  it('reads the Deployment\'s environment, and flags win over it', () => {
    const env = {
      KAC_NAMESPACE: 'ops', KAC_POD_NAME: 'op-7d9f-x2', KAC_LEADER_ELECTION_LEASE: 'op-leader', KAC_HEALTH_PORT: '9081', KAC_METRICS_PORT: '9080', KAC_LOG_LEVEL: 'debug',
      KAC_OPENBAO_ADDRESS: 'https://openbao.openbao.svc:8200/', KAC_OPENBAO_AUTH_METHOD: 'kubernetes', KAC_OPENBAO_AUTH_MOUNT: 'k8s', KAC_OPENBAO_ROLE: 'kac', KAC_OPENBAO_CA_FILE: '/ca/ca.crt',
    };
    const fromEnv = resolveConfig({}, env, defaults);
    expect(fromEnv).toMatchObject({ namespace: 'ops', identity: 'op-7d9f-x2', leaseName: 'op-leader', healthPort: 9081, metricsPort: 9080, logLevel: 'debug' });
    expect(fromEnv.openBao).toEqual({ address: 'https://openbao.openbao.svc:8200', authMethod: 'kubernetes', authMount: 'k8s', role: 'kac', token: undefined, caFile: '/ca/ca.crt' });
    const flagged = resolveConfig({ namespace: 'mine', healthPort: '0', leaderElect: false, leaseDuration: '3s', renewDeadline: '2s', retryPeriod: '500ms', kubeconfig: '/k', context: 'c' }, env, defaults);
    expect(flagged).toMatchObject({ namespace: 'mine', healthPort: 0, metricsPort: 9080, leaderElect: false, leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500, kubeconfig: '/k', context: 'c' });
  });

  it('names the flag or variable, the value and the rule of a bad setting', () => {
    expect(() => resolveConfig({}, { KAC_HEALTH_PORT: 'http' }, defaults)).toThrow('KAC_HEALTH_PORT (http) must be a port number (0 to 65535)');
    expect(() => resolveConfig({ metricsPort: '70000' }, {}, defaults)).toThrow('--metrics-port (70000) must be a port number');
    expect(() => resolveConfig({ leaseDuration: '15' }, {}, defaults)).toThrow('--lease-duration (15) must be a Go duration such as 15s, 1m30s or 1h');
    expect(() => resolveConfig({}, { KAC_LOG_LEVEL: 'verbose' }, defaults)).toThrow('KAC_LOG_LEVEL (verbose) must be one of debug, info, warn, error');
    expect(() => resolveConfig({}, { KAC_NAMESPACE: 'Ops' }, defaults)).toThrow('KAC_NAMESPACE (Ops) must be a Kubernetes name');
    expect(() => resolveConfig({}, { KAC_OPENBAO_ADDRESS: 'openbao:8200' }, defaults)).toThrow('KAC_OPENBAO_ADDRESS (openbao:8200) must be an http or https URL');
    expect(() => resolveConfig({}, { KAC_OPENBAO_ADDRESS: 'http://b', KAC_OPENBAO_AUTH_METHOD: 'token' }, defaults)).toThrow('KAC_OPENBAO_AUTH_METHOD (token) needs a token: set KAC_OPENBAO_TOKEN');
    expect(() => resolveConfig({}, { KAC_OPENBAO_ADDRESS: 'http://b' }, defaults)).toThrow('needs a role');
  });

  it('never shows the OpenBao token when described for a log line', () => {
    const config = resolveConfig({}, { KAC_OPENBAO_ADDRESS: 'http://b', KAC_OPENBAO_AUTH_METHOD: 'token', KAC_OPENBAO_TOKEN: 's.very-secret' }, defaults);
    expect(config.openBao?.token).toBe('s.very-secret');
    expect(JSON.stringify(describeConfig(config))).not.toContain('very-secret');
    expect(describeConfig(config).openBaoToken).toBe('(set)');
  });
});
