/**
 * Builds the jsii package of the construct library and caches it by a hash of its inputs, as the image and the test
 * binaries are cached: `~/.cache/keystone-appcred/jsii-<version>-<hash>/` (the root overridden with `KAC_CACHE_DIR`).
 *
 * - `assembly`: the staged package (tools/jsii/stage.ts) compiled with `jsii` into `stage/.jsii` and `stage/lib/`.
 * - each language: one `jsii-pacmak --recurse` run for every language not built yet, which builds them in parallel
 *   (its own `--parallel`) into `dist/<language>/`: Python a wheel and an sdist, Go the module's directory, Java a
 *   local Maven repository, .NET a NuGet package where `dotnet` is on PATH (skipped with a message elsewhere), and the
 *   npm tarball (`dist/js/`). `--recurse` builds the peers' bindings too (`cdk8s`, `constructs`, `cdk8s-plus-33`) from
 *   their npm packages at the versions the TypeScript side uses: the Go module proxy answers 403 for every version of
 *   `github.com/cdk8s-team/cdk8s-core-go` and `cdk8s-plus-go`, and Maven Central has no `org.cdk8s:cdk8s` 2.70.x nor
 *   `cdk8s-plus-33` 2.5.x, so the Go and Java examples take the peers from here (Python takes them from PyPI).
 * - `docs`: the API reference per language from the assembly's TSDoc (`jsii-docgen`, as Construct Hub renders it)
 *   into `docs/API.<language>.md`.
 *
 * The hash covers every staged file (the sources, the generated package.json and tsconfig, README, LICENSE) and the
 * versions of jsii, jsii-pacmak, jsii-rosetta, jsii-docgen and the peers. Each step leaves a marker with its time, so
 * a partial cache is completed, not rebuilt. What each step took, fresh, is kept in `timings.json`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { installedVersion, PEERS, ROOT, rootPackage } from './package';
import { stage } from './stage';

/** The languages jsii-pacmak builds. */
export const LANGUAGES = ['python', 'go', 'java', 'dotnet'] as const;
export type Language = (typeof LANGUAGES)[number];

/** The languages jsii-docgen documents (its names: `csharp` is .NET's). */
export const DOC_LANGUAGES = ['typescript', 'python', 'go', 'java', 'csharp'] as const;

/** The tools whose versions are part of the hash. */
const TOOLS = ['jsii', 'jsii-pacmak', 'jsii-rosetta', 'jsii-docgen'] as const;

/** Where the test binaries, the image and these builds are cached. */
export function cacheRoot(): string {
  return process.env.KAC_CACHE_DIR ?? join(homedir(), '.cache', 'keystone-appcred');
}

/** `command` on PATH, or undefined. */
export function onPath(command: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
  return found === '' ? undefined : found;
}

/** The languages this machine can build: .NET only where `dotnet` is on PATH. */
export function buildableLanguages(): Language[] {
  return LANGUAGES.filter((l) => l !== 'dotnet' || onPath('dotnet') !== undefined);
}

/** Every file under `dir` (relative), sorted, skipping node_modules. */
function filesUnder(dir: string, base: string = dir): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      if (entry.name === 'node_modules') return [];
      const path = join(dir, entry.name);
      return entry.isDirectory() ? filesUnder(path, base) : [relative(base, path)];
    })
    .sort();
}

/** The hash of a staged directory and the tool and peer versions. */
export function inputsHash(stageDir: string, root: string = ROOT): string {
  const hash = createHash('sha256');
  for (const file of filesUnder(stageDir)) hash.update(`${file}\0`).update(readFileSync(join(stageDir, file))).update('\0');
  for (const name of [...TOOLS, ...PEERS]) hash.update(`${name}@${installedVersion(name, root)}\0`);
  return hash.digest('hex').slice(0, 16);
}

/** A built jsii package in the cache. */
export interface JsiiBuild {
  /** The cache directory of this build. */
  readonly dir: string;
  /** The staged and compiled package (`.jsii`, `lib/`). */
  readonly stage: string;
  /** The assembly file. */
  readonly assembly: string;
  /** jsii-pacmak's output: `python/`, `go/`, `java/`, `dotnet/`, `js/`. */
  readonly dist: string;
  /** The API reference per language. */
  readonly docs: string;
  /** Seconds each step took when it was built (`assembly`, `pacmak`, each language, `docs`). */
  readonly timings: Readonly<Record<string, number>>;
  /** The steps this call ran (empty: everything came from the cache). */
  readonly built: readonly string[];
}

/** Runs a tool in `cwd`; throws with its output's tail on failure. */
function runTool(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 1_800_000): string {
  const result = spawnSync(command, [...args], { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 256 * 1024 * 1024 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed (${String(result.status ?? result.error)}):\n${output.slice(-6000)}`);
  return output;
}

/** {@link runTool}, without blocking: for the builds that run side by side. */
function runToolAsync(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} (in ${cwd}) failed (${String(code)}):\n${output.slice(-6000)}`));
    });
  });
}

