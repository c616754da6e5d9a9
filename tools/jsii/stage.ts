/**
 * Stages the jsii package: the construct library's sources and the closure of the engine's modules they import (the
 * pure `src/api` and `src/observability` files the CRD schemas, the synth-time rules, the alerts and the dashboard come
 * from), copied as they are into a directory with the jsii package.json (tools/jsii/package.ts) and a tsconfig.
 *
 * Why a copy of the engine's files rather than generated data or a bundle: the rules are code (each CEL rule has its
 * TypeScript twin, which the orders run at synth), so data alone cannot carry them, and a bundled `.js` would leave jsii
 * without the types of what the API re-exports (`AlertParameters`); the copy is the same source the engine compiles,
 * so no rule is written twice, and jsii compiles it into the package beside the constructs. The copy is the import
 * closure of `constructs/index.ts`, read by the TypeScript compiler, and may import nothing outside itself but the
 * peers (`cdk8s`, `constructs`) and Node's built-ins: `closure()` refuses anything else, so an engine
 * module that starts loading `@kubernetes/client-node` fails the build here, naming the import.
 *
 * The stage's node_modules is its own: copies of the packages the jsii tools load from it (the peers, whose assemblies
 * jsii, jsii-pacmak, jsii-docgen and jsii-diff read, and the Node types the compile reads), taken from the repository's
 * at the versions the build's hash names. A link to the staging checkout's node_modules made the cached stage that
 * checkout's: each build from another checkout re-pointed it, and a checkout deleted left it dangling under every other
 * reader (issue 47).
 */
import { cpSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import * as ts from 'typescript';
import { installedVersion, jsiiPackageJson, PEERS, ROOT } from './package';

/** The entry of the construct library. */
export const ENTRY = 'constructs/index.ts';

/** A file of the closure and the bare imports it makes. */
export interface ClosureFile {
  /** The path relative to the repository. */
  readonly path: string;
  /** Its imports of packages (not relative paths). */
  readonly packages: readonly string[];
}

/** Whether a bare import is allowed in the jsii package: a peer (or its subpath) or a Node built-in. */
export function allowedImport(specifier: string): boolean {
  return specifier.startsWith('node:') || PEERS.some((peer) => specifier === peer || specifier.startsWith(`${peer}/`));
}

/**
 * The repository files `constructs/index.ts` loads, transitively, with the packages each imports; throws naming every
 * import that is neither relative nor allowed, and every relative import that leaves `constructs/` and `src/`.
 */
export function closure(root: string = ROOT): ClosureFile[] {
  const options: ts.CompilerOptions = { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, resolveJsonModule: true, esModuleInterop: true, noEmit: true, skipLibCheck: true, types: [] };
  const program = ts.createProgram([join(root, ENTRY)], options);
  const files: ClosureFile[] = [];
  const refused: string[] = [];
  for (const source of program.getSourceFiles()) {
    const path = relative(root, source.fileName);
    if (path.startsWith('..') || path.split('/').includes('node_modules')) continue;
    const packages: string[] = [];
    const specifiers = source.fileName.endsWith('.json') ? [] : ts.preProcessFile(source.text, true, true).importedFiles.map((f) => f.fileName);
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) continue;
      packages.push(specifier);
      if (!allowedImport(specifier)) refused.push(`${path} imports ${specifier}`);
    }
    if (!/^(constructs|src)\//.test(path)) refused.push(`${path} is outside constructs/ and src/`);
    files.push({ path, packages });
  }
  if (refused.length > 0) {
    throw new Error(`the construct library's closure may import only ${PEERS.join(', ')} and node: built-ins (a jsii package carries nothing else):\n  ${refused.join('\n  ')}`);
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

/** The tsconfig jsii compiles the stage with: the repository's strictness, JSON modules (the dashboard), CommonJS out. */
export const JSII_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022'],
    module: 'node16',
    moduleResolution: 'node16',
    rootDir: '.',
    outDir: 'lib',
    declaration: true,
    strict: true,
    noImplicitOverride: true,
    noFallthroughCasesInSwitch: true,
    esModuleInterop: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    experimentalDecorators: true,
    types: ['node'],
  },
  include: ['constructs/**/*.ts', 'src/**/*.ts', 'src/**/*.json'],
};

/** The packages the stage's node_modules holds, besides their dependencies: the peers, and the types the compile reads. */
export const STAGE_PACKAGES: readonly string[] = [...PEERS, '@types/node'];

/**
 * {@link STAGE_PACKAGES} with the dependencies each needs installed beside it (its bundled ones travel inside it), as
 * the repository's node_modules holds them: `name@version`, sorted. The build's hash names them.
 */
export function stagedPackages(root: string = ROOT): string[] {
  const found = new Map<string, string>();
  const visit = (name: string): void => {
    if (found.has(name)) return;
    found.set(name, installedVersion(name, root));
    const pkg = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; bundleDependencies?: string[]; bundledDependencies?: string[] };
    const bundled = new Set([...(pkg.bundleDependencies ?? []), ...(pkg.bundledDependencies ?? [])]);
    for (const dependency of Object.keys(pkg.dependencies ?? {})) if (!bundled.has(dependency)) visit(dependency);
  };
  STAGE_PACKAGES.forEach(visit);
  return [...found].map(([name, version]) => `${name}@${version}`).sort();
}

/** The README of the package (what Construct Hub shows first): short, so an edit of the docs rebuilds no language. */
const README = 'constructs/README.md';

/**
 * Writes the stage into `dir` (emptied first): the closure, package.json, tsconfig.jsii.json, README.md, LICENSE, and
 * its own node_modules ({@link stagedPackages}, copied from the repository's). Returns the files copied.
 */
export function stage(dir: string, root: string = ROOT): string[] {
  const files = closure(root).map((f) => f.path);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(root, file), join(dir, file));
  }
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(jsiiPackageJson(root), null, 2)}\n`);
  writeFileSync(join(dir, 'tsconfig.jsii.json'), `${JSON.stringify(JSII_TSCONFIG, null, 2)}\n`);
  writeFileSync(join(dir, 'README.md'), readFileSync(join(root, README), 'utf8'));
  cpSync(join(root, 'LICENSE'), join(dir, 'LICENSE'));
  for (const entry of stagedPackages(root)) {
    const name = entry.slice(0, entry.lastIndexOf('@'));
    // The package's own links (its node_modules/.bin) are copied as written, relative, so they stay inside the stage
    // (by default Node resolves them into absolute links back into the checkout).
    cpSync(realpathSync(join(root, 'node_modules', name)), join(dir, 'node_modules', name), { recursive: true, verbatimSymlinks: true });
  }
  return files;
}
