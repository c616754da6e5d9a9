// @needs pulumi
/**
 * The provider plugin's schema and SDKs as the repository keeps them (sdk/): `sdk/schema.json` is the schema the plugin
 * serves, and sdk/python, sdk/go and sdk/dotnet are exactly what `pulumi package gen-sdk` generates from it (with the
 * tests' Pulumi CLI and code-generating language hosts, see test/support/pulumi-sdk.ts); `npm run sdk` regenerates
 * them. The Go SDK, and a program using it, compile against Pulumi's Go SDK from the module proxy (`go build`). The .NET SDK is
 * built with `dotnet build` only where `dotnet` is on PATH; the test says so when it is not.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SDK_DIR, SDK_KEPT, SDK_LANGUAGES, generateSdks, schemaText } from '../../tools/plugin';
import { run } from '../support/package';
import { sdkgenEnvironment } from '../support/pulumi-sdk';
import { filesUnder } from '../support/pulumi-state';

jest.setTimeout(900_000);

const work = (): string => mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'pulumi-sdk-'));

/** The generated files of an SDK tree, relative, without the hand-kept ones. */
function generated(dir: string): string[] {
  return filesUnder(dir)
    .map((f) => relative(dir, f))
    .filter((f) => !SDK_LANGUAGES.some((language) => SDK_KEPT[language].some((kept) => f === `${language}/${kept}`)))
    .sort();
}

describe('the generated SDKs', () => {
  it('sdk/schema.json is the schema of this version of the plugin', () => {
    expect(readFileSync(join(SDK_DIR, 'schema.json'), 'utf8')).toBe(schemaText());
  });

  it('sdk/python, sdk/go and sdk/dotnet are what pulumi package gen-sdk generates from the schema (npm run sdk)', () => {
    const out = work();
    const { pulumi, env } = sdkgenEnvironment();
    const t0 = Date.now();
    generateSdks(out, pulumi, env);
    process.stderr.write(`[pulumi-sdk e2e] pulumi package gen-sdk, 3 languages: ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    const expected = generated(out).filter((f) => f !== 'schema.json');
    const committed = generated(SDK_DIR).filter((f) => f !== 'schema.json');
    expect(committed).toEqual(expected);
    const stale = expected.filter((f) => readFileSync(join(out, f), 'utf8') !== readFileSync(join(SDK_DIR, f), 'utf8'));
    if (stale.length > 0) throw new Error(`sdk/ is stale (run npm run sdk): ${stale.join(', ')}`);
    for (const language of SDK_LANGUAGES) expect(expected.some((f) => f.startsWith(`${language}/`))).toBe(true);
  });

  it('the Go SDK compiles against the Go SDK of Pulumi from the module proxy, and so does a program using it', async () => {
    // A program of a user: its module requires the SDK's module and replaces it with the directory.
    const dir = work();
    const sdk = join(dir, 'sdk-go');
    cpSync(join(SDK_DIR, 'go'), sdk, { recursive: true });
    const program = join(dir, 'program');
    cpSync(join(__dirname, 'fixtures', 'pulumi-go'), program, { recursive: true });
    writeFileSync(join(program, 'go.mod'), readFileSync(join(program, 'go.mod'), 'utf8').replace('=> ../../../../sdk/go', `=> ${sdk}`));
    const env = { ...process.env, GOFLAGS: '-mod=mod', CGO_ENABLED: '0', GOTOOLCHAIN: 'local' };
    const t0 = Date.now();
    for (const [cwd, args] of [
      [sdk, ['build', '-trimpath', './...']],
      [program, ['build', '-trimpath', './...']],
    ] as const) {
      const result = await run('go', [...args], { cwd, env, timeoutMs: 840_000 });
      if (result.code !== 0) throw new Error(`go ${args.join(' ')} in ${cwd} failed (${String(result.code)}):\n${result.stdout}${result.stderr}`);
    }
    process.stderr.write(`[pulumi-sdk e2e] go build of the Go SDK and a program: ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    rmSync(dir, { recursive: true, force: true });
  });

  const dotnet = spawnSync('sh', ['-c', 'command -v dotnet'], { encoding: 'utf8' }).stdout.trim();
  if (!dotnet) process.stderr.write('[pulumi-sdk e2e] dotnet build of the .NET SDK SKIPPED: no `dotnet` on PATH on this machine\n');
  (dotnet ? it : it.skip)('the .NET SDK builds with dotnet build', async () => {
    const dir = work();
    cpSync(join(SDK_DIR, 'dotnet'), dir, { recursive: true });
    const result = await run(dotnet, ['build'], { cwd: dir, timeoutMs: 840_000 });
    expect(`${result.code} ${result.stdout}${result.stderr}`).toMatch(/^0 /);
  });
});
