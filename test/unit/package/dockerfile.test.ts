/**
 * The operator's image (Dockerfile, .dockerignore) in sync with the Operator construct that runs it: Node 24 slim in two
 * stages (`npm ci` and `tsc`, then `npm ci --omit=dev` and the compiled code), ENTRYPOINT exactly the
 * construct's OPERATOR_COMMAND with the script where the runtime stage puts it, USER the construct's default
 * runAsUser:runAsGroup (numeric), EXPOSE its default ports, a build context of only what the build copies, and the
 * extra-CA build argument `npm ci` needs behind a TLS-intercepting proxy.
 *
 * The image itself is built (tools/image/build.ts, the `image` component of the test setup) and run as the construct's
 * Deployment in test/e2e/image-operator.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { Testing } from 'cdk8s';
import { Operator, OPERATOR_COMMAND } from '../../../constructs/operator';
import { contextFiles, dockerignorePatterns, ignored } from '../../../tools/image/context';
import { REPO } from '../../support/package';

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

interface Stage {
  readonly image: string;
  readonly name?: string;
  readonly instructions: Instruction[];
}

/** The Dockerfile's stages, line continuations joined, comments dropped, global ARG defaults substituted in FROM. */
function parseDockerfile(text: string): Stage[] {
  const lines: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw)) continue;
    const continued = /\\\s*$/.test(raw);
    pending += (pending ? ' ' : '') + raw.replace(/\\\s*$/, '').trim();
    if (!continued) {
      if (pending.trim()) lines.push(pending.trim());
      pending = '';
    }
  }
  if (pending.trim()) lines.push(pending.trim());
  const globals: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line) as RegExpExecArray;
    const upper = keyword.toUpperCase();
    if (upper === 'FROM') {
      const [image, as, name] = args.replace(/--platform=\S+\s+/, '').split(/\s+/);
      const resolved = image.replace(/\$\{?(\w+)\}?/g, (_, v: string) => globals[v] ?? '');
      stages.push({ image: resolved, ...(as?.toUpperCase() === 'AS' ? { name } : {}), instructions: [] });
    } else if (stages.length === 0) {
      if (upper === 'ARG') {
        const [name, value] = args.split('=');
        globals[name] = value ?? '';
      }
    } else {
      stages[stages.length - 1].instructions.push({ keyword: upper, args });
    }
  }
  return stages;
}

const of = (stage: Stage, keyword: string): string[] => stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const last = (stage: Stage, keyword: string): string | undefined => of(stage, keyword).pop();

/** `COPY [--from=x] src... dest`: its flags, sources and destination. */
function copyOf(args: string): { from?: string; sources: string[]; dest: string } {
  const words = args.split(/\s+/);
  const flags = words.filter((w) => w.startsWith('--'));
  const paths = words.filter((w) => !w.startsWith('--'));
  const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
  return { ...(from ? { from } : {}), sources: paths.slice(0, -1), dest: paths[paths.length - 1] };
}

const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
const stages = parseDockerfile(dockerfile);
const build = stages[0];
const runtime = stages[stages.length - 1];
const dockerignore = dockerignorePatterns(readFileSync(join(REPO, '.dockerignore'), 'utf8'));

/** The construct's pod and container with its defaults (runAsUser, ports). */
function constructDefaults(): { uid: number; gid: number; ports: number[]; command: string[] } {
  const chart = Testing.chart();
  new Operator(chart, 'operator', { image: 'registry.example/keystone-appcred', tag: '0.3.0', openBao: { address: 'https://openbao.example:8200', auth: { method: 'kubernetes', role: 'kac' } } });
  type Json = Record<string, never>;
  const deployment = (Testing.synth(chart) as Json[]).find((o) => o.kind === 'Deployment') as Json;
  const pod = (deployment.spec as Json).template as { spec: { securityContext: { runAsUser: number; runAsGroup: number }; containers: { command: string[]; ports: { containerPort: number }[] }[] } };
  const container = pod.spec.containers[0];
  return { uid: pod.spec.securityContext.runAsUser, gid: pod.spec.securityContext.runAsGroup, ports: container.ports.map((p) => p.containerPort), command: container.command };
}
const construct = constructDefaults();

