/**
 * `keystone-appcred rotate` over the fake API server: the generation it orders, the resourceVersion-guarded merge patch
 * (a lost race with a status write is retried, a concurrent rotate is not silently doubled), `--wait` until the status
 * and the delivered Secret carry the new generation, the timeout, and the errors for a missing order or CRD and an RBAC
 * denial.
 */
import { program } from '../../../src/cli/main';
import { nextGeneration, raiseGeneration, rotateCommand, waitForDelivery } from '../../../src/cli/rotate';
import { openCluster } from '../../../src/cli/status';
import type { KeystoneApplicationCredential } from '../../../src/api';
import type { HttpRequest, HttpResponse, Transport } from '../../../src/kube/transport';
import { condition, credential, fakeConnector, FakeApiServer, PATHS, runCommand, type Ran } from './cli-fakes';

const KAC = PATHS.KeystoneApplicationCredential;
const DELIVERED = { conditions: [condition('Ready', 'True', 'AllReady')], secretName: 'app-credentials' };

/** A fake clock the waits advance; `onSleep` runs at each poll (the test's "operator"). */
function clock(onSleep: (elapsedMs: number) => void = () => undefined) {
  let now = 0;
  return {
    clock: () => now,
    sleep: async (ms: number) => {
      now += ms;
      onSleep(now);
    },
    elapsed: () => now,
  };
}

async function rotate(server: Transport, args: string[], waits = clock()): Promise<Ran> {
  const sink = { out: '', err: '' };
  const command = rotateCommand({ write: (t) => (sink.out += t), connect: fakeConnector(server), sleep: waits.sleep, clock: waits.clock, pollMs: 1000 });
  return runCommand(command, args, sink);
}

const spec = (server: FakeApiServer, name = 'app', namespace = 'tenant-a') => (server.object(KAC, namespace, name) as unknown as KeystoneApplicationCredential).spec;

describe('nextGeneration', () => {
  it('is one above the higher of the ordered and the held generation', () => {
    const order = (ordered: number, held?: number) => credential('a', 'c', { credentialGeneration: ordered }, held === undefined ? undefined : { credentialGeneration: held }) as KeystoneApplicationCredential;
    expect(nextGeneration(order(1))).toBe(2);
    expect(nextGeneration(order(1, 1))).toBe(2);
    // The schedule rotated to 5 without touching the spec: 2 would rotate nothing.
    expect(nextGeneration(order(1, 5))).toBe(6);
    expect(nextGeneration(order(7, 5))).toBe(8);
  });
});

