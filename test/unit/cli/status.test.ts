/**
 * `keystone-appcred status` over the fake API server: the rows (readiness and reason per kind, generations, next
 * rotation, grace period), the kubectl-style table, `-o json|yaml`, the namespace scope, and the errors a user reads for a
 * missing CRD, an RBAC denial, refused credentials and an unreachable API server.
 */
import { parse } from 'yaml';
import { program } from '../../../src/cli/main';
import {
  alignColumns,
  explain,
  formatTable,
  humanDuration,
  openCluster,
  orderStatus,
  statusCommand,
  timeCell,
  type AnyOrder,
  type OrderStatus,
} from '../../../src/cli/status';
import { KubeApiError } from '../../../src/kube/errors';
import { Kinds } from '../../../src/kube/kinds';
import type { HttpRequest, Transport } from '../../../src/kube/transport';
import { condition, credential, fakeConnector, FakeApiServer, PATHS, runCommand, type Ran } from './cli-fakes';

const NOW = new Date('2026-06-02T10:00:00Z');

function seedCluster(server: FakeApiServer): void {
  server.seed(PATHS.ControlPlane, {
    apiVersion: 'c5c3.io/v1alpha1', kind: 'ControlPlane', metadata: { name: 'cp', namespace: 'openstack' }, spec: {},
    status: { conditions: [condition('AdminCredentialReady', 'True', 'AdminCredentialValid'), condition('Ready', 'True', 'AllReady')] },
  });
  server.seed(PATHS.KeystoneProject, {
    apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneProject', metadata: { name: 'svc-project', namespace: 'tenant-a' }, spec: { controlPlaneRef: { name: 'cp' } },
    status: { conditions: [condition('ProjectReady', 'True', 'ProjectCreated')] },
  });
  server.seed(PATHS.KeystoneUser, {
    apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', metadata: { name: 'svc', namespace: 'tenant-a' }, spec: { controlPlaneRef: { name: 'cp' }, passwordGeneration: 2 },
    status: { passwordGeneration: 1, conditions: [condition('UserReady', 'False', 'NamespaceNotAssigned'), condition('Ready', 'False', 'NamespaceNotAssigned')] },
  });
  server.seed(PATHS.KeystoneRoleAssignment, {
    apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneRoleAssignment', metadata: { name: 'svc-member', namespace: 'tenant-a' },
    spec: { controlPlaneRef: { name: 'cp' }, userRef: { name: 'svc' }, projectRef: { name: 'svc-project' }, role: 'member' },
  });
  server.seed(PATHS.KeystoneApplicationCredential, credential('tenant-a', 'app', {}, {
    conditions: [condition('CredentialReady', 'True', 'CredentialMinted'), condition('DeliveryReady', 'True', 'Delivered'), condition('Ready', 'True', 'AllReady')],
    credentialGeneration: 3, nextRotation: '2026-07-02T10:00:00Z', previousCredentialGeneration: 2, previousCredentialDeleteAt: '2026-06-03T09:30:00Z', secretName: 'app-credentials',
  }));
  server.seed(PATHS.KeystoneApplicationCredential, credential('tenant-a', 'pending', { credentialGeneration: 2 }, {
    conditions: [condition('CredentialReady', 'False', 'WaitingForUser', 'KeystoneUser svc is not ready'), condition('DeliveryReady', 'False', 'WaitingForCredential'), condition('Ready', 'False', 'NotAllReady')],
  }));
  server.seed(PATHS.KeystoneApplicationCredential, credential('tenant-a', 'manual', { interval: '0s' }, {
    conditions: [condition('Ready', 'True', 'AllReady')], credentialGeneration: 1, secretName: 'manual-credentials',
  }));
  server.seed(PATHS.KeystoneApplicationCredential, credential('tenant-b', 'other', {}, {
    conditions: [condition('Ready', 'True', 'AllReady')], credentialGeneration: 1, nextRotation: '2026-06-02T09:55:00Z',
  }));
}

