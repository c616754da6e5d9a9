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
 *                                      ~/.cache/keystone-appcred on first use). Files of SDK_KEPT are kept.
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

function cli(args: string[]): void {
  const [command, target] = args;
  if (command === 'bundle') process.stdout.write(`${bundlePlugin(target ? resolve(target) : undefined)}\n`);
  else if (command === 'schema') process.stdout.write(`${writeSchema(target ? resolve(target) : undefined)}\n`);
  else if (command === 'sdk') {
    // The tests' CLI and hosts, loaded only here: the other commands run where test/ is not (the image's build).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { sdkgenEnvironment } = require('../test/support/pulumi-sdk') as typeof import('../test/support/pulumi-sdk');
    const { pulumi, env } = sdkgenEnvironment();
    generateSdks(target ? resolve(target) : SDK_DIR, pulumi, env);
  }
  else throw new Error('usage: tsx tools/plugin.ts bundle [OUT] | schema [OUT] | sdk [DIR]');
}

if (require.main === module) {
  try {
    cli(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
