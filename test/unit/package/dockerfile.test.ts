/**
 * The operator's image (Dockerfile, .dockerignore) in sync with the Operator construct that runs it: Node 24 slim in two
 * stages (`npm ci` and `npm run build`, then `npm ci --omit=dev` and the compiled code), ENTRYPOINT exactly the
 * construct's OPERATOR_COMMAND with the script where the runtime stage puts it, USER the construct's default
 * runAsUser:runAsGroup (numeric), EXPOSE its default ports, and a build context of only what the build copies.
 *
 * Where a container builder works (docker, podman or buildah on PATH, its `info` answering, the base image local or
 * pullable), the image is built and inspected, and with docker or podman run read-only as its user; otherwise that
 * test is skipped, its name and a line on stderr saying what was looked for and why.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, join, posix } from 'node:path';
import { Testing } from 'cdk8s';
import { Operator, OPERATOR_COMMAND } from '../../../constructs/operator';
import { REPO, run } from '../../support/package';

jest.setTimeout(120_000);

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

/** Whether .dockerignore keeps `path` out of the build context (last matching pattern wins; a pattern covers a directory's contents). */
function ignored(patterns: readonly string[], path: string): boolean {
  const regex = (pattern: string): RegExp =>
    new RegExp(
      `^${posix
        .normalize(pattern)
        .replace(/\/$/, '')
        .split('/')
        .map((segment) => (segment === '**' ? '(?:.+)?' : segment.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')))
        .join('/')
        .replace(/\(\?:\.\+\)\?\//g, '(?:.+/)?')}$`,
    );
  const parts = path.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let out = false;
  for (const line of patterns) {
    const negated = line.startsWith('!');
    const re = regex(negated ? line.slice(1) : line);
    if (prefixes.some((p) => re.test(p))) out = !negated;
  }
  return out;
}

const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
const stages = parseDockerfile(dockerfile);
const build = stages[0];
const runtime = stages[stages.length - 1];
const dockerignore = readFileSync(join(REPO, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));

/** The construct's pod and container with its defaults (runAsUser, ports). */
function constructDefaults(): { uid: number; gid: number; ports: number[]; command: string[] } {
  const chart = Testing.chart();
  new Operator(chart, 'operator', { image: 'registry.example/keystone-appcred', tag: '0.1.0', openBao: { address: 'https://openbao.example:8200', auth: { method: 'kubernetes', role: 'kac' } } });
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

  it('the build stage installs every dependency with npm ci and runs npm run build', () => {
    const runs = of(build, 'RUN').join(' && ');
    expect(runs).toMatch(/\bnpm ci\b(?![^&;]*--omit)/);
    expect(runs).toMatch(/\bnpm run build\b/);
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
    for (const path of ['src/cli/main.ts', 'constructs/operator.ts']) expect([path, ignored(dockerignore, path)]).toEqual([path, false]);
  });

  it("keeps the host's node_modules, builds, tests and .git out of the context", () => {
    for (const path of ['node_modules/yaml/package.json', 'lib/src/cli/main.js', 'dist/x.yaml', '.git/HEAD', 'test/unit/x.test.ts', 'src/node_modules/x', 'constructs/node_modules/x', 'npm-debug.log']) {
      expect([path, ignored(dockerignore, path)]).toEqual([path, true]);
    }
  });
});

// ---- The build, where a container builder works. ----

const BUILDERS = ['docker', 'podman', 'buildah'] as const;
type BuilderName = (typeof BUILDERS)[number];

function onPath(tool: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, tool), constants.X_OK);
      return join(dir, tool);
    } catch {
      // Not here.
    }
  }
  return undefined;
}

const firstLine = (text: string | undefined): string => (text ?? '').trim().split('\n').find((l) => l.trim()) ?? '(no output)';

