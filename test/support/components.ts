/**
 * The real components the test suite can start. Each starter brings one component up on 127.0.0.1 with free ports and
 * a temp dir, and returns the environment variables the tests read to reach it plus a stop function. Starters live in
 * their own files (image.ts, keystone.ts, kube.ts, target-kube.ts, openbao.ts, pulumi.ts, prometheus.ts); a run starts only what its test
 * files need, so a run that needs only Keystone never touches the Go toolchain.
 */
import { resolveBinary, type BinaryName } from './binaries';
import { startImage } from './image';
import { startKeystone } from './keystone';
import { startKube } from './kube';
import { startOpenBao } from './openbao';
import { preparePreviousRelease, prepareRelease020 } from './previous-release';
import { preparePromtool, startPrometheus } from './prometheus';
import { progress } from './proc';
import { preparePulumi } from './pulumi';
import type { Starter } from './starter';
import { startTargetKube } from './target-kube';

/**
 * `target-kube` is a second API server, a registered target cluster (test/support/target-kube.ts); `promtool` only
 * provides the binary, `prometheus` runs a server (test/support/prometheus.ts); `previous-release` is the release
 * the upgrade test starts from (0.1.0), built from the repository's history and cached by commit
 * (test/support/previous-release.ts), and `release-0.2.0` the same for 0.2.0;
 * `helm` and `bundle-validate` only provide the binaries (`KAC_HELM`, `KAC_BUNDLE_VALIDATE`).
 */
export type Component = 'image' | 'keystone' | 'kube' | 'target-kube' | 'openbao' | 'pulumi' | 'promtool' | 'prometheus' | 'previous-release' | 'release-0.2.0' | 'helm' | 'bundle-validate';

/** In start order: the image first (a cold build is the longest step, and needs none of the others). */
export const COMPONENTS: readonly Component[] = ['image', 'keystone', 'kube', 'target-kube', 'openbao', 'pulumi', 'promtool', 'prometheus', 'previous-release', 'release-0.2.0', 'helm', 'bundle-validate'];

/** A component that is a program only: built into the cache when missing, its path in `variable`. */
function binary(name: BinaryName, variable: string): Starter {
  return async () => {
    const found = resolveBinary(name);
    progress(`${name} from ${found.source}: ${found.path}`);
    return { env: { [variable]: found.path }, logs: [], stop: async () => undefined };
  };
}

const STARTERS: Record<Component, Starter> = {
  image: startImage,
  keystone: startKeystone,
  kube: startKube,
  'target-kube': startTargetKube,
  openbao: startOpenBao,
  pulumi: preparePulumi,
  promtool: preparePromtool,
  prometheus: startPrometheus,
  'previous-release': preparePreviousRelease,
  'release-0.2.0': prepareRelease020,
  helm: binary('helm', 'KAC_HELM'),
  'bundle-validate': binary('bundle-validate', 'KAC_BUNDLE_VALIDATE'),
};

export async function starterFor(component: Component): Promise<Starter> {
  return STARTERS[component];
}
