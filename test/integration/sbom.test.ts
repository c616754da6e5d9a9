/**
 * The package's bill of materials (tools/sbom.ts, `npm run release:artifacts -- --sbom DIR`): npm's CycloneDX SBOM over
 * the installed tree lists exactly the runtime dependencies `npm ls --omit=dev` shows (every version of each; not an
 * extraneous package no lock entry installed), names the package, and is the same file on a second run. The image's is
 * test/e2e/image-sbom.test.ts.
 */
import { resolve } from 'node:path';
import { npmSbom } from '../../tools/sbom';
import { npmLs } from '../support/npm-ls';

jest.setTimeout(120_000);

const REPO = resolve(__dirname, '..', '..');

describe("the package's SBOM", () => {
  it('lists the runtime dependencies npm ls --omit=dev shows, no more and no fewer, and names the package', () => {
    const bom = npmSbom(REPO);
    expect(new Set(bom.components.map((c) => `${c.name}@${c.version}`))).toEqual(npmLs(REPO));
    expect(bom.components.length).toBeGreaterThan(20);
    expect(bom.metadata.component).toMatchObject({ name: 'keystone-appcred', purl: expect.stringMatching(/^pkg:npm\/keystone-appcred@/) });
    expect([bom.bomFormat, bom.specVersion]).toEqual(['CycloneDX', '1.5']);
    // No development tool of the repository (the compiler, the test runner, the optional peers).
    expect(bom.components.map((c) => c.name)).not.toEqual(expect.arrayContaining(['typescript']));
    expect(bom.components.map((c) => c.name).filter((n) => ['jest', 'cdk8s', '@pulumi/pulumi'].includes(n))).toEqual([]);
  });

  it('is the same on a second run (no timestamp, a serial number derived from the components)', () => {
    expect(JSON.stringify(npmSbom(REPO))).toBe(JSON.stringify(npmSbom(REPO)));
  });
});
