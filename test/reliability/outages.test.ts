// @needs kube keystone openbao
/**
 * Outages mid-rotation (issue 13): the operator, a child process under the construct's RBAC on the real API server,
 * Keystone and OpenBao, is in the middle of a rotation (the successor was just created in Keystone) when
 *
 * (a) Keystone goes away for 60 s. This is a NETWORK outage of the real Keystone: the shared Keystone process keeps
 *     running (src/testbed/keystone/ cannot stop and start one instance again: its stop() removes the data dir and a
 *     start bootstraps a new database with a new admin password), and the operator reaches it only through an HTTP
 *     proxy in this file that, while "down", resets every connection it receives (the client sees ECONNRESET / socket
 *     hang up) and records the attempt. The cut lands right as Keystone answers the successor's create, and that reply
 *     is lost too: Keystone holds a credential the operator never heard of.
 * (b) the file's kube-apiserver is restarted (test/support/apiserver-restart.ts: SIGTERM, then the same binary with the
 *     same arguments, environment and working directory), right after Keystone answered the successor's create. The
 *     operator reaches the API server through a TCP proxy here that counts its connection attempts.
 * (c) OpenBao goes away for 60 s: the shared `bao server -dev` keeps its in-memory data (a restart would lose it), and
 *     the operator reaches it only through the same kind of resetting HTTP proxy as Keystone, cut right as Keystone
 *     answers the successor's create (so the backup write of the switch fails).
 *
 * For each: the delivered credential keeps working (a consumer probe authenticates every second; during (a) it goes
 * through a Keystone proxy cut at the same time, and its failures inside the outage are counted apart: they are
 * Keystone's), the conditions say what is wrong while it is wrong, retries back off (the calls per order during the
 * outage are printed with the gaps between them), and the order converges after each, within a minute of the
 * dependency's return (issue 40: it waits on the dependency, probed, not on a backoff of its own): credentials per order in
 * Keystone never exceed 2 (sampled every second, directly), no parked secret is lost (every credential in Keystone has
 * its secret-v<N>, the delivered secret is the parked one), and the time to converge is printed. At the end no minted
 * secret or password appears in any operator log line, Event or status read.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { alive, apiserverOfThisRun, apiserverReady, startApiserverAgain, stopProcess } from '../support/apiserver-restart';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures, type Order } from '../support/credential-fixtures';
import { startCutProxy, type Call, type CutProxy } from '../support/cut-proxy';
import { uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, kubectl, kubectlOk } from '../support/kubectl';
import { installCrds, operatorKubeconfig, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess } from '../support/operator';
import { scanForSecrets } from '../support/secret-scan';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(240_000);

const NS = 'kac-outages';
const CP_NS = 'kac-outages-cp';
const IDENTITY = { namespace: 'kac-outages-operator', binding: 'kac-outages-operator' };
const OUTAGE_MS = Number(process.env.KAC_OUTAGE_MS ?? 60_000);
const GRACE = '10s';
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: uniqueName('outages'), projectName: uniqueName('outages') });
const PREFIX = fx.prefixOf('app');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (line: string) => process.stdout.write(`[outages] ${line}\n`);

// ---------------------------------------------------------------------------------------------------------------------
// The counting TCP proxy (the API server); the cuttable HTTP proxy (Keystone, OpenBao) is test/support/cut-proxy.ts.

interface TcpProxy {
  readonly port: number;
  /** Connection attempts: when, and whether the upstream took them. */
  readonly connections: { at: number; ok?: boolean }[];
  close(): Promise<void>;
}

