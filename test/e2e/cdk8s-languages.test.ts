// @needs kube
/**
 * The construct library from every cdk8s language (issue 43): the jsii package built from this checkout
 * (tools/jsii/build.ts, cached by the hash of its inputs) installed as each language installs a package, and the same
 * example app (examples/cdk8s/: main.ts, python/, go/, java/) synthesized by the real `cdk8s synth` (cdk8s-cli) in each:
 *
 * - TypeScript: the repository's sources, as `keystone-appcred/cdk8s` resolves inside it: the reference manifests;
 * - Python: a fresh venv, `pip install` of the wheel with the peers from PyPI at the versions the TypeScript side uses;
 * - Go: the module through a `replace` (and the cdk8s Go module jsii-pacmak built from its npm package, which the Go
 *   module proxy does not serve);
 * - Java: the jar from the local Maven repository jsii-pacmak wrote (with the cdk8s jar, which Maven Central lacks at
 *   this version), resolved afresh: Maven keeps a fetched release jar forever, so the build's own are dropped from the
 *   Maven cache first (else a rebuilt jar of the same version would never be read).
 *
 * Every language's manifests equal the TypeScript app's byte for byte, and the API server accepts them with
 * `kubectl apply --server-side --dry-run=server` (the CRDs applied first, for real, as crds.test.ts leaves them). Prints
 * what each language's install and synth took.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { installedVersion, GO_MODULE, JSII_NAMES, PEERS, rootPackage } from '../../tools/jsii/package';
import { DOC_LANGUAGES, mavenRepository, type JsiiBuild } from '../../tools/jsii/build';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { cdk8sCli, documentedSizes, JSII_BUILD_MS, jsiiBuild, kib } from '../support/jsii';
import { kubectl, kubectlOk, waitEstablished, type KubeObject } from '../support/kubectl';
import { REPO, runOk } from '../support/package';

jest.setTimeout(1_800_000);

const EXAMPLE = join(REPO, 'examples', 'cdk8s');
const FILES = ['billing.k8s.yaml', 'platform.k8s.yaml'];

/** The manifests a synth wrote, by file name. */
type Manifests = Record<string, string>;

function manifests(dir: string): Manifests {
  return Object.fromEntries(readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

/** Node 24 (the one running Jest) first on PATH: cdk8s-cli and every language's jsii kernel run on it. */
function env(extra: NodeJS.ProcessEnv = {}, pathFirst: readonly string[] = []): NodeJS.ProcessEnv {
  return { ...process.env, PATH: [...pathFirst, dirname(process.execPath), process.env.PATH ?? ''].join(':'), npm_config_update_notifier: 'false', ...extra };
}

/** Copies an example directory into a fresh directory outside the repository. */
function copyExample(name: string, from: string): string {
  const dir = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? tmpdir(), `kac-cdk8s-${name}-`));
  cpSync(from, dir, { recursive: true, filter: (src) => !/\/(dist|target|node_modules|__pycache__)$/.test(src) });
  return dir;
}

/** Runs `cdk8s synth` in `dir` into `dir/dist`; returns the manifests and the seconds it took. */
async function synth(cli: string, dir: string, environment: NodeJS.ProcessEnv): Promise<{ manifests: Manifests; seconds: number }> {
  const start = Date.now();
  await runOk(cli, ['synth', '--output', join(dir, 'dist')], { cwd: dir, env: environment, timeoutMs: 900_000 });
  return { manifests: manifests(join(dir, 'dist')), seconds: (Date.now() - start) / 1000 };
}

