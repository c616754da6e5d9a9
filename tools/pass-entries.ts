/**
 * How one credential pass travels through the code: which files of src/ one pass of the KeystoneApplicationCredential
 * reconciler enters, how often, and how often it comes back to a file it had already left (issue 47: a pass should
 * read top to bottom, read → gates → ports → lifecycle → announce, each rule module entered once). Measured the same
 * way before and after a change of the pass's shape, so the two can be compared.
 *
 * How: every function of src/ is instrumented as it loads (a TypeScript transform puts a probe first in each body:
 * declarations, methods, accessors, constructors, function expressions, arrows; the callbacks a file hands to another
 * included), and the probe reads V8's stack for its caller, the first frame in src/ (async frames included, so a call
 * made after an `await` has its caller too). A call whose caller lies in another file, or outside src/ (the tool, the
 * fake Keystone of test/support), enters the callee's file. The world is the reconciler's unit test's: the in-memory
 * cluster behind the operator's PlaneCluster port, the fake Keystone, a backup in memory. src/ includes those ports'
 * implementations (src/kube/memory.ts stands where the informer cache stands in the operator).
 *
 * Two counts, both reproducible: `calls`, every call into another file; `crossings`, those counted once per place
 * (the same call site into the same function, as a loop repeats it), which is what a reader following the pass meets.
 * For each: the files entered, and the returns (entries into a file the pass had already entered and left). The
 * scenarios: `first`, a new order's first pass (the finalizer, generation 1 minted, delivered, backed up, the status);
 * `rotation`, the pass at `status.nextRotation` of a converged order (its successor minted and delivered).
 *
 *   npx tsx tools/pass-entries.ts [first|rotation ...] [--json] [--trace]
 *
 * prints, per scenario, the counts, the files with their entries, and with `--trace` every crossing in order
 * (`caller file → callee file: function`); `--json` prints the measurements as JSON.
 */
import Module from 'node:module';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

const ROOT = resolve(__dirname, '..');
const SRC = join(ROOT, 'src') + '/';

/** A frame of the stack in src/: its file (relative to the repository) and line (of the compiled module). */
export interface Frame {
  readonly file: string;
  readonly line: number;
}

/** One call of an instrumented function: its file and name, and the frames in src/ it was called from. */
export interface Call {
  /** The callee's file, relative to the repository. */
  readonly file: string;
  /** The callee: `name:line` in its file. */
  readonly name: string;
  /** The frames in src/ below the callee's, nearest first (empty: called from outside src/). */
  readonly callers: readonly Frame[];
}

/** The counts of one way of counting ({@link Measurement}). */
export interface Counts {
  /** Entries into a file from another (or from outside src/). */
  readonly entries: number;
  /** The distinct files entered. */
  readonly files: number;
  /** Entries into a file entered before: `entries - files`. */
  readonly returns: number;
  /** Entries per file, most first. */
  readonly byFile: readonly { readonly file: string; readonly entries: number }[];
}

/** One pass seen over some of the files ({@link VIEWS}). */
export interface View {
  /** Every call into another file. */
  readonly calls: Counts;
  /** The same, each call site into each function counted once. */
  readonly crossings: Counts;
  /** The crossings in order: `caller → callee: function`. */
  readonly trace: readonly string[];
}

/** What one pass did, measured. */
export interface Measurement {
  readonly scenario: string;
  /** What the pass did, as the lifecycle reported its actions. */
  readonly actions: readonly string[];
  /** The pass by {@link VIEWS}. */
  readonly views: Readonly<Record<keyof typeof VIEWS, View>>;
}

/**
 * The files a view counts. `pass`: the files a pass's steps live in, the ones a reader follows: the driver and its
 * ports (src/operator/credential/, the cluster port src/operator/plane-cluster.ts, Keystone's src/keystone/), the
 * identity plane's rules (src/plane/) and the lifecycle (src/lifecycle/); not the kinds' vocabulary they all use
 * (src/api/: names, durations, conditions), nor what lies below the cluster port (src/kube/, the Events of
 * src/operator/runtime/). `src`: every file of src/.
 */
export const VIEWS = {
  pass: (file: string): boolean => /^src\/(operator\/credential|plane|lifecycle|keystone)\//.test(file) || file === 'src/operator/plane-cluster.ts',
  src: (): boolean => true,
} as const;

