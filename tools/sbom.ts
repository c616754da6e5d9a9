/**
 * The software bills of materials of a release, CycloneDX 1.5 JSON, written by `npm run release:artifacts -- --sbom DIR`
 * (tools/release.ts) beside the release's other artifacts:
 *
 * - `keystone-appcred-<version>.cdx.json`, the package: npm's own `npm sbom --sbom-format cyclonedx --omit dev` of its
 *   lock, the runtime dependencies a user's `npm install keystone-appcred` brings ({@link npmSbom} says what npm leaves
 *   out and how it is completed);
 * - `keystone-appcred-image-<version>.cdx.json` with `--image REF` (an image in buildah's storage, `npm run image`), the
 *   operator's image: every Debian package of its dpkg database (`pkg:deb/debian/...`), the Node.js runtime, and its
 *   `/app` tree read by the same {@link npmSbom} (the host's npm reads the image's lock and node_modules; nothing
 *   of the image runs). Read from the image's own files rather than by a scanner (cdxgen and its kind download their
 *   plugins and databases at run time, which these machines cannot), so it works offline and lists what the image holds.
 *
 * What would differ between two runs over the same tree (the timestamp, the random serial number, npm's version and
 * the directory's name npm takes for the package's) is made stable: the serial number is derived from the components.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { exec } from './image/exec';

const REPO = resolve(__dirname, '..');

/** A CycloneDX component, as far as these tools write and read it. */
export interface Component {
  readonly 'bom-ref'?: string;
  readonly type: 'library' | 'application' | 'container' | 'operating-system' | 'platform';
  readonly name: string;
  readonly version: string;
  readonly purl?: string;
  readonly [key: string]: unknown;
}

/** A CycloneDX BOM. */
export interface Bom {
  readonly bomFormat: 'CycloneDX';
  readonly specVersion: string;
  readonly serialNumber: string;
  readonly version: number;
  readonly metadata: { readonly component: Component; readonly tools?: unknown; readonly [key: string]: unknown };
  readonly components: readonly Component[];
  readonly dependencies?: readonly unknown[];
  readonly [key: string]: unknown;
}

