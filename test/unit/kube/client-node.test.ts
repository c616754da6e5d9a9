/**
 * The client-node transport on a real TLS server: requests share kept-alive connections. client-node builds a new
 * connection pool per request, so without the transport's reuse every request is a TCP and TLS handshake of its own.
 * Jest cannot load the ESM-only library, so the requests run in a child Node process (as the operator does).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { selfSigned } from '../../support/tls';

const REPO = resolve(__dirname, '../../..');

describe('client-node transport', () => {
  let dir: string;
  let server: Server;
  let kubeconfig: string;
  const handshakes: unknown[] = [];
  const seen: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kac-client-node-'));
    const { cert, key } = selfSigned('127.0.0.1', '127.0.0.1');
    server = createServer({ key, cert }, (req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"Status"}');
    });
    server.on('secureConnection', (socket) => handshakes.push(socket));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, 'certificate-authority-data': Buffer.from(cert).toString('base64') } }],
        users: [{ name: 'u', user: { token: 'test-token' } }],
        contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'ctx',
      }),
    );
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends every request through kept-alive connections, authenticated and trusting the kubeconfig CA', async () => {
    const script = `
      const { connect } = require(${JSON.stringify(join(REPO, 'src/kube/client-node.ts'))});
      (async () => {
        const { transport } = connect({ kubeconfig: ${JSON.stringify(kubeconfig)} });
        for (let i = 0; i < 10; i++) {
          const res = await transport.request({ method: i % 2 ? 'PATCH' : 'GET', path: '/api/v1/namespaces/a/secrets/s' + i, body: i % 2 ? {} : undefined, contentType: 'application/merge-patch+json' });
          if (res.status !== 200) throw new Error('status ' + res.status);
        }
        process.exit(0);
      })().catch((e) => { console.error(e); process.exit(1); });`;
    await new Promise<void>((done, fail) =>
      execFile(process.execPath, ['--import', 'tsx', '-e', script], { cwd: REPO, timeout: 60_000 }, (error, _out, err) => (error ? fail(new Error(`${error.message}\n${err}`)) : done())),
    );
    expect(seen).toHaveLength(10);
    expect(seen.every((line) => line.endsWith('Bearer test-token'))).toBe(true);
    // One pool for all ten requests; a pool per request (the library's own behaviour) makes ten handshakes.
    expect(handshakes.length).toBeLessThanOrEqual(2);
  });
});
