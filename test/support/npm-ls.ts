/**
 * The production tree npm reads from a package's node_modules, for the SBOM tests (test/integration/sbom.test.ts,
 * test/e2e/image-sbom.test.ts).
 */
import { execFileSync } from 'node:child_process';

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