/** A serial number (RFC 4122 form) derived from what the BOM lists, so the same tree gives the same file. */
function serialOf(components: readonly Component[]): string {
  const h = createHash('sha256').update(JSON.stringify(components.map((c) => c.purl ?? `${c.name}@${c.version}`))).digest('hex');
  return `urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A lock entry (`package-lock.json` v3), as far as the SBOM reads it. */
interface LockEntry {
  readonly version?: string;
  readonly integrity?: string;
  readonly license?: string;
  readonly dev?: boolean;
  readonly devOptional?: boolean;
  readonly link?: boolean;
}

/**
 * The production packages of a lock, by `name@version`: every entry not flagged `dev` or `devOptional`, what
 * `npm ci --omit=dev` installs.
 */
export function productionPackages(dir: string): Map<string, LockEntry> {
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const out = new Map<string, LockEntry>();
  for (const [path, e] of Object.entries(lock.packages)) {
    if (path === '' || e.dev || e.devOptional || e.link || e.version === undefined) continue;
    out.set(`${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${e.version}`, e);
  }
  return out;
}

/** A component of a lock entry: its purl, its hash (the entry's `integrity`), its license. */
function lockComponent(key: string, e: LockEntry): Component {
  const at = key.lastIndexOf('@');
  const name = key.slice(0, at);
  const version = key.slice(at + 1);
  const [alg, digest] = (e.integrity ?? '').split('-');
  return {
    'bom-ref': key,
    type: 'library',
    name,
    version,
    scope: 'required',
    purl: `pkg:npm/${name.replace('@', '%40')}@${version}`,
    ...(alg && digest ? { hashes: [{ alg: alg.toUpperCase().replace('SHA', 'SHA-'), content: Buffer.from(digest, 'base64').toString('hex') }] } : {}),
    ...(e.license ? { licenses: [{ license: { id: e.license } }] } : {}),
  };
}

/**
 * npm's CycloneDX SBOM of the package at `dir` (its lock), runtime dependencies only, made stable (see the module
 * comment): `npm sbom --omit dev --package-lock-only`. The lock, not node_modules: npm 11's `npm sbom` refuses a
 * production install (ESBOMPROBLEMS, every devDependency "missing"), which is what the image holds. And completed
 * from the lock: its `--omit dev` leaves out packages a production install has (a devDependency of the root that a
 * runtime dependency also needs: `@types/node` under `@types/stream-buffers`, `debug` under `socks-proxy-agent`), which
 * are added as the lock records them; `test/integration/sbom.test.ts` compares the result with `npm ls --omit=dev`.
 */
export function npmSbom(dir: string): Bom {
  const raw = execFileSync('npm', ['sbom', '--sbom-format', 'cyclonedx', '--sbom-type', 'library', '--omit', 'dev', '--package-lock-only', '--prefix', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
  type Dependency = { ref: string; dependsOn?: string[] };
  const bom = JSON.parse(raw) as Bom & { metadata: { tools?: { vendor: string; name: string }[] } };
  const production = productionPackages(dir);
  const listed = bom.components.filter((c) => production.has(`${c.name}@${c.version}`));
  const have = new Set(listed.map((c) => `${c.name}@${c.version}`));
  const components = [...listed, ...[...production].filter(([key]) => !have.has(key)).map(([key, e]) => lockComponent(key, e))].sort((a, b) => `${a.name}@${a.version}`.localeCompare(`${b.name}@${b.version}`));
  const refs = new Set([bom.metadata.component['bom-ref'], ...components.map((c) => c['bom-ref'])]);
  const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string };
  const metadata = Object.fromEntries(Object.entries(bom.metadata).filter(([k]) => k !== 'timestamp'));
  return {
    ...bom,
    serialNumber: serialOf(components),
    metadata: { ...metadata, tools: (bom.metadata.tools ?? []).map((t) => ({ vendor: t.vendor, name: t.name })), component: { ...bom.metadata.component, name } },
    components,
    dependencies: ((bom.dependencies ?? []) as Dependency[]).filter((d) => refs.has(d.ref)).map((d) => ({ ...d, dependsOn: (d.dependsOn ?? []).filter((r) => refs.has(r)) })),
  };
}

/** The Debian packages of a root file system's dpkg database (installed ones), as components. */
export function debianPackages(rootfs: string): Component[] {
  const status = readFileSync(join(rootfs, 'var', 'lib', 'dpkg', 'status'), 'utf8');
  return status
    .split(/\n\n+/)
    .map((stanza) => Object.fromEntries(stanza.split('\n').flatMap((line) => (/^[A-Za-z-]+: /.test(line) ? [[line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]] : []))) as Record<string, string>)
    .filter((p) => p.Package && p.Status?.endsWith(' installed'))
    .map((p) => ({
      'bom-ref': `pkg:deb/debian/${p.Package}@${p.Version}?arch=${p.Architecture}`,
      type: 'library' as const,
      name: p.Package,
      version: p.Version,
      purl: `pkg:deb/debian/${p.Package}@${encodeURIComponent(p.Version)}?arch=${p.Architecture}`,
      ...(p.Maintainer ? { publisher: p.Maintainer } : {}),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The Node.js runtime of a root file system: the `node` on the image's PATH, by the version it reports. */
function nodeRuntime(rootfs: string): Component[] {
  for (const dir of ['usr/local/bin', 'usr/bin']) {
    const node = join(rootfs, dir, 'node');
    if (!existsSync(node)) continue;
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
    return [{ 'bom-ref': `pkg:generic/node@${version}`, type: 'platform', name: 'node', version, purl: `pkg:generic/node@${version}` }];
  }
  return [];
}

/** The image's BOM from its mounted root file system: Debian packages, the Node.js runtime, the app's npm tree. */
export function imageSbom(rootfs: string, image: string, version: string): Bom {
  const app = npmSbom(join(rootfs, 'app'));
  const components = [...debianPackages(rootfs), ...nodeRuntime(rootfs), app.metadata.component, ...app.components];
  return {
    $schema: 'http://cyclonedx.org/schema/bom-1.5.schema.json',
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: serialOf(components),
    version: 1,
    metadata: { tools: app.metadata.tools, component: { 'bom-ref': image, type: 'container', name: image.replace(/:[^/:]+$/, ''), version } },
    components,
    dependencies: app.dependencies ?? [],
  };
}

/** Mounts an image of buildah's storage read-only as a working container's root, runs `fn` on it, removes the container. */
async function withRootfs<T>(image: string, fn: (rootfs: string) => T): Promise<T> {
  const env = { ...process.env, BUILDAH_ISOLATION: process.env.BUILDAH_ISOLATION ?? 'chroot' };
  const container = (await exec('buildah', ['from', '--pull=never', image], { env })).trim();
  try {
    return fn((await exec('buildah', ['mount', container], { env })).trim());
  } finally {
    await exec('buildah', ['rm', container], { env });
  }
}

/** Writes the package's BOM (and, given an image, the image's) into `dir`; returns the paths written. */
export async function writeSboms(dir: string, version: string, image?: string): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const written = [join(dir, `keystone-appcred-${version}.cdx.json`)];
  writeFileSync(written[0], `${JSON.stringify(npmSbom(REPO), null, 2)}\n`);
  if (image !== undefined) {
    const bom = await withRootfs(image, (rootfs) => imageSbom(rootfs, image, version));
    written.push(join(dir, `keystone-appcred-image-${version}.cdx.json`));
    writeFileSync(written[1], `${JSON.stringify(bom, null, 2)}\n`);
  }
  return written;
}
