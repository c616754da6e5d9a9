/**
 * The operator as the e2e tests run it: `keystone-appcred operator` (under tsx, from the repository) as a child process
 * authenticated as a service account bound to exactly the construct's ClusterRole and Lease Role, as synthesized, so
 * every test that drives it proves the construct's RBAC sufficient (`command` runs another build, e.g. an installed
 * package's bin). Also installs the synthesized CRDs.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { applyOk, eventually, kubectl, kubectlOk, waitEstablished, type Identity, type KubeObject } from './kubectl';
import { freePort, startServer, tail, type Server } from './proc';
import { App, Chart } from 'cdk8s';
import { Operator } from '../../constructs/operator';
import { SecretAccess } from '../../constructs/secret-access';
import { ControlPlane } from '../../constructs/orders/control-plane';
import { renderTargetClusterManifests } from '../../src/cli/manifests';
import { synthesizeManifests } from './synth';

const REPO = resolve(__dirname, '..', '..');

/** A running operator process. */
export interface OperatorProcess {
  readonly name: string;
  readonly server: Server;
  readonly health: number;
  readonly metrics: number;
  readonly spawnedAt: number;
}

/** Where the operator's identity lives: its namespace (service account, Lease) and the name of its cluster binding. */
export interface OperatorIdentity {
  readonly namespace: string;
  readonly binding: string;
  /** @default "operator" */
  readonly serviceAccount?: string;
}

/** The objects of a synthesized chart (`crds`, `operator`, `samples`). */
export function manifestObjects(manifests: string, chart: string): KubeObject[] {
  const file = readdirSync(manifests).find((f) => f.includes(chart) && f.endsWith('.k8s.yaml'));
  if (!file) throw new Error(`no ${chart} chart in ${manifests}`);
  return parseAllDocuments(readFileSync(join(manifests, file), 'utf8')).map((d) => d.toJS() as KubeObject);
}

/**
 * Installs the synthesized CRDs (and the admission policy that ships with them) and waits until they are established,
 * on the management cluster (`as: 'target'`: on the second API server, run as a management cluster of its own).
 */
export async function installCrds(manifests: string = synthesizeManifests(), as: Identity = 'admin'): Promise<string> {
  const crds = readdirSync(manifests).find((f) => f.includes('crds')) as string;
  await kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=kac-test', '-f', join(manifests, crds)], { as });
  await waitEstablished(['crd', '--all'], { as });
  return manifests;
}

/**
 * The construct's ClusterRole and its Roles in the operator's namespace (the election Lease, the kubeconfig Secrets that
 * register target clusters), as synthesized, bound to the identity's service account.
 */
export function operatorRbac(manifests: string, identity: OperatorIdentity): KubeObject[] {
  const docs = manifestObjects(manifests, 'operator') as (KubeObject & { rules?: unknown[] })[];
  const clusterRole = docs.find((d) => d.kind === 'ClusterRole') as KubeObject & { rules: unknown[] };
  const roles = docs.filter((d) => d.kind === 'Role') as (KubeObject & { rules: unknown[] })[];
  const { namespace, binding } = identity;
  const sa = identity.serviceAccount ?? 'operator';
  const subjects = [{ kind: 'ServiceAccount', name: sa, namespace }];
  // The Roles keep the construct's name without its `keystone-appcred-operator-` base: `leader-election`, `cluster-registration`.
  const roleName = (role: KubeObject) => role.metadata.name.replace(/^keystone-appcred-operator-/, '');
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: binding }, rules: clusterRole.rules },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: binding }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: binding }, subjects },
    ...roles.flatMap((role) => [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: roleName(role), namespace }, rules: role.rules },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: roleName(role), namespace }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName(role) }, subjects },
    ]),
  ];
}

/**
 * The namespaced mode's RBAC as a platform team's cdk8s app synthesizes it (issue 34): the Operator construct with
 * `secretAccess: 'namespaced'` and the ControlPlanes (and identities) `declare` adds to the same app, so the Roles come
 * from the constructs alone; the ClusterRole (no rule on Secrets), a Role `keystone-appcred-operator-secrets` per
 * namespace they name (and the read-only source Roles), the Lease and registration Roles, all bound to the identity's
 * service account. The Roles keep their names and namespaces; the cluster-scoped ones are named after the binding.
 */
