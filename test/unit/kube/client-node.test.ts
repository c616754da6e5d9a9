/**
 * The client-node transport on a real TLS server: requests share kept-alive connections (client-node builds a new
 * connection pool per request, so without the transport's reuse every request is a TCP and TLS handshake of its own);
 * a metadata read asks for `PartialObjectMetadata` and drops the last-applied annotation as the reply arrives; a watch
 * asks for the view it is given and hands over its events line by line, however the stream is cut.
 * Jest cannot load the ESM-only library, so the requests run in a child Node process (as the operator does).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
  const accepts: string[] = [];
  const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kac-client-node-'));
    const { cert, key } = selfSigned('127.0.0.1', '127.0.0.1');
    server = createServer({ key, cert }, (req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      accepts.push(`${req.url} ${req.headers.accept ?? ''}`);
      if (req.url?.startsWith('/api/v1/secrets?') && req.url.includes('watch=true')) {
        // Two events, cut in the middle of the first and joined with the start of the second; then the server closes.
        const events = [
          { type: 'ADDED', object: { kind: 'PartialObjectMetadata', metadata: { name: 'a', resourceVersion: '7' } } },
          { type: 'DELETED', object: { kind: 'PartialObjectMetadata', metadata: { name: 'ä', resourceVersion: '8' } } },
        ].map((e) => `${JSON.stringify(e)}\n`).join('');
        const bytes = Buffer.from(events);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(bytes.subarray(0, 20));
        setTimeout(() => res.write(bytes.subarray(20, bytes.length - 5)), 50);
        setTimeout(() => res.end(bytes.subarray(bytes.length - 5)), 100);
        return;
      }
      if (req.url?.startsWith('/api/v1/secrets?')) {
        const annotations = { [LAST_APPLIED]: JSON.stringify({ data: { payload: 'UExBSU4tREFUQQ=='.repeat(20_000) } }), keep: 'me' };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'PartialObjectMetadataList', metadata: { resourceVersion: '9' }, items: [{ metadata: { name: 's', annotations } }] }));
        return;
      }
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

  it('asks for the metadata view, drops the last-applied annotation from the reply, and reads a cut watch stream line by line', async () => {
    const script = `
      const { connect } = require(${JSON.stringify(join(REPO, 'src/kube/client-node.ts'))});
      const { KubeApi } = require(${JSON.stringify(join(REPO, 'src/kube/api.ts'))});
      const { Kinds, MetadataKinds } = require(${JSON.stringify(join(REPO, 'src/kube/kinds.ts'))});
      (async () => {
        const { transport } = connect({ kubeconfig: ${JSON.stringify(kubeconfig)} });
        const api = new KubeApi(transport, 'test');
        const listed = await api.list(MetadataKinds.Secret);
        const raw = (await transport.request({ method: 'GET', path: '/api/v1/secrets', query: { limit: 1 }, omitLastApplied: true })).body;
        const events = [];
        const done = await new Promise((resolve) => api.watch(MetadataKinds.Secret, { resourceVersion: '9', timeoutSeconds: 10 }, (e) => events.push(e), resolve));
        process.stdout.write(JSON.stringify({ listed, raw, events, done: String(done) }));
        process.exit(0);
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const out = await new Promise<string>((done, fail) =>
      execFile(process.execPath, ['--import', 'tsx', '-e', script], { cwd: REPO, timeout: 60_000, maxBuffer: 1 << 20 }, (error, stdout, err) => (error ? fail(new Error(`${error.message}\n${err}`)) : done(stdout))),
    );
    type Items = { items: { metadata: { annotations?: Record<string, string> } }[] };
    const result = JSON.parse(out) as { listed: Items; raw: Items; events: unknown[]; done: string };
    // The reply as the transport read it: the last-applied value emptied before it became a string; the list's objects
    // keep their other annotations.
    expect(result.raw.items.map((i) => i.metadata.annotations)).toEqual([{ [LAST_APPLIED]: '', keep: 'me' }]);
    expect(result.listed.items.map((i) => i.metadata.annotations)).toEqual([{ keep: 'me' }]);
    expect(out).not.toContain('UExBSU4tREFUQQ');
    expect(result.events).toEqual([
      { type: 'ADDED', object: { kind: 'PartialObjectMetadata', metadata: { name: 'a', resourceVersion: '7' } } },
      { type: 'DELETED', object: { kind: 'PartialObjectMetadata', metadata: { name: 'ä', resourceVersion: '8' } } },
    ]);
    expect(result.done).toBe('undefined');
    expect(accepts.filter((a) => a.startsWith('/api/v1/secrets?'))).toEqual([
      expect.stringMatching(/limit=500 application\/json;as=PartialObjectMetadataList;g=meta\.k8s\.io;v=v1$/),
      expect.stringMatching(/limit=1 application\/json$/),
      expect.stringMatching(/watch=true application\/json;as=PartialObjectMetadata;g=meta\.k8s\.io;v=v1$/),
    ]);
  });

  it('loads the library without its generated API classes and models', async () => {
    const script = `
      const seen = [];
      require('node:module').registerHooks({ resolve: (specifier, context, next) => { const r = next(specifier, context); seen.push(r.url); return r; } });
      const { connect } = require(${JSON.stringify(join(REPO, 'src/kube/client-node.ts'))});
      (async () => {
        const { transport } = connect({ kubeconfig: ${JSON.stringify(kubeconfig)} });
        const res = await transport.request({ method: 'GET', path: '/api/v1/namespaces/a/secrets/s' });
        process.stdout.write(JSON.stringify({ status: res.status, seen: seen.filter((u) => u.includes('@kubernetes/client-node')) }));
        process.exit(0);
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const out = await new Promise<string>((done, fail) =>
      execFile(process.execPath, ['--import', 'tsx', '-e', script], { cwd: REPO, timeout: 60_000 }, (error, stdout, err) => (error ? fail(new Error(`${error.message}\n${err}`)) : done(stdout))),
    );
    const { status, seen } = JSON.parse(out) as { status: number; seen: string[] };
    expect(status).toBe(200);
    // What it does load: KubeConfig and the HTTP layer.
    expect(seen.some((u) => u.endsWith('/dist/config.js'))).toBe(true);
    expect(seen.some((u) => u.endsWith('/dist/gen/http/http.js'))).toBe(true);
    // Not the library's index, nor the generated index and what it pulls in.
    expect(seen.filter((u) => /\/dist\/index\.js$|\/gen\/index\.js$|\/gen\/apis\/|\/gen\/models\/|\/gen\/types\//.test(u))).toEqual([]);
  });
});

describe('client-node configuration in a pod', () => {
  const saDir = (root: string) => join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
  const pod = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
  const roots = { full: '', empty: '', noCa: '', noPort: '', outside: '' };
  let results: Record<keyof typeof roots, { ok: boolean; text: string }>;

  /** Every case's connect() in one child Node (client-node is ESM-only), each with its environment and its root. */
  beforeAll(async () => {
    for (const key of Object.keys(roots) as (keyof typeof roots)[]) roots[key] = mkdtempSync(join(tmpdir(), 'kac-pod-'));
    for (const key of ['full', 'noCa', 'noPort'] as const) {
      mkdirSync(saDir(roots[key]), { recursive: true });
      writeFileSync(join(saDir(roots[key]), 'token'), 'a.b.c');
      if (key !== 'noCa') writeFileSync(join(saDir(roots[key]), 'ca.crt'), 'PEM');
      writeFileSync(join(saDir(roots[key]), 'namespace'), 'keystone-appcred-system');
    }
    const cases = { full: [pod, roots.full], empty: [pod, roots.empty], noCa: [pod, roots.noCa], noPort: [{ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, roots.noPort], outside: [{}, roots.outside] };
    const script = `
      const { connect } = require(${JSON.stringify(join(REPO, 'src/kube/client-node.ts'))});
      const out = {};
      for (const [name, [env, root]] of Object.entries(${JSON.stringify(cases)})) {
        for (const k of ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT', 'KUBECONFIG']) delete process.env[k];
        Object.assign(process.env, env, { HOME: root });
        try {
          const c = connect({ serviceAccountRoot: root });
          out[name] = { ok: true, text: JSON.stringify({ source: c.source, server: c.server, namespace: c.namespace }) };
        } catch (e) { out[name] = { ok: false, text: e.name + ': ' + e.message }; }
      }
      process.stdout.write(JSON.stringify(out));`;
    results = await new Promise((done, fail) =>
      execFile(process.execPath, ['--import', 'tsx', '-e', script], { cwd: REPO, timeout: 60_000, env: { PATH: process.env.PATH ?? '' } }, (error, out, err) =>
        error ? fail(new Error(`${error.message}\n${err}`)) : done(JSON.parse(out) as typeof results),
      ),
    );
  }, 90_000);

  afterAll(() => Object.values(roots).forEach((r) => rmSync(r, { recursive: true, force: true })));

  it("takes the service account's token, CA and namespace when KUBERNETES_SERVICE_HOST is set", () => {
    expect(results.full).toEqual({ ok: true, text: JSON.stringify({ source: 'in-cluster', server: 'https://10.0.0.1:443', namespace: 'keystone-appcred-system' }) });
  });

  it('a pod without its token (and no kubeconfig) is told to mount it', () => {
    expect(results.empty).toEqual({
      ok: false,
      text:
        'KubeConfigError: no Kubernetes configuration: KUBERNETES_SERVICE_HOST is set (a pod), but the pod has no service account token at ' +
        '/var/run/secrets/kubernetes.io/serviceaccount/token; set automountServiceAccountToken: true on the pod or its ServiceAccount (the Operator construct sets it), or pass --kubeconfig',
    });
  });

  it('a token without ca.crt, or a host without a port, names the missing piece', () => {
    expect(results.noCa.text).toMatch(/serviceaccount\/ca\.crt is missing; mount the whole service account volume/);
    expect(results.noPort.text).toMatch(/KUBERNETES_SERVICE_HOST is set but KUBERNETES_SERVICE_PORT is not;/);
  });

  it('outside a pod without any configuration, the message lists where it looked', () => {
    expect(results.outside.text).toBe(
      `KubeConfigError: no Kubernetes configuration: no --kubeconfig, no KUBECONFIG, no pod service account (KUBERNETES_SERVICE_HOST is not set) and no ${join(roots.outside, '.kube', 'config')}; pass --kubeconfig or set KUBECONFIG`,
    );
  });
});

