/**
 * Builds the jsii package of the construct library and caches it by a hash of its inputs, as the image and the test
 * binaries are cached, in `~/.cache/keystone-appcred/` (the root overridden with `KAC_CACHE_DIR`):
 *
 * - `jsii-<version>-<hash>/`: the library's own build.
 *   - `assembly`: the staged package (tools/jsii/stage.ts) compiled with `jsii` into `stage/.jsii` and `stage/lib/`.
 *   - each language: `jsii-pacmak` into `dist/<language>/`: Python a wheel and an sdist, Go the module's directory,
 *     Java a local Maven repository, .NET a NuGet package where `dotnet` is on PATH (skipped with a message
 *     elsewhere), and the npm tarball (`dist/js/`). Python (with .NET and npm) and Go with Java are two runs side by
 *     side (pacmak's own `--parallel` inside each).
 *   - `docs`: the API reference per language from the assembly's TSDoc (`jsii-docgen`, as Construct Hub renders it)
 *     into `docs/API.<language>.md`.
 * - `jsii-peers-<language>-<hash>/`: the peers' bindings (`cdk8s`, `constructs`) in Go and in Java, which their
 *   registries lack (the Go module proxy answers 403 for every version of `github.com/cdk8s-team/cdk8s-core-go`, and
 *   Maven Central has no `org.cdk8s:cdk8s` 2.70.x): built by jsii-pacmak from their npm packages at the versions the
 *   TypeScript side uses, keyed by those versions, jsii-pacmak's and jsii-rosetta's, and the language's toolchain
 *   (`go version`; `javac -version` and `mvn --version`). A change of constructs/ leaves them alone: the library's
 *   Go and Java builds copy them into their `dist/` (where pacmak resolves a dependency built beside it, and where the
 *   examples' go.mod and pom.xml find them) and build only the library's own bindings. Python and .NET take the peers
 *   from PyPI and NuGet.
 * - `maven-repository/`: the Maven local repository of every jsii-pacmak Java build (Maven's plugins, the jsii runtime,
 *   `software.constructs:constructs`), downloaded once rather than by every build into a scratch directory.
 *
 * The library's hash covers every staged file (the sources, the generated package.json and tsconfig, README, LICENSE),
 * the versions of jsii, jsii-pacmak, jsii-rosetta and jsii-docgen, and the packages the stage's node_modules holds (the
 * peers and the Node types, tools/jsii/stage.ts); each language's marker holds the
 * toolchain it was built with, so a new toolchain rebuilds that language. Each step leaves a marker, so a partial cache
 * is completed, not rebuilt. What each step took, when built, is kept in `timings.json`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { withLock } from '../lock';
import { installedVersion, PEERS, ROOT, rootPackage } from './package';
import { stage, stagedPackages } from './stage';

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

/** The hash of a staged directory, the tools' versions and the packages of the stage's node_modules. */
export function inputsHash(stageDir: string, root: string = ROOT): string {
  const hash = createHash('sha256');
  for (const file of filesUnder(stageDir)) hash.update(`${file}\0`).update(readFileSync(join(stageDir, file))).update('\0');
  for (const name of TOOLS) hash.update(`${name}@${installedVersion(name, root)}\0`);
  for (const entry of stagedPackages(root)) hash.update(`${entry}\0`);
  return hash.digest('hex').slice(0, 16);
}

/** The lock every build holds while it reads and writes the cache: one build at a time per machine (per cache root). */
export function jsiiLock(): string {
  return join(cacheRoot(), 'jsii.lock');
}