export function namespacedOperatorRbac(identity: OperatorIdentity, declare: (chart: Chart) => void): KubeObject[] {
  const app = new App({ outdir: join(process.env.KAC_TEST_WORKDIR ?? REPO, 'never-written') });
  const operatorChart = new Chart(app, 'operator');
  new Operator(operatorChart, 'Operator', {
    image: 'keystone-appcred',
    tag: 'test',
    secretAccess: SecretAccess.NAMESPACED,
    openBao: { address: 'https://openbao.invalid:8200', auth: { method: 'kubernetes', role: 'r' } },
  });
  declare(new Chart(app, 'declared'));
  const docs = [...(operatorChart.toJson() as (KubeObject & { rules?: unknown[] })[]), ...(app.charts.filter((c) => c !== operatorChart).flatMap((c) => c.toJson()) as (KubeObject & { rules?: unknown[] })[])];
  const sa = identity.serviceAccount ?? 'operator';
  const subjects = [{ kind: 'ServiceAccount', name: sa, namespace: identity.namespace }];
  const clusterRole = docs.find((d) => d.kind === 'ClusterRole') as KubeObject & { rules: unknown[] };
  const own = docs.filter((d) => d.kind === 'Role' && d.metadata.namespace === 'keystone-appcred-system') as (KubeObject & { rules: unknown[] })[];
  const perNamespace = docs.filter((d) => d.kind === 'Role' && d.metadata.labels?.['app.kubernetes.io/component'] === 'secret-access') as (KubeObject & { rules: unknown[] })[];
  const roleName = (role: KubeObject) => role.metadata.name.replace(/^keystone-appcred-operator-/, '');
  const binding = (name: string, namespace?: string) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, ...(namespace ? { namespace } : {}) }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects });
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: identity.namespace } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: identity.binding }, rules: clusterRole.rules },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: identity.binding }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: identity.binding }, subjects },
    ...own.flatMap((role) => [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: roleName(role), namespace: identity.namespace }, rules: role.rules }, binding(roleName(role), identity.namespace)]),
    ...perNamespace.flatMap((role) => [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: role.metadata.name, namespace: role.metadata.namespace }, rules: role.rules }, binding(role.metadata.name, role.metadata.namespace)]),
  ] as KubeObject[];
}

/** A ControlPlane declared in a test's app for the Roles the constructs synthesize from it (its namespace and assignments). */
export function declareControlPlane(chart: Chart, controlPlane: KubeObject & { spec: { namespaceAssignments?: { namespace: string; targetClusterRef?: { name: string } }[] } }): void {
  new ControlPlane(chart, `${controlPlane.metadata.namespace}-${controlPlane.metadata.name}`, {
    metadata: { name: controlPlane.metadata.name, namespace: controlPlane.metadata.namespace },
    keystone: { authURL: 'https://keystone.invalid/v3' },
    adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } },
    namespaceAssignments: (controlPlane.spec.namespaceAssignments ?? []).map((a) => ({ namespace: a.namespace, ...(a.targetClusterRef ? { targetClusterRef: { name: a.targetClusterRef.name } } : {}) })),
  });
}

/**
 * The operator's identity on the target cluster (`@needs target-kube`), as a platform team makes it: what
 * `keystone-appcred manifests --target-cluster --target-service-account <namespace>/<name>` prints (the four order CRDs,
 * the ClusterRole and its binding) applied there, the service account and a token for it; returns the kubeconfig (CA
 * embedded, so the registration Secret is all the operator needs) that authenticates as it.
 */
export async function targetClusterKubeconfig(identity: { readonly namespace: string; readonly serviceAccount?: string }, options: { readonly secretNamespaces?: readonly string[] } = {}): Promise<string> {
  const sa = identity.serviceAccount ?? 'operator';
  // The namespaced mode's Roles need their namespaces first.
  for (const namespace of options.secretNamespaces ?? []) await kubectl(['create', 'namespace', namespace], { as: 'target' });
  const yaml = renderTargetClusterManifests({ serviceAccount: `${identity.namespace}/${sa}`, ...(options.secretNamespaces ? { secretNamespaces: options.secretNamespaces } : {}) });
  await kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=kac-test', '-f', '-'], { as: 'target', input: yaml });
  await waitEstablished(['crd', '--all'], { as: 'target' });
  return targetServiceAccountKubeconfig(identity);
}

/**
 * The service account that a target cluster's ClusterRole binds (docs/configure/target-clusters.md, On the target cluster), created there
 * with its namespace (both may exist), and a self-contained kubeconfig (CA embedded, a 4 h token) that authenticates as
 * it: the `kubeconfig` of the registration Secret.
 */
