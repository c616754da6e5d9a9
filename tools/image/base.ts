/**
 * The Dockerfile's `NODE_IMAGE` for machines that reach no image registry: a Debian bookworm root file system made by
 * Debian's `mmdebstrap` (minbase variant, from Debian's package mirror) with Node 24 from the npm registry (the
 * `node-linux-<arch>` binary of the project's own `node` devDependency) and npm, committed as a local image with
 * buildah. It is laid out as the official `node:24-bookworm-slim` is where the Dockerfile and the operator rely on it:
 * `node`, `npm` and `npx` in /usr/local/bin, CA certificates, a `node` user and group 1000 with a home.
 *
 * The image is named after what it is made of (`localhost/keystone-appcred-node:<node version>-bookworm-<recipe
 * hash>`), so a machine that has it never makes it again.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, chownSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { exec } from './exec';

/** The Debian release of the base, as the official image's `-bookworm-slim`. */
export const DEBIAN_SUITE = 'bookworm';

/** The npm the base carries (the Dockerfile's `npm ci`). */
export const NPM_VERSION = '11.19.1';

/** Changes whenever the recipe below changes what the base holds. */
const RECIPE = 'kac-base-v1';

/** Left out of the root file system, as Debian's slim images leave them out. */
const DPKG_EXCLUDES = ['/usr/share/doc/*', '/usr/share/man/*', '/usr/share/info/*', '/usr/share/locale/*', '/usr/share/lintian/*'];

export interface LocalBaseOptions {
  /** The repository, whose `node` devDependency brings the Node binary. */
  readonly repo: string;
  /** Debian's mirror. @default KAC_DEBIAN_MIRROR, else mmdebstrap's default (deb.debian.org) */
  readonly mirror?: string;
  /** Progress lines. */
  readonly log: (line: string) => void;
  /** buildah's environment. */
  readonly env: NodeJS.ProcessEnv;
}

export interface NodeBinary {
  readonly path: string;
  readonly version: string;
  readonly arch: string;
}

/** The Node binary of the repository's `node` devDependency (`node_modules/node/node_modules/node-linux-<arch>`). */
export function nodeBinary(repo: string): NodeBinary {
  const arch = process.arch;
  const name = `node-linux-${arch}`;
  let pkg: string;
  try {
    pkg = require.resolve(`${name}/package.json`, { paths: [join(repo, 'node_modules', 'node')] });
  } catch {
    throw new Error(`the local base image needs Node from the \`node\` devDependency, but ${name} is not installed under ${join(repo, 'node_modules', 'node')}: run npm ci`);
  }
  const { version, bin } = JSON.parse(readFileSync(pkg, 'utf8')) as { version: string; bin: { node: string } };
  return { path: join(dirname(pkg), bin.node), version, arch };
}

/** The base's image name for this Node and recipe. */
export function localBaseRef(node: NodeBinary): string {
  const key = createHash('sha256').update([RECIPE, DEBIAN_SUITE, node.arch, node.version, NPM_VERSION, ...DPKG_EXCLUDES].join('\n')).digest('hex').slice(0, 12);
  return `localhost/keystone-appcred-node:${node.version}-${DEBIAN_SUITE}-${key}`;
}

/** Makes the base image `ref` (see the module comment). */
export async function makeLocalBase(ref: string, node: NodeBinary, options: LocalBaseOptions): Promise<void> {
  const { log, env } = options;
  const work = mkdtempSync(join(tmpdir(), 'kac-base-'));
  let container: string | undefined;
  try {
    const mirror = options.mirror ?? process.env.KAC_DEBIAN_MIRROR;
    log(`mmdebstrap ${DEBIAN_SUITE} (minbase, ca-certificates)${mirror ? ` from ${mirror}` : ''} ...`);
    const rootfs = join(work, 'rootfs.tar');
    await exec(
      'mmdebstrap',
      ['--variant=minbase', '--include=ca-certificates', ...DPKG_EXCLUDES.map((p) => `--dpkgopt=path-exclude=${p}`), '--dpkgopt=path-include=/usr/share/doc/*/copyright', DEBIAN_SUITE, rootfs, ...(mirror ? [mirror] : [])],
      { env, onLine: (l) => /^(E|W):/.test(l) && log(`mmdebstrap: ${l}`) },
    );
    log(`npm ${NPM_VERSION} from the npm registry ...`);
    const npmTarball = join(work, (await exec('npm', ['pack', `npm@${NPM_VERSION}`, '--pack-destination', work, '--silent'], { cwd: work, env })).trim().split('\n').pop() as string);
    container = (await exec('buildah', ['from', 'scratch'], { env })).trim();
    await exec('buildah', ['add', container, rootfs, '/'], { env });
    const root = (await exec('buildah', ['mount', container], { env })).trim();
    copyFileSync(node.path, join(root, 'usr/local/bin/node'));
    const npmDir = join(root, 'usr/local/lib/node_modules/npm');
    mkdirSync(npmDir, { recursive: true });
    await exec('tar', ['-xzf', npmTarball, '-C', npmDir, '--strip-components=1', '--no-same-owner'], { env });
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(root, 'usr/local/bin/npm'));
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(root, 'usr/local/bin/npx'));
    // The official image's `node` user: UID and GID 1000, the Operator construct's default runAsUser.
    appendFileSync(join(root, 'etc/passwd'), 'node:x:1000:1000::/home/node:/bin/bash\n');
    appendFileSync(join(root, 'etc/group'), 'node:x:1000:\n');
    mkdirSync(join(root, 'home/node'), { mode: 0o755 });
    chownSync(join(root, 'home/node'), 1000, 1000);
    await exec('buildah', ['umount', container], { env });
    await exec(
      'buildah',
      [
        'config',
        '--env', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--env', `NODE_VERSION=${node.version}`,
        '--cmd', 'node',
        '--label', `org.opencontainers.image.description=Debian ${DEBIAN_SUITE} (mmdebstrap minbase) with Node ${node.version} and npm ${NPM_VERSION}, the local NODE_IMAGE of keystone-appcred`,
        container,
      ],
      { env },
    );
    await exec('buildah', ['commit', '--rm', '--quiet', container, ref], { env });
    container = undefined;
  } finally {
    if (container) await exec('buildah', ['rm', container], { env }).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}
