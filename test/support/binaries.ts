/**
 * Finds the programs the real test components need, in this order:
 *   1. an explicit override `KAC_<NAME>_BIN` (e.g. KAC_KUBE_APISERVER_BIN=/opt/k8s/kube-apiserver), used as given;
 *   2. for etcd, kube-apiserver and kubectl: `$KUBEBUILDER_ASSETS/<name>` if it reports the pinned version;
 *   3. `<name>` on PATH if it reports the pinned version (not for the Pulumi plugins, whose versions we cannot read);
 *   4. the build cache ~/.cache/keystone-appcred/<name>-<version>/<name>, built by build-test-binaries.sh when missing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { progress } from './proc';

export type BinaryName =
  | 'etcd'
  | 'kube-apiserver'
  | 'kubectl'
  | 'kube-controller-manager'
  | 'pulumi'
  | 'pulumi-language-nodejs'
  | 'pulumi-resource-pulumi-nodejs'
  | 'pulumi-language-yaml'
  | 'pulumi-python'
  | 'pulumi-language-sdkgen'
  | 'pulumi-language-dotnet'
  | 'bao'
  | 'promtool'
  | 'prometheus'
  | 'helm'
  | 'bundle-validate'
  | 'cloudconf';

/** Pinned versions (keep in sync with build-test-binaries.sh and test/support/go/*). */
export const PINNED_VERSIONS = {
  kubernetes: 'v1.37.2',
  etcd: 'v3.6.16',
  pulumi: 'v3.276.0',
  openbao: '2.7.2',
  prometheus: '3.16.0',
  helm: 'v4.3.2',
} as const;

const BUILD_SCRIPT = join(__dirname, 'build-test-binaries.sh');

/** How to ask a binary found elsewhere for its version, and the text its answer must contain. */
const VERSION_PROBES: Partial<Record<BinaryName, { args: string[]; expect: string }>> = {
  etcd: { args: ['--version'], expect: `etcd Version: ${PINNED_VERSIONS.etcd.slice(1)}` },
  'kube-apiserver': { args: ['--version'], expect: `Kubernetes ${PINNED_VERSIONS.kubernetes}` },
  'kube-controller-manager': { args: ['--version'], expect: `Kubernetes ${PINNED_VERSIONS.kubernetes}` },
  kubectl: { args: ['version', '--client'], expect: `Client Version: ${PINNED_VERSIONS.kubernetes}` },
  pulumi: { args: ['version'], expect: PINNED_VERSIONS.pulumi },
  bao: { args: ['version'], expect: `OpenBao v${PINNED_VERSIONS.openbao}` },
  promtool: { args: ['--version'], expect: `promtool, version ${PINNED_VERSIONS.prometheus} ` },
  prometheus: { args: ['--version'], expect: `prometheus, version ${PINNED_VERSIONS.prometheus} ` },
  helm: { args: ['version', '--short'], expect: `${PINNED_VERSIONS.helm}` },
};

const ENVTEST_NAMES: readonly BinaryName[] = ['etcd', 'kube-apiserver', 'kubectl'];

