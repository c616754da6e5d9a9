/**
 * The jsii build's cache keys (tools/jsii/build.ts), without building: the peers' Go and Java bindings are cached by
 * the peers' and jsii-pacmak's versions and the language's toolchain, apart from the library's own build, so a change
 * of constructs/ never rebuilds them and a new peer version or toolchain always does; jsii-pacmak's per-language times
 * are read from its summary line.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pacmakTimings, PEER_LANGUAGES, peersDir, toolchain } from '../../../tools/jsii/build';
import { PEERS } from '../../../tools/jsii/package';

/** A repository root whose node_modules holds only the package.json of each package, at the versions given. */
function fakeRoot(versions: Readonly<Record<string, string>>): string {
  const root = mkdtempSync(join(tmpdir(), 'kac-jsii-root-'));
  for (const [name, version] of Object.entries(versions)) {
    mkdirSync(join(root, 'node_modules', name), { recursive: true });
    writeFileSync(join(root, 'node_modules', name, 'package.json'), JSON.stringify({ name, version }));
  }
  return root;
}

describe('the peers\' bindings cache', () => {
  const versions = { cdk8s: '2.70.106', constructs: '10.8.1', 'jsii-pacmak': '1.140.0', 'jsii-rosetta': '5.9.68' };
  const roots: string[] = [];
  const root = (overrides: Record<string, string> = {}) => {
    const made = fakeRoot({ ...versions, ...overrides });
    roots.push(made);
    return made;
  };
  afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

  it('covers the languages whose registries lack the peers: Go and Java', () => {
    expect([...PEER_LANGUAGES].sort()).toEqual(['go', 'java']);
    expect(PEERS).toEqual(['cdk8s', 'constructs']);
  });

  it('is keyed by the peers\' and the tools\' versions, per language, and by nothing of the library', () => {
    const a = root();
    // Another checkout with the same versions (whatever its constructs/ holds) finds the same bindings.
    expect(peersDir('java', root())).toBe(peersDir('java', a));
    expect(basename(peersDir('java', a))).toMatch(/^jsii-peers-java-[0-9a-f]{16}$/);
    expect(peersDir('go', a)).not.toBe(peersDir('java', a));
    const changes: Record<string, string>[] = [{ cdk8s: '2.70.107' }, { constructs: '10.8.2' }, { 'jsii-pacmak': '1.141.0' }, { 'jsii-rosetta': '5.9.69' }];
    for (const changed of changes) {
      expect([changed, peersDir('java', root(changed)) === peersDir('java', a)]).toEqual([changed, false]);
    }
  });

  it('is keyed by the toolchain the language is built with, as its version commands print it', () => {
    expect(toolchain('go')).toMatch(/^go version go\d/);
    expect(toolchain('java')).toMatch(/^javac \d+.*; Apache Maven \d+\.\d+\.\d+.*; javadoc (built|skipped)$/);
  });
});

describe('jsii-pacmak\'s times', () => {
  it('are read per language from its summary line', () => {
    const output = 'noise\n[jsii-pacmak] [INFO] Packaged. java (2m47.3s) | go (3.3s) | npm pack (2.0s) | load jsii (0.0s)\n';
    expect(pacmakTimings(output)).toMatchObject({ java: 167.3, go: 3.3 });
  });
});