async function status(server: Transport, ...args: string[]): Promise<Ran> {
  const sink = { out: '', err: '' };
  const command = statusCommand({ write: (t) => (sink.out += t), note: (t) => (sink.err += t), connect: fakeConnector(server), now: () => NOW });
  return runCommand(command, args, sink);
}

/** Answers every list of a kind's collection with `code`. */
function refuseKind(server: FakeApiServer, plural: string, code: number, reason: string, times = 1): void {
  for (let i = 0; i < times; i++) server.failNext((r: HttpRequest) => r.method === 'GET' && r.path.endsWith(`/${plural}`), code, reason);
}

describe('status rows', () => {
  const row = (object: object): OrderStatus => orderStatus(object as AnyOrder);

  it('carries the policy in force (issue 48): status.policy with its sources when fleet defaults apply, and the window open now or next', () => {
    const window = { schedule: '0 2 * * *', timeZone: 'UTC', duration: '2h' };
    const policy = {
      rotation: { interval: '168h', gracePeriod: '24h', window, jitterPercent: 10 },
      sources: { 'rotation.interval': 'ControlPlane', 'rotation.gracePeriod': 'Default', 'rotation.window': 'NamespaceAssignment', 'rotation.jitterPercent': 'ControlPlane', roles: 'Default', accessRules: 'Default' },
    };
    const fleet = orderStatus(credential('a', 'c', {}, { policy }) as AnyOrder, NOW);
    expect(fleet).toMatchObject({ rotationInterval: '168h', policy, window: { open: false, opens: '2026-06-03T02:00:00Z', closes: '2026-06-03T04:00:00Z', refused: false } });
    expect(orderStatus(credential('a', 'c', {}, { policy }) as AnyOrder, new Date('2026-06-03T03:00:00Z')).window).toEqual({ open: true, opens: '2026-06-03T02:00:00Z', closes: '2026-06-03T04:00:00Z', refused: false });
    const refused = orderStatus(credential('a', 'c', {}, { policy, conditions: [condition('CredentialReady', 'False', 'RotationWindowRefused')] }) as AnyOrder, NOW);
    expect(refused.window?.refused).toBe(true);
    const table = formatTable([fleet, row(credential('a', 'plain'))], { allNamespaces: false, now: NOW });
    expect(table.split('\n')[0]).toMatch(/GRACE PERIOD\s+WINDOW\s+POLICY$/);
    expect(table).toContain('2026-06-03T02:00:00Z (in 16h)   168h/24h jitter 10% (defaults: ControlPlane, NamespaceAssignment)');
    expect(table.split('\n')[2]).toMatch(/none\s+720h\/24h$/);
    // Without a window or a fleet default anywhere, the table reads as before.
    expect(formatTable([row(credential('a', 'plain'))], { allNamespaces: false, now: NOW }).split('\n')[0]).toMatch(/GRACE PERIOD$/);
  });

  it('reads each kind\'s readiness condition: Ready, ProjectReady, AssignmentReady', () => {
    expect(row({ kind: 'KeystoneProject', metadata: { name: 'p', namespace: 'a' }, spec: {}, status: { conditions: [condition('Ready', 'False', 'X'), condition('ProjectReady', 'True', 'ProjectCreated')] } }))
      .toMatchObject({ ready: 'True', reason: 'ProjectCreated', generation: null, orderedGeneration: null, nextRotation: null, gracePeriod: null });
    expect(row({ kind: 'KeystoneRoleAssignment', metadata: { name: 'r', namespace: 'a' }, spec: {}, status: { conditions: [condition('AssignmentReady', 'False', 'RoleNotAllowed', 'member is not allowed')] } }))
      .toMatchObject({ ready: 'False', reason: 'RoleNotAllowed', message: 'member is not allowed' });
    expect(row({ kind: 'ControlPlane', metadata: { name: 'cp', namespace: 'o' }, spec: {} })).toMatchObject({ ready: null, reason: null, message: null });
  });

  it('gives a credential\'s NotAllReady the reason of its first sub-condition that is not True', () => {
    const conditions = [condition('CredentialReady', 'True', 'CredentialMinted'), condition('DeliveryReady', 'False', 'BackupNotSynced', 'OpenBao is sealed'), condition('Ready', 'False', 'NotAllReady')];
    expect(row(credential('a', 'c', {}, { conditions }))).toMatchObject({ ready: 'False', reason: 'BackupNotSynced', message: 'OpenBao is sealed' });
    // An admission reason on Ready itself stays.
    expect(row(credential('a', 'c', {}, { conditions: [condition('Ready', 'False', 'NamespaceNotAssigned')] }))).toMatchObject({ reason: 'NamespaceNotAssigned' });
  });

  it('carries the generations, the schedule and the grace period of a credential, and the password generations of a user', () => {
    expect(row(credential('a', 'c', { credentialGeneration: 4, interval: '0s' }, { credentialGeneration: 3, previousCredentialGeneration: 2, previousCredentialDeleteAt: '2026-06-03T00:00:00Z' }))).toEqual({
      kind: 'KeystoneApplicationCredential', namespace: 'a', name: 'c', ready: null, reason: null, message: null,
      generation: 3, orderedGeneration: 4, rotationInterval: '0s', nextRotation: null, gracePeriod: { previousGeneration: 2, until: '2026-06-03T00:00:00Z' },
      policy: { rotation: { interval: '0s', gracePeriod: '24h' }, sources: { 'rotation.interval': 'Order', 'rotation.gracePeriod': 'Default', 'rotation.window': 'Default', 'rotation.jitterPercent': 'Default', roles: 'Default', accessRules: 'Default' } },
      window: null,
    });
    expect(row({ kind: 'KeystoneUser', metadata: { name: 'u', namespace: 'a' }, spec: {}, status: { passwordGeneration: 1 } })).toMatchObject({ generation: 1, orderedGeneration: 1 });
  });
});

