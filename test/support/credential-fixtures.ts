/**
 * The KeystoneApplicationCredential fixtures the e2e and reliability suites share (the story, the outages, the foreign
 * writers): the ControlPlane with its admin `clouds.yaml` Secret, the project/user/role-assignment orders, a credential
 * order, reading an order and its delivered Secret, the ordered user's credentials in Keystone, and the consumer probe
 * that re-reads the delivered Secret and authenticates with it every second.
 *
 * Everything read is also collected for the secrets scan (test/support/secret-scan.ts): every minted secret seen in a
 * delivered Secret (`secretsSeen`) and every status read (`statusesRead`).
 */
import { childPrefix } from '../../src/api';
import { OpenBaoBackup } from '../../src/backup/openbao';
import { Users, authenticateApplicationCredential } from '../../src/keystone';
import { adminSession, keystoneTestEnv, type KeystoneTestEnv } from './keystone-fixtures';
import { kubeRequest, kubectlOk, type Identity, type KubeObject } from './kubectl';

export const GROUP = '/apis/c5c3.io/v1alpha1';

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

export interface Order extends KubeObject {
  spec: Record<string, unknown>;
  status?: {
    credentialGeneration?: number;
    credentialID?: string;
    previousCredentialID?: string;
    previousCredentialGeneration?: number;
    nextRotation?: string;
    secretName?: string;
    conditions?: Condition[];
    [key: string]: unknown;
  };
}

export const condition = (o: { status?: { conditions?: Condition[] } } | undefined, type: string): Condition | undefined => o?.status?.conditions?.find((c) => c.type === type);

export interface CredentialFixtureOptions {
  /** The orders' namespace. */
  readonly namespace: string;
  /** The ControlPlane's namespace (its admin Secret, the parked `secret-v<N>` children). */
  readonly cpNamespace: string;
  /** The ordered KeystoneUser's `userName` in Keystone. */
  readonly userName: string;
  /** The ordered KeystoneProject's `projectName` in Keystone. */
  readonly projectName: string;
  /** Where the consumer probe authenticates. @default the test Keystone's URL */
  readonly consumerAuthUrl?: string;
  /** The ControlPlane's name. @default "cp" */
  readonly controlPlane?: string;
  /**
   * Where the orders live: a registered target cluster's name and the identity that reaches its API server (`@needs
   * target-kube`). @default the management cluster (the API server of `@needs kube`)
   */
  readonly orderCluster?: { readonly name: string; readonly as: Identity };
  /**
   * The identity that reaches the management cluster the fixtures read (the ControlPlane, the children) and, without
   * `orderCluster`, the orders: `'target'` runs the second API server as a second installation's management cluster.
   * @default 'admin'
   */
  readonly as?: Identity;
}

/** A probe failure: when, which credential id it read (or why it had none). */
export interface ProbeFailure {
  readonly at: number;
  readonly id: string;
}

export interface Probe {
  readonly attempts: number;
  readonly failures: ProbeFailure[];
  /** Reads of the delivered Secret that failed (API server unreachable); the probe used the last Secret it read. */
  readonly readErrors: number;
  /** Failures outside every `[from, to]` window (ms since the epoch). */
  failuresOutside(windows: readonly (readonly [number, number])[]): ProbeFailure[];
  stop(): Promise<void>;
}

export type CredentialFixtures = ReturnType<typeof credentialFixtures>;

