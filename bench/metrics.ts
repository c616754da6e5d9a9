/**
 * What the per-order series cost a scrape of `/metrics`: the operator's registry (its runtime metrics, prom-client's
 * process metrics, and the credential reconciler's series of N settled orders: next rotation, delivered since, expiry,
 * successor, the three conditions), serialized as Prometheus scrapes it, against the bare baseline of the same registry
 * with no order. Prints the series, the bytes per scrape, the median serialization time (the leader's event loop is
 * busy for it once per scrape), and per order what it adds to the baseline: bytes, serialization time and heap.
 *
 *   npx tsx bench/metrics.ts [ORDERS ...]        # default 1000 5000; docs/benchmarks.md, "The metrics scrape"
 *
 * Run with `node --expose-gc --import tsx` for the heap figure (without it the heap column says so). The last column is
 * what one scrape allocates (garbage by its end), sampled by V8's heap profiler (./allocations.ts): served in pieces as
 * the operator's /metrics does, and as one text.
 */
import { OperatorMetrics } from '../src/operator/runtime/metrics';
import { allocatedBytes } from './allocations';
import { CredentialMetrics } from '../src/operator/credential/metrics';
import type { KeystoneApplicationCredentialStatus } from '../src/api';

const ROUNDS = 9;
const condition = (type: string, status: 'True' | 'False', reason: string) => ({ type, status, reason, message: 'ok', lastTransitionTime: '2026-12-01T00:00:00Z' });
/** A settled order's status: everything the series read is set. */
const STATUS = {
  credentialGeneration: 3,
  credentialExpiresAt: '2026-12-31T00:00:00Z',
  nextRotation: '2026-12-30T00:00:00Z',
  lastRotation: '2026-12-01T00:00:00Z',
  conditions: [condition('Ready', 'True', 'AllReady'), condition('CredentialReady', 'True', 'CredentialMinted'), condition('DeliveryReady', 'True', 'Delivered')],
} as unknown as KeystoneApplicationCredentialStatus;

const gc = (globalThis as { gc?: () => void }).gc;

async function measure(orders: number): Promise<{ series: number; bytes: number; ms: number; heapMiB?: number; garbage: { inPieces: number; whole: number } }> {
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const operator = new OperatorMetrics();
  const credentials = new CredentialMetrics(operator.registry);
  for (let i = 0; i < orders; i++) {
    credentials.listed(`tenant-${i % 50}`, `order-${i}`, [3]);
    credentials.observed(`tenant-${i % 50}`, `order-${i}`, STATUS);
  }
  gc?.();
  const heapAfter = process.memoryUsage().heapUsed;
  const times: number[] = [];
  let text = '';
  for (let round = 0; round < ROUNDS; round++) {
    const t0 = performance.now();
    text = await operator.text();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  // What one scrape leaves to the collector: served in pieces (as the operator's /metrics does), and as one text.
  const inPieces = await allocatedBytes(async () => {
    for await (const piece of operator.pieces()) void piece;
  });
  const whole = await allocatedBytes(async () => void (await operator.text()));
  return {
    garbage: { inPieces, whole },
    series: text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length,
    bytes: Buffer.byteLength(text),
    ms: times[Math.floor(ROUNDS / 2)] as number,
    ...(gc ? { heapMiB: (heapAfter - heapBefore) / 2 ** 20 } : {}),
  };
}

/** The two garbage figures of a scrape, in MiB. */
const mib = (g: { inPieces: number; whole: number }) => `${(g.inPieces / 2 ** 20).toFixed(1)} MiB, ${(g.whole / 2 ** 20).toFixed(1)} MiB`;

async function main(): Promise<void> {
  const sizes = process.argv.slice(2).map(Number);
  const counts = sizes.length > 0 ? sizes : [1000, 5000];
  const bare = await measure(0);
  const rows = [
    ['orders', 'series', 'KiB per scrape', 'serialization (median)', 'per order: bytes, µs, heap', 'allocated per scrape: in pieces, as one text'],
    ['0 (baseline)', String(bare.series), (bare.bytes / 1024).toFixed(0), `${bare.ms.toFixed(1)} ms`, '', mib(bare.garbage)],
  ];
  for (const n of counts) {
    const m = await measure(n);
    const heap = m.heapMiB === undefined ? '(heap: run with --expose-gc)' : `${(((m.heapMiB - (bare.heapMiB ?? 0)) * 2 ** 20) / n / 1024).toFixed(2)} KiB`;
    rows.push([String(n), String(m.series), (m.bytes / 1024).toFixed(0), `${m.ms.toFixed(1)} ms`, `${Math.round((m.bytes - bare.bytes) / n)} B, ${(((m.ms - bare.ms) * 1000) / n).toFixed(1)} µs, ${heap}`, mib(m.garbage)]);
  }
  for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
}

void main();
