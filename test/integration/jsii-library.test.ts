/**
 * The construct library as a jsii library (issue 43), through the real compiler and tools: the assembly `jsii` compiles
 * from the staged package (cached, tools/jsii/build.ts) holds exactly the public API `constructs/index.ts` lists;
 * `jsii-diff` finds nothing incompatible against the API of record (docs/api/keystone-appcred-cdk8s.jsii) and does find
 * a member the record has and the build lost; `jsii-docgen` writes the API reference of every language from the TSDoc.
 *
 * The cache is shared by every checkout on the machine (issue 47): two checkouts build at once into a cache of the
 * test's own (one compiles, the other waits for it and finds its result), and with both checkouts deleted the cached
 * stage still serves a reader (jsii-diff loads the peers' assemblies through the stage's node_modules).
 */
import { cpSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import * as ts from 'typescript';
import type { JsiiBuild } from '../../tools/jsii/build';
import { DOC_LANGUAGES } from '../../tools/jsii/build';
import { apiDiff, BASELINE, recordOf } from '../../tools/jsii/diff';
import { JSII_NAMES, ROOT } from '../../tools/jsii/package';
import { JSII_BUILD_MS, jsiiBuild } from '../support/jsii';
import { runOk } from '../support/package';

jest.setTimeout(600_000);

interface Assembly {
  readonly name: string;
  readonly types: Record<string, { readonly name: string; readonly kind: string; readonly properties?: { readonly name: string }[] }>;
}

/** The names `constructs/index.ts` exports. */
function entryExports(): string[] {
  const program = ts.createProgram([join(ROOT, 'constructs', 'index.ts')], { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, resolveJsonModule: true, esModuleInterop: true, noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(join(ROOT, 'constructs', 'index.ts'));
  const symbol = source && checker.getSymbolAtLocation(source);
  return symbol ? checker.getExportsOfModule(symbol).map((s) => s.name).sort() : [];
}

describe('the jsii assembly of the construct library', () => {
  let build: JsiiBuild;
  let assembly: Assembly;

  beforeAll(async () => {
    build = await jsiiBuild([]);
    assembly = JSON.parse(readFileSync(build.assembly, 'utf8')) as Assembly;
  }, JSII_BUILD_MS);

  it('holds exactly the API constructs/index.ts exports', () => {
    expect(assembly.name).toBe(JSII_NAMES.npm);
    const types = Object.values(assembly.types).map((t) => t.name).sort();
    expect(types).toEqual(entryExports());
  });

  it('jsii-diff: nothing incompatible against the API of record', () => {
    const result = apiDiff(build.stage);
    expect(result.output).not.toMatch(/^err /m);
    expect(result.code).toBe(0);
  });

  it('jsii-diff: a prop the record has and the build lost is an error naming it', () => {
    const record = JSON.parse(readFileSync(BASELINE, 'utf8')) as Assembly;
    const props = record.types[`${JSII_NAMES.npm}.ServiceOwnerProps`];
    props.properties?.push({ ...(props.properties[0] as object), name: 'costCenter' } as { name: string });
    const result = apiDiff(build.stage, JSON.stringify(record));
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('ServiceOwnerProps');
    expect(result.output).toContain('costCenter');
  });

  it('the record holds the API as built: a type, member or prop added is recorded too (npm run jsii:baseline)', () => {
    const record = JSON.parse(readFileSync(BASELINE, 'utf8')) as Assembly;
    expect(Object.keys(record.types).sort()).toEqual(Object.keys(assembly.types).sort());
    // Doc comments may change without a new record; the API's shape may not.
    expect(recordOf(build.assembly, { withDocs: false })).toBe(recordOf(BASELINE, { withDocs: false }));
  });

  it('jsii-docgen: the API reference of every language names every type, in that language\'s words', () => {
    const docs = Object.fromEntries(DOC_LANGUAGES.map((l) => [l, readFileSync(join(build.docs, `API.${l}.md`), 'utf8')]));
    for (const language of DOC_LANGUAGES) {
      for (const type of Object.values(assembly.types)) expect([language, docs[language].includes(`### ${type.name} `)]).toEqual([language, true]);
    }
    expect(docs.python).toContain(`import ${JSII_NAMES.python.module}`);
    expect(docs.python).toContain('control_plane_ref');
    expect(docs.go).toContain('NewServiceOwner(');
    expect(docs.java).toContain('ServiceOwner.Builder');
    expect(docs.csharp).toContain(`using ${JSII_NAMES.dotnet.namespace};`);
  });
});

/** A checkout of the repository's staged inputs in a temporary directory, with a node_modules link to the repository's. */
function checkout(parent: string, name: string): string {
  const dir = join(parent, name);
  for (const entry of ['constructs', 'src', 'package.json', 'LICENSE']) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** `buildJsii` of the checkout at `root` (the assembly only) in a process of its own, with the cache at `cache`. */
async function buildIn(root: string, cache: string): Promise<Pick<JsiiBuild, 'stage' | 'built'> & { readonly finished: number }> {
  const script = `require(${JSON.stringify(join(ROOT, 'tools', 'jsii', 'build'))}).buildJsii({ root: ${JSON.stringify(root)}, languages: [], docs: false }).then((b) => console.log(JSON.stringify({ stage: b.stage, built: b.built })))`;
  const out = await runOk(join(ROOT, 'node_modules', '.bin', 'tsx'), ['-e', script], { cwd: root, env: { ...process.env, KAC_CACHE_DIR: cache }, timeoutMs: 600_000 });
  return { ...(JSON.parse(out.trim().split('\n').pop() as string) as Pick<JsiiBuild, 'stage' | 'built'>), finished: Date.now() };
}

/** Every symbolic link under `dir` that leads out of it (a package's own `.bin` links stay inside). */
function linksOut(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isSymbolicLink())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((link) => !resolve(dirname(link), readlinkSync(link)).startsWith(`${dir}/`));
}

describe('the jsii cache, shared by the checkouts of a machine', () => {
  it('two checkouts build at once; with both deleted, the cached stage still serves', async () => {
    const parent = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? tmpdir(), 'kac-jsii-checkouts-'));
    const cache = join(parent, 'cache');
    try {
      const checkouts = [checkout(parent, 'one'), checkout(parent, 'two')];
      const builds = await Promise.all(checkouts.map((root) => buildIn(root, cache)));
      // One compiled; the other waited on the cache's lock and found the same build.
      expect(builds[0].stage).toBe(builds[1].stage);
      expect(builds.map((b) => b.built.includes('assembly')).sort()).toEqual([false, true]);
      const stage = builds[0].stage;
      // The stage refers to no checkout: its node_modules is its own, and no link in it leads out of it.
      expect(lstatSync(join(stage, 'node_modules')).isDirectory()).toBe(true);
      expect(linksOut(stage)).toEqual([]);
      // The checkout whose build finished last goes first (a build used to point the stage at its caller), then the other.
      const order = [0, 1].sort((a, b) => builds[b].finished - builds[a].finished);
      rmSync(checkouts[order[0]], { recursive: true, force: true });
      const again = await buildIn(checkouts[order[1]], cache);
      expect(again).toMatchObject({ stage, built: [] });
      rmSync(checkouts[order[1]], { recursive: true, force: true });
      const diff = apiDiff(stage);
      expect(diff.output).not.toMatch(/^err /m);
      expect(diff.code).toBe(0);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  }, 900_000);
});