describe('Dockerfile', () => {
  it('builds in two stages from Node 24 slim', () => {
    expect(stages.length).toBe(2);
    expect(build.name).toBeDefined();
    for (const stage of stages) expect(stage.image).toMatch(/^node:24(-bookworm)?-slim$/);
  });

  it('the build stage installs every dependency with npm ci and compiles with tsc (not npm run build, which also bundles the Pulumi plugin)', () => {
    const runs = of(build, 'RUN').join(' && ');
    expect(runs).toMatch(/\bnpm ci\b(?![^&;]*--omit)/);
    expect(runs).toMatch(/\bnpx tsc -p tsconfig\.json\b/);
    expect(runs).not.toMatch(/\bnpm run build\b/);
    // `npm ci` before the sources are copied: the dependency layer is cached across source changes.
    const order = build.instructions.map((i) => `${i.keyword} ${i.args}`);
    expect(order.findIndex((i) => /npm ci/.test(i))).toBeLessThan(order.findIndex((i) => /^COPY src\//.test(i)));
  });

  it('the runtime stage installs the production dependencies only and copies the compiled code from the build stage', () => {
    const runs = of(runtime, 'RUN').join(' && ');
    expect(runs).toMatch(/\bnpm ci\b[^&;]*--omit=dev/);
    expect(runs).not.toMatch(/npm run build|\btsc\b/);
    const fromBuild = of(runtime, 'COPY').map(copyOf).filter((c) => c.from === build.name);
    expect(fromBuild.map((c) => c.sources).flat().every((s) => s.startsWith(`${last(build, 'WORKDIR')}/lib/`))).toBe(true);
    expect(fromBuild.length).toBeGreaterThan(0);
  });

  it("ENTRYPOINT is the construct's OPERATOR_COMMAND in exec form, and there is no CMD", () => {
    expect(construct.command).toEqual([...OPERATOR_COMMAND]);
    expect(JSON.parse(last(runtime, 'ENTRYPOINT') ?? 'null')).toEqual([...OPERATOR_COMMAND]);
    // The construct sets `command` and no `args`: a CMD would make `docker run` differ from the pod.
    expect(of(runtime, 'CMD')).toEqual([]);
    // node itself, not npm (npm writes its logs under $HOME, which a read-only root file system refuses).
    expect(OPERATOR_COMMAND[0]).toBe('node');
  });

  it("the entry point's script is where the runtime stage copies the build's output of a source file", () => {
    const workdir = last(runtime, 'WORKDIR') as string;
    expect(workdir).toMatch(/^\//);
    const script = posix.join(workdir, OPERATOR_COMMAND[1]);
    const buildWorkdir = last(build, 'WORKDIR') as string;
    const dir = (d: string): string => `${posix.join(workdir, d).replace(/\/$/, '')}/`;
    const copy = of(runtime, 'COPY').map(copyOf).find((c) => c.from === build.name && script.startsWith(dir(c.dest)));
    if (!copy) throw new Error(`no COPY --from=${String(build.name)} puts ${script} into the runtime stage`);
    const inBuild = posix.join(copy.sources[0], posix.relative(dir(copy.dest), script));
    const tsconfig = JSON.parse(readFileSync(join(REPO, 'tsconfig.json'), 'utf8')) as { compilerOptions: { outDir: string; rootDir: string } };
    expect(tsconfig.compilerOptions.rootDir).toBe('.');
    const source = posix.relative(posix.join(buildWorkdir, tsconfig.compilerOptions.outDir), inBuild).replace(/\.js$/, '.ts');
    expect(source).toBe('src/cli/main.ts');
    expect(existsSync(join(REPO, source))).toBe(true);
    // And the build stage copies that source in.
    expect(of(build, 'COPY').map(copyOf).some((c) => c.sources.includes('src/'))).toBe(true);
  });

  it("runs as the construct's non-root UID and GID, numerically (runAsNonRoot can verify it)", () => {
    expect(construct.uid).toBeGreaterThan(0);
    expect(last(runtime, 'USER')).toBe(`${construct.uid}:${construct.gid}`);
    // Nothing runs after USER at build time, and nothing declares a volume the root file system would have to hold.
    const instructions = runtime.instructions.map((i) => i.keyword);
    expect(instructions.slice(instructions.lastIndexOf('USER')).filter((k) => k === 'RUN')).toEqual([]);
    expect(of(runtime, 'VOLUME')).toEqual([]);
  });

  it("EXPOSE lists the construct's default ports", () => {
    expect(of(runtime, 'EXPOSE').flatMap((a) => a.split(/\s+/)).map(Number).sort()).toEqual([...construct.ports].sort());
  });
});

describe('.dockerignore', () => {
  it('lets in what the build stage copies from the context, and every such path exists', () => {
    const sources = stages.flatMap((s) => of(s, 'COPY').map(copyOf).filter((c) => !c.from).flatMap((c) => c.sources));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect([source, existsSync(join(REPO, source))]).toEqual([source, true]);
      expect([source, ignored(dockerignore, source.replace(/\/$/, ''))]).toEqual([source, false]);
    }
    for (const path of ['src/cli/main.ts', 'constructs/operator/operator.ts']) expect([path, ignored(dockerignore, path)]).toEqual([path, false]);
  });

  it("keeps the host's node_modules, builds, tests and .git out of the context", () => {
    for (const path of ['node_modules/yaml/package.json', 'lib/src/cli/main.js', 'dist/x.yaml', '.git/HEAD', 'test/unit/x.test.ts', 'src/node_modules/x', 'constructs/node_modules/x', 'npm-debug.log']) {
      expect([path, ignored(dockerignore, path)]).toEqual([path, true]);
    }
  });

  it('the context the build hashes is what the build copies: the sources and the locks, nothing of the host', () => {
    const files = contextFiles(REPO, dockerignore);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'tsconfig.json', 'src/cli/main.ts', 'constructs/operator/operator.ts']));
    const tops = [...new Set(files.map((f) => f.split('/')[0]))].sort();
    const copied = stages.flatMap((s) => of(s, 'COPY').map(copyOf).filter((c) => !c.from).flatMap((c) => c.sources.map((p) => p.replace(/\/$/, ''))));
    expect(tops).toEqual([...new Set(copied)].sort());
    expect(files.filter((f) => /(^|\/)node_modules\/|\.log$/.test(f))).toEqual([]);
  });
});

describe('the extra CAs of a TLS-intercepting proxy', () => {
  it("every npm ci mounts the optional build secret extra-ca and trusts it only when it was given; no ARG or ENV carries it", () => {
    const npmRuns = stages.flatMap((stage) => of(stage, 'RUN').filter((r) => /\bnpm ci\b/.test(r)));
    expect(npmRuns).toHaveLength(2);
    for (const runLine of npmRuns) {
      expect(runLine).toMatch(/^--mount=type=secret,id=extra-ca\s/);
      expect(runLine).toMatch(/if \[ -s \/run\/secrets\/extra-ca \]; then export NODE_EXTRA_CA_CERTS=\/run\/secrets\/extra-ca; fi && npm ci /);
    }
    for (const stage of stages) expect([...of(stage, 'ARG'), ...of(stage, 'ENV')].join(' ')).not.toMatch(/CA/);
  });
});
