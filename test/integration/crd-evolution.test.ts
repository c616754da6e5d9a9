// @needs previous-release
/**
 * The CRDs of this release against the previous release's (keystone-appcred 0.1.0, built from commit 8f3fd1c by the
 * `previous-release` component): no change that breaks stored objects or existing manifests (tools/crd-evolution.ts),
 * unless docs/install/upgrading.md names it by its id. A new optional field is no finding.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { renderManifests } from '../../src/cli/manifests';
import { breakingChanges } from '../../tools/crd-evolution';
import { objectsOf } from '../../tools/release';

const REPO = resolve(__dirname, '..', '..');

describe(`the CRDs against keystone-appcred ${process.env.KAC_PREVIOUS_RELEASE_VERSION ?? '(previous)'}`, () => {
  const previous = objectsOf(
    execFileSync(process.execPath, [join(process.env.KAC_PREVIOUS_RELEASE_DIR as string, 'lib/src/cli/main.js'), 'manifests', '--image', 'keystone-appcred:previous'], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 }),
  );
  const current = objectsOf(renderManifests({ image: 'keystone-appcred', tag: 'current' }));
  const upgrading = readFileSync(join(REPO, 'docs/install/upgrading.md'), 'utf8');

  it('every CRD of the previous release is here, with every version it served', () => {
    const crds = (list: typeof previous) => list.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name).sort();
    expect(crds(previous).length).toBeGreaterThan(0);
    for (const name of crds(previous)) expect(crds(current)).toContain(name);
  });

  it('no change breaks stored objects or existing manifests, but those docs/install/upgrading.md names', () => {
    const unnamed = breakingChanges(previous, current).filter((b) => !upgrading.includes(b.id));
    expect(unnamed.map((b) => b.id)).toEqual([]);
  });
});