describe('status formatting', () => {
  it.each([
    [0, '0s'], [119_000, '119s'], [125_000, '2m5s'], [600_000, '10m'], [179 * 60_000, '179m'], [5.5 * 3_600_000, '5h30m'], [36 * 3_600_000, '36h'],
    [76 * 3_600_000, '3d4h'], [29 * 86_400_000, '29d'], [(2 * 365 + 10) * 86_400_000, '2y10d'], [9 * 365 * 86_400_000, '9y'], [-300_000, '5m'],
  ])('humanDuration(%d) is %s, as kubectl prints ages', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });

  it('shows a time with how far it is ahead or behind', () => {
    expect(timeCell('2026-06-02T11:00:00Z', NOW)).toBe('2026-06-02T11:00:00Z (in 60m)');
    expect(timeCell('2026-06-02T09:55:00Z', NOW)).toBe('2026-06-02T09:55:00Z (5m ago)');
    expect(timeCell('soon', NOW)).toBe('soon');
  });

  it('aligns columns three spaces apart without trailing blanks', () => {
    expect(alignColumns([['A', 'BB', 'C'], ['long', '', '']])).toBe('A      BB   C\nlong\n');
  });

  it('adds a NAMESPACE column first for every namespace', () => {
    const table = formatTable([orderStatus(credential('tenant-b', 'x') as AnyOrder)], { allNamespaces: true, now: NOW });
    expect(table.split('\n')[0]).toMatch(/^NAMESPACE {3}KIND {3,}NAME/);
    expect(table.split('\n')[1]).toMatch(/^tenant-b {4}KeystoneApplicationCredential {3}x /);
  });
});

