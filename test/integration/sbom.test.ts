/**
 * The package's bill of materials (tools/sbom.ts, `npm run release:artifacts -- --sbom DIR`): npm's CycloneDX SBOM over
 * the installed tree lists exactly the runtime dependencies `npm ls --omit=dev` shows (every version of each; not an
 * extraneous package no lock entry installed), names the package, and is the same file on a second run. The image's is
 * test/e2e/image-sbom.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { npmSbom } from '../../tools/sbom';

jest.setTimeout(120_000);

const REPO = resolve(__dirname, '..', '..');

interface LsNode {
  readonly version?: string;
  readonly extraneous?: boolean;
  readonly dependencies?: Readonly<Record<string, LsNode>>;
}

/** Every `name@version` of the production tree `npm ls --omit=dev --all --json` prints. */
export function npmLs(prefix: string): Set<string> {
  const tree = JSON.parse(execFileSync('npm', ['ls', '--omit=dev', '--all', '--json', '--prefix', prefix], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })) as LsNode;
  const out = new Set<string>();
  const walk = (deps: Readonly<Record<string, LsNode>> | undefined): void => {
    for (const [name, node] of Object.entries(deps ?? {})) {
      if (node.version === undefined || node.extraneous) continue; // a missing optional entry; one no lock entry installed
      out.add(`${name}@${node.version}`);
      walk(node.dependencies);
    }
  };
  walk(tree.dependencies);
  return out;
}

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
