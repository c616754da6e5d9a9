/**
 * A process seen from outside: its CPU ticks and RSS from /proc, its metrics (the operator's /metrics text), when it
 * has gone quiet, and a heap snapshot of it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { metricsText, type OperatorProcess } from '../../test/support/operator';
import type { RecordingProxy } from '../../test/support/recording-proxy';

/** Clock ticks per second of /proc's CPU times. */
export const CLK_TCK = 100;

/** The sum of a metric's samples (all labels). */
export function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const m of text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? (\S+)$/gm)) if (m[1] === name) sum += Number(m[2]);
  return sum;
}

/**
 * The operator's /metrics for a figure: a scrape that does not answer throws instead of reading as zeros (the 20,000-order
 * run of 2026-12-07 printed a resync of -1,663,356 reconciles and -120,152 API writes from one). 20,000 orders export
 * 140,000 series, 16 MB that take about a second to serialize alone on a busy machine, so it waits up to 60 s.
 */
export async function scrape(op: OperatorProcess): Promise<string> {
  const text = await metricsText(op, 60_000);
  if (text === '') throw new Error(`the operator's /metrics (port ${op.metrics}) did not answer within 60 s`);
  return text;
}

/** The sum of a metric's samples whose labels include `label` (e.g. `kind="KeystoneApplicationCredential"`). */
export function metricSumWith(text: string, name: string, label: string): number {
  let sum = 0;
  for (const m of text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} (\S+)$/gm)) if (m[1] === name && m[2]?.split(',').includes(label)) sum += Number(m[3]);
  return sum;
}

/** utime + stime of a process, in clock ticks. */
export function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU ticks of the Kubernetes side (the API server, etcd, the controller manager) and of this script. */
export function clusterTicks(): number {
  let ticks = 0;
  for (const name of ['kube-apiserver', 'etcd', 'kube-controller']) {
    let pids: string[] = [];
    try {
      pids = execFileSync('pgrep', ['-x', name], { encoding: 'utf8' }).split('\n').filter(Boolean);
    } catch {
      // none running
    }
    for (const pid of pids) ticks += cpuTicks(Number(pid));
  }
  const own = process.cpuUsage();
  return ticks + ((own.user + own.system) / 1e6) * CLK_TCK;
}

/** A process's resident set size, in MiB. */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

/**
 * The RSS in its kernel parts: anonymous memory (heap, malloc, stacks), file pages (the code of the files mapped, the
 * `node` binary's above all) and shared memory; and the file pages by file, the largest first (from smaps).
 */
export function rssParts(pid: number): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  const files = [...fileRss(pid)].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([file, k]) => `${file.split('/').pop()} ${(k / 1024).toFixed(1)}`);
  const anon = anonRss(pid);
  const anonText = (['brk', 'arena', 'other'] as const).map((k) => `${k} ${(anon[k] / 1024).toFixed(0)}`).join(', ');
  if (process.env.KAC_BENCH_SMAPS_DIR) writeFileSync(join(process.env.KAC_BENCH_SMAPS_DIR, `smaps-${pid}-${Date.now()}.txt`), readFileSync(`/proc/${pid}/smaps`, 'utf8'));
  return `RssAnon ${(kb('RssAnon') / 1024).toFixed(0)} MiB (${anonText}), RssFile ${(kb('RssFile') / 1024).toFixed(0)} MiB (${files.join(', ')}), RssShmem ${(kb('RssShmem') / 1024).toFixed(0)} MiB`;
}

/** glibc's heaps of its arenas other than the main one: 64 MiB each, aligned to their size (HEAP_MAX_SIZE on 64-bit). */
const ARENA_HEAP = 64 * 2 ** 20;

/**
 * A process's anonymous resident kB by what holds it, from smaps: `brk`, glibc's main arena (the `[heap]` mapping);
 * `arena`, its other arenas' heaps (anonymous mappings aligned to 64 MiB and at most that long); `other`, the rest: V8's
 * heap pages and code, malloc's own mappings of large blocks (from MALLOC_MMAP_THRESHOLD_ on), thread stacks.
 * KAC_BENCH_SMAPS_DIR=/tmp/s keeps each smaps read, to look at mapping by mapping.
 */
export function anonRss(pid: number): { brk: number; arena: number; other: number } {
  const parts = { brk: 0, arena: 0, other: 0 };
  let kind: keyof typeof parts | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (mapping) {
      const [start, end, name] = [BigInt(`0x${mapping[1]}`), BigInt(`0x${mapping[2]}`), mapping[3] ?? ''];
      if (name === '[heap]') kind = 'brk';
      else if (name !== '') kind = undefined;
      else kind = start % BigInt(ARENA_HEAP) === 0n && end - start <= BigInt(ARENA_HEAP) ? 'arena' : 'other';
    } else if (kind && line.startsWith('Anonymous:')) parts[kind] += Number(/(\d+)/.exec(line)?.[1] ?? 0);
  }
  return parts;
}

/** The resident kB of each file mapped into a process (smaps: the Rss of its mappings, by path). */
export function fileRss(pid: number): Map<string, number> {
  const byFile = new Map<string, number>();
  let file: string | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (mapping) file = mapping[1]?.startsWith('/') ? mapping[1] : undefined;
    else if (file && line.startsWith('Rss:')) byFile.set(file, (byFile.get(file) ?? 0) + Number(/(\d+)/.exec(line)?.[1] ?? 0));
  }
  return byFile;
}

/** Waits until the proxy has seen no Keystone call and the operator's queues are empty for `quietMs`. */
export async function quiet(op: OperatorProcess, proxy: RecordingProxy, quietMs = 3_000, timeoutMs = 600_000): Promise<void> {
  let last = -1;
  let since = Date.now();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() - since < quietMs) {
    if (Date.now() > deadline) throw new Error('the operator did not go quiet');
    const text = await scrape(op);
    const now = proxy.calls.length * 1e6 + metricSum(text, 'keystone_appcred_api_writes_total');
    if (now !== last || metricSum(text, 'keystone_appcred_workqueue_depth') > 0) [last, since] = [now, Date.now()];
    await sleep(500);
  }
}

/**
 * Where an operator's RSS is, from its metrics: the V8 heap in use and held, memory outside it (Buffers, native TLS and
 * zlib state), and what the heap trimmer gave back so far.
 */
export function memoryOf(text: string): string {
  const mib = (name: string) => (metricSum(text, name) / 2 ** 20).toFixed(0);
  return [
    `heap used ${mib('nodejs_heap_size_used_bytes')} MiB, held ${mib('nodejs_heap_size_total_bytes')} MiB, external ${mib('nodejs_external_memory_bytes')} MiB`,
    `${metricSum(text, 'keystone_appcred_heap_trims_total')} heap trims so far (${mib('keystone_appcred_heap_trimmed_bytes_total')} MiB given back, ${(metricSum(text, 'keystone_appcred_heap_trim_seconds_total') * 1000).toFixed(0)} ms of pauses)`,
  ].join('; ');
}

/** Writes a heap snapshot of the operator into `dir` (SIGUSR2, see KAC_BENCH_HEAP_DIR) and waits until it is complete. */
export async function heapSnapshot(op: OperatorProcess, dir: string, what: string): Promise<void> {
  const before = new Set(readdirSync(dir));
  op.server.process.kill('SIGUSR2');
  for (;;) {
    await sleep(2_000);
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const size = statSync(join(dir, file)).size;
    await sleep(2_000);
    if (size > 0 && statSync(join(dir, file)).size === size) {
      process.stderr.write(`[bench] heap snapshot at ${what}: ${join(dir, file)}\n`);
      return;
    }
  }
}