async function startTcpProxy(upstreamPort: number): Promise<TcpProxy> {
  const connections: { at: number; ok?: boolean }[] = [];
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((client) => {
    const record: { at: number; ok?: boolean } = { at: Date.now() };
    connections.push(record);
    sockets.add(client);
    const up = createConnection({ host: '127.0.0.1', port: upstreamPort });
    sockets.add(up);
    up.on('connect', () => {
      record.ok = true;
      client.pipe(up).pipe(client);
    });
    up.on('error', () => {
      record.ok ??= false;
      client.resetAndDestroy();
    });
    client.on('error', () => up.destroy());
    up.on('close', () => {
      client.destroy();
      sockets.delete(up);
    });
    client.on('close', () => {
      up.destroy();
      sockets.delete(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// The operator, supervised like a pod (restartPolicy: Always): when it exits it is started again.

let unlock: (() => void) | undefined;
let workDir = '';
let kubeconfig = '';
let operator: OperatorProcess;
let stopping = false;
const exits: { at: number; code: string }[] = [];
let keystoneOp: CutProxy;
let keystoneConsumer: CutProxy;
let bao: CutProxy;
let kubeProxy: TcpProxy;
let consumer: ReturnType<typeof fx.probe> | undefined;
const logs = () => {
  const file = join(workDir, 'outages.log');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};

async function launch(): Promise<void> {
  // One identity across restarts: a restarted process takes its own Lease back at once.
  const started = await startOperator({
    name: 'outages',
    kubeconfig,
    namespace: IDENTITY.namespace,
    logDir: workDir,
    env: { KAC_OPENBAO_ADDRESS: bao.url, KAC_OPENBAO_AUTH_METHOD: 'token', KAC_OPENBAO_TOKEN: process.env.KAC_BAO_TOKEN as string },
  });
  operator = started;
  started.server.process.once('exit', (code, signal) => {
    if (stopping) return;
    exits.push({ at: Date.now(), code: signal ?? String(code) });
    say(`operator exited (${signal ?? code}); starting it again, as the kubelet would`);
    setTimeout(() => {
      if (!stopping) void launch();
    }, 1_000);
  });
}

// ---------------------------------------------------------------------------------------------------------------------
// Observing the order.

/** Credentials per order in Keystone, sampled every second (directly, not through the proxies). */
const sampler = { max: 0, samples: 0, running: true, loop: Promise.resolve() };
function startSampler(): void {
  sampler.loop = (async () => {
    while (sampler.running) {
      try {
        const n = (await fx.userCredentials(`${PREFIX}-credential-v`)).length;
        sampler.max = Math.max(sampler.max, n);
        sampler.samples++;
      } catch {
        // Keystone busy: the next sample counts
      }
      await sleep(1_000);
    }
  })();
}

async function converged(generation: number): Promise<Order | false> {
  const o = await fx.order('app');
  if (o.status?.credentialGeneration !== generation || condition(o, 'Ready')?.status !== 'True') return false;
  const doc = await fx.delivered('app');
  return doc?.application_credential_id === o.status.credentialID && o;
}

/** Steady: the generation delivered and Ready, and the superseded one swept (one credential in Keystone). */
async function steady(generation: number): Promise<Order> {
  return eventually(async () => {
    const o = await converged(generation);
    return o && o.status?.previousCredentialID === undefined && (await fx.userCredentials(`${PREFIX}-credential-v`)).length === 1 && o;
  }, 90_000, 500);
}

/** No parked secret lost: every credential in Keystone has its secret-v<N>, and the delivered secret is the parked one. */
async function expectNothingLost(generation: number): Promise<void> {
  const parked = await fx.parkedSecrets('app');
  for (const name of await fx.userCredentials(`${PREFIX}-credential-v`)) {
    expect(parked.has(Number(/-v(\d+)$/.exec(name)?.[1]))).toBe(true);
  }
  const doc = await fx.delivered('app');
  expect(doc?.application_credential_secret).toBe(parked.get(generation));
  const backup = fx.backup('app', (await fx.order('app')).metadata.uid as string);
  expect(await backup.read()).toBe(doc?.application_credential_id);
}

const isCreate = (c: Call) => c.method === 'POST' && /\/application_credentials$/.test(c.path);

/** Arms the cut: when Keystone answers the next create of an application credential, `cut()` runs before the reply. */
function cutOnNextCreate(cut: () => void | Promise<void>): { at: () => number | undefined } {
  let at: number | undefined;
  keystoneOp.onReply = async (call) => {
    if (at !== undefined || !isCreate(call)) return;
    at = Date.now();
    keystoneOp.onReply = undefined;
    await cut();
  };
  return { at: () => at };
}

/** The calls a proxy saw in `[from, to]`, the rate per second, and the gaps between them (seconds). */
function rate(calls: readonly { at: number }[], from: number, to: number) {
  const inside = calls.filter((c) => c.at >= from && c.at <= to);
  const gaps = inside.slice(1).map((c, i) => Math.round((c.at - inside[i].at) / 100) / 10);
  return { count: inside.length, perSecond: Math.round((inside.length / ((to - from) / 1000)) * 100) / 100, gaps };
}

/** The order's conditions while the outage lasts, read every 5 s; `check` is asserted on each read after the first 10 s. */
async function observeUntil(until: number, from: number): Promise<{ at: number; credential?: string; delivery?: string; id?: string }[]> {
  const seen: { at: number; credential?: string; delivery?: string; id?: string }[] = [];
  while (Date.now() < until) {
    await sleep(Math.min(5_000, Math.max(0, until - Date.now())));
    try {
      const o = await fx.order('app');
      const c = condition(o, 'CredentialReady');
      const d = condition(o, 'DeliveryReady');
      const doc = await fx.delivered('app');
      seen.push({ at: Date.now() - from, credential: c && `${c.status}/${c.reason}: ${c.message}`, delivery: d && `${d.status}/${d.reason}: ${d.message}`, id: doc?.application_credential_id });
    } catch (error) {
      seen.push({ at: Date.now() - from, credential: `read failed: ${String(error)}` });
    }
  }
  return seen;
}

const figures: string[] = [];
const report = (line: string) => {
  figures.push(line);
  say(line);
};

beforeAll(async () => {
  unlock = await lockCluster('outages.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  keystoneOp = await startCutProxy(fx.env.authUrl);
  keystoneConsumer = await startCutProxy(fx.env.authUrl);
  bao = await startCutProxy(process.env.KAC_BAO_ADDR as string);
  kubeProxy = await startTcpProxy(Number(new URL(process.env.KAC_KUBE_SERVER as string).port));
  const manifests = await installCrds(synthesizeManifests());
  kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(workDir, 'outages.kubeconfig'));
  // The operator reaches the API server through the counting TCP proxy (the serving certificate is for 127.0.0.1).
  const config = JSON.parse(readFileSync(kubeconfig, 'utf8')) as { clusters: { cluster: { server: string } }[] };
  config.clusters[0].cluster.server = `https://127.0.0.1:${kubeProxy.port}`;
  writeFileSync(kubeconfig, JSON.stringify(config), { mode: 0o600 });
  for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  await applyOk([fx.adminSecret(), fx.controlPlane({ authUrl: keystoneOp.url })], { fieldManager: 'kac-test' });
  await applyOk(fx.identityOrders(), { fieldManager: 'kac-test' });
  await launch();
  await waitReady(operator);
  await applyOk(fx.credentialOrder('app', { interval: '1h', gracePeriod: GRACE }), { fieldManager: 'kac-test' });
  await steady(1);
  startSampler();
  consumer = fx.probe('app', keystoneConsumer.url);
}, LOCKED_SETUP_MS);

afterAll(async () => {
  stopping = true;
  sampler.running = false;
  await sampler.loop;
  await consumer?.stop();
  await operator?.server.stop(5_000);
  await releaseLeftovers([NS, CP_NS]);
  for (const ns of [NS, CP_NS, IDENTITY.namespace]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
  await removeOperatorRbac(IDENTITY);
  for (const p of [keystoneOp, keystoneConsumer, bao]) await p?.close();
  await kubeProxy?.close();
  unlock?.();
  if (figures.length > 0) process.stdout.write(`\n[outages] figures (copy into docs/reliability.md):\n${figures.map((f) => `  ${f}`).join('\n')}\n`);
});

describe('outages mid-rotation (operator, API server, Keystone and OpenBao all real)', () => {
  it(`(a) Keystone unreachable for ${OUTAGE_MS / 1000} s right as it creates the successor: the delivered credential keeps working, CredentialError says so, retries back off, and the order converges`, async () => {
    const before = (await fx.delivered('app')) as Record<string, string>;
    const cut = cutOnNextCreate(() => {
      keystoneOp.down = true;
      keystoneConsumer.down = true;
    });
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 2 } });
    const cutAt = await eventually(async () => cut.at(), 60_000, 50);
    const seen = await observeUntil(cutAt + OUTAGE_MS, cutAt);
    keystoneOp.down = false;
    keystoneConsumer.down = false;
    const upAt = Date.now();
    // The delivered credential works again at once (the probe failures inside the outage were Keystone's).
    expect(await fx.authenticates(before.application_credential_id, before.application_credential_secret, keystoneConsumer.url)).toBe(true);
    const o = await eventually(async () => converged(2), 120_000, 250);
    const convergeMs = Date.now() - upAt;

    const calls = rate(keystoneOp.calls, cutAt + 1, upAt);
    report(`(a) Keystone down ${Math.round((upAt - cutAt) / 1000)} s: ${calls.count} Keystone calls by the operator for 1 order (${calls.perSecond}/s); gaps between them (s): ${calls.gaps.join(', ')}`);
    report(`(a) conditions during the outage: ${[...new Set(seen.map((s) => s.credential))].join(' | ')}`);
    const retried = (keystoneOp.calls.find((c) => c.at >= upAt)?.at ?? upAt) - upAt;
    report(`(a) converged ${convergeMs} ms after Keystone came back (generation 2 delivered, Ready); the operator's next Keystone call came ${retried} ms after it was back (the order waits on Keystone, which its own pass probes: 1 s doubling to 15 s)`);
    for (const s of seen) expect(s.id).toBe(before.application_credential_id);
    // After the first seconds every read says what is wrong: Keystone cannot be reached.
    const late = seen.filter((s) => s.at > 15_000);
    expect(late.length).toBeGreaterThan(0);
    for (const s of late) expect(s.credential).toMatch(/^False\/CredentialError: .*Keystone/);
    expect(calls.count).toBeGreaterThanOrEqual(2);
    expect(calls.perSecond).toBeLessThanOrEqual(1);
    expect(Math.max(...calls.gaps)).toBeGreaterThanOrEqual(8);
    // within a minute of the dependency's return (it was probed, not backed off for minutes)
    expect(convergeMs).toBeLessThan(60_000);
    expect(o.status?.previousCredentialID).toBe(before.application_credential_id);
    await expectNothingLost(2);
    await steady(2);
    expect(sampler.max).toBeLessThanOrEqual(2);
    const windows = [[cutAt - 1_000, upAt + 1_000]] as const;
    report(`(a) probe: ${consumer?.attempts} authentications so far, ${consumer!.failures.length - consumer!.failuresOutside(windows).length} failed inside the Keystone outage (Keystone's), ${consumer?.failuresOutside(windows).length} outside`);
    expect(consumer?.failuresOutside(windows)).toEqual([]);
  });

  it('(b) the API server restarted right as Keystone creates the successor: the delivered credential keeps working, and the order converges', async () => {
    const before = (await fx.delivered('app')) as Record<string, string>;
    const { apiserver, etcdPid } = apiserverOfThisRun();
    let stoppedAt = 0;
    const logBefore = logs().length;
    const cut = cutOnNextCreate(async () => {
      await stopProcess(apiserver.pid);
      stoppedAt = Date.now();
    });
    const exitsBefore = exits.length;
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 3 } });
    const cutAt = await eventually(async () => cut.at(), 60_000, 50);
    await eventually(async () => stoppedAt > 0, 30_000, 50);
    const newPid = startApiserverAgain(apiserver, etcdPid);
    await eventually(apiserverReady, 120_000, 200);
    const upAt = Date.now();
    expect(alive(newPid)).toBe(true);
    const o = await eventually(async () => converged(3), 120_000, 250);
    const convergeMs = Date.now() - upAt;

    const attempts = rate(kubeProxy.connections.filter((c) => c.ok === false), cutAt, upAt);
    const during = logs()
      .slice(logBefore)
      .split('\n')
      .filter((l) => l.includes('"level":"warn"') || l.includes('"level":"error"'));
    report(`(b) API server down ${Math.round((upAt - cutAt) / 100) / 10} s (SIGTERM to ready again; the old process was gone after ${Math.round((stoppedAt - cutAt) / 100) / 10} s): ${attempts.count} refused connection attempts by the operator (${attempts.perSecond}/s, the whole process: informers, Lease, the order); operator exits ${exits.length - exitsBefore} (it steps down and exits when it cannot renew its Lease for the renew deadline, 10 s by default)`);
    report(`(b) converged ${convergeMs} ms after the API server was ready again (generation 3 delivered, Ready)`);
    const what = [...new Set(during.map((l) => {
      try {
        const j = JSON.parse(l) as { msg?: string; error?: string };
        return `${j.msg}: ${String(j.error).slice(0, 120)}`;
      } catch {
        return l.slice(0, 120);
      }
    }))];
    report(`(b) operator warnings during the outage: ${during.length} lines: ${what.join(' | ')}`);
    // What was wrong is in the log: the API server could not be reached.
    expect(during.some((l) => /ECONNRESET|ECONNREFUSED|socket hang up|other side closed|fetch failed|connect/i.test(l))).toBe(true);
    expect(attempts.perSecond).toBeLessThanOrEqual(20);
    expect(o.status?.previousCredentialID).toBe(before.application_credential_id);
    await expectNothingLost(3);
    await steady(3);
    expect(sampler.max).toBeLessThanOrEqual(2);
    report(`(b) probe: ${consumer?.attempts} authentications so far, ${consumer?.readErrors} Secret reads failed while the API server was down (the probe kept the last Secret, as a mounted volume does), ${consumer?.failures.length} failed authentications in all (all in (a)'s Keystone outage)`);
    expect(consumer?.failuresOutside([[0, stoppedAt - 1]])).toEqual([]);
  });

  it(`(c) OpenBao unreachable for ${OUTAGE_MS / 1000} s right after the successor is created: BackupNotSynced, the Secret keeps the delivered generation, retries back off, and the order converges`, async () => {
    const before = (await fx.delivered('app')) as Record<string, string>;
    const cut = cutOnNextCreate(() => {
      bao.down = true;
    });
    const failuresBefore = consumer?.failures.length ?? 0;
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 4 } });
    const cutAt = await eventually(async () => cut.at(), 60_000, 50);
    const seen = await observeUntil(cutAt + OUTAGE_MS, cutAt);
    bao.down = false;
    const upAt = Date.now();
    const o = await eventually(async () => converged(4), 120_000, 250);
    const convergeMs = Date.now() - upAt;

    const calls = rate(bao.calls, cutAt + 1, upAt);
    const keystoneCalls = rate(keystoneOp.calls, cutAt + 1, upAt);
    report(`(c) OpenBao down ${Math.round((upAt - cutAt) / 1000)} s: ${calls.count} OpenBao calls by the operator for 1 order (${calls.perSecond}/s); gaps (s): ${calls.gaps.join(', ')}; Keystone calls meanwhile: ${keystoneCalls.count}`);
    report(`(c) conditions during the outage: ${[...new Set(seen.map((s) => s.delivery))].join(' | ')}`);
    const retried = (bao.calls.find((c) => c.at >= upAt)?.at ?? upAt) - upAt;
    report(`(c) converged ${convergeMs} ms after OpenBao came back (generation 4 delivered, Ready); the operator's next OpenBao call came ${retried} ms after it was back (the order waits on OpenBao, which its own pass probes: 1 s doubling to 15 s)`);
    for (const s of seen) expect(s.id).toBe(before.application_credential_id);
    const late = seen.filter((s) => s.at > 15_000);
    expect(late.length).toBeGreaterThan(0);
    for (const s of late) expect(s.delivery).toMatch(/^False\/BackupNotSynced: .*(OpenBao|backup)/);
    expect(calls.count).toBeGreaterThanOrEqual(2);
    expect(calls.perSecond).toBeLessThanOrEqual(1);
    expect(Math.max(...calls.gaps)).toBeGreaterThanOrEqual(8);
    // within a minute of the dependency's return (it was probed, not backed off for minutes)
    expect(convergeMs).toBeLessThan(60_000);
    expect(o.status?.previousCredentialID).toBe(before.application_credential_id);
    await expectNothingLost(4);
    await steady(4);
    expect(sampler.max).toBeLessThanOrEqual(2);
    expect((consumer?.failures.length ?? 0) - failuresBefore).toBe(0);
  });

  it('the consumer never failed outside the Keystone outage; credentials per order never exceeded 2; teardown leaves nothing', async () => {
    await consumer?.stop();
    report(`probe: ${consumer?.attempts} authentications, ${consumer?.failures.length} failed (all inside the Keystone outage of (a)); credentials per order in Keystone: at most ${sampler.max} over ${sampler.samples} samples; operator restarts: ${exits.length}`);
    expect(consumer!.attempts).toBeGreaterThan(OUTAGE_MS / 1000);
    expect(sampler.max).toBeLessThanOrEqual(2);
    expect(sampler.samples).toBeGreaterThan(OUTAGE_MS / 1000);
    await kubectlOk(['delete', 'keystoneapplicationcredential', '-n', NS, 'app', '--wait=false']);
    await eventually(async () => (await kubectl(['get', 'keystoneapplicationcredential', '-n', NS, 'app'])).code !== 0, 90_000);
    expect(await fx.userCredentials(`${PREFIX}-credential-v`)).toEqual([]);
    expect((await fx.parkedSecrets('app')).size).toBe(0);
  });

  it('no minted secret or password appears in the operator logs, the Events or any status read', async () => {
    const texts = [{ source: 'operator log outages.log', text: logs() }, ...(await fx.eventTexts([NS, CP_NS])), ...fx.statusesRead];
    const secrets = [...fx.secretsSeen, fx.env.adminPassword];
    expect(fx.secretsSeen.size).toBeGreaterThanOrEqual(4);
    // The scan can fail: a planted secret is found.
    expect(scanForSecrets([...texts, { source: 'planted', text: `x${[...fx.secretsSeen][0]}x` }], secrets)).toEqual(['planted']);
    expect(scanForSecrets(texts, secrets)).toEqual([]);
  });
});
