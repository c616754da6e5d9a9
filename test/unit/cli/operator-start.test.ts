/**
 * The operator's start (src/cli/operator-start.ts): the configuration is proven with one SelfSubjectReview, and a setup
 * that cannot work ends the start with one message naming what is missing and the fix, and its exit code. Fakes stand
 * in for the connection here; test/e2e/image-operator.test.ts runs the same setups in the image against the real API
 * server.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectChecked, EXIT_CONFIGURATION, EXIT_UNREACHABLE, StartupError } from '../../../src/cli/operator-start';
import type { Connection } from '../../../src/kube/client-node';
import { KubeConfigError } from '../../../src/kube/client-node';
import type { HttpRequest, HttpResponse, Transport } from '../../../src/kube/transport';

function connection(answer: (request: HttpRequest) => Promise<HttpResponse>, source = 'in-cluster'): { connection: Connection; requests: HttpRequest[] } {
  const requests: HttpRequest[] = [];
  const transport: Transport = {
    server: 'https://10.0.0.1:443',
    request: (r) => {
      requests.push(r);
      return answer(r);
    },
    watch: () => Promise.reject(new Error('no watch')),
  };
  return { connection: { transport, source, server: transport.server, context: source === 'in-cluster' ? 'inClusterContext' : 'ctx', user: 'u' }, requests };
}

/** A token file whose `sub` names a ServiceAccount (the signature is irrelevant here). */
function tokenFile(sub: string): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const file = join(mkdtempSync(join(tmpdir(), 'kac-start-')), 'token');
  writeFileSync(file, `${part({ alg: 'RS256' })}.${part({ sub })}.c2lnbmF0dXJl`);
  return file;
}

const env = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
const noSleep = { sleep: async () => undefined };

describe('the operator start', () => {
  it('asks the API server who it is once and goes on', async () => {
    const c = connection(async () => ({ status: 201, body: { status: { userInfo: { username: 'system:serviceaccount:ns:op', groups: ['system:serviceaccounts'] } } } }));
    const started = await connectChecked({}, { connect: () => c.connection, env, ...noSleep });
    expect(started.identity).toEqual({ username: 'system:serviceaccount:ns:op', groups: ['system:serviceaccounts'] });
    expect(c.requests).toEqual([expect.objectContaining({ method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews' })]);
  });

  it('goes on without an identity where the API server does not serve SelfSubjectReview (older than 1.28) or forbids it', async () => {
    for (const status of [404, 403]) {
      const c = connection(async () => ({ status, body: {} }));
      expect((await connectChecked({}, { connect: () => c.connection, env, ...noSleep })).identity).toBeUndefined();
    }
  });

  it('a configuration that cannot be loaded: exit 2 with its message', async () => {
    const missing = new KubeConfigError('no Kubernetes configuration: KUBERNETES_SERVICE_HOST is set (a pod), but ...; set automountServiceAccountToken: true');
    const error = await connectChecked({}, { connect: () => { throw missing; }, env, ...noSleep }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    expect(error).toMatchObject({ exitCode: EXIT_CONFIGURATION, message: missing.message });
  });

  it('a token the API server refuses: exit 2 at once, naming the token, its ServiceAccount and the fix, never the token', async () => {
    const c = connection(async () => ({ status: 401, body: { kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized' } }));
    const file = tokenFile('system:serviceaccount:keystone-appcred-system:keystone-appcred-operator');
    const error = (await connectChecked({}, { connect: () => c.connection, env, tokenFile: file, ...noSleep }).catch((e: unknown) => e)) as StartupError;
    expect(error.exitCode).toBe(EXIT_CONFIGURATION);
    expect(error.message).toBe(
      'the API server https://10.0.0.1:443 refused the service account token at /var/run/secrets/kubernetes.io/serviceaccount/token ' +
        '(ServiceAccount keystone-appcred-system/keystone-appcred-operator) (401 Unauthorized); the token is not valid for this API server ' +
        '(its ServiceAccount was deleted, or it was issued by another cluster): check that the ServiceAccount exists and restart the pod for a fresh token',
    );
    expect(c.requests).toHaveLength(1);
  });

  it('refused kubeconfig credentials name the user, the context and the file', async () => {
    const c = connection(async () => ({ status: 401, body: {} }), '--kubeconfig /home/me/kc');
    const error = (await connectChecked({ kubeconfig: '/home/me/kc' }, { connect: () => c.connection, env: {}, ...noSleep }).catch((e: unknown) => e)) as StartupError;
    expect(error.message).toMatch(/^the API server https:\/\/10\.0\.0\.1:443 refused the user u of context ctx in --kubeconfig \/home\/me\/kc \(401 Unauthorized\); renew them/);
  });

  it('an API server that does not answer is retried within the window, then exit 1 naming the server, the error and where the address came from', async () => {
    let now = 0;
    const realNow = Date.now;
    Date.now = () => now;
    try {
      const refused = Object.assign(new Error('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }) });
      const c = connection(async () => Promise.reject(refused));
      const retries: number[] = [];
      const error = (await connectChecked({}, { connect: () => c.connection, env, retryWindowMs: 15_000, sleep: async (ms) => void (now += ms), onRetry: (_, n) => retries.push(n) }).catch((e: unknown) => e)) as StartupError;
      expect(error.exitCode).toBe(EXIT_UNREACHABLE);
      expect(error.message).toMatch(/^cannot reach the API server https:\/\/10\.0\.0\.1:443 \(in-cluster\) for 12 s, 6 attempts: connect ECONNREFUSED 10\.0\.0\.1:443; check KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT \(10\.0\.0\.1:443\)/);
      expect(retries).toEqual([1, 2, 3, 4, 5]);
    } finally {
      Date.now = realNow;
    }
  });

  it('an API server that answers after a while is waited for', async () => {
    let calls = 0;
    const c = connection(async () => (++calls < 3 ? Promise.reject(new Error('connect ECONNREFUSED')) : { status: 201, body: { status: { userInfo: { username: 'me' } } } }));
    expect((await connectChecked({}, { connect: () => c.connection, env, ...noSleep })).identity?.username).toBe('me');
    expect(calls).toBe(3);
  });
});