export async function targetServiceAccountKubeconfig(identity: { readonly namespace: string; readonly serviceAccount?: string }): Promise<string> {
  const sa = identity.serviceAccount ?? 'operator';
  await kubectl(['create', 'namespace', identity.namespace], { as: 'target' });
  await kubectl(['create', 'serviceaccount', sa, '-n', identity.namespace], { as: 'target' });
  const token = (await kubectlOk(['create', 'token', sa, '-n', identity.namespace, '--duration=4h'], { as: 'target' })).trim();
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'operator',
    clusters: [{ name: 'target', cluster: { server: process.env.KAC_TARGET_KUBE_SERVER, 'certificate-authority-data': readFileSync(process.env.KAC_TARGET_KUBE_CA_FILE as string).toString('base64') } }],
    users: [{ name: sa, user: { token } }],
    contexts: [{ name: 'operator', context: { cluster: 'target', user: sa } }],
  });
}

/** The Secret that registers a target cluster named `name` with the operator running in `namespace`. */
export function registrationSecret(name: string, namespace: string, kubeconfig: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
    stringData: { kubeconfig },
  } as KubeObject;
}

/**
 * Creates the identity's namespace, binds the construct's RBAC to its service account and writes a kubeconfig that
 * authenticates as it to `path`; returns `path`. `as: 'target'`: on the second API server, as the management cluster of
 * a second installation.
 */
export async function operatorKubeconfig(
  manifests: string,
  identity: OperatorIdentity,
  path: string,
  options: { readonly rbac?: readonly KubeObject[]; readonly as?: Identity } = {},
): Promise<string> {
  const sa = identity.serviceAccount ?? 'operator';
  const as = options.as ?? 'admin';
  await kubectl(['create', 'namespace', identity.namespace], { as });
  await applyOk([...(options.rbac ?? operatorRbac(manifests, identity))], { fieldManager: 'kac-test', as });
  return serviceAccountKubeconfig({ namespace: identity.namespace, serviceAccount: sa }, path, as);
}

/**
 * Writes to `path` a kubeconfig that authenticates as an existing service account (a 2 h token), e.g. the one an
 * installed operator's pod would use; returns `path`.
 */
export async function serviceAccountKubeconfig(account: { readonly namespace: string; readonly serviceAccount: string }, path: string, as: Identity = 'admin'): Promise<string> {
  const sa = account.serviceAccount;
  const token = (await kubectlOk(['create', 'token', sa, '-n', account.namespace, '--duration=2h'], { as })).trim();
  const server = as === 'target' ? process.env.KAC_TARGET_KUBE_SERVER : process.env.KAC_KUBE_SERVER;
  const ca = as === 'target' ? process.env.KAC_TARGET_KUBE_CA_FILE : process.env.KAC_KUBE_CA_FILE;
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'sa',
      clusters: [{ name: 'kac', cluster: { server, 'certificate-authority': ca } }],
      users: [{ name: sa, user: { token } }],
      contexts: [{ name: 'sa', context: { cluster: 'kac', user: sa, namespace: account.namespace } }],
    }),
    { mode: 0o600 },
  );
  return path;
}

/** Removes the identity's cluster-wide RBAC (its namespace goes with the test's own cleanup). */
export async function removeOperatorRbac(identity: OperatorIdentity, as: Identity = 'admin'): Promise<void> {
  await kubectl(['delete', 'clusterrolebinding,clusterrole', identity.binding, '--ignore-not-found'], { as });
}

/** What {@link startOperator} runs. */
export interface OperatorOptions {
  readonly name: string;
  readonly kubeconfig: string;
  /** The operator's namespace (its Lease). */
  readonly namespace: string;
  /** Where `<name>.log` goes. */
  readonly logDir: string;
  /** More flags. */
  readonly args?: readonly string[];
  /** More environment variables (merged over this process's). */
  readonly env?: Record<string, string>;
  /**
   * The program and its arguments up to `operator`, before the flags above (e.g. an installed package's
   * `node_modules/.bin/keystone-appcred operator`). @default this Node under tsx running src/cli/main.ts of the repository
   */
  readonly command?: readonly string[];
  /** The working directory. @default the repository */
  readonly cwd?: string;
}

/**
 * A quick leader election (a 4 s Lease, renewed within 3 s, retried every 500 ms), for a file that hands the Lease
 * from one operator to another or restarts one: the defaults (15 s, 10 s, 2 s) would make each handover wait 15 s.
 */
export const QUICK_ELECTION: readonly string[] = ['--lease-duration', '4s', '--renew-deadline', '3s', '--retry-period', '500ms'];

/** The operator's environment for the test OpenBao (the `openbao` component) with its token. */
export function openBaoTokenEnv(): Record<string, string> {
  return { KAC_OPENBAO_ADDRESS: process.env.KAC_BAO_ADDR as string, KAC_OPENBAO_AUTH_METHOD: 'token', KAC_OPENBAO_TOKEN: process.env.KAC_BAO_TOKEN as string };
}

