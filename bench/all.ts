/**
 * `npm run bench`: every benchmark in turn with modest defaults (about 20 minutes on 2 cores), each as its own process,
 * its table printed as it finishes. The full-size commands (the figures in docs/benchmarks.md) are in each bench's
 * header and in docs/benchmarks.md; `npm run bench -- operator synth` runs only the benches named.
 *
 *   npm run bench            # npm run build first (the Pulumi programs and the operator load lib/), then this
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const REPO = resolve(__dirname, '..');

/** The benches and their modest arguments (see each file's header for what they mean and the full-size ones). */
const BENCHES: Readonly<Record<string, readonly string[]>> = {
  synth: ['1000', '11'],
  lifecycle: ['15', '4'],
  'pulumi-up': ['20', '2', '4'],
  'pulumi-plugin': ['10', '2', '4', '11'],
  operator: ['500', '1', '100', '4'],
  handoff: ['2000', '2'],
  image: ['3'],
  metrics: ['1000', '5000'],
  'shared-strings': ['5000'],
  'least-privilege': ['5', '4'],
  outage: ['20', '1', '1', '4'],
  raise: ['100', '12', '1', '30'],
};

function main(): void {
  const wanted = process.argv.slice(2);
  const names = wanted.length > 0 ? wanted : Object.keys(BENCHES);
  const unknown = names.filter((n) => !(n in BENCHES));
  if (unknown.length > 0) throw new Error(`unknown bench ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
  const failed: string[] = [];
  for (const name of names) {
    const args = BENCHES[name];
    process.stderr.write(`\n[bench] ${name} ${args.join(' ')}\n`);
    const t0 = Date.now();
    const tsx = join(REPO, 'node_modules', '.bin', 'tsx');
    const result = spawnSync(tsx, [join(REPO, 'bench', `${name}.ts`), ...args], { cwd: REPO, stdio: 'inherit' });
    process.stderr.write(`[bench] ${name} took ${Math.round((Date.now() - t0) / 1000)} s (exit ${result.status ?? result.signal})\n`);
    if (result.status !== 0) failed.push(name);
  }
  if (failed.length > 0) {
    process.stderr.write(`[bench] failed: ${failed.join(', ')}\n`);
    process.exit(1);
  }
}

main();