describe('a kubeconfig that is not valid YAML', () => {
  it('is refused naming its source, the reason and the position, never quoting its lines (its tokens and keys)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kac-kubeconfig-'));
    const file = join(dir, 'config');
    const broken = 'apiVersion: v1\nusers:\n- name: u\n  user:\n    token: TOKEN-MUST-NOT-LEAK\n   bad: [unclosed\n';
    writeFileSync(file, broken.replace('TOKEN-MUST-NOT-LEAK', 'FILE-TOKEN-MUST-NOT-LEAK'));
    const script = `
      const { connect } = require(${JSON.stringify(join(REPO, 'src/kube/client-node.ts'))});
      const out = [];
      for (const options of [{ kubeconfigText: { text: ${JSON.stringify(broken)}, source: 'the kubeconfig Secret ops/edge-1' } }, { kubeconfig: ${JSON.stringify(file)} }]) {
        try { connect(options); out.push('connected'); } catch (e) { out.push(e.name + ': ' + e.message + ' ' + (e.stack || '')); }
      }
      process.stdout.write(JSON.stringify(out));`;
    const out = await new Promise<string[]>((done, fail) =>
      execFile(process.execPath, ['--import', 'tsx', '-e', script], { cwd: REPO, timeout: 60_000 }, (error, stdout, err) => (error ? fail(new Error(`${error.message}\n${err}`)) : done(JSON.parse(stdout) as string[]))),
    );
    rmSync(dir, { recursive: true, force: true });
    expect(out[0]).toMatch(/^KubeConfigError: the kubeconfig Secret ops\/edge-1 is not valid YAML: bad indentation of a mapping entry at line 6, column 4/);
    expect(out[1]).toMatch(new RegExp(`^KubeConfigError: --kubeconfig ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not valid YAML: .* at line 6, column 4`));
    for (const text of out) expect(text).not.toContain('TOKEN-MUST-NOT-LEAK');
  }, 90_000);
});
