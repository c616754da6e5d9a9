/**
 * tools/prune-lib.ts: what tsc wrote for a source that is gone leaves lib/; everything else stays.
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pruneLib, sourcesOf } from '../../../tools/prune-lib';

describe('prune-lib', () => {
  it('maps each tsc output to its source', () => {
    expect(sourcesOf('src/a/b.js')).toEqual(['src/a/b.ts', 'src/a/b.tsx']);
    expect(sourcesOf('src/a/b.js.map')).toEqual(['src/a/b.ts', 'src/a/b.tsx']);
    expect(sourcesOf('src/a/b.d.ts')).toEqual(['src/a/b.ts', 'src/a/b.tsx']);
    expect(sourcesOf('src/a/b.d.ts.map')).toEqual(['src/a/b.ts', 'src/a/b.tsx']);
    expect(sourcesOf('src/kube/c.mjs')).toEqual(['src/kube/c.mts']);
    expect(sourcesOf('src/kube/c.d.mts')).toEqual(['src/kube/c.mts']);
    expect(sourcesOf('src/observability/dashboard.json')).toBeUndefined();
  });

  it('removes the outputs of a moved source and its emptied folder; keeps the rest, lib/plugin and lib/sdk', () => {
    const repo = mkdtempSync(join(tmpdir(), 'kac-prune-'));
    const file = (path: string) => {
      mkdirSync(dirname(join(repo, path)), { recursive: true });
      writeFileSync(join(repo, path), '');
    };
    file('src/cli/status/index.ts');
    for (const out of ['lib/src/cli/status/index.js', 'lib/src/cli/status/index.d.ts', 'lib/src/cli/status.js', 'lib/src/cli/status.js.map', 'lib/src/gone/x.js', 'lib/src/data.json', 'lib/plugin/pulumi-resource-keystone-appcred', 'lib/sdk/python/x.whl']) file(out);
    expect(pruneLib(repo).sort()).toEqual(['lib/src/cli/status.js', 'lib/src/cli/status.js.map', 'lib/src/gone/x.js']);
    expect(readdirSync(join(repo, 'lib/src')).sort()).toEqual(['cli', 'data.json']);
    expect(readdirSync(join(repo, 'lib/src/cli/status')).sort()).toEqual(['index.d.ts', 'index.js']);
    expect(readdirSync(join(repo, 'lib'))).toEqual(expect.arrayContaining(['plugin', 'sdk']));
  });
});
