/**
 * The code's shape (GUIDE, Style; issue 47): no import circle and no hand-written source file over 400 lines.
 *
 * The import graph is dependency-cruiser's (its rule in .dependency-cruiser.cjs), over every folder of code: src/,
 * constructs/, tools/, bench/, test/, examples/; type-only imports count. The cruiser runs as its command (it is an
 * ES module, which Jest's CommonJS runtime cannot load), once, with a circle of two modules written for the run beside
 * the repository's, so the test proves in the same run that a circle, even of types, is found.
 *
 * The sizes are of the files git tracks in src/, constructs/, tools/, bench/ and examples/: the code the package ships,
 * builds and measures with (the tests' files are counted by neither the issue nor this test).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(__dirname, '..', '..', '..');

/** The folders whose import graph must have no circle. */
const GRAPH_FOLDERS = ['src', 'constructs', 'tools', 'bench', 'test', 'examples'];

/** The folders whose hand-written source files must stay within {@link MAX_LINES}. */
const SIZE_FOLDERS = ['src', 'constructs', 'tools', 'bench', 'examples'];

const MAX_LINES = 400;

/** Source files by extension (the examples hold Python, Go and Java besides TypeScript). */
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs|py|go|java|cs|sh)$/;

/** Generated files, with the reason: they are made by a tool from a schema, not written. */
const GENERATED: readonly { readonly prefix: string; readonly why: string }[] = [
  { prefix: 'constructs/imports/', why: '`cdk8s import` of the prometheus-operator CRDs (the command in the file\'s header)' },
];

interface Cruise {
  readonly modules: readonly { readonly source: string; readonly dependencies: readonly { readonly module: string; readonly resolved: string; readonly couldNotResolve: boolean }[] }[];
  readonly summary: { readonly violations: readonly { readonly rule: { readonly name: string }; readonly from: string; readonly cycle?: readonly ({ readonly name: string } | string)[] }[] };
}

/** Every circle dependency-cruiser reports, each as `a → b → a` from its first module, once. */
function circles(cruise: Cruise): string[] {
  const seen = new Map<string, string>();
  for (const v of cruise.summary.violations) {
    if (v.rule.name !== 'no-circular') continue;
    const cycle = (v.cycle ?? []).map((step) => (typeof step === 'string' ? step : step.name));
    const key = [...cycle].sort().join('\n');
    if (!seen.has(key)) seen.set(key, [v.from, ...cycle].join(' → '));
  }
  return [...seen.values()].sort();
}

function lineCount(path: string): number {
  const text = readFileSync(join(REPO, path), 'utf8');
  return text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('the import graph', () => {
  let cruise: Cruise;
  let probe: string;

  beforeAll(() => {
    probe = mkdtempSync(join(tmpdir(), 'kac-circle-'));
    writeFileSync(join(probe, 'one.ts'), "import type { Two } from './two';\nexport interface One { readonly two?: Two }\n");
    writeFileSync(join(probe, 'two.ts'), "import type { One } from './one';\nexport interface Two { readonly one?: One }\n");
    const result = spawnSync(join(REPO, 'node_modules', '.bin', 'depcruise'), ['--output-type', 'json', ...GRAPH_FOLDERS, probe], { cwd: REPO, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    // Exit code: the number of errors (the probe's circle is one).
    if (result.stdout === '') throw new Error(`depcruise printed nothing (${String(result.status ?? result.error)}):\n${result.stderr}`);
    cruise = JSON.parse(result.stdout) as Cruise;
  }, 120_000);

  afterAll(() => rmSync(probe, { recursive: true, force: true }));

  it('reads every folder and resolves every relative import', () => {
    const sources = cruise.modules.map((m) => m.source);
    for (const folder of GRAPH_FOLDERS) expect([folder, sources.some((s) => s.startsWith(`${folder}/`))]).toEqual([folder, true]);
    expect(sources.length).toBeGreaterThan(400);
    const unresolved = cruise.modules.flatMap((m) => m.dependencies.filter((d) => d.couldNotResolve && d.module.startsWith('.')).map((d) => `${m.source} imports ${d.module}`));
    expect(unresolved).toEqual([]);
  });

  it('finds a circle, even of type-only imports (the probe written for this run)', () => {
    expect(circles(cruise).filter((c) => c.includes('kac-circle-'))).toHaveLength(1);
  });

  it('has no circle in the repository', () => {
    expect(circles(cruise).filter((c) => !c.includes('kac-circle-'))).toEqual([]);
  });
});

describe('the source files', () => {
  const tracked = spawnSync('git', ['ls-files', '-z', '--', ...SIZE_FOLDERS], { cwd: REPO, encoding: 'utf8' })
    .stdout.split('\0')
    .filter((path) => SOURCE.test(path));
  const handWritten = tracked.filter((path) => !GENERATED.some((g) => path.startsWith(g.prefix)));

  it('are listed by git, generated ones apart', () => {
    expect(handWritten.length).toBeGreaterThan(250);
    for (const g of GENERATED) expect([g.prefix, tracked.some((path) => path.startsWith(g.prefix))]).toEqual([g.prefix, true]);
  });

  it(`are at most ${MAX_LINES} lines each, every hand-written one`, () => {
    const over = handWritten.map((path) => ({ path, lines: lineCount(path) })).filter((f) => f.lines > MAX_LINES);
    expect(over.map((f) => `${f.path}: ${f.lines} lines`)).toEqual([]);
  });
});
