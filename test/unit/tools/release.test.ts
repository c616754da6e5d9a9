/**
 * The install artifacts in deploy/ are what this release's constructs synthesize (tools/release.ts), and the JSON
 * patches of its kustomize components compose (tools/json-patch.ts). Applying them to a real API server is
 * test/e2e/install-artifacts.test.ts.
 */
import { jsonPatch } from '../../../tools/json-patch';
import { releaseArtifacts, staleArtifacts } from '../../../tools/release';

describe('the install artifacts', () => {
  it('deploy/ holds exactly what this release synthesizes (npm run release:artifacts writes it)', () => {
    expect(staleArtifacts()).toEqual([]);
  });

  it('name the version in every file, and the image keystone-appcred:<version>', () => {
    const files = releaseArtifacts('9.8.7');
    for (const [path, text] of files) expect([path, text.includes('keystone-appcred 9.8.7')]).toEqual([path, true]);
    expect(files.get('deploy/install.yaml')).toContain('image: keystone-appcred:9.8.7');
    expect(files.get('deploy/kustomize/base/operator.yaml')).toContain('image: keystone-appcred:9.8.7');
    // The alert texts keep Prometheus's templates as they are (no Helm-style rendering anywhere).
    expect(files.get('deploy/kustomize/components/monitoring/resources.yaml')).toContain('{{ $labels.namespace }}');
  });
});

describe('jsonPatch', () => {
  it('appends what a list gains at its end, inserts in the middle by index, removes with a test of the element', () => {
    expect(jsonPatch({ a: [1, 2] }, { a: [1, 2, 3] })).toEqual([{ op: 'add', path: '/a/-', value: 3 }]);
    expect(jsonPatch({ a: [1, 3] }, { a: [1, 2, 3] })).toEqual([{ op: 'add', path: '/a/1', value: 2 }]);
    expect(jsonPatch({ a: [1, 2, 3] }, { a: [1, 3] })).toEqual([
      { op: 'test', path: '/a/1', value: 2 },
      { op: 'remove', path: '/a/1' },
    ]);
    expect(jsonPatch({ a: [1, 2] }, { a: [2, 1] })).toEqual([
      { op: 'test', path: '/a', value: [1, 2] },
      { op: 'replace', path: '/a', value: [2, 1] },
    ]);
  });

  it('diffs named elements (containers, env) element by element; escapes keys; nothing for equal values', () => {
    const from = { containers: [{ name: 'operator', env: [{ name: 'A', value: '1' }] }], metadata: { labels: { 'a/b': 'x' } } };
    const to = { containers: [{ name: 'operator', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] }], metadata: { labels: { 'a/b': 'y' } } };
    expect(jsonPatch(from, to)).toEqual([
      { op: 'add', path: '/containers/0/env/-', value: { name: 'B', value: '2' } },
      { op: 'replace', path: '/metadata/labels/a~1b', value: 'y' },
    ]);
    expect(jsonPatch(to, JSON.parse(JSON.stringify(to)))).toEqual([]);
    expect(jsonPatch({ a: 1, b: 2 }, { a: 1, c: 3 })).toEqual([
      { op: 'remove', path: '/b' },
      { op: 'add', path: '/c', value: 3 },
    ]);
  });
});
