/**
 * The operator's pod: its container (command, environment, probes, ports, resources), hardened (read-only root, no
 * capabilities, a non-root user), with the OpenBao CA mounted when one is given.
 */
import { OperatorEnv, OperatorRuntimeEnv } from '../../src/api/operator-env';
import { SecretAccessMode } from '../../src/api/secret-access';
import type { EnvVar, PodSpec, Probe, StringMap, Volume, VolumeMount } from '../kube';
import { OPERATOR_COMMAND, OpenBaoSettings, Resolved, ResourceAmounts } from './props';

const CA_DIR = '/etc/keystone-appcred/openbao-ca';

/** `KAC_WORKERS_PER_KIND` (`Kind=N,…`), only when a kind is set apart. */
function workersPerKindEnv(perKind: { readonly [kind: string]: number }): EnvVar[] {
  const pairs = Object.entries(perKind).filter(([, n]) => n !== undefined).map(([kind, n]) => `${kind}=${n}`);
  return pairs.length > 0 ? [{ name: OperatorEnv.workersPerKind, value: pairs.join(',') }] : [];
}

function openBaoEnv(settings: OpenBaoSettings): EnvVar[] {
  const env: EnvVar[] = [
    { name: OperatorEnv.openBaoAddress, value: settings.address },
    { name: OperatorEnv.openBaoAuthMethod, value: settings.auth.method },
  ];
  if (settings.auth.method === 'kubernetes') {
    env.push({ name: OperatorEnv.openBaoAuthMount, value: settings.auth.mountPath ?? 'kubernetes' });
    env.push({ name: OperatorEnv.openBaoRole, value: settings.auth.role });
  } else {
    // resolve() refused a token auth without its Secret.
    env.push({ name: OperatorEnv.openBaoToken, valueFrom: { secretKeyRef: { name: settings.auth.secretName as string, key: settings.auth.key ?? 'token' } } });
  }
  if (settings.caSecretName) env.push({ name: OperatorEnv.openBaoCaFile, value: `${CA_DIR}/ca.crt` });
  return env;
}

export function podSpec(p: Resolved, leaseName: string, selector: StringMap): PodSpec {
  const probe = (path: string, period: number): Probe => ({
    httpGet: { path, port: 'health' },
    periodSeconds: period,
    timeoutSeconds: 2,
    failureThreshold: 3,
  });
  const volumes: Volume[] = [{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }];
  const mounts: VolumeMount[] = [{ name: 'tmp', mountPath: '/tmp' }];
  if (p.openBao.caSecretName) {
    volumes.push({ name: 'openbao-ca', secret: { secretName: p.openBao.caSecretName, items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
    mounts.push({ name: 'openbao-ca', mountPath: CA_DIR, readOnly: true });
  }
  const quantities = (a: ResourceAmounts): StringMap => ({ cpu: a.cpu, memory: a.memory });
  return {
    serviceAccountName: p.name,
    automountServiceAccountToken: true, // the API client and OpenBao's Kubernetes auth both use the token
    terminationGracePeriodSeconds: 30,
    securityContext: { runAsNonRoot: true, runAsUser: p.runAsUser, runAsGroup: p.runAsUser, seccompProfile: { type: 'RuntimeDefault' } },
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } } },
        ],
      },
    },
    containers: [
      {
        name: 'operator',
        image: `${p.image}:${p.tag}`,
        imagePullPolicy: p.imagePullPolicy,
        command: [...OPERATOR_COMMAND],
        env: [
          // apiVersion spelled out: the API server defaults it, and fieldRef is atomic under server-side apply, so a
          // manifest without it conflicts with any other applier of the same manifest that the server defaulted.
          { name: OperatorEnv.namespace, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
          { name: OperatorEnv.podName, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
          { name: OperatorEnv.leaseName, value: leaseName },
          { name: OperatorEnv.healthPort, value: String(p.healthPort) },
          { name: OperatorEnv.metricsPort, value: String(p.metricsPort) },
          { name: OperatorEnv.logLevel, value: p.logLevel },
          { name: OperatorEnv.keystoneRate, value: String(p.keystoneRequestsPerSecond) },
          { name: OperatorEnv.keystoneInFlight, value: String(p.keystoneRequestsInFlight) },
          { name: OperatorEnv.keystonePacing, value: p.keystonePacing },
          { name: OperatorEnv.keystoneSpareWorkers, value: String(p.keystoneSpareWorkers) },
          { name: OperatorEnv.workers, value: String(p.workers) },
          // The memory limit in bytes, exported as keystone_appcred_memory_limit_bytes: the heap alert compares the
          // process's resident memory with it. Divisor spelled out for the same reason as fieldRef's apiVersion.
          { name: OperatorEnv.memoryLimit, valueFrom: { resourceFieldRef: { containerName: 'operator', resource: 'limits.memory', divisor: '1' } } },
          ...workersPerKindEnv(p.workersPerKind),
          ...openBaoEnv(p.openBao),
          ...(p.consumerHandoff ? [{ name: OperatorEnv.consumerHandoff, value: 'true' }] : []),
          // The namespaced Secret access: where to watch Secrets, and the Role name its conditions name.
          ...(p.secretAccess === SecretAccessMode.Namespaced
            ? [
                { name: OperatorEnv.secretAccess, value: SecretAccessMode.Namespaced },
                { name: OperatorEnv.rbacName, value: p.name },
              ]
            : []),
          ...Object.entries(OperatorRuntimeEnv).map(([name, value]) => ({ name, value })),
        ],
        ports: [
          { name: 'health', containerPort: p.healthPort, protocol: 'TCP' },
          { name: 'metrics', containerPort: p.metricsPort, protocol: 'TCP' },
        ],
        // A container that fails at start (a setup to fix) shows its last log lines, which name the fix, as the
        // termination message in the pod's status (`kubectl describe pod`), not only in the log of a restarted container.
        terminationMessagePolicy: 'FallbackToLogsOnError',
        livenessProbe: { ...probe('/healthz', 10), initialDelaySeconds: 10 },
        readinessProbe: probe('/readyz', 5),
        resources: { requests: quantities(p.requests), limits: quantities(p.limits) },
        securityContext: {
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        },
        volumeMounts: mounts,
      },
    ],
    volumes,
  };
}

