/**
 * The jsii package's staging (tools/jsii/stage.ts, tools/jsii/package.ts), without building: the construct library's
 * closure is the constructs and the engine's pure modules they import, nothing else; a module that imports another
 * package is refused, naming it; the stage's own node_modules holds the peers and the Node types (no link to a checkout's);
 * the package.json carries the root's version and peer ranges and every language's name.
 */
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { JSII_NAMES, jsiiPackageJson, PEERS, ROOT, rootPackage } from '../../../tools/jsii/package';
import { allowedImport, closure, stage, stagedPackages } from '../../../tools/jsii/stage';

describe('the jsii package\'s closure', () => {
  const files = closure();

  it('is the constructs and the engine modules they import, with the rules of src/api copied, not restated', () => {
    const paths = files.map((f) => f.path);
    expect(paths).toContain('constructs/index.ts');
    expect(paths).toEqual(expect.arrayContaining(['src/api/rules.ts', 'src/api/identity-plane-rules.ts', 'src/api/cluster-identity-rules.ts', 'src/observability/alerts.ts']));
    expect(paths.every((p) => /^(constructs|src\/(api|observability))\//.test(p))).toBe(true);
    // Nothing of the runtime: no operator, no Kubernetes client, no Pulumi.
    expect(paths.filter((p) => /^src\/(operator|kube|pulumi|keystone|lifecycle|cli)\//.test(p))).toEqual([]);
  });

  it('imports only the peers and Node built-ins', () => {
    const packages = [...new Set(files.flatMap((f) => f.packages))].sort();
    expect(packages.every(allowedImport)).toBe(true);
    expect(packages.filter((p) => !p.startsWith('node:'))).toEqual(['cdk8s', 'constructs']);
    expect(allowedImport('@kubernetes/client-node')).toBe(false);
    expect(allowedImport('cdk8s/lib/yaml')).toBe(true);
    // The Kubernetes objects are the library's own (constructs/kube.ts): cdk8s-plus is no peer.
    expect(allowedImport('cdk8s-plus-33')).toBe(false);
  });

  it('refuses an import of another package, naming the file and the import', () => {
    const root = mkdtempSync(join(tmpdir(), 'kac-closure-'));
    try {
      mkdirSync(join(root, 'constructs'));
      mkdirSync(join(root, 'src', 'api'), { recursive: true });
      writeFileSync(join(root, 'constructs', 'index.ts'), "export { rule } from '../src/api/rule';\n");
      writeFileSync(join(root, 'src', 'api', 'rule.ts'), "import { parse } from 'yaml';\nexport const rule = parse('a: 1');\n");
      symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
      expect(() => closure(root)).toThrow('src/api/rule.ts imports yaml');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the stage\'s own node_modules', () => {
  it('holds the peers and the Node types with the dependencies they need beside them, at the versions installed', () => {
    const names = stagedPackages().map((entry) => entry.slice(0, entry.lastIndexOf('@')));
    expect(names).toEqual(expect.arrayContaining(['cdk8s', 'constructs', '@types/node', 'undici-types']));
    // cdk8s bundles its dependencies (yaml, follow-redirects, fast-json-patch): they travel inside it.
    expect(names).not.toContain('yaml');
    expect(stagedPackages()).toContain(`cdk8s@${(JSON.parse(readFileSync(join(ROOT, 'node_modules', 'cdk8s', 'package.json'), 'utf8')) as { version: string }).version}`);
  });

  it('is copied, with no link leading out of the stage (a package\'s own .bin links stay relative)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kac-stage-'));
    try {
      stage(dir);
      expect(lstatSync(join(dir, 'node_modules')).isDirectory()).toBe(true);
      expect(lstatSync(join(dir, 'node_modules', 'cdk8s')).isDirectory()).toBe(true);
      const links = readdirSync(join(dir, 'node_modules'), { withFileTypes: true, recursive: true })
        .filter((entry) => entry.isSymbolicLink())
        .map((entry) => join(entry.parentPath, entry.name));
      expect(links.filter((link) => !resolve(dirname(link), readlinkSync(link)).startsWith(`${dir}/`))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the jsii package.json', () => {
  const pkg = jsiiPackageJson() as { name: string; version: string; peerDependencies: Record<string, string>; jsii: { targets: Record<string, unknown> } };
  const root = rootPackage();

  it('has the root package\'s version and the cdk8s peers at its ranges', () => {
    expect(pkg.name).toBe(JSII_NAMES.npm);
    expect(pkg.version).toBe(root.version);
    expect(pkg.peerDependencies).toEqual(Object.fromEntries(PEERS.map((p) => [p, root.peerDependencies[p]])));
  });

  it('names the package in Python, Go, Java and .NET', () => {
    expect(Object.keys(pkg.jsii.targets).sort()).toEqual(['dotnet', 'go', 'java', 'python']);
  });
});
