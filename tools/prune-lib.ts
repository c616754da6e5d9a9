/**
 * `tsx tools/prune-lib.ts`: removes from lib/ what tsc wrote for a source that no longer exists. tsc writes and
 * overwrites, it never deletes, so a file moved or split left its old output behind, and `npm pack` shipped it (a
 * `.js` without its source, importing modules that are gone). Run after every build (`npm run build` does, and the
 * tests' build); it removes only outputs without a source, never one being written, so builds may overlap it.
 * lib/plugin/, lib/sdk/ and lib/jsii/ are not tsc's and are left alone.
 */
import { existsSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const REPO = resolve(__dirname, '..');

/** The source a tsc output came from (`lib/src/a/b.js` → `src/a/b.ts` or `.mts`), or undefined for another file. */
export function sourcesOf(output: string): string[] | undefined {
  const match = /^(.*?)(\.d)?\.(m?)js(\.map)?$|^(.*?)\.d\.(m?)ts(\.map)?$/.exec(output);
  if (!match) return undefined;
  const stem = match[1] ?? match[5];
  const module = (match[3] ?? match[6]) === 'm' ? 'm' : '';
  return [`${stem}.${module}ts`, ...(module ? [] : [`${stem}.tsx`])];
}

/** Removes the outputs under `lib` whose sources are gone; returns them, relative to the repository. */
export function pruneLib(repo: string = REPO): string[] {
  const lib = join(repo, 'lib');
  const removed: string[] = [];
  const walk = (dir: string): boolean => {
    let empty = true;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const rel = relative(lib, path);
      if (entry.isDirectory()) {
        if (rel === 'plugin' || rel === 'sdk' || rel === 'jsii') {
          empty = false;
          continue;
        }
        if (!walk(path)) empty = false;
        else {
          try {
            rmdirSync(path);
          } catch {
            empty = false; // another build wrote into it meanwhile
          }
        }
        continue;
      }
      const sources = sourcesOf(rel);
      if (sources && !sources.some((s) => existsSync(join(repo, s)))) {
        rmSync(path, { force: true });
        removed.push(relative(repo, path));
      } else empty = false;
    }
    return empty;
  };
  if (existsSync(lib)) walk(lib);
  return removed;
}

if (require.main === module) {
  const removed = pruneLib();
  if (removed.length > 0) process.stderr.write(`prune-lib: removed ${removed.length} outputs whose sources are gone\n`);
}
