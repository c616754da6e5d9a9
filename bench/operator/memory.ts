/**
 * 6. Memory by orders × unrelated Secrets: fresh operators on the cluster as it is, without unrelated Secrets and with
 * each set of them, their peak and idle RSS; the table of them.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubeRequest } from '../../test/support/kubectl';
import { waitReady, type OperatorProcess } from '../../test/support/operator';
import { median, type Figure } from '../report';
import { UNRELATED_NS, ok } from './api';
import type { Env } from './cluster';
import { launch } from './launch';
import { memoryOf, quiet, rssMiB, rssParts, scrape } from './process';

/** A set of unrelated Secrets: `2000x100KiB` is 2,000 Secrets with 100 KiB of data each. */
export interface Unrelated {
  readonly label: string;
  readonly count: number;
  readonly bytes: number;
}

/** One set of `--unrelated` (COUNTxSIZE, SIZE in KiB or MiB); an error naming the value otherwise. */
export function parseUnrelated(spec: string): Unrelated {
  const m = /^(\d+)x(\d+)(KiB|MiB)$/.exec(spec);
  if (!m) throw new Error(`--unrelated ${spec}: expected COUNTxSIZE with SIZE in KiB or MiB, e.g. 2000x100KiB`);
  return { label: spec, count: Number(m[1]), bytes: Number(m[2]) * (m[3] === 'KiB' ? 1024 : 1024 * 1024) };
}

/** Makes the unrelated namespace hold exactly `set` (none: empty), 16 creates in flight. */
async function setUnrelated(set: Unrelated | undefined): Promise<void> {
  // A collection delete of thousands of Secrets can outlast any request timeout: the API server goes on after the
  // client gave up, and the loop below waits until the namespace is empty.
  const deleted = await kubeRequest('DELETE', `/api/v1/namespaces/${UNRELATED_NS}/secrets`, { timeoutMs: 600_000 }).catch((error: unknown) => ({ status: 0, body: String(error) }));
  if (deleted.status >= 300 && deleted.status !== 404) process.stderr.write(`[bench] DELETE of the unrelated Secrets: ${deleted.status} ${deleted.body.slice(0, 200)}; waiting for the namespace to empty\n`);
  for (;;) {
    const left = JSON.parse(await ok('GET', `/api/v1/namespaces/${UNRELATED_NS}/secrets?limit=1`)) as { items: unknown[] };
    if (left.items.length === 0) break;
    await sleep(500);
  }
  if (!set) return;
  const t0 = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < set.count) {
        const i = next++;
        // Random bytes, so nothing compresses or dedupes; every other one carries kubectl apply's annotation, a second copy.
        const data = { payload: randomBytes(set.bytes).toString('base64') };
        const applied = i % 2 === 1 ? { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `unrelated-${i}`, namespace: UNRELATED_NS }, data }) } } : {};
        await ok('POST', `/api/v1/namespaces/${UNRELATED_NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `unrelated-${i}`, namespace: UNRELATED_NS, labels: { 'bench/unrelated': 'yes' }, ...applied }, data });
      }
    }),
  );
  process.stderr.write(`[bench] ${set.label} unrelated Secrets in place in ${Date.now() - t0} ms\n`);
}

/** The fresh operators of part 6 running now (stopped on Ctrl-C too). */
const fresh = new Set<OperatorProcess>();

/** Stops the fresh operators running now (the way out, Ctrl-C too). */
export async function stopFreshOperators(): Promise<void> {
  await Promise.all([...fresh].map((op) => op.server.stop(10_000)));
}

/** A fresh operator's RSS on the cluster as it is: the peak from spawn to quiet, and the idle RSS after. */
async function freshRss(env: Env, name: string): Promise<{ peak: number; idle: number; readyMs: number; quietMs: number; memory: string }> {
  const op = await launch(env, name, false);
  fresh.add(op);
  const pid = op.server.process.pid as number;
  const samples: { at: number; rss: number }[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      try {
        samples.push({ at: Date.now(), rss: rssMiB(pid) });
      } catch {
        // Not there yet, or gone.
      }
      await sleep(250);
    }
  })();
  try {
    const readyMs = await waitReady(op, 600_000);
    await quiet(op, env.proxy, 5_000, 3_600_000);
    const quietMs = Date.now() - op.spawnedAt;
    const idleFrom = Date.now() + 10_000;
    await sleep(30_000);
    const text = await scrape(op);
    const memory = `${rssParts(pid)}; ${memoryOf(text)}`;
    sampling = false;
    await sampler;
    const idle = median(samples.filter((s) => s.at >= idleFrom).map((s) => s.rss));
    return { peak: Math.max(...samples.map((s) => s.rss)), idle, readyMs, quietMs, memory };
  } finally {
    sampling = false;
    await op.server.stop(10_000);
    fresh.delete(op);
  }
}

/** One row of the memory table: a fresh operator without unrelated Secrets and with each set. */
export async function memoryRow(env: Env, orders: number, sets: readonly Unrelated[], rows: string[][], figures: Figure[]): Promise<void> {
  let base = 0;
  const cells: string[] = [];
  for (const set of [undefined, ...sets]) {
    await setUnrelated(set);
    const label = set?.label ?? 'none';
    const m = await freshRss(env, `bench-memory-${orders}-${label}`);
    process.stderr.write(`[bench] memory, ${orders} orders, unrelated ${label}: peak ${m.peak.toFixed(0)} MiB, idle ${m.idle.toFixed(0)} MiB (ready after ${m.readyMs} ms, quiet after ${m.quietMs} ms; ${m.memory})\n`);
    cells.push(`${m.idle.toFixed(0)} (peak ${m.peak.toFixed(0)})`);
    if (!set) base = m.idle;
    else if (set.count === 2000 && set.bytes === 100 * 1024) {
      figures.push({ figure: `${orders} orders: idle RSS with 2,000 unrelated Secrets of 100 KiB`, value: `${m.idle.toFixed(0)} MiB`, baseline: `${base.toFixed(0)} MiB without them`, goal: '≤ baseline + 64 MB', met: (m.idle - base) * 1.048576 <= 64 });
    } else {
      figures.push({ figure: `${orders} orders: idle RSS with ${set.label} unrelated Secrets`, value: `${m.idle.toFixed(0)} MiB`, baseline: `${base.toFixed(0)} MiB without them` });
    }
  }
  await setUnrelated(undefined);
  rows.push([String(orders), ...cells]);
}

/** Prints the table of the memory rows (none: nothing): orders down, the unrelated Secrets across. */
export function printMemoryTable(sets: readonly Unrelated[], rows: readonly (readonly string[])[]): void {
  if (rows.length === 0) return;
  const head = ['converged orders', 'no unrelated Secrets', ...sets.map((u) => `${u.count.toLocaleString('en')} unrelated of ${u.label.split('x')[1]}`)];
  process.stdout.write(`\n## The operator's RSS by orders × unrelated Secrets (MiB, idle after 30 s quiet; peak from spawn)\n\n${[head, head.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
}