// ---- instrumentation ---------------------------------------------------------------------------------------------

const PROBE = '__kacPassProbe';
let recording: Call[] | undefined;

/** The probe each instrumented body calls first: records the call with its caller's frame, while recording. */
function probe(file: string, name: string): void {
  if (!recording) return;
  const saved = { prepare: Error.prepareStackTrace, limit: Error.stackTraceLimit };
  Error.stackTraceLimit = 64;
  Error.prepareStackTrace = (_error, sites) => sites;
  const holder: { stack?: NodeJS.CallSite[] } = {};
  Error.captureStackTrace(holder, probe);
  const sites = holder.stack ?? [];
  Error.prepareStackTrace = saved.prepare;
  Error.stackTraceLimit = saved.limit;
  // sites[0] is the instrumented function itself; its callers are the frames in src/ after it.
  const callers = sites
    .slice(1)
    .filter((site) => site.getFileName()?.startsWith(SRC))
    .map((site) => ({ file: relative(ROOT, site.getFileName() as string), line: site.getLineNumber() ?? 0 }));
  recording.push({ file, name, callers });
}

/** The name a function-like node is known by: its own, or the variable or property it is assigned to; with its line. */
function nameOf(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  let name = node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) || ts.isPrivateIdentifier(node.name)) ? node.name.text : undefined;
  if (ts.isConstructorDeclaration(node)) name = 'constructor';
  const parent = node.parent;
  if (!name && parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name)) name = parent.name.text;
  const owner = ts.isClassLike(node.parent) && node.parent.name ? `${node.parent.name.text}.` : '';
  return `${owner}${name ?? '<anonymous>'}:${line}`;
}

/** The transform that puts `__kacPassProbe(file, name)` first in every function body of a file. */
function instrument(file: string): ts.TransformerFactory<ts.SourceFile> {
  return (context) => (source) => {
    const f = context.factory;
    const call = (fn: ts.SignatureDeclaration) => f.createExpressionStatement(f.createCallExpression(f.createIdentifier(PROBE), undefined, [f.createStringLiteral(file), f.createStringLiteral(nameOf(fn, source))]));
    const visit = (node: ts.Node): ts.Node => {
      const original = ts.getOriginalNode(node);
      const parent = original.parent;
      if (parent && ts.isFunctionLike(parent) && 'body' in parent && parent.body === original && !ts.isTypeNode(parent)) {
        const visited = ts.visitEachChild(node, visit, context);
        if (ts.isBlock(visited)) return f.updateBlock(visited, [call(parent), ...visited.statements]);
        return f.createBlock([call(parent), f.createReturnStatement(visited as ts.Expression)], true);
      }
      return ts.visitEachChild(node, visit, context);
    };
    return ts.visitNode(source, visit) as ts.SourceFile;
  };
}

/** Loads every .ts file of src/ instrumented (the others as before). */
function installProbes(): void {
  (globalThis as Record<string, unknown>)[PROBE] = probe;
  const extensions = (Module as unknown as { _extensions: Record<string, (module: NodeJS.Module, filename: string) => void> })._extensions;
  const previous = extensions['.ts'];
  extensions['.ts'] = (module, filename) => {
    if (!filename.startsWith(SRC)) return previous(module, filename);
    const output = ts.transpileModule(readFileSync(filename, 'utf8'), {
      fileName: filename,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, resolveJsonModule: true },
      transformers: { before: [instrument(relative(ROOT, filename))] },
    });
    (module as unknown as { _compile(code: string, filename: string): void })._compile(output.outputText, filename);
  };
}

// ---- counting ----------------------------------------------------------------------------------------------------

/** The counts of `entries` (calls from another file, in order). */
export function countsOf(entries: readonly Call[]): Counts {
  const byFile = new Map<string, number>();
  for (const e of entries) byFile.set(e.file, (byFile.get(e.file) ?? 0) + 1);
  return {
    entries: entries.length,
    files: byFile.size,
    returns: entries.length - byFile.size,
    byFile: [...byFile].map(([file, n]) => ({ file, entries: n })).sort((a, b) => b.entries - a.entries || a.file.localeCompare(b.file)),
  };
}

