/**
 * The jsii package of the construct library: its name in every language and its package.json. One place, read by the
 * staging (tools/jsii/stage.ts), the docs' install lines (checked by test/unit/jsii/package.test.ts) and the examples.
 *
 * The package is the construct library alone, `keystone-appcred-cdk8s`, apart from the root package `keystone-appcred`
 * (whose entry `keystone-appcred/cdk8s` serves the same sources to TypeScript): a jsii package's closure must be jsii
 * packages, and the root package's is the engine's (`@kubernetes/client-node`, `prom-client`, ...). Its peers are the
 * root package's cdk8s peers, at the root package's ranges.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '..', '..');

/** The npm name, and the names jsii-pacmak gives it in each language. */
export const JSII_NAMES = {
  npm: 'keystone-appcred-cdk8s',
  python: { distName: 'keystone-appcred-cdk8s', module: 'keystone_appcred_cdk8s' },
  // Not a downloadable path (no dot in its first element), as the Pulumi Go SDK's `keystone-appcred/sdk/go`: until the
  // package is published, a program requires it and `replace`s it with the built module's directory.
  go: { moduleName: 'keystone-appcred/cdk8s-go', packageName: 'keystoneappcredcdk8s' },
  java: { package: 'io.c5c3.keystoneappcred.cdk8s', groupId: 'io.c5c3', artifactId: 'keystone-appcred-cdk8s' },
  dotnet: { namespace: 'C5c3.KeystoneAppcred.Cdk8s', packageId: 'C5c3.KeystoneAppcred.Cdk8s' },
} as const;

/** The Go module path of the built module: jsii-pacmak writes `<moduleName>/<packageName>` (no major suffix below v2). */
export const GO_MODULE = `${JSII_NAMES.go.moduleName}/${JSII_NAMES.go.packageName}`;

/** The cdk8s peers of the construct library: its whole closure (the Kubernetes objects are its own, constructs/kube.ts). */
export const PEERS = ['cdk8s', 'constructs'] as const;

interface RootPackage {
  readonly version: string;
  readonly license: string;
  readonly peerDependencies: Readonly<Record<string, string>>;
  readonly devDependencies: Readonly<Record<string, string>>;
}

/** The root package.json. */
export function rootPackage(root: string = ROOT): RootPackage {
  return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as RootPackage;
}

/** The version of a package installed in the root's node_modules. */
export function installedVersion(name: string, root: string = ROOT): string {
  return (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * The jsii package's package.json: the root's version and license, the cdk8s peers at the root's ranges (and, as
 * devDependencies, at the versions installed, which jsii compiles against), the entry the staging writes, and the
 * targets. Stability `experimental`: a 0.x library; jsii-diff still reports its breaking changes (tools/jsii/diff.ts).
 */
export function jsiiPackageJson(root: string = ROOT): Record<string, unknown> {
  const pkg = rootPackage(root);
  const peers = Object.fromEntries(PEERS.map((p) => [p, pkg.peerDependencies[p]]));
  return {
    name: JSII_NAMES.npm,
    version: pkg.version,
    description: 'cdk8s constructs of keystone-appcred: the c5c3.io CRDs, the operator with its justified RBAC, its monitoring, and typed orders of Keystone application credentials checked at synth with the API server\'s rules.',
    license: pkg.license,
    author: { name: 'keystone-appcred', organization: true },
    homepage: 'https://github.com/c5c3/keystone-appcred',
    repository: { type: 'git', url: 'https://github.com/c5c3/keystone-appcred.git', directory: 'constructs' },
    keywords: ['cdk8s', 'kubernetes', 'openstack', 'keystone', 'application-credentials'],
    // The compiled closure (with the dashboard's JSON), the assembly; not the TypeScript sources.
    files: ['lib/', '.jsii', 'README.md', 'LICENSE'],
    main: 'lib/constructs/index.js',
    types: 'lib/constructs/index.d.ts',
    engines: { node: '>= 20.16.0' },
    peerDependencies: peers,
    devDependencies: Object.fromEntries(PEERS.map((p) => [p, installedVersion(p, root)])),
    stability: 'experimental',
    jsii: {
      outdir: 'dist',
      tsconfig: 'tsconfig.jsii.json',
      validateTsconfig: 'minimal',
      excludeTypescript: [],
      targets: {
        python: JSII_NAMES.python,
        go: { moduleName: JSII_NAMES.go.moduleName, packageName: JSII_NAMES.go.packageName },
        java: { package: JSII_NAMES.java.package, maven: { groupId: JSII_NAMES.java.groupId, artifactId: JSII_NAMES.java.artifactId } },
        dotnet: JSII_NAMES.dotnet,
      },
    },
  };
}