describe('keystone-appcred status', () => {
  it('is a subcommand of the CLI, with -n, -A, -o, --cluster, --operator-namespace, --kubeconfig and --context', () => {
    const command = program().commands.find((c) => c.name() === 'status');
    expect(command?.options.map((o) => o.flags)).toEqual([
      '-n, --namespace <namespace>', '-A, --all-namespaces', '-o, --output <format>', '--cluster <name>', '--operator-namespace <namespace>', '--kubeconfig <file>', '--context <name>',
    ]);
  });

  it('prints the table of the context\'s namespace, referenced kinds first', async () => {
    const server = new FakeApiServer();
    seedCluster(server);
    const result = await status(server);
    expect(result.error).toBeUndefined();
    expect(result.out).toBe(
      [
        'KIND                            NAME          READY    REASON                 GENERATION           NEXT ROTATION                   GRACE PERIOD',
        'KeystoneProject                 svc-project   True     ProjectCreated         -                    -                               -',
        'KeystoneUser                    svc           False    NamespaceNotAssigned   1 (ordered 2)        -                               -',
        'KeystoneRoleAssignment          svc-member    <none>   <none>                 -                    -                               -',
        'KeystoneApplicationCredential   app           True     AllReady               3                    2026-07-02T10:00:00Z (in 30d)   until 2026-06-03T09:30:00Z (in 23h)',
        'KeystoneApplicationCredential   manual        True     AllReady               1                    off                             none',
        'KeystoneApplicationCredential   pending       False    WaitingForUser         <none> (ordered 2)   <none>                          none',
        '',
      ].join('\n'),
    );
    // The five kinds in the namespace, and the kubeconfig Secrets that register target clusters (none here).
    expect(server.requests.map((r) => r.path).sort()).toEqual(
      [...Object.values(PATHS).map((p) => p.replace('/apis/c5c3.io/v1alpha1/', '/apis/c5c3.io/v1alpha1/namespaces/tenant-a/')), '/api/v1/namespaces/keystone-appcred-system/secrets'].sort(),
    );
  });

  it('-n picks the namespace; -A lists every namespace with a NAMESPACE column', async () => {
    const server = new FakeApiServer();
    seedCluster(server);
    const other = await status(server, '-n', 'tenant-b');
    expect(other.out.split('\n').slice(1, -1)).toEqual([expect.stringMatching(/^KeystoneApplicationCredential {3}other {3}True {4}AllReady {3}1 {12}2026-06-02T09:55:00Z \(5m ago\) {3}none$/)]);
    const all = await status(server, '-A');
    expect(all.out.split('\n').slice(1, -1).map((l) => l.split(/ +/).slice(0, 3).join(' '))).toEqual([
      'openstack ControlPlane cp',
      'tenant-a KeystoneProject svc-project',
      'tenant-a KeystoneUser svc',
      'tenant-a KeystoneRoleAssignment svc-member',
      'tenant-a KeystoneApplicationCredential app',
      'tenant-a KeystoneApplicationCredential manual',
      'tenant-a KeystoneApplicationCredential pending',
      'tenant-b KeystoneApplicationCredential other',
    ]);
    expect(server.requests.filter((r) => r.path.includes('/namespaces/') && !r.path.includes('/secrets')).length).toBe(5);
  });

  it('-n and -A together are refused', async () => {
    const result = await status(new FakeApiServer(), '-n', 'a', '-A');
    expect(result.error).toBe("error: option '-n, --namespace <namespace>' cannot be used with option '-A, --all-namespaces'");
  });

  it('-o json prints every row with nulls for what is absent; -o yaml the same document', async () => {
    const server = new FakeApiServer();
    seedCluster(server);
    const json = JSON.parse((await status(server, '-o', 'json')).out) as { items: OrderStatus[] };
    expect(json.items.map((i) => `${i.kind}/${i.name}`)).toEqual([
      'KeystoneProject/svc-project', 'KeystoneUser/svc', 'KeystoneRoleAssignment/svc-member',
      'KeystoneApplicationCredential/app', 'KeystoneApplicationCredential/manual', 'KeystoneApplicationCredential/pending',
    ]);
    expect(json.items[3]).toEqual({
      kind: 'KeystoneApplicationCredential', namespace: 'tenant-a', name: 'app', ready: 'True', reason: 'AllReady', message: 'Ready AllReady',
      generation: 3, orderedGeneration: 1, rotationInterval: '720h', nextRotation: '2026-07-02T10:00:00Z',
      gracePeriod: { previousGeneration: 2, until: '2026-06-03T09:30:00Z' },
      policy: { rotation: { interval: '720h', gracePeriod: '24h' }, sources: { 'rotation.interval': 'Default', 'rotation.gracePeriod': 'Default', 'rotation.window': 'Default', 'rotation.jitterPercent': 'Default', roles: 'Default', accessRules: 'Default' } },
      window: null,
    });
    expect(json.items[2]).toMatchObject({ ready: null, reason: null, generation: null, gracePeriod: null });
    expect(parse((await status(server, '-o', 'yaml')).out)).toEqual(json);
  });

  it('-o with anything else is refused', async () => {
    const result = await status(new FakeApiServer(), '-o', 'wide');
    expect(result.error).toBe("error: option '-o, --output <format>' argument 'wide' is invalid. use json or yaml (or leave -o out for a table)");
  });

  it('says when there is nothing, on stderr; -o json prints an empty list', async () => {
    expect(await status(new FakeApiServer(), '-n', 'empty')).toEqual({ out: '', err: 'No orders found in namespace empty.\n' });
    expect(JSON.parse((await status(new FakeApiServer(), '-o', 'json')).out)).toEqual({ items: [] });
  });

  it('a missing CRD fails naming the kind and the command that installs it, after printing what it could read', async () => {
    const server = new FakeApiServer();
    seedCluster(server);
    refuseKind(server, 'keystoneapplicationcredentials', 404, 'NotFound');
    const result = await status(server);
    expect(result.out.split('\n')).toHaveLength(5);
    expect(result.error).toBe(
      'the KeystoneApplicationCredential CRD is not installed on https://fake.invalid: run `keystone-appcred manifests --image IMAGE | kubectl apply --server-side -f -`',
    );
  });

  it('no CRD at all: one message naming the five, nothing printed', async () => {
    const server = new FakeApiServer();
    for (const plural of ['controlplanes', 'keystoneprojects', 'keystoneusers', 'keystoneroleassignments', 'keystoneapplicationcredentials']) refuseKind(server, plural, 404, 'NotFound');
    const result = await status(server);
    expect(result.out).toBe('');
    expect(result.error).toMatch(/^the ControlPlane, KeystoneProject, KeystoneUser, KeystoneRoleAssignment and KeystoneApplicationCredential CRDs are not installed on https:\/\/fake.invalid: run `keystone-appcred manifests/);
  });

  it('an RBAC denial names the verb, the resource and the namespace', async () => {
    const server = new FakeApiServer();
    seedCluster(server);
    refuseKind(server, 'controlplanes', 403, 'Forbidden');
    const result = await status(server, '-A');
    expect(result.out).toContain('KeystoneApplicationCredential');
    expect(result.out).not.toContain('ControlPlane ');
    expect(result.error).toBe(
      'not allowed to list controlplanes.c5c3.io in every namespace (injected): ask a cluster admin for a Role granting "list" on controlplanes.c5c3.io, or pass -n with a namespace you may read',
    );
  });

  it('several refusals make one message naming every refused resource; a missing CRD comes first', async () => {
    const server = new FakeApiServer();
    seedCluster(server);
    refuseKind(server, 'keystoneusers', 403, 'Forbidden');
    refuseKind(server, 'keystoneprojects', 403, 'Forbidden');
    refuseKind(server, 'controlplanes', 404, 'NotFound');
    const result = await status(server, '-n', 'tenant-a');
    expect(result.out.split('\n').slice(1, -1).map((l) => l.split(' ')[0])).toEqual(['KeystoneRoleAssignment', 'KeystoneApplicationCredential', 'KeystoneApplicationCredential', 'KeystoneApplicationCredential']);
    expect(result.error).toBe(
      'the ControlPlane CRD is not installed on https://fake.invalid: run `keystone-appcred manifests --image IMAGE | kubectl apply --server-side -f -`; ' +
        'not allowed to list keystoneprojects.c5c3.io, keystoneusers.c5c3.io in namespace tenant-a (injected; likewise for the others): ' +
        'ask a cluster admin for a Role granting "list" on keystoneprojects.c5c3.io, keystoneusers.c5c3.io',
    );
  });

  it('an unreachable API server fails at once, naming the server and the context', async () => {
    const down: Transport = {
      server: 'https://10.0.0.1:6443',
      request: () => Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6443'), { code: 'ECONNREFUSED' }) })),
      watch: () => Promise.reject(new Error('no watch')),
    };
    const result = await status(down);
    expect(result.out).toBe('');
    expect(result.error).toBe(
      'cannot reach the API server https://10.0.0.1:6443 (context test of --kubeconfig test.kubeconfig): connect ECONNREFUSED 10.0.0.1:6443; check that the cluster is up and that --kubeconfig, --context or KUBECONFIG select it',
    );
  });

  it('passes --kubeconfig and --context to the connection', async () => {
    const connector = fakeConnector(new FakeApiServer());
    const sink = { out: '', err: '' };
    await runCommand(statusCommand({ write: (t) => (sink.out += t), note: (t) => (sink.err += t), connect: connector }), ['--kubeconfig', '/k', '--context', 'prod'], sink);
    expect(connector.calls).toEqual([{ kubeconfig: '/k', context: 'prod' }]);
  });

  it('a kubeconfig that cannot be read says which and what to do', () => {
    const connector = () => {
      throw Object.assign(new Error("ENOENT: no such file or directory, open '/nope'"), { code: 'ENOENT' });
    };
    expect(() => openCluster({ kubeconfig: '/nope' }, connector)).toThrow("cannot read the kubeconfig /nope: ENOENT: no such file or directory, open '/nope'; pass --kubeconfig or set KUBECONFIG");
  });
});

describe('explain', () => {
  const cluster = { server: 'https://k:6443', where: 'context prod of KUBECONFIG' };
  const error = (status: number, reason: string, message: string) => KubeApiError.from(status, { reason, message }, 'GET /apis/c5c3.io/v1alpha1/namespaces/a/keystoneapplicationcredentials/x');

  it('a refused login says to renew the credentials', () => {
    expect(explain(error(401, 'Unauthorized', 'Unauthorized'), { verb: 'get', kind: Kinds.KeystoneApplicationCredential, namespace: 'a', name: 'x' }, cluster).message).toBe(
      'the API server https://k:6443 refused the credentials of context prod of KUBECONFIG (401 Unauthorized): renew them or pick another --context',
    );
  });

  it('an RBAC denial of one object names it, the verb and the API server\'s words', () => {
    const why = 'keystoneapplicationcredentials.c5c3.io "x" is forbidden: User "dev" cannot patch resource "keystoneapplicationcredentials" in API group "c5c3.io" in the namespace "a"';
    expect(explain(error(403, 'Forbidden', why), { verb: 'patch', kind: Kinds.KeystoneApplicationCredential, namespace: 'a', name: 'x' }, cluster).message).toBe(
      `not allowed to patch keystoneapplicationcredentials.c5c3.io x in namespace a (${why}): ask a cluster admin for a Role granting "patch" on keystoneapplicationcredentials.c5c3.io`,
    );
  });

  it('any other answer names the object and the answer', () => {
    expect(explain(error(500, 'InternalError', 'etcd timeout'), { verb: 'get', kind: Kinds.KeystoneApplicationCredential, namespace: 'a', name: 'x' }, cluster).message).toBe(
      'get KeystoneApplicationCredential a/x: the API server answered 500 InternalError: etcd timeout',
    );
  });
});

describe('keystone-appcred status with registered target clusters', () => {
  const SECRETS = '/api/v1/secrets';
  /** A registration Secret in the operator's namespace: the kubeconfig's text names the fake server it stands for. */
  const register = (server: FakeApiServer, name: string, kubeconfig: string | undefined, namespace = 'keystone-appcred-system') =>
    server.seed(SECRETS, {
      apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
      data: kubeconfig === undefined ? {} : { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
    });

  /** Runs status with a connector that hands out `targets[text]` for a kubeconfig's text, the management server otherwise. */
  async function fleetStatus(management: FakeApiServer, targets: Record<string, Transport>, ...args: string[]): Promise<Ran & { connected: unknown[] }> {
    const connected: unknown[] = [];
    const connect = (options: { kubeconfigText?: { text: string; source: string } }) => {
      connected.push(options.kubeconfigText?.source ?? 'management');
      if (options.kubeconfigText === undefined) return { transport: management, source: '--kubeconfig test.kubeconfig', server: management.server, context: 'test', namespace: 'tenant-a' };
      const transport = targets[options.kubeconfigText.text];
      if (!transport) throw new Error('invalid kubeconfig: no current context');
      return { transport, source: options.kubeconfigText.source, server: transport.server, context: 'edge', namespace: 'default' };
    };
    const sink = { out: '', err: '' };
    const ran = await runCommand(statusCommand({ write: (t) => (sink.out += t), note: (t) => (sink.err += t), connect, now: () => NOW }), args, sink);
    return { ...ran, connected };
  }

  const edge = () => {
    const server = new FakeApiServer();
    server.seed(PATHS.KeystoneApplicationCredential, credential('tenant-a', 'edge-app', {}, { conditions: [condition('CredentialReady', 'False', 'NamespaceNotAssigned'), condition('DeliveryReady', 'False', 'NamespaceNotAssigned'), condition('Ready', 'False', 'NamespaceNotAssigned')], credentialGeneration: 1 }));
    server.seed(PATHS.KeystoneUser, { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', metadata: { name: 'svc', namespace: 'tenant-a' }, spec: { controlPlaneRef: { name: 'cp' } }, status: { passwordGeneration: 1, conditions: [condition('Ready', 'True', 'AllReady')] } });
    return server;
  };

  it('lists every registered cluster\'s orders after the management cluster\'s, with a CLUSTER column; no ControlPlane is asked of a target cluster', async () => {
    const management = new FakeApiServer();
    seedCluster(management);
    const target = edge();
    register(management, 'edge-1', 'kubeconfig of edge-1');
    const result = await fleetStatus(management, { 'kubeconfig of edge-1': target });
    expect(result.error).toBeUndefined();
    const lines = result.out.split('\n').slice(0, -1);
    expect(lines[0]).toMatch(/^CLUSTER {8}KIND {3,}NAME/);
    expect(lines.slice(1).map((l) => l.split(/ +/).slice(0, 3).join(' '))).toEqual([
      '(management) KeystoneProject svc-project',
      '(management) KeystoneUser svc',
      '(management) KeystoneRoleAssignment svc-member',
      '(management) KeystoneApplicationCredential app',
      '(management) KeystoneApplicationCredential manual',
      '(management) KeystoneApplicationCredential pending',
      'edge-1 KeystoneUser svc',
      'edge-1 KeystoneApplicationCredential edge-app',
    ]);
    expect(result.connected).toEqual(['management', 'the kubeconfig Secret keystone-appcred-system/edge-1']);
    expect(target.requests.map((r) => r.path).filter((p) => p.includes('controlplanes'))).toEqual([]);
    expect(target.requests.every((r) => r.path.includes('/namespaces/tenant-a/'))).toBe(true);
  });

  it('-A adds the NAMESPACE column after CLUSTER; -o json carries `cluster` on a target cluster\'s rows only', async () => {
    const management = new FakeApiServer();
    seedCluster(management);
    register(management, 'edge-1', 'k');
    const all = await fleetStatus(management, { k: edge() }, '-A');
    expect(all.out.split('\n')[0]).toMatch(/^CLUSTER {8}NAMESPACE {3}KIND/);
    expect(all.out.split('\n')[1]).toMatch(/^\(management\) {3}openstack {3}ControlPlane/);
    const json = JSON.parse((await fleetStatus(management, { k: edge() }, '-o', 'json')).out) as { items: OrderStatus[] };
    expect(json.items.filter((i) => i.cluster === 'edge-1').map((i) => i.name)).toEqual(['svc', 'edge-app']);
    expect(json.items.filter((i) => i.cluster === undefined)).toHaveLength(6);
    expect(Object.keys(json.items[0])).not.toContain('cluster');
  });

  it('--cluster NAME shows that cluster only, without asking the management cluster for its orders; an unknown name fails', async () => {
    const management = new FakeApiServer();
    seedCluster(management);
    register(management, 'edge-1', 'k1');
    register(management, 'edge-2', 'k2');
    const other = edge();
    const result = await fleetStatus(management, { k1: edge(), k2: other }, '--cluster', 'edge-1');
    expect(result.out.split('\n').slice(1, -1).map((l) => l.split(/ +/).slice(0, 3).join(' '))).toEqual(['edge-1 KeystoneUser svc', 'edge-1 KeystoneApplicationCredential edge-app']);
    expect(management.requests.map((r) => r.path)).toEqual(['/api/v1/namespaces/keystone-appcred-system/secrets']);
    expect(other.requests).toEqual([]);
    const unknown = await fleetStatus(management, {}, '--cluster', 'edge-9');
    expect(unknown.error).toBe('cluster edge-9 is not registered: no Secret edge-9 labelled sigs.k8s.io/multicluster-runtime-kubeconfig=true in namespace keystone-appcred-system');
  });

  it('--operator-namespace reads the registrations where the operator runs', async () => {
    const management = new FakeApiServer();
    register(management, 'edge-1', 'k', 'platform');
    const result = await fleetStatus(management, { k: edge() }, '--operator-namespace', 'platform');
    expect(result.out).toMatch(/\nedge-1 +KeystoneUser +svc /);
  });

  it('a target cluster that cannot be reached, an unusable kubeconfig and a missing CRD there are each named after the rows of the others', async () => {
    const management = new FakeApiServer();
    seedCluster(management);
    const down: Transport = {
      server: 'https://10.9.9.9:6443',
      request: () => Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 10.9.9.9:6443'), { code: 'ECONNREFUSED' }) })),
      watch: () => Promise.reject(new Error('no watch')),
    };
    const noCrd = edge();
    for (const plural of ['keystoneprojects', 'keystoneusers', 'keystoneroleassignments', 'keystoneapplicationcredentials']) refuseKind(noCrd, plural, 404, 'NotFound');
    register(management, 'edge-down', 'down');
    register(management, 'edge-garbage', 'garbage');
    register(management, 'edge-empty', undefined);
    register(management, 'edge-no-crd', 'nocrd');
    const result = await fleetStatus(management, { down, nocrd: noCrd });
    expect(result.out).toContain('(management)   KeystoneApplicationCredential   app');
    expect(result.error).toBe(
      [
        'cluster edge-down: cannot reach the API server https://10.9.9.9:6443 (context edge of the kubeconfig Secret keystone-appcred-system/edge-down): connect ECONNREFUSED 10.9.9.9:6443; check that the cluster is up and that --kubeconfig, --context or KUBECONFIG select it',
        'cluster edge-empty: its kubeconfig Secret keystone-appcred-system/edge-empty is not usable: the Secret has no kubeconfig key',
        'cluster edge-garbage: its kubeconfig Secret keystone-appcred-system/edge-garbage is not usable: invalid kubeconfig: no current context',
        'cluster edge-no-crd: the KeystoneProject, KeystoneUser, KeystoneRoleAssignment and KeystoneApplicationCredential CRDs are not installed on https://fake.invalid: run `keystone-appcred manifests --target-cluster | kubectl apply --server-side -f -` against it',
      ].join('; '),
    );
  });

  it('without permission to list the registrations, the management cluster\'s orders and a note', async () => {
    const management = new FakeApiServer();
    seedCluster(management);
    management.failNext((r) => r.path.endsWith('/secrets'), 403, 'Forbidden');
    const result = await fleetStatus(management, {});
    expect(result.error).toBeUndefined();
    expect(result.out.split('\n')[0]).toMatch(/^KIND /);
    expect(result.err).toBe('target clusters not shown: not allowed to list secrets in namespace keystone-appcred-system, where their kubeconfig Secrets register them (injected); pass --operator-namespace if the operator runs elsewhere\n');
  });
});

