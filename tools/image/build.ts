/**
 * Builds the operator's image from the repository's Dockerfile with buildah, and caches the build by a hash of its
 * inputs: the Dockerfile, `.dockerignore`, every file of the build context and the base image's ID. A machine that built
 * the same inputs before gets the image back at once (its ID is recorded under `~/.cache/keystone-appcred/image/`,
 * the image itself stays in buildah's storage); anything changed builds anew.
 *
 * The base (`NODE_IMAGE`) is the Dockerfile's default (`node:24-bookworm-slim`) where a registry serves it, or the local
 * base of ./base.ts (Debian's mmdebstrap + Node 24 from npm) where none is reachable; the Dockerfile is the same.
 * Behind a TLS-intercepting proxy, `npm ci` inside the build trusts the host's extra CA file (`NODE_EXTRA_CA_CERTS`, or
 * `--ca-file`), passed as the Dockerfile's `extra-ca` build secret.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { localBaseRef, makeLocalBase, nodeBinary } from './base';
import { contextFiles, contextHash, dockerignorePatterns } from './context';
import { exec, ExecError } from './exec';
import { withLock } from '../lock';

/** The repository root. */
export const REPO = resolve(__dirname, '..', '..');

/** Where the build's records live: `$KAC_CACHE_DIR/image`, by default `~/.cache/keystone-appcred/image`. */
export function imageCacheDir(): string {
  return join(process.env.KAC_CACHE_DIR ?? join(homedir(), '.cache', 'keystone-appcred'), 'image');
}

/** Where the base comes from: the registry's default, the local one, or whichever works (the registry's first). */
export type BaseChoice = 'auto' | 'registry' | 'local';

export interface BuildOptions {
  /** The image's name. A function gets the inputs' hash. @default `keystone-appcred:<package version>` */
  readonly tag?: string | ((hash: string) => string);
  /** @default "auto" */
  readonly base?: BaseChoice;
  /** An explicit `NODE_IMAGE` (local or pullable); wins over `base`. */
  readonly nodeImage?: string;
  /** A PEM file of extra CAs for `npm ci` inside the build. @default NODE_EXTRA_CA_CERTS of this process, when set */
  readonly caFile?: string;
  /** Build even when the inputs were built before. @default false */
  readonly noCache?: boolean;
  /** Progress lines. @default none */
  readonly log?: (line: string) => void;
  /** The repository to build. @default this one */
  readonly repo?: string;
}

export interface BuiltImage {
  /** The name given to the image. */
  readonly tag: string;
  /** The image ID (sha256). */
  readonly id: string;
  /** The hash of the inputs. */
  readonly hash: string;
  /** Its size, uncompressed, as `buildah images` counts it. */
  readonly sizeBytes: number;
  /** The `NODE_IMAGE` it was built on, and where that came from. */
  readonly base: { readonly ref: string; readonly source: 'given' | 'registry' | 'local'; readonly madeMs?: number };
  /** True when the inputs had been built before and the image was reused. */
  readonly cached: boolean;
  /** How long this call took. */
  readonly ms: number;
}

/** What a build recorded about itself, `<hash>.json` in the cache. */
interface BuildRecord {
  readonly id: string;
  readonly tags: string[];
  readonly base: string;
  readonly builtAt: string;
  readonly buildMs: number;
}

/** How many builds (images) the cache keeps; older ones are removed from buildah's storage. */
const KEEP_BUILDS = 8;

/** buildah's environment: chroot isolation (no OCI runtime needed) unless the caller chose another. */
function buildahEnv(): NodeJS.ProcessEnv {
  return { ...process.env, BUILDAH_ISOLATION: process.env.BUILDAH_ISOLATION ?? 'chroot' };
}

/** The Dockerfile's default `NODE_IMAGE` (its global `ARG NODE_IMAGE=...`). */
export function defaultNodeImage(repo: string = REPO): string {
  const match = /^ARG\s+NODE_IMAGE=(\S+)/m.exec(readFileSync(join(repo, 'Dockerfile'), 'utf8'));
  if (!match) throw new Error(`${join(repo, 'Dockerfile')} declares no ARG NODE_IMAGE=<default>`);
  return match[1];
}