describe('keystone-appcred rotate', () => {
  it('is a subcommand of the CLI with NAME, -n, --revoke-previous, --wait, --timeout, --kubeconfig and --context', () => {
    const command = program().commands.find((c) => c.name() === 'rotate');
    expect(command?.registeredArguments.map((a) => a.name())).toEqual(['name']);
    expect(command?.options.map((o) => o.flags)).toEqual(['-n, --namespace <namespace>', '--revoke-previous', '--wait', '--timeout <duration>', '--kubeconfig <file>', '--context <name>']);
  });

  it('--revoke-previous writes a new value into the c5c3.io/revoke-previous annotation, guarded by the resourceVersion, and leaves the spec alone', async () => {
    const server = new FakeApiServer();
    const stored = server.seed(KAC, credential('tenant-a', 'app', { credentialGeneration: 1 }, { credentialGeneration: 3, ...DELIVERED }));
    const result = await rotate(server, ['app', '--revoke-previous']);
    expect(result.out).toMatch(/^KeystoneApplicationCredential tenant-a\/app: c5c3.io\/revoke-previous set to \d{4}-\d\d-\d\dT[\d:.]+Z: rotates at once and deletes generation 3 as soon as its successor is delivered and backed up\n$/);
    const patch = server.requests.find((r) => r.method === 'PATCH');
    expect(patch?.body).toEqual({ metadata: { resourceVersion: stored.metadata.resourceVersion, annotations: { 'c5c3.io/revoke-previous': expect.any(String) } } });
    expect(spec(server).credentialGeneration).toBe(1);
  });

  it('--revoke-previous --wait returns once the order recorded the request and holds nothing below the new generation', async () => {
    const server = new FakeApiServer();
    server.seed(KAC, credential('tenant-a', 'app', {}, { credentialGeneration: 3, ...DELIVERED }));
    const waits = clock((elapsed) => {
      const current = server.object(KAC, 'tenant-a', 'app') as unknown as KeystoneApplicationCredential;
      const request = current.metadata.annotations?.['c5c3.io/revoke-previous'] as string;
      // The operator: first the switch with the superseded credential still held, then the sweep.
      const status = elapsed < 3000 ? { credentialGeneration: 4, ...DELIVERED, lastRevokeRequest: request, revokeGeneration: 4, previousCredentialID: 'old' } : { credentialGeneration: 4, ...DELIVERED, lastRevokeRequest: request };
      server.seed(KAC, { ...current, status });
    });
    const result = await rotate(server, ['app', '--revoke-previous', '--wait'], waits);
    expect(result.error).toBeUndefined();
    expect(result.out.split('\n')[1]).toBe('KeystoneApplicationCredential tenant-a/app: generation 4 delivered in Secret app-credentials; generation 3 is deleted');
    expect(waits.elapsed()).toBe(3000);
  });

  it('raises spec.credentialGeneration with a merge patch guarded by the resourceVersion it read, and prints it', async () => {
    const server = new FakeApiServer();
    const stored = server.seed(KAC, credential('tenant-a', 'app', { credentialGeneration: 1 }, { credentialGeneration: 1, ...DELIVERED }));
    const result = await rotate(server, ['app']);
    expect(result).toEqual({ out: 'KeystoneApplicationCredential tenant-a/app: spec.credentialGeneration raised from 1 to 2\n', err: '' });
    expect(spec(server).credentialGeneration).toBe(2);
    const patch = server.requests.find((r) => r.method === 'PATCH');
    expect(patch).toMatchObject({
      path: '/apis/c5c3.io/v1alpha1/namespaces/tenant-a/keystoneapplicationcredentials/app',
      contentType: 'application/merge-patch+json',
      query: { fieldManager: 'keystone-appcred-cli' },
      body: { metadata: { resourceVersion: stored.metadata.resourceVersion }, spec: { credentialGeneration: 2 } },
    });
  });

  it('-n names the namespace (default: the context\'s)', async () => {
    const server = new FakeApiServer();
    server.seed(KAC, credential('tenant-b', 'app', {}, { credentialGeneration: 4 }));
    expect((await rotate(server, ['app', '-n', 'tenant-b'])).out).toBe('KeystoneApplicationCredential tenant-b/app: spec.credentialGeneration raised from 1 to 5\n');
    expect(spec(server, 'app', 'tenant-b').credentialGeneration).toBe(5);
  });

  it('retries when a status write won the race, with a fresh read', async () => {
    const server = new FakeApiServer();
    server.seed(KAC, credential('tenant-a', 'app', {}, { credentialGeneration: 1 }));
    server.failNext((r) => r.method === 'PATCH', 409, 'Conflict');
    const result = await rotate(server, ['app']);
    expect(result.error).toBeUndefined();
    expect(spec(server).credentialGeneration).toBe(2);
    expect(server.requests.map((r) => r.method)).toEqual(['GET', 'PATCH', 'GET', 'PATCH']);
  });

  it('two concurrent rotates: one raises, the other fails instead of raising to the same value again', async () => {
    const server = new FakeApiServer();
    server.seed(KAC, credential('tenant-a', 'app', {}, { credentialGeneration: 1 }));
    const cluster = openCluster({}, fakeConnector(server));
    const results = await Promise.allSettled([raiseGeneration(cluster, 'tenant-a', 'app'), raiseGeneration(cluster, 'tenant-a', 'app')]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect((rejected?.reason as Error).message).toBe(
      'KeystoneApplicationCredential tenant-a/app: spec.credentialGeneration was raised from 1 to 2 by someone else while this rotate ran; not raising it again (run rotate again for one more rotation)',
    );
    expect(spec(server).credentialGeneration).toBe(2);
  });

  it('gives up after repeated conflicts, saying so', async () => {
    const server = new FakeApiServer();
    server.seed(KAC, credential('tenant-a', 'app'));
    for (let i = 0; i < 6; i++) server.failNext((r) => r.method === 'PATCH', 409, 'Conflict');
    expect((await rotate(server, ['app'])).error).toBe('KeystoneApplicationCredential tenant-a/app kept changing while rotate patched it (6 conflicts); try again');
  });

  it('an order that does not exist is named, with where to look', async () => {
    const result = await rotate(new FakeApiServer(), ['nope', '-n', 'tenant-b']);
    expect(result.error).toBe('KeystoneApplicationCredential tenant-b/nope not found: check the name and -n (keystone-appcred status -n tenant-b lists the orders there)');
  });

  it('a missing CRD says which and how to install it', async () => {
    const server = new FakeApiServer();
    server.failNext((r) => r.method === 'GET' && r.path.endsWith('/keystoneapplicationcredentials') && r.query?.limit === 1, 404, 'NotFound');
    const result = await rotate(server, ['app']);
    expect(result.error).toBe(
      'the KeystoneApplicationCredential CRD is not installed on https://fake.invalid: run `keystone-appcred manifests --image IMAGE | kubectl apply --server-side -f -`',
    );
  });

  it('an order being deleted is not rotated', async () => {
    const server = new FakeApiServer();
    server.seed(KAC, { ...credential('tenant-a', 'app'), metadata: { name: 'app', namespace: 'tenant-a', deletionTimestamp: '2026-06-01T00:00:00Z', finalizers: ['x'] } });
    expect((await rotate(server, ['app'])).error).toBe('KeystoneApplicationCredential tenant-a/app is being deleted; not rotating it');
  });

  it('an RBAC denial of the patch names the verb and the resource', async () => {
    const server = new FakeApiServer();
    server.seed(KAC, credential('tenant-a', 'app'));
    server.failNext((r) => r.method === 'PATCH', 403, 'Forbidden');
    expect((await rotate(server, ['app'])).error).toBe(
      'not allowed to patch keystoneapplicationcredentials.c5c3.io app in namespace tenant-a (injected): ask a cluster admin for a Role granting "patch" on keystoneapplicationcredentials.c5c3.io',
    );
    expect(spec(server).credentialGeneration).toBe(1);
  });

  it('--timeout must be a positive Go duration', async () => {
    expect((await rotate(new FakeApiServer(), ['app', '--timeout', '5'])).error).toBe(
      'error: option \'--timeout <duration>\' argument \'5\' is invalid. --timeout ("5") is not a duration: a number has no unit (ns, us, ms, s, m, h)',
    );
    expect((await rotate(new FakeApiServer(), ['app', '--timeout', '0s'])).error).toBe("error: option '--timeout <duration>' argument '0s' is invalid. --timeout must be above zero, like 5m or 90s");
  });

  describe('--wait', () => {
    it('returns when status.credentialGeneration reaches the new generation and the delivered Secret is named', async () => {
      const server = new FakeApiServer();
      server.seed(KAC, credential('tenant-a', 'app', {}, { credentialGeneration: 1, ...DELIVERED }));
      const operator = (elapsed: number) => {
        const current = server.object(KAC, 'tenant-a', 'app') as unknown as KeystoneApplicationCredential;
        // First the status moves without the Secret (not done yet), then both.
        if (elapsed === 3000) server.seed(KAC, { ...current, status: { credentialGeneration: 2, conditions: [condition('Ready', 'False', 'NotAllReady')] } });
        if (elapsed === 5000) server.seed(KAC, { ...current, status: { ...current.status, credentialGeneration: 2, ...DELIVERED } });
      };
      const waits = clock(operator);
      const result = await rotate(server, ['app', '--wait'], waits);
      expect(result).toEqual({
        out:
          'KeystoneApplicationCredential tenant-a/app: spec.credentialGeneration raised from 1 to 2\n' +
          'KeystoneApplicationCredential tenant-a/app: generation 2 delivered in Secret app-credentials\n',
        err: '',
      });
      expect(waits.elapsed()).toBe(5000);
    });

    it('accepts a higher generation than ordered (the operator skipped a used one)', async () => {
      const server = new FakeApiServer();
      server.seed(KAC, credential('tenant-a', 'app', {}, { credentialGeneration: 1 }));
      const waits = clock(() => {
        const current = server.object(KAC, 'tenant-a', 'app') as unknown as KeystoneApplicationCredential;
        server.seed(KAC, { ...current, status: { credentialGeneration: 3, ...DELIVERED } });
      });
      expect((await rotate(server, ['app', '--wait'], waits)).out).toContain('generation 3 delivered in Secret app-credentials');
    });

    it('times out naming the order, the generation it holds and the last Ready reason; the spec stays raised', async () => {
      const server = new FakeApiServer();
      server.seed(KAC, credential('tenant-a', 'app', {}, {
        credentialGeneration: 1,
        secretName: 'app-credentials',
        conditions: [condition('CredentialReady', 'False', 'NoRoleOnProject', 'svc has no role on svc-project'), condition('Ready', 'False', 'NotAllReady')],
      }));
      const waits = clock();
      const result = await rotate(server, ['app', '--wait', '--timeout', '30s'], waits);
      expect(result.out).toBe('KeystoneApplicationCredential tenant-a/app: spec.credentialGeneration raised from 1 to 2\n');
      expect(result.error).toBe(
        'timed out after 30s waiting for KeystoneApplicationCredential tenant-a/app to deliver generation 2: it holds generation 1; Ready is False, reason NoRoleOnProject (svc has no role on svc-project); the rotation stays ordered; see keystone-appcred status and the operator\'s logs',
      );
      expect(waits.elapsed()).toBe(30_000);
      expect(spec(server).credentialGeneration).toBe(2);
    });

    it('times out on an order the operator never reported on, asking whether it runs; the default timeout is 5m', async () => {
      const server = new FakeApiServer();
      server.seed(KAC, credential('tenant-a', 'app'));
      const waits = clock();
      const result = await rotate(server, ['app', '--wait'], waits);
      expect(result.error).toBe(
        'timed out after 5m0s waiting for KeystoneApplicationCredential tenant-a/app to deliver generation 2: it holds generation none, no delivered Secret; it has no Ready condition yet (is the operator running?); the rotation stays ordered; see keystone-appcred status and the operator\'s logs',
      );
      expect(waits.elapsed()).toBe(300_000);
    });

    it('fails at once when the order is deleted while waiting', async () => {
      const server = new FakeApiServer();
      server.seed(KAC, credential('tenant-a', 'app'));
      const waits = clock(() => server.remove(KAC, 'tenant-a', 'app'));
      expect((await rotate(server, ['app', '--wait'], waits)).error).toBe('KeystoneApplicationCredential tenant-a/app was deleted while waiting for generation 2');
      expect(waits.elapsed()).toBe(1000);
    });

    it('rides out an API server that is briefly unreachable', async () => {
      const server = new FakeApiServer();
      server.seed(KAC, credential('tenant-a', 'app', {}, { credentialGeneration: 1 }));
      let down = false;
      const flaky: Transport = {
        server: server.server,
        request: (r: HttpRequest): Promise<HttpResponse> => (down ? Promise.reject(new Error('connect ECONNREFUSED')) : server.request(r)),
        watch: (...args) => server.watch(...args),
      };
      const cluster = openCluster({}, fakeConnector(flaky));
      await raiseGeneration(cluster, 'tenant-a', 'app');
      const waits = clock((elapsed) => {
        down = elapsed < 3000;
        if (elapsed === 3000) {
          const current = server.object(KAC, 'tenant-a', 'app') as unknown as KeystoneApplicationCredential;
          server.seed(KAC, { ...current, status: { credentialGeneration: 2, ...DELIVERED } });
        }
      });
      await expect(waitForDelivery(cluster, 'tenant-a', 'app', 2, { timeoutMs: 60_000, pollMs: 1000, ...waits })).resolves.toEqual({ generation: 2, secretName: 'app-credentials' });
    });

    it('a timeout while unreachable names the last failure', async () => {
      const server = new FakeApiServer();
      let down = false;
      const flaky: Transport = { server: server.server, request: (r) => (down ? Promise.reject(new Error('connect ECONNREFUSED')) : server.request(r)), watch: (...a) => server.watch(...a) };
      server.seed(KAC, credential('tenant-a', 'app'));
      const cluster = openCluster({}, fakeConnector(flaky));
      down = true;
      await expect(waitForDelivery(cluster, 'tenant-a', 'app', 2, { timeoutMs: 5000, pollMs: 1000, ...clock() })).rejects.toThrow(
        /^timed out after 5s waiting for KeystoneApplicationCredential tenant-a\/app to deliver generation 2: the last read failed: cannot reach the API server https:\/\/fake.invalid \(context test of --kubeconfig test.kubeconfig\): connect ECONNREFUSED;/,
      );
    });
  });
});