export function credentialFixtures(options: CredentialFixtureOptions) {
  const env: KeystoneTestEnv = keystoneTestEnv();
  const NS = options.namespace;
  const CP_NS = options.cpNamespace;
  const CP = options.controlPlane ?? 'cp';
  const secretsSeen = new Set<string>();
  const statusesRead: { source: string; text: string }[] = [];
  const ref = { controlPlaneRef: { name: CP, namespace: CP_NS } };
  /** The identity that reaches the management cluster. */
  const management: Identity = options.as ?? 'admin';
  /** The identity that reaches the orders' API server. */
  const as: Identity = options.orderCluster?.as ?? management;

  /** An order as read now (recorded for the scan). */
  async function order(name: string, kind = 'keystoneapplicationcredentials'): Promise<Order> {
    const res = await kubeRequest('GET', `${GROUP}/namespaces/${NS}/${kind}/${name}`, { timeoutMs: 10_000, as });
    if (res.status !== 200) throw new Error(`GET ${kind} ${NS}/${name}: ${res.status} ${res.body.slice(0, 300)}`);
    const o = res.json<Order>();
    statusesRead.push({ source: `status ${kind} ${NS}/${name} @${new Date().toISOString()}`, text: JSON.stringify(o.status ?? {}) });
    return o;
  }

  /** The ControlPlane as read now (recorded for the scan). */
  async function controlPlaneNow(): Promise<Order> {
    const res = await kubeRequest('GET', `${GROUP}/namespaces/${CP_NS}/controlplanes/${CP}`, { timeoutMs: 10_000, as: management });
    if (res.status !== 200) throw new Error(`GET controlplane ${CP_NS}/${CP}: ${res.status}`);
    const o = res.json<Order>();
    statusesRead.push({ source: `status controlplane ${CP_NS}/${CP} @${new Date().toISOString()}`, text: JSON.stringify(o.status ?? {}) });
    return o;
  }

  /** A merge patch of an object on the orders' cluster. */
  const merge = (resource: string, name: string, patch: unknown, namespace = NS) => kubectlOk(['patch', resource, name, '-n', namespace, '--type=merge', '-p', JSON.stringify(patch)], { as });

  /**
   * The delivered Secret's keys, decoded; undefined while there is none (404). Rejects when the API server does not
   * answer (the probe then keeps the last Secret it read, as a mounted Secret volume does).
   */
  async function delivered(name: string, secretName = `${name}-credentials`): Promise<Record<string, string> | undefined> {
    const res = await kubeRequest('GET', `/api/v1/namespaces/${NS}/secrets/${secretName}`, { timeoutMs: 10_000, as });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new Error(`GET secret ${NS}/${secretName}: ${res.status}`);
    const data = res.json<{ data?: Record<string, string> }>().data ?? {};
    const out = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    if (out.application_credential_secret) secretsSeen.add(out.application_credential_secret);
    return out;
  }

  async function authenticates(id: string | undefined, secret: string | undefined, authUrl = options.consumerAuthUrl ?? env.authUrl): Promise<boolean> {
    if (!id || !secret) return false;
    try {
      await authenticateApplicationCredential({ authUrl, id, secret, timeoutMs: 10_000 });
      return true;
    } catch {
      return false;
    }
  }

  const prefixOf = (name: string) => childPrefix({ namespace: NS, name, ...(options.orderCluster ? { cluster: options.orderCluster.name } : {}) });

  /**
   * The order's backup in the test OpenBao (mount `openstack`), at its backing path: the spec's path with the order's
   * uid after the prefix (docs/configure/order.md, The backup). `uid`: the order's `metadata.uid` (read it before a teardown).
   */
  const backup = (name: string, uid: string) =>
    new OpenBaoBackup({ address: process.env.KAC_BAO_ADDR as string, token: process.env.KAC_BAO_TOKEN as string, path: `keystone/${CP_NS}/${prefixOf(name)}/${uid}/service-accounts/application-credential` });

  /** The credential names of the ordered user in Keystone starting with `prefix` (as the admin sees them, directly). */
  async function userCredentials(prefix: string): Promise<string[]> {
    const admin = adminSession(env);
    const user = await new Users(admin).findByName(options.userName);
    if (!user) return [];
    const path = admin.transport.pathOf(`users/${user.id}/application_credentials`);
    const list = await admin.request({ method: 'GET', path });
    return (list.body as { application_credentials: { name: string }[] }).application_credentials.map((c) => c.name).filter((n) => n.startsWith(prefix)).sort();
  }

  /** The parked `secret-v<N>` children of an order, by generation: their `value`. */
  async function parkedSecrets(name: string): Promise<Map<number, string>> {
    const res = await kubeRequest('GET', `/api/v1/namespaces/${CP_NS}/secrets?labelSelector=${encodeURIComponent(`c5c3.io/keystoneapplicationcredential-name=${name},c5c3.io/keystoneapplicationcredential-namespace=${NS}`)}`, { as: management });
    if (res.status !== 200) throw new Error(`list parked secrets of ${name}: ${res.status}`);
    const out = new Map<number, string>();
    // The same name and namespace on another cluster is another order: its children carry another prefix.
    for (const s of res.json<{ items: { metadata: { name: string }; data?: Record<string, string> }[] }>().items.filter((i) => i.metadata.name.startsWith(`${prefixOf(name)}-`))) {
      const g = /-secret-v(\d+)$/.exec(s.metadata.name);
      if (g && s.data?.value) out.set(Number(g[1]), Buffer.from(s.data.value, 'base64').toString());
    }
    for (const v of out.values()) secretsSeen.add(v);
    return out;
  }

  /** The consumer: re-reads the delivered Secret and authenticates with it every second. */
  function probe(name: string, authUrl?: string): Probe {
    let attempts = 0;
    let readErrors = 0;
    const failures: ProbeFailure[] = [];
    let running = true;
    let last: Record<string, string> | undefined;
    const loop = (async () => {
      while (running) {
        const t0 = Date.now();
        try {
          last = await delivered(name);
        } catch {
          readErrors++;
        }
        attempts++;
        if (!(await authenticates(last?.application_credential_id, last?.application_credential_secret, authUrl))) failures.push({ at: t0, id: last?.application_credential_id ?? 'no Secret' });
        await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - t0))));
      }
    })();
    return {
      get attempts() {
        return attempts;
      },
      get readErrors() {
        return readErrors;
      },
      failures,
      failuresOutside: (windows) => failures.filter((f) => !windows.some(([from, to]) => f.at >= from && f.at <= to)),
      stop: async () => {
        running = false;
        await loop;
      },
    };
  }

  /** The admin's `clouds.yaml` for the ControlPlane's Secret. */
  const adminCloudsYaml = (password = env.adminPassword) =>
    `clouds:\n  admin:\n    auth:\n      auth_url: ${env.authUrl}\n      username: ${env.adminUser}\n      password: "${password}"\n      project_name: ${env.adminProject}\n      user_domain_name: ${env.domain}\n      project_domain_name: ${env.domain}\n`;

  const adminSecret = (name = 'keystone-admin', cloudsYaml = adminCloudsYaml()) =>
    ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: CP_NS }, stringData: { 'clouds.yaml': cloudsYaml } }) as KubeObject;

  /**
   * The ControlPlane: its namespace assignment for the orders' namespace on the orders' cluster (none with `assigned:
   * false`), plus `assignments` (e.g. the same namespace on the management cluster), and a `publicEndpoint` if given.
   */
  const controlPlane = (
    spec: { assigned?: boolean; authUrl?: string; caBundleSecretRef?: { name: string; key?: string }; publicEndpoint?: string; assignments?: readonly { namespace: string; targetClusterRef?: { name: string } }[] } = {},
  ) =>
    ({
      apiVersion: 'c5c3.io/v1alpha1',
      kind: 'ControlPlane',
      metadata: { name: CP, namespace: CP_NS },
      spec: {
        services: {
          keystone: {
            external: { authURL: spec.authUrl ?? env.authUrl, ...(spec.caBundleSecretRef ? { caBundleSecretRef: spec.caBundleSecretRef } : {}) },
            ...(spec.publicEndpoint ? { publicEndpoint: spec.publicEndpoint } : {}),
          },
        },
        adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } },
        namespaceAssignments: [
          ...(spec.assigned === false ? [] : [{ namespace: NS, ...(options.orderCluster ? { targetClusterRef: { name: options.orderCluster.name } } : {}), allowedRoles: ['member'] }]),
          ...(spec.assignments ?? []).map((a) => ({ ...a, allowedRoles: ['member'] })),
        ],
      },
    }) as KubeObject;

  /** The KeystoneProject `proj`, the KeystoneUser `svc` and the KeystoneRoleAssignment `member` of the orders. */
  const identityOrders = () =>
    [
      { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneProject', metadata: { name: 'proj', namespace: NS }, spec: { ...ref, projectName: options.projectName } },
      { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', metadata: { name: 'svc', namespace: NS }, spec: { ...ref, userName: options.userName } },
      { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneRoleAssignment', metadata: { name: 'member', namespace: NS }, spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, role: 'member' } },
    ] as KubeObject[];

  const credentialOrder = (name: string, rotation: Record<string, string>, credentialGeneration?: number) =>
    ({
      apiVersion: 'c5c3.io/v1alpha1',
      kind: 'KeystoneApplicationCredential',
      metadata: { name, namespace: NS },
      spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, rotation, ...(credentialGeneration ? { credentialGeneration } : {}) },
    }) as KubeObject;

  /** Every Event in `namespaces`, as JSON text per namespace (for the scan). */
  async function eventTexts(namespaces: readonly string[]): Promise<{ source: string; text: string }[]> {
    const out: { source: string; text: string }[] = [];
    for (const ns of namespaces) {
      out.push({ source: `events.k8s.io in ${ns}`, text: await kubectlOk(['get', 'events.events.k8s.io', '-n', ns, '-o', 'json']) });
      out.push({ source: `core events in ${ns}`, text: await kubectlOk(['get', 'events', '-n', ns, '-o', 'json']) });
    }
    return out;
  }

  return {
    env,
    ref,
    secretsSeen,
    statusesRead,
    order,
    controlPlaneNow,
    condition,
    merge,
    delivered,
    authenticates,
    prefixOf,
    backup,
    userCredentials,
    parkedSecrets,
    probe,
    adminCloudsYaml,
    adminSecret,
    controlPlane,
    identityOrders,
    credentialOrder,
    eventTexts,
  };
}