/** The environment of the jsii tools: the Node running this (Node 24) first on PATH, so the jsii kernel runs on it too. */
function toolEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`, JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION: '1' };
}

const bin = (name: string): string => join(ROOT, 'node_modules', '.bin', name);

/** Seconds since `start`, to a tenth. */
const since = (start: number): number => Math.round((Date.now() - start) / 100) / 10;

/** Per-language times from jsii-pacmak's last line: `Packaged. python (19.9s) | go (1m47.7s) | ...`. */
export function pacmakTimings(output: string): Record<string, number> {
  const line = output.split('\n').reverse().find((l) => l.includes('Packaged.')) ?? '';
  const out: Record<string, number> = {};
  for (const match of line.matchAll(/([a-z]+) \((?:(\d+)m)?([\d.]+)s\)/g)) out[match[1]] = Number(match[2] ?? 0) * 60 + Number(match[3]);
  return out;
}

function readTimings(dir: string): Record<string, number> {
  const file = join(dir, 'timings.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>) : {};
}

/**
 * Builds (or finds in the cache) the jsii package with `languages` (default: every language this machine can build)
 * and, unless `docs` is false, the API reference. Progress goes to `log` (stderr by default). The caller that may run
 * beside another build of the same inputs holds a lock (test/support/jsii.ts does).
 */
export async function buildJsii(options: { languages?: readonly Language[]; docs?: boolean; log?: (line: string) => void; root?: string } = {}): Promise<JsiiBuild> {
  const root = options.root ?? ROOT;
  const log = options.log ?? ((line: string) => void process.stderr.write(`[jsii] ${line}\n`));
  const languages = options.languages ?? buildableLanguages();
  const scratch = join(cacheRoot(), `jsii-stage-${process.pid}`);
  stage(scratch, root);
  const hash = inputsHash(scratch, root);
  const dir = join(cacheRoot(), `jsii-${rootPackage(root).version}-${hash}`);
  const stageDir = join(dir, 'stage');
  const dist = join(dir, 'dist');
  const docs = join(dir, 'docs');
  const timings = readTimings(dir);
  const built: string[] = [];
  const mark = (step: string, seconds: number): void => {
    timings[step] = seconds;
    built.push(step);
    writeFileSync(join(dir, 'timings.json'), `${JSON.stringify(timings, null, 2)}\n`);
    writeFileSync(join(dir, `${step}.done`), `${seconds}\n`);
  };
  const done = (step: string): boolean => existsSync(join(dir, `${step}.done`));

  if (!done('assembly')) {
    log(`compiling the assembly into ${dir}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    renameSync(scratch, stageDir);
    const start = Date.now();
    // reserved-word: `namespace`, `operator`, `ref` are C# keywords, which jsii-pacmak escapes (as cdk8s-plus does).
    runTool(bin('jsii'), ['--silence-warnings=reserved-word'], stageDir, toolEnv());
    mark('assembly', since(start));
  } else {
    rmSync(scratch, { recursive: true, force: true });
    // The stage's link to node_modules (the peers' assemblies) points at the repository that staged it: this one's now.
    rmSync(join(stageDir, 'node_modules'), { force: true });
    symlinkSync(join(root, 'node_modules'), join(stageDir, 'node_modules'), 'dir');
  }

  const missing = languages.filter((l) => !done(l));
  if (missing.length > 0) {
    log(`jsii-pacmak: ${missing.join(', ')}`);
    const start = Date.now();
    for (const l of missing) rmSync(join(dist, l), { recursive: true, force: true });
    // Maven's javadoc of cdk8s-plus-33's bindings is the longest part of a Java build and no example reads it (the API
    // reference is jsii-docgen's); KAC_JSII_JAVADOC=1 builds the javadoc jars, as a release to Maven Central would.
    const javadoc = process.env.KAC_JSII_JAVADOC === '1' ? [] : ['--mvn-define=maven.javadoc.skip=true'];
    // Two runs side by side: Go and Java with `--recurse` (their peers' bindings, which their registries lack), Python
    // and .NET without (PyPI and NuGet serve the peers at these versions). `-v` prints the time of each language.
    const recursive = (l: Language): boolean => l === 'go' || l === 'java';
    const groups = [missing.filter(recursive), missing.filter((l) => !recursive(l))].filter((g) => g.length > 0);
    const outputs = await Promise.all(
      groups.map((group) => {
        const recurse = group.some(recursive) ? ['--recurse'] : [];
        // The npm tarball of keystone-appcred-cdk8s (`dist/js/`) comes with the run that does not recurse.
        const targets = [...group, ...(recurse.length === 0 ? ['js'] : [])].flatMap((l) => ['--target', l]);
        return runToolAsync(bin('jsii-pacmak'), ['-v', ...recurse, '--outdir', dist, ...javadoc, ...targets], stageDir, toolEnv(), 3_600_000);
      }),
    );
    const each = Object.assign({}, ...outputs.map(pacmakTimings)) as Record<string, number>;
    timings.pacmak = since(start);
    for (const l of missing) mark(l, each[l] ?? since(start));
  }
  if (options.languages === undefined && !onPath('dotnet')) log('no `dotnet` on PATH: the .NET package (nupkg) is not built');

  if (options.docs !== false && !done('docs')) {
    const start = Date.now();
    mkdirSync(docs, { recursive: true });
    for (const language of DOC_LANGUAGES) runTool(bin('jsii-docgen'), ['-l', language, '-o', join(docs, `API.${language}.md`)], stageDir, toolEnv());
    mark('docs', since(start));
  }
  return { dir, stage: stageDir, assembly: join(stageDir, '.jsii'), dist, docs, timings, built };
}

/** The size in bytes of a file or a directory's files. */
export function sizeOf(path: string): number {
  const stat = statSync(path);
  return stat.isDirectory() ? readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0) : stat.size;
}