/** The first builder that can build the Dockerfile here, or why none can. */
function findBuilder(): { tool: BuilderName; path: string } | { reason: string } {
  const images = [...new Set(stages.map((s) => s.image).filter((i) => !stages.some((s) => s.name === i)))];
  const checked: string[] = [];
  for (const tool of BUILDERS) {
    const path = onPath(tool);
    if (!path) {
      checked.push(`${tool}: not on PATH`);
      continue;
    }
    const info = spawnSync(path, ['info'], { encoding: 'utf8', timeout: 20_000 });
    if (info.status !== 0) {
      checked.push(`${tool} (${path}): \`${tool} info\` failed: ${firstLine(info.error?.message ?? info.stderr)}`);
      continue;
    }
    const missing = images.find((image) => {
      const inspect = tool === 'buildah' ? ['inspect', '--type', 'image', image] : ['image', 'inspect', image];
      if (spawnSync(path, inspect, { encoding: 'utf8', timeout: 20_000 }).status === 0) return false;
      const pull = spawnSync(path, ['pull', image], { encoding: 'utf8', timeout: 300_000 });
      if (pull.status === 0) return false;
      checked.push(`${tool} (${path}) works, but the base image ${image} is neither local nor pullable: ${firstLine(pull.error?.message ?? pull.stderr)}`);
      return true;
    });
    if (!missing) return { tool, path };
  }
  return { reason: `no container builder can build here (looked for ${BUILDERS.join(', ')} on PATH): ${checked.join('; ')}` };
}

const builder = findBuilder();
if ('reason' in builder) process.stderr.write(`[dockerfile] the image build test is skipped: ${builder.reason}\n`);

describe('the image', () => {
  if ('reason' in builder) {
    it.skip(`is built, runs read-only as the construct's user — skipped: ${builder.reason}`, () => undefined);
    return;
  }
  const { tool, path } = builder;
  const tag = `keystone-appcred-test:dockerfile-${process.pid}`;
  const exec = async (args: string[], timeoutMs = 120_000): Promise<string> => {
    const result = await run(path, args, { cwd: REPO, env: process.env, timeoutMs });
    if (result.code !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${String(result.code)}):\n${result.stdout}\n${result.stderr}`);
    return result.stdout;
  };

  afterAll(async () => {
    await run(path, tool === 'buildah' ? ['rmi', '-f', tag] : ['image', 'rm', '-f', tag], { cwd: REPO, env: process.env, timeoutMs: 60_000 });
  });

  it(`is built with ${tool}, its config is the construct's, and it runs read-only as the construct's user`, async () => {
    const started = Date.now();
    await exec(tool === 'buildah' ? ['bud', '-t', tag, '-f', 'Dockerfile', '.'] : ['build', '-t', tag, '-f', 'Dockerfile', '.'], 1_800_000);
    process.stderr.write(`[dockerfile] ${tool} built ${tag} in ${Math.round((Date.now() - started) / 1000)} s\n`);
    const config =
      tool === 'buildah'
        ? (JSON.parse(await exec(['inspect', '--type', 'image', tag])) as { OCIv1: { config: { User?: string; Entrypoint?: string[] } } }).OCIv1.config
        : (JSON.parse(await exec(['image', 'inspect', tag])) as { Config: { User?: string; Entrypoint?: string[] } }[])[0].Config;
    expect(config.Entrypoint).toEqual([...OPERATOR_COMMAND]);
    expect(config.User).toBe(`${construct.uid}:${construct.gid}`);
    if (tool === 'buildah') return; // buildah builds; running is docker's or podman's.
    const hardened = ['run', '--rm', '--read-only', '--tmpfs', '/tmp', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges'];
    expect(await exec([...hardened, tag, '--help'])).toMatch(/^Usage: keystone-appcred operator/);
    const probe = "process.stdout.write(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), client: typeof require('@kubernetes/client-node').KubeConfig, cdk8s: (() => { try { require.resolve('cdk8s'); return true; } catch { return false; } })() }))";
    expect(JSON.parse(await exec([...hardened, '--entrypoint', 'node', tag, '-e', probe]))).toEqual({ uid: construct.uid, gid: construct.gid, client: 'function', cdk8s: false });
  }, 2_400_000);
});
