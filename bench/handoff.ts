/**
 * What the consumer handoff costs an operator in a cluster full of workloads that never opted in: the operator
 * (`keystone-appcred operator`, the compiled lib/ as the image runs it, with the construct's process settings) on a real
 * API server holding W Deployments, started with `--consumer-handoff` and without it, alternately (off, on, off, on, …),
 * each measured after its caches synced and 30 s idle: resident memory and V8 heap in use. The baseline is the operator
 * without the handoff, in the same run. The handoff caches the workload kinds as metadata only and reads an opted-in
 * workload whole by name (docs/configure/handoff.md, "The consumer handoff", Memory); this bench shows what a workload that did
 * not opt in costs.
 *
 *   npm run build && npx tsx bench/handoff.ts [workloads=8000] [rounds=3]
 *
 * (tsx: it borrows the test environment's starters from test/support; lib/ must be built: the operator runs from it.)
 */
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { OperatorRuntimeEnv } from '../src/api/operator-env';
import { startKube } from '../test/support/kube';
import { kubeRequest } from '../test/support/kubectl';
import { installCrds, metricsText, rssMiB, startOperator, waitReady } from '../test/support/operator';
import { synthesizeManifests } from '../test/support/synth';
import { conditions, median, printTable, type Figure } from './report';
import { finish, runBench, stopOnSignals } from './stops';

const REPO = resolve(__dirname, '..');
const NS = 'bench-workloads';
const OP_NS = 'bench-operator';
const IDLE_MS = 30_000;

/** A Deployment of the size a platform team's are: labels, an annotation, one container with resources and some env. */
function deployment(i: number) {
  const app = `app-${i}`;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: app, namespace: NS, labels: { app, team: 'a' }, annotations: { 'example.com/owner': 'team-a@example.com' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: { containers: [{ name: 'app', image: `registry.example/${app}:1.4.2`, env: [{ name: 'A', value: 'x'.repeat(200) }], resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
      },
    },
  };
}

async function ok(method: string, path: string, body?: unknown): Promise<void> {
  const res = await kubeRequest(method, path, { body, timeoutMs: 60_000 });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
}

/** Creates `count` Deployments, 16 requests in flight. */
async function createDeployments(count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await ok('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, deployment(next++));
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

async function measure(work: string, name: string, handoff: boolean): Promise<{ rss: number; heap: number }> {
  const compiled = join(REPO, 'lib', 'src', 'cli', 'main.js');
  if (!existsSync(compiled)) throw new Error('lib/ is missing: run `npm run build` first');
  const op = await startOperator({
    name,
    kubeconfig: process.env.KAC_KUBECONFIG as string,
    namespace: OP_NS,
    logDir: work,
    command: [process.execPath, compiled, 'operator'],
    args: ['--no-leader-elect', ...(handoff ? ['--consumer-handoff'] : [])],
    env: { ...OperatorRuntimeEnv },
  });
  try {
    await waitReady(op);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const heap = Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(await metricsText(op))?.[1] ?? NaN) / 1048576;
    return { rss: rssMiB(op), heap };
  } finally {
    await op.server.stop(5_000);
  }
}

async function main(): Promise<void> {
  const workloads = Number(process.argv[2] ?? 8000);
  const rounds = Number(process.argv[3] ?? 3);
  const work = mkdtempSync(join(tmpdir(), 'kac-bench-handoff-'));
  const stops: (() => Promise<void>)[] = [];
  stopOnSignals(stops);
  try {
    const kube = await startKube(join(work, 'kube'));
    stops.push(kube.stop);
    Object.assign(process.env, kube.env);
    mkdirSync(join(work, 'synth'));
    await installCrds(synthesizeManifests(join(work, 'synth')));
    for (const ns of [NS, OP_NS]) await ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const t0 = Date.now();
    await createDeployments(workloads);
    process.stderr.write(`[bench] ${workloads} Deployments created in ${Math.round((Date.now() - t0) / 1000)} s\n`);
    const off: { rss: number; heap: number }[] = [];
    const on: { rss: number; heap: number }[] = [];
    for (let round = 1; round <= rounds; round++) {
      off.push(await measure(work, `off-${round}`, false));
      on.push(await measure(work, `on-${round}`, true));
      process.stderr.write(`[bench] round ${round}: off ${off[round - 1].rss} MiB RSS / ${off[round - 1].heap.toFixed(0)} MiB heap, on ${on[round - 1].rss} / ${on[round - 1].heap.toFixed(0)}\n`);
    }
    const med = (xs: { rss: number; heap: number }[], k: 'rss' | 'heap') => median(xs.map((x) => x[k]));
    const perWorkload = (k: 'rss' | 'heap') => (((med(on, k) - med(off, k)) * 1024) / workloads).toFixed(1);
    const figures: Figure[] = [
      { figure: 'resident memory, handoff on', value: `${med(on, 'rss')} MiB`, baseline: `${med(off, 'rss')} MiB (off)`, ratio: med(on, 'rss') / med(off, 'rss') },
      { figure: 'V8 heap in use, handoff on', value: `${med(on, 'heap').toFixed(0)} MiB`, baseline: `${med(off, 'heap').toFixed(0)} MiB (off)`, ratio: med(on, 'heap') / med(off, 'heap') },
      { figure: 'per Deployment cached', value: `${perWorkload('rss')} KiB RSS, ${perWorkload('heap')} KiB heap` },
    ];
    printTable(
      'The consumer handoff: memory in a cluster of workloads that did not opt in',
      `${conditions(`${workloads} Deployments (none opted in), ${rounds} interleaved rounds (medians)`)}; operator from lib/ with the construct's process settings, ${IDLE_MS / 1000} s idle after its caches synced`,
      figures,
    );
  } finally {
    await finish(stops, work);
  }
}

runBench(main);