/** The image's ID when buildah has it locally, else undefined. */
async function localImageId(ref: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    return (await exec('buildah', ['inspect', '--type', 'image', '--format', '{{.FromImageID}}', ref], { env })).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Checks that buildah runs here, with the command that installs it when it does not. */
export async function checkBuildah(env: NodeJS.ProcessEnv = buildahEnv()): Promise<void> {
  try {
    await exec('buildah', ['--version'], { env, timeoutMs: 30_000 });
  } catch (error) {
    const missing = error instanceof ExecError && /ENOENT/.test(error.output);
    throw new Error(
      missing
        ? 'buildah is not installed: apt-get install buildah mmdebstrap (Debian; .ci/run installs them), or build with docker: see docs/install/image.md'
        : `buildah does not run here: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** The base to build on: given, pulled from a registry, or made locally. */
async function resolveBase(options: BuildOptions, repo: string, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<BuiltImage['base'] & { id: string }> {
  if (options.nodeImage) {
    const id = (await localImageId(options.nodeImage, env)) ?? (await pull(options.nodeImage, env));
    if (!id) throw new Error(`NODE_IMAGE ${options.nodeImage} is neither local nor pullable`);
    return { ref: options.nodeImage, source: 'given', id };
  }
  const choice = options.base ?? 'auto';
  if (choice !== 'local') {
    const ref = defaultNodeImage(repo);
    const id = (await localImageId(ref, env)) ?? (await pull(ref, env, choice === 'registry' ? undefined : log));
    if (id) return { ref, source: 'registry', id };
    if (choice === 'registry') throw new Error(`the default NODE_IMAGE ${ref} cannot be pulled; build with --base local where no registry is reachable`);
  }
  const node = nodeBinary(repo);
  const ref = localBaseRef(node);
  const have = await localImageId(ref, env);
  if (have) {
    log(`base: ${ref} (local, made before)`);
    return { ref, source: 'local', id: have };
  }
  return withLock(join(imageCacheDir(), 'locks', 'base'), async () => {
    const again = await localImageId(ref, env);
    if (again) return { ref, source: 'local' as const, id: again };
    const t0 = Date.now();
    log(`base: making ${ref} from Debian ${'bookworm'} and Node ${node.version} (once per machine) ...`);
    await makeLocalBase(ref, node, { repo, log, env });
    const madeMs = Date.now() - t0;
    log(`base: ${ref} made in ${(madeMs / 1000).toFixed(0)} s`);
    return { ref, source: 'local' as const, madeMs, id: (await localImageId(ref, env)) as string };
  }, { log });
}

/** Pulls `ref`; its ID, or undefined when no registry serves it (the reason goes to `log`). */
async function pull(ref: string, env: NodeJS.ProcessEnv, log?: (line: string) => void): Promise<string | undefined> {
  try {
    await exec('buildah', ['pull', '--quiet', ref], { env, timeoutMs: 600_000 });
    return localImageId(ref, env);
  } catch (error) {
    const reason = error instanceof ExecError ? (error.output.trim().split('\n').pop() ?? '') : String(error);
    log?.(`base: ${ref} cannot be pulled (${reason}); using the local base instead`);
    return undefined;
  }
}

/** The hash of everything the build reads. */
function inputsHash(repo: string, baseId: string): string {
  const dockerfile = readFileSync(join(repo, 'Dockerfile'));
  const ignore = readFileSync(join(repo, '.dockerignore'), 'utf8');
  const files = contextFiles(repo, dockerignorePatterns(ignore));
  return createHash('sha256')
    .update('kac-image-v1\0')
    .update(dockerfile)
    .update('\0')
    .update(ignore)
    .update('\0')
    .update(contextHash(repo, files))
    .update('\0')
    .update(baseId)
    .digest('hex');
}

/** The image's size as `buildah images` reports it ("364 MB": decimal units, as docker's go-units prints them), in bytes. */
async function imageSize(id: string, env: NodeJS.ProcessEnv): Promise<number> {
  const list = JSON.parse(await exec('buildah', ['images', '--json', id], { env })) as { size?: number | string }[];
  const size = list[0]?.size;
  if (typeof size === 'number') return size;
  const m = /^([\d.]+)\s*([kMGT]?B)$/.exec(size ?? '');
  if (!m) return 0;
  return Math.round(Number(m[1]) * { B: 1, kB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 }[m[2] as 'B']);
}

/** Builds the image (or finds the build of the same inputs); see the module comment. */
export async function buildImage(options: BuildOptions = {}): Promise<BuiltImage> {
  const t0 = Date.now();
  const repo = options.repo ?? REPO;
  const log = options.log ?? (() => undefined);
  const env = buildahEnv();
  await checkBuildah(env);
  const base = await resolveBase(options, repo, env, log);
  const hash = inputsHash(repo, base.id);
  const version = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
  const tag = typeof options.tag === 'function' ? options.tag(hash) : (options.tag ?? `keystone-appcred:${version}`);
  const records = join(imageCacheDir(), 'builds');
  const recordFile = join(records, `${hash}.json`);
  const reuse = async (): Promise<BuiltImage | undefined> => {
    if (options.noCache || !existsSync(recordFile)) return undefined;
    const record = JSON.parse(readFileSync(recordFile, 'utf8')) as BuildRecord;
    if ((await localImageId(record.id, env)) === undefined) return undefined;
    await exec('buildah', ['tag', record.id, tag], { env });
    if (!record.tags.includes(tag)) writeFileSync(recordFile, JSON.stringify({ ...record, tags: [...record.tags, tag] }, null, 2));
    else utimesSync(recordFile, new Date(), new Date()); // the prune keeps the builds used last
    return { tag, id: record.id, hash, sizeBytes: await imageSize(record.id, env), base, cached: true, ms: Date.now() - t0 };
  };
  const found = await reuse();
  if (found) return found;
  return withLock(join(imageCacheDir(), 'locks', hash.slice(0, 16)), async () => {
    const meanwhile = await reuse();
    if (meanwhile) return meanwhile;
    const caFile = options.caFile ?? process.env.NODE_EXTRA_CA_CERTS;
    if (caFile && !existsSync(caFile)) throw new Error(`the CA file ${caFile} does not exist (from ${options.caFile ? '--ca-file' : 'NODE_EXTRA_CA_CERTS'})`);
    mkdirSync(records, { recursive: true });
    const iidfile = join(records, `${hash}.iid`);
    const started = Date.now();
    log(`building ${tag} on ${base.ref}${caFile ? ` (extra CAs for npm: ${caFile})` : ''} ...`);
    await exec(
      'buildah',
      [
        'bud',
        '--layers=false',
        '--build-arg', `NODE_IMAGE=${base.ref}`,
        // The Dockerfile's `extra-ca` build secret: mounted for the `npm ci` steps only, never part of the image.
        ...(caFile ? ['--secret', `id=extra-ca,src=${resolve(caFile)}`] : []),
        '--iidfile', iidfile,
        '--tag', tag,
        '--file', join(repo, 'Dockerfile'),
        repo,
      ],
      { env, onLine: (l) => /^\[\d\/\d\] STEP|^Error|^npm (error|ERR)/.test(l) && log(l) },
    );
    const id = readFileSync(iidfile, 'utf8').trim().replace(/^sha256:/, '');
    rmSync(iidfile, { force: true });
    const record: BuildRecord = { id, tags: [tag], base: base.ref, builtAt: new Date().toISOString(), buildMs: Date.now() - started };
    writeFileSync(recordFile, JSON.stringify(record, null, 2));
    await prune(records, env, log);
    return { tag, id, hash, sizeBytes: await imageSize(id, env), base, cached: false, ms: Date.now() - t0 };
  }, { log });
}

/** Removes the images of all but the newest {@link KEEP_BUILDS} builds (a build in use by a container stays). */
async function prune(records: string, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<void> {
  const files = readdirSync(records)
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ f, at: statSync(join(records, f)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { f } of files.slice(KEEP_BUILDS)) {
    const record = JSON.parse(readFileSync(join(records, f), 'utf8')) as BuildRecord;
    try {
      // Only the names that still point at this build (a name given again names a newer one).
      for (const name of record.tags) if ((await localImageId(name, env)) === record.id) await exec('buildah', ['rmi', name], { env });
      if ((await localImageId(record.id, env)) !== undefined) await exec('buildah', ['rmi', record.id], { env });
      rmSync(join(records, f), { force: true });
      log(`removed the old build ${record.id.slice(0, 12)} (${record.tags.join(', ')})`);
    } catch {
      // In use (a container of it) or already gone in part: left for a later prune.
    }
  }
}

/** Bytes as the `SIZE` column of `buildah images` prints them (decimal). */
export function formatSize(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${Math.round(bytes / 1e6)} MB`;
}
