/**
 * The package's shape: each face's entry resolves by the package name (through `exports`, with types), the root loads
 * no optional peer dependency, and `npm pack` ships the compiled code with its declarations and source maps, the README,
 * the LICENSE and the user docs, and nothing of the tests, bench, Go modules or fixtures.
 *
 * The compiled files come from a build at the start (`tsc -p tsconfig.json`, as `npm run build`); the entries are loaded
 * in fresh Node processes from a consumer directory outside the repository whose node_modules/keystone-appcred links to
 * the repository.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { markdownFiles, USER_DOC_FOLDERS } from '../../support/markdown';
import { buildProject, exportTargets, nodeEnv, packageJson, REPO, withBuildLock } from '../../support/package';

jest.setTimeout(240_000);

/** The optional peer dependencies (and the operator's Kubernetes client) the root must not load. */
const PEER_MODULE = /[\\/]node_modules[\\/](@pulumi[\\/]|cdk8s[\\/]|constructs[\\/]|@kubernetes[\\/])/;

let consumer: string;

/** Runs `script` with Node 24 in the consumer directory; returns its stdout parsed as JSON. */
function nodeJson<T>(script: string): T {
  const result = spawnSync(process.execPath, ['-e', script], { cwd: consumer, encoding: 'utf8', env: nodeEnv() });
  if (result.status !== 0) throw new Error(`node -e failed (${String(result.status)}):\n${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

beforeAll(async () => {
  await buildProject();
  consumer = mkdtempSync(join(tmpdir(), 'kac-consumer-'));
  mkdirSync(join(consumer, 'node_modules'));
  symlinkSync(REPO, join(consumer, 'node_modules', 'keystone-appcred'), 'dir');
  writeFileSync(join(consumer, 'package.json'), '{ "name": "kac-consumer", "private": true }\n');
});

afterAll(() => {
  if (consumer) rmSync(consumer, { recursive: true, force: true });
});

describe('exports', () => {
  it('maps each face to its compiled file and its declarations under lib/', () => {
    const { exports } = packageJson();
    for (const entry of ['.', './pulumi', './pulumi/kubernetes', './cdk8s']) {
      const target = exports[entry];
      expect(typeof target).toBe('object');
      const { types, default: js } = target as { types: string; default: string };
      expect(types).toMatch(/^\.\/lib\/.*\.d\.ts$/);
      expect(js).toBe(types.replace(/\.d\.ts$/, '.js'));
    }
    for (const target of exportTargets()) expect(existsSync(join(REPO, target))).toBe(true);
  });

  it('the root loads neither @pulumi/* nor cdk8s or constructs (a fresh process, require.cache)', () => {
    const { loaded, exported } = nodeJson<{ loaded: string[]; exported: string[] }>(
      `const root = require('keystone-appcred');
       process.stdout.write(JSON.stringify({ loaded: Object.keys(require.cache), exported: Object.keys(root) }));`,
    );
    expect(loaded.filter((path) => PEER_MODULE.test(path))).toEqual([]);
    expect(loaded).toContain(join(REPO, 'lib', 'src', 'index.js'));
    // The API (types are erased; their runtime companions remain), validation and the lifecycle engine.
    expect(exported).toEqual(expect.arrayContaining(['validate', 'resolveSpec', 'Duration', 'RULES', 'decide', 'reconcile']));
    expect(exported).not.toContain('KeystoneApplicationCredential');
  });

  it.each([
    ['keystone-appcred/pulumi', 'KeystoneApplicationCredential', '@pulumi'],
    ['keystone-appcred/pulumi/kubernetes', 'CredentialSecret', '@pulumi'],
    ['keystone-appcred/cdk8s', 'Operator', 'cdk8s'],
  ])('%s resolves by the package name and exports %s', (entry, name, peer) => {
    const { file, kind, loaded } = nodeJson<{ file: string; kind: string; loaded: string[] }>(
      `const face = require(${JSON.stringify(entry)});
       process.stdout.write(JSON.stringify({ file: require.resolve(${JSON.stringify(entry)}), kind: typeof face[${JSON.stringify(name)}], loaded: Object.keys(require.cache) }));`,
    );
    expect(file.startsWith(join(REPO, 'lib'))).toBe(true);
    expect(kind).toBe('function');
    expect(loaded.some((path) => path.includes(`${join('node_modules', peer)}`))).toBe(true);
  });

  it('the Pulumi face does not load @pulumi/kubernetes', () => {
    const loaded = nodeJson<string[]>(`require('keystone-appcred/pulumi'); process.stdout.write(JSON.stringify(Object.keys(require.cache)));`);
    expect(loaded.filter((path) => path.includes(join('node_modules', '@pulumi', 'kubernetes')))).toEqual([]);
  });

  it('refuses deep imports of lib/ (but keeps the provider implementation the serialized provider requires)', () => {
    const codes = nodeJson<Record<string, string>>(
      `const codes = {};
       for (const p of ['keystone-appcred/lib/src/api', 'keystone-appcred/lib/constructs', 'keystone-appcred/pulumi/provider-impl']) {
         try { require.resolve(p); codes[p] = 'ok'; } catch (e) { codes[p] = e.code; }
       }
       process.stdout.write(JSON.stringify(codes));`,
    );
    expect(codes).toEqual({
      'keystone-appcred/lib/src/api': 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      'keystone-appcred/lib/constructs': 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      'keystone-appcred/pulumi/provider-impl': 'ok',
    });
  });

  it('gives TypeScript (module node16) the types of every face', () => {
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'es2023', strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ['main.ts'] }),
    );
    writeFileSync(
      join(consumer, 'main.ts'),
      [
        "import { Duration, validate, type KeystoneApplicationCredentialSpec } from 'keystone-appcred';",
        "import { KeystoneApplicationCredential, type KeystoneApplicationCredentialArgs } from 'keystone-appcred/pulumi';",
        "import { CredentialSecret, type CredentialSecretArgs } from 'keystone-appcred/pulumi/kubernetes';",
        "import { Crds, Operator, ServiceOwner, type OperatorProps } from 'keystone-appcred/cdk8s';",
        'const spec: Partial<KeystoneApplicationCredentialSpec> = {};',
        "const args: KeystoneApplicationCredentialArgs = { rotation: { interval: '168h' } };",
        "const props: Pick<OperatorProps, 'image' | 'tag'> = { image: 'kac', tag: '1' };",
        "export const used = [Duration.parse('1h', 'x').toString(), validate, spec, args, props, KeystoneApplicationCredential, CredentialSecret, Crds, Operator, ServiceOwner];",
        'export type Secret = CredentialSecretArgs;',
        '',
      ].join('\n'),
    );
    const result = spawnSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: consumer, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });
});

describe('npm pack', () => {
  let files: string[];

  beforeAll(async () => {
    // The build ran above, so the tarball's contents are known without the prepack script (the e2e tests pack for real).
    // Under the build lock: every build takes it, so lib/ is whole while npm reads it (another worker's build would
    // rewrite its files in place, and npm read them half-written).
    files = await withBuildLock(async () => {
      const result = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO, encoding: 'utf8', env: nodeEnv() });
      if (result.status !== 0) throw new Error(`npm pack --dry-run failed:\n${result.stderr}`);
      return (JSON.parse(result.stdout) as { files: { path: string }[] }[])[0].files.map((f) => f.path);
    });
  });

  it('holds every export target and the bin scripts (the command line and the Pulumi provider plugin)', () => {
    expect(files).toEqual(expect.arrayContaining(exportTargets()));
    expect(Object.keys(packageJson().bin).sort()).toEqual(['keystone-appcred', 'pulumi-resource-keystone-appcred']);
    for (const bin of Object.values(packageJson().bin)) expect(readFileSync(join(REPO, bin), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('holds the declarations and the source map of every compiled file, and the sources the maps point to', () => {
    const js = files.filter((f) => f.endsWith('.js'));
    expect(js.length).toBeGreaterThan(50);
    for (const file of js) {
      expect(files).toContain(file.replace(/\.js$/, '.d.ts'));
      expect(files).toContain(`${file}.map`);
      expect(files).toContain(file.replace(/^lib\//, '').replace(/\.js$/, '.ts'));
    }
  });

  it('holds the README, the LICENSE (Apache-2.0) and the docs a user reads: every page of docs/\'s six folders', () => {
    const userDocs = ['docs/README.md', ...USER_DOC_FOLDERS.flatMap((folder) => markdownFiles(`docs/${folder}`))];
    expect(userDocs.length).toBeGreaterThan(30);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', ...userDocs, 'examples/cdk8s/cdk8s.yaml']));
    expect(packageJson()).toMatchObject({ license: 'Apache-2.0' });
    expect(readFileSync(join(REPO, 'LICENSE'), 'utf8')).toContain('Apache License\n                           Version 2.0, January 2004');
  });

  it('holds the provider plugin\'s schema and its generated SDKs', () => {
    expect(files).toEqual(expect.arrayContaining(['sdk/schema.json', 'sdk/python/pyproject.toml', 'sdk/dotnet/ApplicationCredential.cs', 'sdk/go/go.mod']));
    expect(files.filter((f) => f.startsWith('sdk/go/') && f.endsWith('.go')).length).toBeGreaterThan(0);
  });

  it('holds nothing of the tests, the bench, the build tools, the Go modules of the tests or the fixtures', () => {
    const shipped = files.filter((f) => !f.startsWith('sdk/'));
    const unwanted = shipped.filter((f) => /^(lib\/)?(test|bench|tools)\//.test(f) || /(^|\/)(fixtures|__snapshots__|go)\//.test(f) || /\.go$|(^|\/)go\.(mod|sum)$/.test(f) || /\.test\.[jt]s$/.test(f));
    expect(unwanted).toEqual([]);
    expect(files.filter((f) => f.startsWith('docs/') && f.split('/').length === 2 && f !== 'docs/README.md')).toEqual([]); // testing, benchmarks, ...
    expect(files.filter((f) => f.startsWith('lib/examples/'))).toEqual([]);
  });

  it('builds, and builds the SDK artifacts, before packing; ships them from lib/sdk/', () => {
    expect(packageJson().scripts.prepack).toBe('npm run build && tsx tools/plugin.ts artifacts');
    expect(packageJson().files).toContain('lib/sdk/');
  });
});
