/**
 * The build context of the Dockerfile as a builder sees it: the files `.dockerignore` lets in, and a hash of them. The
 * image build is cached by that hash (tools/tools/image/build.ts), and test/unit/package/dockerfile.test.ts checks with the same
 * matcher that the context holds what the Dockerfile copies and nothing of the host's builds.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/** The patterns of a `.dockerignore` text, comments and blank lines dropped. */
export function dockerignorePatterns(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

/** A `.dockerignore` pattern as a regular expression over a slash-separated path relative to the context. */
function patternRegex(pattern: string): RegExp {
  const body = posix
    .normalize(pattern)
    .replace(/^\/+|\/+$/g, '')
    .split('/')
    .map((segment) => (segment === '**' ? '(?:.+)?' : segment.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')))
    .join('/')
    .replace(/\(\?:\.\+\)\?\//g, '(?:.+/)?');
  return new RegExp(`^${body}$`);
}

/**
 * Whether the patterns keep `path` out of the context, as Docker and buildah read them: the last matching pattern wins,
 * `!` lets a path in again, and a pattern that matches a directory covers everything below it.
 */
export function ignored(patterns: readonly string[], path: string): boolean {
  const parts = path.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let out = false;
  for (const line of patterns) {
    const negated = line.startsWith('!');
    const re = patternRegex(negated ? line.slice(1) : line);
    if (prefixes.some((p) => re.test(p))) out = !negated;
  }
  return out;
}

/**
 * Every file of the context below `root`, sorted. A directory is not walked when it is ignored and no `!` pattern could
 * let something below it in again (so `node_modules/` and `.git/` cost nothing).
 */
export function contextFiles(root: string, patterns: readonly string[]): string[] {
  const reincluded = patterns.filter((p) => p.startsWith('!')).map((p) => posix.normalize(p.slice(1)).replace(/^\/+/, ''));
  const mayHoldIncluded = (dir: string): boolean => reincluded.some((p) => p.startsWith(`${dir}/`) || /^[*?[]|^\*\*/.test(p));
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!ignored(patterns, path) || mayHoldIncluded(path)) walk(path);
      } else if ((entry.isFile() || entry.isSymbolicLink()) && !ignored(patterns, path)) {
        out.push(path);
      }
    }
  };
  walk('');
  return out.sort();
}

/** sha256 over the context's file names and contents, in order. */
export function contextHash(root: string, files: readonly string[]): string {
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}