/** A built jsii package in the cache. */
export interface JsiiBuild {
  /** The cache directory of this build. */
  readonly dir: string;
  /**
   * The staged and compiled package (`.jsii`, `lib/`, and a node_modules of its own): written once, by the build that
   * compiled it, and read alike from every checkout, whichever staged it and whether or not that one still exists.
   */
  readonly stage: string;
  /** The assembly file. */
  readonly assembly: string;
  /** jsii-pacmak's output: `python/`, `go/`, `java/`, `dotnet/`, `js/`. */
  readonly dist: string;
  /** The API reference per language. */
  readonly docs: string;
  /**
   * Seconds each step took when it was built: `assembly`, `pacmak` (the languages' wall time), each language,
   * `peers-<language>` (the peers' bindings, when this build made them), `docs`.
   */
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

/** The languages whose registries lack the peers' bindings at these versions: built from npm, cached apart. */
export const PEER_LANGUAGES: readonly Language[] = ['go', 'java'];

/** Whether the Java builds make javadoc jars (`KAC_JSII_JAVADOC=1`; skipped by default: no example reads them). */
const javadoc = (): boolean => process.env.KAC_JSII_JAVADOC === '1';

/** The commands whose output names a language's toolchain. */
const TOOLCHAIN: Readonly<Record<Language, readonly (readonly string[])[]>> = {
  python: [['python3', '--version']],
  go: [['go', 'version']],
  java: [['javac', '-version'], ['mvn', '--version']],
  dotnet: [['dotnet', '--version']],
};

const toolchains = new Map<Language, string>();

/**
 * The toolchain a language is built with, as its version commands print it (the first line of each, colours
 * stripped), and for Java whether javadoc jars are built: part of the peers' cache key and of each language's marker.
 */
export function toolchain(language: Language): string {
  let found = toolchains.get(language);
  if (found === undefined) {
    const lines = TOOLCHAIN[language].map(([command, ...args]) => {
      const result = spawnSync(command, args, { encoding: 'utf8' });
      // eslint-disable-next-line no-control-regex
      const first = `${result.stdout ?? ''}${result.stderr ?? ''}`.replace(/\u001b\[[0-9;]*m/g, '').trim().split('\n')[0] ?? '';
      return result.error ? `${command}: ${result.error.message}` : first;
    });
    found = [...lines, ...(language === 'java' ? [`javadoc ${javadoc() ? 'built' : 'skipped'}`] : [])].join('; ');
    toolchains.set(language, found);
  }
  return found;
}

/** The Maven local repository of the jsii builds (and of the tests' Java example), so Maven fetches each artifact once. */
export function mavenRepository(): string {
  return join(cacheRoot(), 'maven-repository');
}

/** The arguments every jsii-pacmak run takes: the one Maven local repository, javadoc as configured. */
function pacmakArgs(): string[] {
  return [`--maven-local-repository=${mavenRepository()}`, ...(javadoc() ? [] : ['--mvn-define=maven.javadoc.skip=true'])];
}

/** The cache directory of the peers' bindings in `language`: keyed by the peers' and the tools' versions and the toolchain. */
export function peersDir(language: Language, root: string = ROOT): string {
  const hash = createHash('sha256').update(`${language}\0${toolchain(language)}\0`);
  for (const name of [...PEERS, 'jsii-pacmak', 'jsii-rosetta']) hash.update(`${name}@${installedVersion(name, root)}\0`);
  return join(cacheRoot(), `jsii-peers-${language}-${hash.digest('hex').slice(0, 16)}`);
}

/**
 * Builds the peers' bindings in each of `languages` not cached yet: one jsii-pacmak run over the peers' npm packages,
 * each language's output then moved into its own cache directory. Returns the seconds each language took (empty when
 * everything was cached).
 */
async function buildPeers(languages: readonly Language[], root: string, log: (line: string) => void): Promise<Record<string, number>> {
  const missing = languages.filter((l) => !existsSync(join(peersDir(l, root), 'done')));
  if (missing.length === 0) return {};
  log(`jsii-pacmak: the peers (${PEERS.join(', ')}) in ${missing.join(', ')}`);
  const scratch = join(cacheRoot(), `jsii-peers-scratch-${process.pid}`);
  rmSync(scratch, { recursive: true, force: true });
  const start = Date.now();
  try {
    const packages = PEERS.map((p) => join(root, 'node_modules', p));
    const output = await runToolAsync(bin('jsii-pacmak'), ['-v', '--outdir', scratch, ...pacmakArgs(), ...packages, ...missing.flatMap((l) => ['--target', l])], root, toolEnv(), 3_600_000);
    const each = pacmakTimings(output);
    for (const language of missing) {
      const dir = peersDir(language, root);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(join(dir, 'dist'), { recursive: true });
      renameSync(join(scratch, language), join(dir, 'dist', language));
      writeFileSync(join(dir, 'done'), `${JSON.stringify({ toolchain: toolchain(language), peers: PEERS.map((p) => `${p}@${installedVersion(p, root)}`), seconds: each[language] ?? since(start) }, null, 2)}\n`);
    }
    return Object.fromEntries(missing.map((l) => [l, each[l] ?? since(start)]));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** What {@link buildJsii} builds, from where, and where it tells its progress. */
export interface JsiiBuildOptions {
  /** The languages. @default every language this machine can build ({@link buildableLanguages}) */
  readonly languages?: readonly Language[];
  /** Whether the API reference is built too. @default true */
  readonly docs?: boolean;
  /** Where progress goes. @default stderr */
  readonly log?: (line: string) => void;
  /** The checkout to build. @default this one */
  readonly root?: string;
}

/**
 * Builds (or finds in the cache) the jsii package of the checkout at `root` with `languages` (default: every language
 * this machine can build) and, unless `docs` is false, the API reference. Progress goes to `log` (stderr by default).
 *
 * Builds from several checkouts and processes may run at once (`npm run jsii` in one, the tests in another): each
 * stages into a directory of its own, then holds {@link jsiiLock} while it reads and writes the cache, so no two write
 * it at once and a build of the same inputs waits for the first and finds its result. What the cache holds refers to no
 * checkout (the stage has its own node_modules), so deleting a checkout breaks no other build, then or later.
 */
export async function buildJsii(options: JsiiBuildOptions = {}): Promise<JsiiBuild> {
  const root = options.root ?? ROOT;
  const log = options.log ?? ((line: string) => void process.stderr.write(`[jsii] ${line}\n`));
  mkdirSync(cacheRoot(), { recursive: true });
  const scratch = mkdtempSync(join(cacheRoot(), 'jsii-stage-'));
  try {
    stage(scratch, root);
    return await withLock(jsiiLock(), () => buildStaged(scratch, root, options, log), { log });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** {@link buildJsii} of the stage in `scratch`, holding the lock: moves it into the cache when it is the first. */
async function buildStaged(scratch: string, root: string, options: JsiiBuildOptions, log: (line: string) => void): Promise<JsiiBuild> {
  const languages = options.languages ?? buildableLanguages();
  const hash = inputsHash(scratch, root);
  const dir = join(cacheRoot(), `jsii-${rootPackage(root).version}-${hash}`);
  const stageDir = join(dir, 'stage');
  const dist = join(dir, 'dist');
  const docs = join(dir, 'docs');
  const timings = readTimings(dir);
  const built: string[] = [];
  const mark = (step: string, seconds: number, marker = `${seconds}\n`): void => {
    timings[step] = seconds;
    built.push(step);
    writeFileSync(join(dir, 'timings.json'), `${JSON.stringify(timings, null, 2)}\n`);
    writeFileSync(join(dir, `${step}.done`), marker);
  };
  const done = (step: string): boolean => existsSync(join(dir, `${step}.done`));
  // A language is built when its marker names this machine's toolchain for it.
  const languageDone = (l: Language): boolean => done(l) && readFileSync(join(dir, `${l}.done`), 'utf8') === `${toolchain(l)}\n`;

  if (!done('assembly')) {
    log(`compiling the assembly into ${dir}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    renameSync(scratch, stageDir);
    const start = Date.now();
    // reserved-word: `namespace`, `operator`, `ref` are C# keywords, which jsii-pacmak escapes (as cdk8s-plus does).
    runTool(bin('jsii'), ['--silence-warnings=reserved-word'], stageDir, toolEnv());
    mark('assembly', since(start));
  }

  const missing = languages.filter((l) => !languageDone(l));
  if (missing.length > 0) {
    log(`jsii-pacmak: ${missing.join(', ')}`);
    const start = Date.now();
    for (const l of missing) rmSync(join(dist, l), { recursive: true, force: true });
    // One run for the languages that need the peers' bindings (built or taken from their cache first, then copied in
    // beside the library's, where pacmak resolves them), one beside it for the others with the npm tarball.
    const withPeers = missing.filter((l) => PEER_LANGUAGES.includes(l));
    const alone = missing.filter((l) => !PEER_LANGUAGES.includes(l));
    const pacmak = (targets: readonly string[]) =>
      runToolAsync(bin('jsii-pacmak'), ['-v', '--outdir', dist, ...pacmakArgs(), ...targets.flatMap((t) => ['--target', t])], stageDir, toolEnv(), 3_600_000);
    const runs: Promise<Record<string, number>>[] = [];
    if (withPeers.length > 0) {
      runs.push(
        (async () => {
          const peers = await buildPeers(withPeers, root, log);
          for (const l of withPeers) cpSync(join(peersDir(l, root), 'dist', l), join(dist, l), { recursive: true });
          const own = pacmakTimings(await pacmak(withPeers));
          return { ...Object.fromEntries(Object.entries(peers).map(([l, seconds]) => [`peers-${l}`, seconds])), ...own };
        })(),
      );
    }
    if (alone.length > 0) runs.push(pacmak([...alone, 'js']).then(pacmakTimings));
    const each = Object.assign({}, ...(await Promise.all(runs))) as Record<string, number>;
    timings.pacmak = since(start);
    for (const [step, seconds] of Object.entries(each)) if (step.startsWith('peers-')) timings[step] = seconds;
    for (const l of missing) mark(l, each[l] ?? since(start), `${toolchain(l)}\n`);
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
