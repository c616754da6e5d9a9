/**
 * Builds the `keystone-appcred` Pulumi provider plugin and its SDKs.
 *
 *   tsx tools/plugin.ts bundle [OUT]   bundles src/pulumi/plugin/main.ts with everything it loads (the lifecycle engine,
 *                                      @pulumi/pulumi's provider server) into one executable file, by default
 *                                      lib/plugin/pulumi-resource-keystone-appcred (`npm run build` does this)
 *   tsx tools/plugin.ts schema [OUT]   writes the package schema (default sdk/schema.json)
 *   tsx tools/plugin.ts sdk [DIR]      writes the schema and generates the SDKs with `pulumi package gen-sdk` into DIR
 *                                      (default sdk/, `npm run sdk`): Python, Go and .NET, with the tests' Pulumi CLI
 *                                      and code-generating language hosts (test/support/pulumi-sdk.ts; built into
 *                                      ~/.cache/keystone-appcred on first use). Files of SDK_KEPT are kept. Into the
 *                                      default sdk/, it then builds the artifacts, as `artifacts` does.
 *   tsx tools/plugin.ts artifacts [OUT]  builds the SDKs' installable artifacts from sdk/ into OUT (default lib/sdk/,
 *                                      which the npm package ships; `npm run sdk:artifacts`, and `prepack`): the
 *                                      Python wheel and sdist (`python -m build` on setuptools, in the tests' Python
 *                                      venv, build-test-binaries.sh `pulumi-python`, or KAC_PULUMI_PYTHON_BIN) into
 *                                      OUT/python, and the .NET package (`dotnet pack`) into OUT/dotnet where `dotnet`
 *                                      is on PATH. The Go SDK needs none: its directory is the module a program
 *                                      `replace`s. Each builds from a copy, so nothing is written into sdk/.
 *
 * Every command prints the paths it wrote on stderr, never stdout: `prepack` runs them, and `npm pack --json` prints
 * its JSON on the same stdout.
 *
 * One file, because Pulumi runs a plugin either from PATH or from its plugin directory, where `pulumi plugin install
 * --file` copies the single file it is given: a plugin that `require`s modules beside it would not start there.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { buildSync } from 'esbuild';
import { packageSchema } from '../src/pulumi/plugin/schema';

export const ROOT = resolve(__dirname, '..');
/** The executable's name: Pulumi looks for `pulumi-resource-<package>`. */
export const PLUGIN = 'pulumi-resource-keystone-appcred';
export const DEFAULT_BUNDLE = join(ROOT, 'lib', 'plugin', PLUGIN);
export const SDK_DIR = join(ROOT, 'sdk');
/** Where `artifacts` writes by default: inside lib/, which git ignores and the npm package ships (`files`). */
export const ARTIFACTS_DIR = join(ROOT, 'lib', 'sdk');
/** The SDK languages `sdk` generates. */
export const SDK_LANGUAGES = ['python', 'go', 'dotnet'] as const;
/**
 * Files of sdk/<language> that are not generated and that generation keeps: the Go SDK's module (gen-sdk writes the
 * package, not a go.mod), so that a Go program can `replace` its path with this directory.
 */
export const SDK_KEPT: Readonly<Record<(typeof SDK_LANGUAGES)[number], readonly string[]>> = { python: [], go: ['go.mod', 'go.sum'], dotnet: [] };

/** The package's version (the plugin's and the schema's). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The schema as `pulumi package gen-sdk` reads it. */
export function schemaText(version: string = packageVersion()): string {
  return `${JSON.stringify(packageSchema(version), null, 2)}\n`;
}

/** Bundles the plugin into `out` (an executable script for `node`). */
export function bundlePlugin(out: string = DEFAULT_BUNDLE): string {
  mkdirSync(dirname(out), { recursive: true });
  buildSync({
    entryPoints: [join(ROOT, 'src', 'pulumi', 'plugin', 'main.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    define: { KAC_PACKAGE_VERSION: JSON.stringify(packageVersion()) },
    logLevel: 'warning',
    legalComments: 'none',
  });
  chmodSync(out, 0o755);
  return out;
}

/** Writes the schema to `file`. */
export function writeSchema(file: string = join(SDK_DIR, 'schema.json')): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, schemaText());
  return file;
}

/**
 * Generates the SDKs from the schema with `pulumi package gen-sdk` (the CLI `pulumi`, run with `env`) into
 * `dir/<language>`, which it replaces but for the files of {@link SDK_KEPT}; writes `dir/schema.json`.
 */