describe('the example app in TypeScript, Python, Go and Java, on the jsii package built from this checkout', () => {
  let build: JsiiBuild;
  let cli: string;
  let reference: Manifests;
  const dirs: string[] = [];
  const times: Record<string, string> = {};

  beforeAll(async () => {
    const start = Date.now();
    build = await jsiiBuild(['python', 'go', 'java']);
    times.build = `${((Date.now() - start) / 1000).toFixed(1)} s (${build.built.length > 0 ? `built ${build.built.join(', ')}` : 'cached'})`;
    cli = await cdk8sCli();
    const dir = copyExample('typescript', EXAMPLE);
    dirs.push(dir);
    // Inside a copy the package name would not resolve: run the repository's own example under the same cdk8s.yaml.
    writeFileSync(join(dir, 'cdk8s.yaml'), `language: typescript\napp: ${join(REPO, 'node_modules', '.bin', 'tsx')} --tsconfig ${join(REPO, 'tsconfig.json')} ${join(EXAMPLE, 'main.ts')}\noutput: dist\n`);
    const ts = await synth(cli, dir, env());
    reference = ts.manifests;
    times.typescript = `synth ${ts.seconds.toFixed(1)} s`;
  }, JSII_BUILD_MS);

  afterAll(() => {
    process.stderr.write(`[cdk8s-languages] ${Object.entries(times).map(([k, v]) => `${k}: ${v}`).join('; ')}\n`);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('the TypeScript app writes the two charts', () => {
    expect(Object.keys(reference)).toEqual(FILES);
    const kinds = parseAllDocuments(reference['billing.k8s.yaml']).map((d) => (d.toJSON() as KubeObject).kind);
    expect(kinds).toEqual(['KeystoneProject', 'KeystoneUser', 'KeystoneRoleAssignment', 'KeystoneApplicationCredential', 'Deployment']);
    expect(reference['platform.k8s.yaml']).toContain('kind: CustomResourceDefinition');
  });

  it('Python: the wheel in a fresh venv, cdk8s synth writes the same bytes', async () => {
    const dir = copyExample('python', join(EXAMPLE, 'python'));
    dirs.push(dir);
    const [wheel] = readdirSync(join(build.dist, 'python')).filter((f) => f.endsWith('.whl'));
    expect(wheel).toMatch(new RegExp(`^${JSII_NAMES.python.module}-`));
    const start = Date.now();
    await runOk('python3', ['-m', 'venv', join(dir, '.venv')], { cwd: dir });
    const pins = PEERS.map((p) => `${p}==${installedVersion(p)}`);
    await runOk(join(dir, '.venv', 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', join(build.dist, 'python', wheel), ...pins], { cwd: dir, timeoutMs: 900_000 });
    const install = (Date.now() - start) / 1000;
    const out = await synth(cli, dir, env({ VIRTUAL_ENV: join(dir, '.venv') }, [join(dir, '.venv', 'bin')]));
    times.python = `venv and pip install ${install.toFixed(1)} s, synth ${out.seconds.toFixed(1)} s`;
    expect(out.manifests).toEqual(reference);
  });

  it('Go: the module through a replace, cdk8s synth writes the same bytes', async () => {
    const dir = copyExample('go', join(EXAMPLE, 'go'));
    dirs.push(dir);
    const goDist = join(build.dist, 'go');
    const replace = (module: string, path: string) => ['-replace', `${module}=${join(goDist, path)}`];
    await runOk(
      'go',
      ['mod', 'edit', ...replace(GO_MODULE, JSII_NAMES.go.packageName), ...replace('github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2', 'cdk8s')],
      { cwd: dir },
    );
    const out = await synth(cli, dir, env());
    times.go = `synth (go run: build and run) ${out.seconds.toFixed(1)} s`;
    expect(out.manifests).toEqual(reference);
  });

  it('Java: the jar from the local Maven repository, cdk8s synth writes the same bytes', async () => {
    const dir = copyExample('java', join(EXAMPLE, 'java'));
    dirs.push(dir);
    const pom = join(dir, 'pom.xml');
    writeFileSync(pom, readFileSync(pom, 'utf8').replace(/<kac\.jsii\.repository>[^<]*</, `<kac.jsii.repository>file://${join(build.dist, 'java')}<`));
    // The Maven cache of the jsii builds (its plugins and the jsii runtime fetched once), without the jars built here.
    const repository = mavenRepository();
    for (const artifact of [['io', 'c5c3', JSII_NAMES.java.artifactId], ['org', 'cdk8s', 'cdk8s']]) rmSync(join(repository, ...artifact), { recursive: true, force: true });
    const out = await synth(cli, dir, env({ MAVEN_OPTS: `-Dmaven.repo.local=${repository}` }));
    times.java = `synth (mvn compile exec:java) ${out.seconds.toFixed(1)} s`;
    expect(out.manifests).toEqual(reference);
  });

  it('the sizes docs/install/cdk8s.md states are the build\'s, within 10%', () => {
    const version = rootPackage().version;
    const sizes = documentedSizes(version);
    const measured: Record<string, number[]> = {
      wheel: [kib(join(build.dist, 'python', `${JSII_NAMES.python.module}-${version}-py3-none-any.whl`))],
      go: [kib(join(build.dist, 'go', 'keystoneappcredcdk8s'))],
      jar: [kib(join(build.dist, 'java', ...JSII_NAMES.java.groupId.split('.'), JSII_NAMES.java.artifactId, version, `${JSII_NAMES.java.artifactId}-${version}.jar`))],
      npm: [kib(join(build.dist, 'js', `${JSII_NAMES.npm}@${version}.jsii.tgz`))],
      docs: DOC_LANGUAGES.map((l) => kib(join(build.docs, `API.${l}.md`))),
    };
    times.sizes = Object.entries(measured).map(([k, v]) => `${k} ${v.join('/')} KiB`).join(', ');
    expect(Object.keys(sizes).sort()).toEqual(Object.keys(measured).sort());
    for (const [artifact, [low, high]] of Object.entries(sizes)) {
      const [least, most] = [Math.min(...measured[artifact]), Math.max(...measured[artifact])];
      expect([artifact, Math.abs(least - low) <= low / 10 && Math.abs(most - high) <= high / 10]).toEqual([artifact, true]);
    }
  });

  it('the API server accepts the manifests (server-side apply, dry run)', async () => {
    const unlock = await lockCluster('cdk8s-languages.test.ts');
    try {
      const dir = dirs[0];
      const docs = parseAllDocuments(reference['platform.k8s.yaml']).map((d) => d.toJSON() as KubeObject);
      const crds = docs.filter((d) => d.kind === 'CustomResourceDefinition');
      expect(crds).toHaveLength(6);
      // The orders' kinds exist only once their CRDs do, and a Role only in a namespace that exists: those two kinds are
      // applied for real (as crds.test.ts leaves them), everything is then sent as a dry run.
      const first = join(dir, 'crds-and-namespaces.yaml');
      writeFileSync(first, docs.filter((d) => d.kind === 'CustomResourceDefinition' || d.kind === 'Namespace').map((c) => JSON.stringify(c)).join('\n---\n'));
      await kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=kac-test', '-f', first]);
      await waitEstablished([...crds.map((c) => `crd/${c.metadata.name}`)]);
      // Every language's own files (the same bytes, each sent as written), not only the reference.
      const synthesized = dirs.filter((d) => existsSync(join(d, 'dist')));
      expect(synthesized).toHaveLength(4);
      for (const each of synthesized) {
        for (const file of FILES) {
          // --force-conflicts: the question is whether the API server accepts the objects, not who owns fields of the
          // same names that another file installed as a user does (kubectl's field manager).
          const applied = await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=kac-test', '--dry-run=server', '-f', join(each, 'dist', file)]);
          expect([each, file, applied.stderr]).toEqual([each, file, '']);
          expect(applied.code).toBe(0);
          expect(applied.stdout).toContain('(server dry run)');
        }
      }
    } finally {
      unlock();
    }
  }, LOCKED_SETUP_MS);
});
