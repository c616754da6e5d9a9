// @needs previous-release release-0.2.0
/**
 * The CRDs of this release against each earlier release's: 0.2.0 (built from commit fc09924 by the `release-0.2.0`
 * component), the release before this one, and 0.1.0 (commit 8f3fd1c, the `previous-release` component), whose
 * stored objects may still be in a cluster upgraded through 0.2.0: no change that breaks stored objects or existing
 * manifests (tools/crd-evolution.ts), unless docs/install/upgrading.md names it by its id. A new optional field is no
 * finding.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { renderManifests } from '../../src/cli/manifests';
import { breakingChanges } from '../../tools/crd-evolution';
import { objectsOf } from '../../tools/release';

const REPO = resolve(__dirname, '..', '..');

const RELEASES = [
  ['0.2.0', process.env.KAC_RELEASE_0_2_0_DIR as string],
  [process.env.KAC_PREVIOUS_RELEASE_VERSION ?? '0.1.0', process.env.KAC_PREVIOUS_RELEASE_DIR as string],
] as const;

describe.each(RELEASES)('the CRDs against keystone-appcred %s', (_version, dir) => {
  const previous = objectsOf(
    execFileSync(process.execPath, [join(dir, 'lib/src/cli/main.js'), 'manifests', '--image', 'keystone-appcred:previous'], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 }),
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
