import { Testing } from 'cdk8s';
import { ImagePullPolicy, KeystonePacing, Operator, type OperatorProps } from '../../../constructs/operator';
import { CLUSTER_RULES, HANDOFF_RULES } from '../../../constructs/operator-rbac';
import { DEFAULT_WORKERS } from '../../../src/api/operator-env';
import { resolveConfig } from '../../../src/operator/runtime/config';

type Json = Record<string, unknown>;
const base: OperatorProps = {
  image: 'registry.example:5000/keystone-appcred',
  tag: '0.2.0',
  openBao: { address: 'https://openbao.openbao.svc:8200', auth: { method: 'kubernetes', role: 'kac' } },
};

function synth(props: Partial<OperatorProps> = {}): Json[] {
  const chart = Testing.chart();
  new Operator(chart, 'operator', { ...base, ...props });
  return Testing.synth(chart) as Json[];
}
const find = (objects: Json[], kind: string): Json[] => objects.filter((o) => o.kind === kind);

describe('Operator', () => {
  const objects = synth();
  const deployment = find(objects, 'Deployment')[0];
  const pod = ((deployment.spec as Json).template as Json).spec as Json;
  const container = (pod.containers as Json[])[0];

  it('matches the snapshot', () => {
    expect(objects).toMatchSnapshot();
  });

  it('emits the namespace, service account, RBAC, deployment, metrics service and PDB', () => {
    expect(objects.map((o) => o.kind).sort()).toEqual(
      ['ClusterRole', 'ClusterRoleBinding', 'Deployment', 'Namespace', 'PodDisruptionBudget', 'Role', 'Role', 'RoleBinding', 'RoleBinding', 'Service', 'ServiceAccount'].sort(),
    );
    expect(synth({ createNamespace: false }).some((o) => o.kind === 'Namespace')).toBe(false);
  });

  it('grants no wildcard, and Secrets only get/list/watch/create/patch/delete', () => {
    const rules = [...find(objects, 'ClusterRole'), ...find(objects, 'Role')].flatMap((r) => r.rules as Json[]);
    for (const rule of rules) {
      for (const field of ['apiGroups', 'resources', 'verbs', 'resourceNames']) {
        expect((rule[field] as string[] | undefined) ?? []).not.toContain('*');
      }
    }
    const secretVerbs = find(objects, 'ClusterRole').flatMap((r) => r.rules as Json[]).filter((r) => (r.resources as string[]).includes('secrets')).flatMap((r) => r.verbs as string[]);
    expect(secretVerbs.sort()).toEqual(['create', 'delete', 'get', 'list', 'patch', 'watch']);
    // The registration Role: reads Secrets in the operator's own namespace (the labelled kubeconfig Secrets), never writes.
    const registration = find(objects, 'Role').find((r) => (r.metadata as Json).name === 'keystone-appcred-operator-cluster-registration') as Json;
    expect(registration.metadata).toMatchObject({ namespace: 'keystone-appcred-system' });
    expect(registration.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }]);
    expect(find(objects, 'RoleBinding').map((b) => (b.roleRef as Json).name).sort()).toEqual(['keystone-appcred-operator-cluster-registration', 'keystone-appcred-operator-leader-election']);
    const lease = rules.filter((r) => (r.resources as string[]).includes('leases'));
    expect(lease).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'], resourceNames: ['keystone-appcred-operator-leader'] },
    ]);
    expect(find(objects, 'Role')[0].metadata).toMatchObject({ namespace: 'keystone-appcred-system' });
  });

  it('grants nothing on workloads and leaves the consumer handoff off by default', () => {
    const rules = find(objects, 'ClusterRole').flatMap((r) => r.rules as Json[]);
    expect(rules.filter((r) => (r.apiGroups as string[]).includes('apps'))).toEqual([]);
    expect((container.env as Json[]).map((e) => e.name)).not.toContain('KAC_CONSUMER_HANDOFF');
  });

  it('with consumerHandoff, grants get, list, watch and patch on deployments, statefulsets and daemonsets (each with a reason) and turns it on', () => {
    const on = synth({ consumerHandoff: true });
    const rules = find(on, 'ClusterRole').flatMap((r) => r.rules as Json[]);
    const workloadRules = rules.filter((r) => (r.apiGroups as string[]).includes('apps'));
    expect(workloadRules).toEqual([
      { apiGroups: ['apps'], resources: ['deployments', 'statefulsets', 'daemonsets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['deployments', 'statefulsets', 'daemonsets'], verbs: ['patch'] },
    ]);
    expect(rules.length).toBe(CLUSTER_RULES.length + HANDOFF_RULES.length);
    for (const rule of HANDOFF_RULES) expect(rule.reason.length).toBeGreaterThan(20);
    const env = ((((find(on, 'Deployment')[0].spec as Json).template as Json).spec as Json).containers as Json[])[0].env as Json[];
    expect(env).toContainEqual({ name: 'KAC_CONSUMER_HANDOFF', value: 'true' });
  });

  it('lets the operator read KeystoneClusterIdentities, write only their status, and read Namespace labels, each rule with a reason', () => {
    const rules = find(objects, 'ClusterRole').flatMap((r) => r.rules as Json[]);
    const grants = (resource: string): string[] => rules.filter((r) => (r.resources as string[]).includes(resource)).flatMap((r) => r.verbs as string[]).sort();
    expect(grants('keystoneclusteridentities')).toEqual(['get', 'list', 'watch']);
    expect(grants('keystoneclusteridentities/status')).toEqual(['get', 'patch', 'update']);
    expect(grants('namespaces')).toEqual(['get', 'list', 'watch']);
    for (const rule of CLUSTER_RULES) expect(rule.reason.length).toBeGreaterThan(20);
    const secretReasons = CLUSTER_RULES.filter((r) => r.resources.includes('secrets')).map((r) => r.reason);
    expect(secretReasons.filter((reason) => /mirror/.test(reason))).toHaveLength(3);
  });

  it('runs 2 replicas non-root, read-only, without capabilities, under RuntimeDefault seccomp', () => {
    expect((deployment.spec as Json).replicas).toBe(2);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.image).toBe('registry.example:5000/keystone-appcred:0.2.0');
    expect(container.command).toEqual(['node', 'lib/src/cli/main.js', 'operator']);
    expect(container.resources).toEqual({ requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '500m', memory: '512Mi' } });
  });

  it('pulls the image if not present by default, and as ImagePullPolicy says otherwise', () => {
    expect(container.imagePullPolicy).toBe('IfNotPresent');
    const always = find(synth({ imagePullPolicy: ImagePullPolicy.ALWAYS }), 'Deployment')[0];
    expect((((always.spec as Json).template as Json).spec as { containers: Json[] }).containers[0].imagePullPolicy).toBe('Always');
  });

  it('probes /healthz and /readyz on the health port and serves /metrics through a Service', () => {
    expect(container.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'health' } });
    expect(container.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'health' } });
    expect(container.ports).toEqual([
      { name: 'health', containerPort: 8081, protocol: 'TCP' },
      { name: 'metrics', containerPort: 8080, protocol: 'TCP' },
    ]);
    expect(find(objects, 'Service')[0].spec).toMatchObject({ ports: [{ name: 'metrics', port: 8080, targetPort: 'metrics' }] });
    expect(find(objects, 'PodDisruptionBudget')[0].spec).toMatchObject({ maxUnavailable: 1 });
  });

  it('passes the Keystone limit as environment: 20 per second and 8 in flight by default', () => {
    const env = container.env as Json[];
    expect(env).toContainEqual({ name: 'KAC_KEYSTONE_RATE', value: '20' });
    expect(env).toContainEqual({ name: 'KAC_KEYSTONE_IN_FLIGHT', value: '8' });
    expect(env).toContainEqual({ name: 'KAC_KEYSTONE_PACING', value: 'adaptive' });
    expect(env).toContainEqual({ name: 'KAC_KEYSTONE_SPARE_WORKERS', value: '1' });
    const raised = synth({ keystoneRequestsPerSecond: 100, keystoneRequestsInFlight: 32, keystonePacing: KeystonePacing.FIXED, keystoneSpareWorkers: 2 });
    const raisedEnv = (((find(raised, 'Deployment')[0].spec as Json).template as Json).spec as Json).containers as Json[];
    expect(raisedEnv[0].env as Json[]).toEqual(
      expect.arrayContaining([
        { name: 'KAC_KEYSTONE_RATE', value: '100' },
        { name: 'KAC_KEYSTONE_IN_FLIGHT', value: '32' },
        { name: 'KAC_KEYSTONE_PACING', value: 'fixed' },
        { name: 'KAC_KEYSTONE_SPARE_WORKERS', value: '2' },
      ]),
    );
  });

  it('passes the OpenBao settings as environment', () => {
    const env = container.env as Json[];
    expect(env).toContainEqual({ name: 'KAC_OPENBAO_ADDRESS', value: 'https://openbao.openbao.svc:8200' });
    expect(env).toContainEqual({ name: 'KAC_OPENBAO_ROLE', value: 'kac' });
    const token = synth({ openBao: { address: 'http://bao:8200', auth: { method: 'token', secretName: 'bao-token' }, caSecretName: 'bao-ca' } });
    const tokenPod = ((find(token, 'Deployment')[0].spec as Json).template as Json).spec as Json;
    const tokenEnv = ((tokenPod.containers as Json[])[0].env as Json[]);
    expect(tokenEnv).toContainEqual({ name: 'KAC_OPENBAO_TOKEN', valueFrom: { secretKeyRef: { name: 'bao-token', key: 'token' } } });
    expect(tokenEnv).toContainEqual({ name: 'KAC_OPENBAO_CA_FILE', value: '/etc/keystone-appcred/openbao-ca/ca.crt' });
  });

  it('passes its memory limit to the process through the downward API, which reads it as the limit of the memory alert', () => {
    const env = container.env as Json[];
    expect(env).toContainEqual({ name: 'KAC_MEMORY_LIMIT', valueFrom: { resourceFieldRef: { containerName: container.name, resource: 'limits.memory', divisor: '1' } } });
    // the kubelet fills it in bytes (the limit divided by the divisor 1): 512Mi
    expect(resolveConfig({}, { KAC_MEMORY_LIMIT: String(512 * 2 ** 20) })).toMatchObject({ memoryLimitBytes: 536870912 });
  });

  it('gives every controller the default workers, and single kinds theirs', () => {
    const env = container.env as Json[];
    expect(env).toContainEqual({ name: 'KAC_WORKERS', value: String(DEFAULT_WORKERS) });
    expect(env.some((e) => e.name === 'KAC_WORKERS_PER_KIND')).toBe(false);
    const tuned = synth({ workers: 8, workersPerKind: { KeystoneApplicationCredential: 16, ControlPlane: 1 } });
    const tunedEnv = ((((find(tuned, 'Deployment')[0].spec as Json).template as Json).spec as Json).containers as Json[])[0].env as Json[];
    expect(tunedEnv).toContainEqual({ name: 'KAC_WORKERS', value: '8' });
    expect(tunedEnv).toContainEqual({ name: 'KAC_WORKERS_PER_KIND', value: 'KeystoneApplicationCredential=16,ControlPlane=1' });
    // What the construct sets, the operator reads back.
    expect(resolveConfig({}, Object.fromEntries(tunedEnv.filter((e) => typeof e.value === 'string' && e.name !== 'KAC_OPENBAO_ADDRESS').map((e) => [e.name, e.value as string])))).toMatchObject({
      workers: 8,
      workersPerKind: { KeystoneApplicationCredential: 16, ControlPlane: 1 },
    });
  });

  it.each([
    [{ replicas: 0 }, 'replicas (0) must be an integer of at least 1'],
    [{ workers: 0 }, 'workers (0) must be a whole number of workers from 1 to 64'],
    [{ workers: 1.5 }, 'workers (1.5) must be a whole number of workers from 1 to 64'],
    [{ workersPerKind: { KeystoneUser: 100 } }, 'workersPerKind.KeystoneUser (100) must be a whole number of workers from 1 to 64'],
    [{ workersPerKind: { Secret: 2 } as never }, 'workersPerKind.Secret (2) names no kind the operator reconciles'],
    [{ image: 'keystone-appcred:1.0' }, 'image ("keystone-appcred:1.0") must be an image repository without tag or digest'],
    [{ tag: 'bad tag' }, 'tag ("bad tag") must be a Docker tag'],
    [{ healthPort: 80 }, 'healthPort (80) must be an unprivileged port'],
    [{ metricsPort: 8081 }, 'metricsPort (8081) must differ from healthPort'],
    [{ namespace: 'Bad_NS' }, 'namespace ("Bad_NS") must be a DNS label'],
    [{ limits: { cpu: 'lots', memory: '1Gi' } }, 'limits.cpu ("lots") must be a Kubernetes quantity'],
    [{ openBao: { address: 'openbao:8200', auth: { method: 'kubernetes', role: 'r' } } }, 'openBao.address ("openbao:8200") must be an http or https URL'],
    [{ openBao: { address: 'http://bao', auth: { method: 'kubernetes', role: '' } } }, 'openBao.auth.role ("")'],
    [{ keystoneRequestsPerSecond: -1 }, 'keystoneRequestsPerSecond (-1) must be a number of requests per second, 0 or more'],
    [{ keystoneRequestsInFlight: 2.5 }, 'keystoneRequestsInFlight (2.5) must be a whole number of requests, 0 or more'],
    [{ keystonePacing: 'aimd' as never }, 'keystonePacing ("aimd") must be one of adaptive, fixed'],
    [{ keystoneSpareWorkers: -1 }, 'keystoneSpareWorkers (-1) must be a whole number of Keystone workers, 0 or more'],
    [{ imagePullPolicy: 'Sometimes' as never }, 'imagePullPolicy ("Sometimes") must be one of Always, IfNotPresent, Never'],
  ] as [Partial<OperatorProps>, string][])('rejects %j early, naming the prop and value', (props, message) => {
    expect(() => synth(props)).toThrow(message);
    expect(() => synth(props)).toThrow('test/operator: ');
  });
});
