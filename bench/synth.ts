/**
 * `cdk8s synth` of N typed KeystoneApplicationCredential orders (constructs/, validated at synth against the CRD's
 * rules) against N plain cdk8s `ApiObject`s carrying the same manifests, in one process, interleaved (typed, plain,
 * typed, …), each round a fresh App synthesized to YAML in a temp dir; medians. Checks first that both apps write the
 * same manifests.
 *
 *   npx tsx bench/synth.ts [orders=1000] [rounds=15]
 */
import { ApiObject, App, Chart } from 'cdk8s';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeystoneApplicationCredential } from '../constructs';
import { conditions, median, ms, printTable } from './report';

/** The goal of the typed synth against the plain one. */
const GOAL = 1.2;

type Build = (chart: Chart, i: number) => void;

const spec = (i: number) => ({
  controlPlaneRef: { name: 'cp', namespace: 'openstack' },
  userRef: { name: `svc-${i % 50}` },
  projectRef: { name: `proj-${i % 20}` },
  rotation: { interval: '720h', gracePeriod: '24h' },
});

const typed: Build = (chart, i) => {
  new KeystoneApplicationCredential(chart, `order-${i}`, { metadata: { name: `app-${i}` }, ...spec(i) });
};

const plain: Build = (chart, i) => {
  new ApiObject(chart, `order-${i}`, { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneApplicationCredential', metadata: { name: `app-${i}` }, spec: spec(i) });
};

/** Synthesizes one app of `count` orders; returns the milliseconds and the YAML written. */
function synth(build: Build, count: number, parent: string): { ms: number; yaml: string } {
  const outdir = mkdtempSync(join(parent, 'out-'));
  const t0 = performance.now();
  const app = new App({ outdir });
  const chart = new Chart(app, 'orders', { namespace: 'tenant-a' });
  for (let i = 0; i < count; i++) build(chart, i);
  app.synth();
  const elapsed = performance.now() - t0;
  const yaml = readdirSync(outdir).map((f) => readFileSync(join(outdir, f), 'utf8')).join('');
  rmSync(outdir, { recursive: true, force: true });
  return { ms: elapsed, yaml };
}

function main(): void {
  const count = Number(process.argv[2] ?? 1000);
  const rounds = Number(process.argv[3] ?? 15);
  const work = mkdtempSync(join(tmpdir(), 'kac-bench-synth-'));
  try {
    const a = synth(typed, count, work);
    const b = synth(plain, count, work);
    if (a.yaml !== b.yaml) throw new Error('the typed and the plain app wrote different manifests');
    const t: number[] = [];
    const p: number[] = [];
    for (let r = 0; r < rounds; r++) {
      // Alternate which goes first, so neither always runs right after a collection of the other's garbage.
      if (r % 2 === 0) {
        t.push(synth(typed, count, work).ms);
        p.push(synth(plain, count, work).ms);
      } else {
        p.push(synth(plain, count, work).ms);
        t.push(synth(typed, count, work).ms);
      }
    }
    const ratio = median(t) / median(p);
    printTable(
      `cdk8s synth of ${count} KeystoneApplicationCredential orders`,
      `${conditions('no Keystone')}; median of ${rounds} interleaved rounds; identical manifests checked`,
      [{ figure: `synth, ${count} typed orders`, value: ms(median(t)), baseline: `${ms(median(p))} (${count} ApiObjects)`, ratio, goal: `≤ ${GOAL}×`, met: ratio <= GOAL }],
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main();
