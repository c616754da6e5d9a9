/**
 * The version of this package (its package.json), which is the operator's version: `keystone-appcred --version`, the
 * `keystone_appcred_build_info` gauge, the operator's first log line and the default image tag of `manifests` all say
 * it. Read at run time from the package.json above this module, so a build, an installed package and the image (which
 * copies package.json) report the version they were built from.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cached: string | undefined;

/** The version in this package's package.json. */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'keystone-appcred' && pkg.version) return (cached = pkg.version);
    }
    if (dirname(dir) === dir) throw new Error('keystone-appcred: package.json not found above ' + __dirname);
  }
}