/**
 * The measurement of the calls one pass made, over the files `counted` selects: a call into a counted file enters it
 * when its nearest counted caller lies in another file (or there is none); calls into other files are not seen, and a
 * counted file reached through them is entered from the counted file below them.
 */
export function view(calls: readonly Call[], counted: (file: string) => boolean): View {
  const entries = calls.flatMap((c) => {
    if (!counted(c.file)) return [];
    const caller = c.callers.find((f) => counted(f.file));
    return caller?.file === c.file ? [] : [{ call: c, caller }];
  });
  const seen = new Set<string>();
  const crossings = entries.filter(({ call, caller }) => {
    const key = `${caller ? `${caller.file}:${caller.line}` : 'outside'} ${call.file} ${call.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return {
    calls: countsOf(entries.map((e) => e.call)),
    crossings: countsOf(crossings.map((e) => e.call)),
    trace: crossings.map(({ call, caller }) => `${caller?.file ?? '(outside src/)'} → ${call.file}: ${call.name}`),
  };
}

/** The measurement of one pass's calls in every view. */
export function measure(scenario: string, calls: readonly Call[], actions: readonly string[]): Measurement {
  return { scenario, actions, views: { pass: view(calls, VIEWS.pass), src: view(calls, VIEWS.src) } };
}

// ---- the world and the scenarios ---------------------------------------------------------------------------------

/** The reconciler's unit-test world (test/unit/operator/credential.test.ts), loaded after the probes are in. */
async function world() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded after the probes are installed, so they load instrumented */
  const api = require('../src/api') as typeof import('../src/api');
  const kube = require('../src/kube') as typeof import('../src/kube');
  const { CredentialReconciler } = require('../src/operator/credential/reconciler') as typeof import('../src/operator/credential/reconciler');
  const { PlaneCluster } = require('../src/operator/plane-cluster') as typeof import('../src/operator/plane-cluster');
  const { EventRecorder } = require('../src/operator/runtime/events') as typeof import('../src/operator/runtime/events');
  const { passwordSecretName } = require('../src/plane/naming') as typeof import('../src/plane/naming');
  const { FakeKeystone } = require('../test/support/fake-keystone') as typeof import('../test/support/fake-keystone');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const NS = 'team-a';
  const CP_NS = 'cp';
  let now = new Date('2026-12-01T00:00:00Z');
  const clock = () => now;
  const cluster = new kube.MemoryCluster(clock);
  const keystone = new FakeKeystone(api.childPrefix({ namespace: NS, name: 'app' }), clock);
  const backups = new Map<string, string>();
  const actions: string[] = [];
  const reconciler = new CredentialReconciler({
    cluster: new PlaneCluster(cluster, new EventRecorder(cluster)),
    keystone: () => keystone,
    clock,
    event: (order, e) => cluster.event(order, e),
    backup: (path) => ({
      read: async () => backups.get(path),
      write: async (data) => void backups.set(path, data.application_credential_id),
      remove: async () => void backups.delete(path),
    }),
    onAction: (_order, e) => actions.push(`${e.action.type} ${e.outcome}`),
  });
  const ready = (type: string) => [{ type, status: 'True' as const, reason: 'Ready', message: '', lastTransitionTime: now.toISOString() }];
  const ref = { controlPlaneRef: { name: 'cp', namespace: CP_NS } };
  const meta = (name: string, namespace = NS) => ({ apiVersion: 'c5c3.io/v1alpha1' as const, metadata: { name, namespace } });
  cluster.put(kube.Kinds.ControlPlane, {
    ...meta('cp', CP_NS),
    kind: 'ControlPlane',
    spec: { services: { keystone: { external: { authURL: 'http://127.0.0.1:5000/v3' } } }, adminCredential: { cloudCredentialsRef: { secretName: 'admin' } }, namespaceAssignments: [{ namespace: NS }] },
    status: { conditions: ready('AdminCredentialReady') },
  });
  cluster.put(kube.Kinds.KeystoneUser, { ...meta('svc'), kind: 'KeystoneUser', spec: { ...ref }, status: { userID: 'u-1', passwordGeneration: 1, conditions: ready('UserReady') } });
  cluster.put(kube.Kinds.Secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: passwordSecretName({ namespace: NS, name: 'svc' }, 1), namespace: CP_NS }, data: { password: Buffer.from('user-password').toString('base64') } } as import('../src/kube').Secret);
  cluster.put(kube.Kinds.KeystoneProject, { ...meta('proj'), kind: 'KeystoneProject', spec: { ...ref }, status: { projectID: 'p-1', projectName: 'proj', conditions: ready('ProjectReady') } });
  cluster.put(kube.Kinds.KeystoneRoleAssignment, {
    ...meta('member'),
    kind: 'KeystoneRoleAssignment',
    spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, role: 'member' },
    status: { roleID: 'r-1', userID: 'u-1', projectID: 'p-1', conditions: ready('AssignmentReady') },
  });
  cluster.put(kube.Kinds.KeystoneApplicationCredential, {
    ...meta('app'),
    kind: 'KeystoneApplicationCredential',
    spec: { ...ref, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, rotation: { interval: '1h', gracePeriod: '10m' } },
  } as import('../src/api').KeystoneApplicationCredential);
  const key = { namespace: NS, name: 'app' };
  return {
    /** One pass, its calls recorded; the Events it fires and forgets included. */
    async pass(): Promise<{ calls: Call[]; actions: string[] }> {
      actions.length = 0;
      recording = [];
      try {
        await reconciler.reconcile(key);
        await new Promise((r) => setImmediate(r));
        return { calls: recording, actions: [...actions] };
      } finally {
        recording = undefined;
      }
    },
    /** Passes until the order converges (nothing more to do now). */
    async converge(): Promise<void> {
      for (let i = 0; i < 10; i++) if ((await reconciler.reconcile(key)).requeueAfterMs !== 0) return;
      throw new Error('the order did not converge in 10 passes');
    },
    /** The clock to the order's next rotation. */
    toNextRotation(): void {
      const next = (cluster.get(kube.Kinds.KeystoneApplicationCredential, NS, 'app') as import('../src/api').KeystoneApplicationCredential).status?.nextRotation;
      if (!next) throw new Error('the order has no nextRotation');
      now = new Date(next);
    },
  };
}

/** The scenarios, each one measured pass. */
export const SCENARIOS: Readonly<Record<string, () => Promise<Measurement>>> = {
  first: async () => {
    const w = await world();
    const pass = await w.pass();
    return measure('first', pass.calls, pass.actions);
  },
  rotation: async () => {
    const w = await world();
    await w.converge();
    w.toNextRotation();
    const pass = await w.pass();
    return measure('rotation', pass.calls, pass.actions);
  },
};

function print(m: Measurement, trace: boolean): string {
  const counts = (c: Counts) => `${c.entries} entries into ${c.files} files, ${c.returns} returns`;
  const lines = [`${m.scenario} (the pass: ${m.actions.join(', ') || 'no action'})`];
  for (const [name, v] of Object.entries(m.views)) {
    lines.push(`  ${name === 'pass' ? "the pass's files" : 'all of src/'}: crossings ${counts(v.crossings)}; calls ${counts(v.calls)}`);
    if (name !== 'pass') continue;
    const calls = new Map(v.calls.byFile.map((f) => [f.file, f.entries]));
    lines.push('    crossings  calls  file');
    for (const f of v.crossings.byFile) lines.push(`    ${String(f.entries).padStart(9)}  ${String(calls.get(f.file) ?? 0).padStart(5)}  ${f.file}`);
    if (trace) lines.push('    the crossings in order:', ...v.trace.map((t, i) => `    ${String(i + 1).padStart(4)}. ${t}`));
  }
  return lines.join('\n');
}

async function main(args: string[]): Promise<void> {
  const names = args.filter((a) => !a.startsWith('--'));
  const unknown = names.filter((n) => !(n in SCENARIOS));
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}: give ${Object.keys(SCENARIOS).join(', ')}`);
  installProbes();
  const results: Measurement[] = [];
  for (const name of names.length > 0 ? names : Object.keys(SCENARIOS)) results.push(await (SCENARIOS[name] as () => Promise<Measurement>)());
  process.stdout.write(args.includes('--json') ? `${JSON.stringify(results, null, 2)}\n` : `${results.map((m) => print(m, args.includes('--trace'))).join('\n\n')}\n`);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
}
