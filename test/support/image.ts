/**
 * Starter of the `image` component: the operator's image built from the Dockerfile with buildah (tools/image/build.ts), once
 * per run and cached across runs by a hash of its inputs, so a warm machine does not build it again. Where no registry
 * serves the Dockerfile's default base, the base is the local one (Debian's mmdebstrap + Node 24 from npm);
 * `KAC_IMAGE_BASE=registry|auto` chooses otherwise. buildah and mmdebstrap are installed with apt-get when missing and
 * the run is root's (as .ci/run installs them).
 *
 * Variables it exports: KAC_IMAGE (`localhost/keystone-appcred:test-<hash>`, a name no other build takes),
 * KAC_IMAGE_ID, KAC_IMAGE_SIZE (bytes), KAC_IMAGE_BASE_REF, KAC_IMAGE_BUILD (`built in N s` or `cached`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { buildImage, formatSize, type BaseChoice } from '../../tools/image/build';
import type { Started, Starter } from './starter';
import { progress } from './proc';

/** The Debian packages the image tests need: the builder, the local base's root file system, and `ip` for the pods. */
export const IMAGE_PACKAGES = ['buildah', 'mmdebstrap', 'iproute2'] as const;

function missingPackages(): string[] {
  return IMAGE_PACKAGES.filter((pkg) => {
    const status = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
    return status.stdout?.trim() !== 'install ok installed';
  });
}

/** Installs what is missing, as root; otherwise throws with the command to run. */
function ensurePackages(): void {
  const missing = missingPackages();
  if (missing.length === 0) return;
  const command = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (process.getuid?.() !== 0) throw new Error(`the image tests need ${missing.join(', ')} (and root, for buildah and the pods' namespaces): ${command}`);
  progress(`image: installing ${missing.join(', ')} (once) ...`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { stdio: ['ignore', 'inherit', 'inherit'], env });
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { stdio: ['ignore', 'inherit', 'inherit'], env });
}

export const startImage: Starter = async (): Promise<Started> => {
  if (process.getuid?.() !== 0) {
    throw new Error('the image tests run buildah and the pods as root (storage, mounts, namespaces); run the tests as root, as CI does');
  }
  ensurePackages();
  const base = (process.env.KAC_IMAGE_BASE ?? 'local') as BaseChoice;
  const image = await buildImage({ base, tag: (hash) => `localhost/keystone-appcred:test-${hash.slice(0, 12)}`, log: (line) => progress(`image: ${line}`) });
  const how = image.cached ? 'cached' : `built in ${Math.round(image.ms / 1000)} s`;
  progress(`image: ${image.tag} ${image.id.slice(0, 12)} ${formatSize(image.sizeBytes)} on ${image.base.ref} (${how}${image.base.madeMs ? `; base made in ${Math.round(image.base.madeMs / 1000)} s` : ''})`);
  return {
    env: { KAC_IMAGE: image.tag, KAC_IMAGE_ID: image.id, KAC_IMAGE_SIZE: String(image.sizeBytes), KAC_IMAGE_BASE_REF: image.base.ref, KAC_IMAGE_BUILD: how },
    logs: [],
    stop: async () => undefined,
  };
};
