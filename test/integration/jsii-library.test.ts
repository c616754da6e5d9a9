/**
 * The construct library as a jsii library (issue 43), through the real compiler and tools: the assembly `jsii` compiles
 * from the staged package (cached, tools/jsii/build.ts) holds exactly the public API `constructs/index.ts` lists;
 * `jsii-diff` finds nothing incompatible against the API of record (docs/api/keystone-appcred-cdk8s.jsii) and does find
 * a member the record has and the build lost; `jsii-docgen` writes the API reference of every language from the TSDoc.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import type { JsiiBuild } from '../../tools/jsii/build';
import { DOC_LANGUAGES } from '../../tools/jsii/build';
import { apiDiff, BASELINE, recordOf } from '../../tools/jsii/diff';
import { JSII_NAMES, ROOT } from '../../tools/jsii/package';
import { JSII_BUILD_MS, jsiiBuild } from '../support/jsii';

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
    const recordFile = join(build.dir, 'record.jsii');
    writeFileSync(recordFile, readFileSync(BASELINE, 'utf8'));
    expect(recordOf(build.assembly, { withDocs: false })).toBe(recordOf(recordFile, { withDocs: false }));
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