/** The environment variable that overrides a binary's path, e.g. KAC_KUBE_APISERVER_BIN. */
export function overrideVariable(name: BinaryName): string {
  return `KAC_${name.toUpperCase().replace(/-/g, '_')}_BIN`;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function reportsPinnedVersion(name: BinaryName, path: string): boolean {
  const probe = VERSION_PROBES[name];
  if (!probe) return false;
  const result = spawnSync(path, probe.args, { encoding: 'utf8', timeout: 15_000 });
  return `${result.stdout ?? ''}${result.stderr ?? ''}`.includes(probe.expect);
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** The cache directory build-test-binaries.sh uses for `name` (the script is the one source of the versions). */
export function cacheDir(name: BinaryName | 'pulumi-resource-kubernetes'): string {
  return execFileSync('bash', [BUILD_SCRIPT, '--print-dir', name], { encoding: 'utf8' }).trim();
}

/**
 * The optional `pulumi-resource-kubernetes` plugin (`bash test/support/build-test-binaries.sh
 * pulumi-resource-kubernetes`), or KAC_PULUMI_RESOURCE_KUBERNETES_BIN; undefined when neither is there (the tests
 * that need it skip, saying so).
 */
export function kubernetesPluginPath(): string | undefined {
  const explicit = process.env.KAC_PULUMI_RESOURCE_KUBERNETES_BIN;
  if (explicit) return explicit;
  const path = join(cacheDir('pulumi-resource-kubernetes'), 'pulumi-resource-kubernetes');
  return existsSync(path) ? path : undefined;
}

/**
 * Builds `names` that are not cached yet (one build-test-binaries.sh run, output on stderr). Build failures throw
 * with the script's exit status; the script printed the compiler's output already.
 */
export function ensureBuilt(names: readonly BinaryName[], timeoutMs = 60 * 60_000): void {
  const missing = names.filter((n) => !isExecutable(join(cacheDir(n), n)));
  if (missing.length === 0) return;
  progress(`building ${missing.join(', ')} (first run on this machine; later runs reuse ~/.cache/keystone-appcred) ...`);
  const result = spawnSync('bash', [BUILD_SCRIPT, ...missing], { stdio: ['ignore', 'inherit', 'inherit'], timeout: timeoutMs });
  if (result.status !== 0) {
    throw new Error(`bash ${BUILD_SCRIPT} ${missing.join(' ')} failed (status ${String(result.status)}, signal ${String(result.signal)})`);
  }
}

/** Where the binary comes from (for progress lines and docs). */
export interface ResolvedBinary {
  readonly path: string;
  readonly source: 'override' | 'KUBEBUILDER_ASSETS' | 'PATH' | 'cache';
}

/** The path of a binary (see the module comment for the search order), building it if nothing else has it. */
export function resolveBinary(name: BinaryName): ResolvedBinary {
  const override = process.env[overrideVariable(name)];
  if (override) {
    if (!isExecutable(override)) throw new Error(`${overrideVariable(name)}=${override} is not an executable file`);
    return { path: override, source: 'override' };
  }
  const assets = process.env.KUBEBUILDER_ASSETS;
  if (assets && ENVTEST_NAMES.includes(name)) {
    const candidate = join(assets, name);
    if (isExecutable(candidate) && reportsPinnedVersion(name, candidate)) return { path: candidate, source: 'KUBEBUILDER_ASSETS' };
  }
  if (VERSION_PROBES[name]) {
    const candidate = onPath(name);
    if (candidate && reportsPinnedVersion(name, candidate)) return { path: candidate, source: 'PATH' };
  }
  const cached = join(cacheDir(name), name);
  if (!existsSync(cached)) ensureBuilt([name]);
  return { path: cached, source: 'cache' };
}

/** Resolves several binaries, building all the missing ones in one script run first. */
export function resolveBinaries<N extends BinaryName>(names: readonly N[]): Record<N, ResolvedBinary> {
  const needBuild = names.filter((n) => {
    if (process.env[overrideVariable(n)]) return false;
    return !isExecutable(join(cacheDir(n), n));
  });
  // Only build what neither an override, KUBEBUILDER_ASSETS nor PATH provides.
  const toBuild = needBuild.filter((n) => {
    const assets = process.env.KUBEBUILDER_ASSETS;
    if (assets && ENVTEST_NAMES.includes(n) && isExecutable(join(assets, n)) && reportsPinnedVersion(n, join(assets, n))) return false;
    const p = VERSION_PROBES[n] ? onPath(n) : undefined;
    return !(p && reportsPinnedVersion(n, p));
  });
  if (toBuild.length > 0) ensureBuilt(toBuild);
  const out = {} as Record<N, ResolvedBinary>;
  for (const n of names) out[n] = resolveBinary(n);
  return out;
}