/** Starts `keystone-appcred operator` as a child process. */
export async function startOperator(options: OperatorOptions): Promise<OperatorProcess> {
  const health = await freePort();
  const metrics = await freePort();
  const [bin, ...leading] = options.command ?? [process.execPath, '--import', 'tsx', join(REPO, 'src/cli/main.ts'), 'operator'];
  const args = [
    ...leading,
    '--kubeconfig', options.kubeconfig, '--namespace', options.namespace, '--identity', options.name,
    '--bind-address', '127.0.0.1', '--health-port', String(health), '--metrics-port', String(metrics), ...(options.args ?? []),
  ];
  const server = startServer(`operator ${options.name}`, bin, args, join(options.logDir, `${options.name}.log`), {
    cwd: options.cwd ?? REPO,
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
  });
  return { name: options.name, server, health, metrics, spawnedAt: Date.now() };
}

/** GET a local URL; undefined when nothing answers. */
export async function httpGet(url: string, timeoutMs = 2_000): Promise<{ status: number; body: string } | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined;
  }
}

/** The operator's /metrics text ('' when it does not answer within `timeoutMs`). */
export async function metricsText(op: OperatorProcess, timeoutMs = 2_000): Promise<string> {
  return (await httpGet(`http://127.0.0.1:${op.metrics}/metrics`, timeoutMs))?.body ?? '';
}

/** The sum of a metric's samples whose labels include `labels` (0 when there is none). */
export function metricSum(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const m of text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/gm)) {
    if (m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

/** Whether the operator leads (its leader gauge). */
export async function isLeader(op: OperatorProcess): Promise<boolean> {
  return /^keystone_appcred_leader 1$/m.test(await metricsText(op));
}

/** Waits until the operator's /readyz answers 200; returns the milliseconds since it was spawned. */
export async function waitReady(op: OperatorProcess, timeoutMs = 120_000): Promise<number> {
  await eventually(async () => {
    if (op.server.exited() !== undefined) throw new Error(`${op.name} exited (${op.server.exited()}):\n${tail(op.server.log)}`);
    return (await httpGet(`http://127.0.0.1:${op.health}/readyz`))?.status === 200;
  }, timeoutMs, 100);
  return Date.now() - op.spawnedAt;
}

/** The operator's JSON log lines so far. */
export function operatorLog(op: OperatorProcess): Record<string, unknown>[] {
  return readFileSync(op.server.log, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
}

/** The operator process's resident set size, MiB. */
export function rssMiB(op: OperatorProcess): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${op.server.process.pid}/status`, 'utf8'));
  return Math.round(Number(m?.[1] ?? 0) / 1024);
}

/** The project's namespaced kinds, as kubectl names them. */
const ORDER_RESOURCES = ['keystoneapplicationcredentials', 'keystoneroleassignments', 'keystoneusers', 'keystoneprojects', 'controlplanes'].map((r) => `${r}.c5c3.io`);

/**
 * Clears the finalizers of every order left in `namespaces` (after the operator stopped nothing would release them), so
 * deleting the namespaces, and later the CRDs, is not held by them on the shared API server (`as: 'target'`: on the
 * target cluster).
 */
export async function releaseLeftovers(namespaces: readonly string[], as: Identity = 'admin'): Promise<void> {
  for (const namespace of namespaces) {
    for (const resource of ORDER_RESOURCES) {
      const names = (await kubectl(['get', resource, '-n', namespace, '-o', 'name'], { as })).stdout.split('\n').filter(Boolean);
      for (const name of names) await kubectl(['patch', name, '-n', namespace, '--type=merge', '-p', '{"metadata":{"finalizers":null}}'], { as });
    }
  }
}

/**
 * {@link releaseLeftovers} in every namespace: for a file that deletes the CRDs (a `pulumi destroy`), which would
 * otherwise wait on orders other files left behind with their operators stopped. Call it holding the cluster lock (and,
 * `as: 'target'`, the target cluster).
 */
export async function releaseAllLeftovers(as: Identity = 'admin'): Promise<void> {
  for (const resource of ORDER_RESOURCES) {
    const lines = (await kubectl(['get', resource, '-A', '-o', 'jsonpath={range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{"\\n"}{end}'], { as })).stdout.split('\n').filter(Boolean);
    for (const line of lines) {
      const [namespace, name] = line.split(' ');
      await kubectl(['patch', resource, name, '-n', namespace, '--type=merge', '-p', '{"metadata":{"finalizers":null}}'], { as });
    }
  }
}