export function generateSdks(dir: string, pulumi: string, env: NodeJS.ProcessEnv): void {
  const schema = writeSchema(join(dir, 'schema.json'));
  const scratch = mkdtempSync(join(tmpdir(), 'kac-sdk-'));
  try {
    for (const language of SDK_LANGUAGES) {
      const result = spawnSync(pulumi, ['package', 'gen-sdk', schema, '--language', language, '--out', scratch], { encoding: 'utf8', env, timeout: 300_000 });
      if (result.status !== 0) throw new Error(`pulumi package gen-sdk --language ${language} failed (${String(result.status ?? result.error)}):\n${result.stdout}${result.stderr}`);
      const target = join(dir, language);
      for (const entry of existsSync(target) ? readdirSync(target) : []) {
        if (!SDK_KEPT[language].includes(entry)) rmSync(join(target, entry), { recursive: true, force: true });
      }
      cpSync(join(scratch, language), target, { recursive: true });
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Runs a build tool; a failure throws with its output (which names no secret: these builds have none). */
function runTool(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(command, [...args], { cwd, env, encoding: 'utf8', timeout: 600_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${String(result.status ?? result.error)}):\n${result.stdout}${result.stderr}`);
}

/** The files of `dir` whose names end in one of `suffixes`, as paths. */
function filesEnding(dir: string, suffixes: readonly string[]): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((f) => suffixes.some((s) => f.endsWith(s))).sort().map((f) => join(dir, f)) : [];
}

/**
 * Builds the Python SDK's wheel and sdist from a copy of `sdk/python` into `out` (emptied first) with `python -m build
 * --no-isolation` (the interpreter's own setuptools and `build`, no download). Returns the two files.
 */
export function buildPythonArtifacts(python: string, out: string, sdk: string = join(SDK_DIR, 'python')): string[] {
  const scratch = mkdtempSync(join(tmpdir(), 'kac-wheel-'));
  try {
    // setuptools writes build/ and *.egg-info into the source tree, which may be a read-only installed package.
    cpSync(sdk, join(scratch, 'python'), { recursive: true });
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    runTool(python, ['-m', 'build', '--no-isolation', '--sdist', '--wheel', '--outdir', out, join(scratch, 'python')], scratch, { ...process.env, PYTHONDONTWRITEBYTECODE: '1' });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const built = filesEnding(out, ['.whl', '.tar.gz']);
  if (built.length !== 2) throw new Error(`python -m build wrote ${built.join(', ') || 'nothing'} into ${out}, not one wheel and one sdist`);
  return built;
}

/** Builds the .NET SDK's NuGet package from a copy of `sdk/dotnet` into `out` (emptied first) with `dotnet pack`. */
export function buildDotnetArtifact(dotnet: string, out: string, sdk: string = join(SDK_DIR, 'dotnet')): string[] {
  const scratch = mkdtempSync(join(tmpdir(), 'kac-nupkg-'));
  try {
    cpSync(sdk, scratch, { recursive: true });
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    runTool(dotnet, ['pack', '--configuration', 'Release', '--output', out], scratch, { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1' });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return filesEnding(out, ['.nupkg']);
}

/** `dotnet` on PATH, or undefined. */
export function dotnetOnPath(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v dotnet'], { encoding: 'utf8' }).stdout.trim();
  return found === '' ? undefined : found;
}

/**
 * The SDKs' artifacts into `out` (see the module comment): `out/python` (wheel, sdist) always, `out/dotnet` (nupkg)
 * where `dotnet` is on PATH; says on stderr what it skipped. Returns the files written.
 */
export function buildArtifacts(out: string = ARTIFACTS_DIR): string[] {
  // The tests' Python venv (built on first use), loaded only here: the bundle runs where test/ is not (the image's build).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { resolveBinary } = require('../test/support/binaries') as typeof import('../test/support/binaries');
  const written = buildPythonArtifacts(resolveBinary('pulumi-python').path, join(out, 'python'));
  const dotnet = dotnetOnPath();
  if (dotnet) written.push(...buildDotnetArtifact(dotnet, join(out, 'dotnet')));
  else process.stderr.write('tools/plugin.ts artifacts: no `dotnet` on PATH: the .NET package (nupkg) is not built\n');
  return written;
}

function cli(args: string[]): void {
  const [command, target] = args;
  const written = (paths: readonly string[]): void => void process.stderr.write(paths.map((p) => `${p}\n`).join(''));
  if (command === 'bundle') written([bundlePlugin(target ? resolve(target) : undefined)]);
  else if (command === 'schema') written([writeSchema(target ? resolve(target) : undefined)]);
  else if (command === 'artifacts') written(buildArtifacts(target ? resolve(target) : undefined));
  else if (command === 'sdk') {
    // The tests' CLI and hosts, loaded only here: the other commands run where test/ is not (the image's build).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { sdkgenEnvironment } = require('../test/support/pulumi-sdk') as typeof import('../test/support/pulumi-sdk');
    const { pulumi, env } = sdkgenEnvironment();
    generateSdks(target ? resolve(target) : SDK_DIR, pulumi, env);
    // The artifacts are the package's: built from sdk/ only, not from SDKs generated elsewhere.
    if (!target) written(buildArtifacts());
  } else throw new Error('usage: tsx tools/plugin.ts bundle [OUT] | schema [OUT] | sdk [DIR] | artifacts [OUT]');
}

if (require.main === module) {
  try {
    cli(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
