/**
 * docs/install/cdk8s.md's "Every cdk8s language": each language's code block is an excerpt of that language's example app
 * (which test/e2e/cdk8s-languages.test.ts runs), line for line; its install line names the wheel jsii-pacmak writes and
 * the peers at the versions the TypeScript side uses; its table names the package as tools/jsii/package.ts does.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GO_MODULE, installedVersion, JSII_NAMES, PEERS, rootPackage } from '../../../tools/jsii/package';
import { page, section as markdownSection } from '../../support/markdown';

const REPO = join(__dirname, '..', '..', '..');
const section = markdownSection(page('docs/install/cdk8s.md'), '## Every cdk8s language (jsii)');

/** The fenced blocks of `language` in the section. */
function blocks(language: string): string[] {
  return [...section.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
}

/**
 * The Node.js releases the jsii runtime supports today: @jsii/check-node's table (the release line of the jsii-pacmak
 * that builds the package, whose runtime every language's `jsii` package embeds and which warns on any other release),
 * read from the installed package, so a release reaching its end of support changes what the page must say.
 */
async function jsiiNodeReleases(): Promise<number[]> {
  const pacmak = dirname(require.resolve('jsii-pacmak/package.json'));
  const checkNode = (await import(require.resolve('@jsii/check-node', { paths: [pacmak] }))) as {
    NodeRelease: { ALL_RELEASES: readonly { majorVersion: number; supported: boolean }[] };
  };
  return checkNode.NodeRelease.ALL_RELEASES.filter((r) => r.supported).map((r) => r.majorVersion).sort((a, b) => a - b);
}

describe('docs/install/cdk8s.md, every cdk8s language', () => {
  it('names the Node.js releases the jsii runtime supports, and the project\'s among them', async () => {
    const majors = await jsiiNodeReleases();
    expect(majors).toContain(Number(process.versions.node.split('.')[0])); // the tests run on the project's Node
    const said = majors.length === 1 ? `Node ${majors[0]}` : `Node ${majors.slice(0, -1).join(', ')} or ${majors[majors.length - 1]}`;
    expect(section).toContain(`(${said}, the releases the jsii runtime supports`);
  });

  it.each([
    ['python', 'examples/cdk8s/python/main.py'],
    ['go', 'examples/cdk8s/go/main.go'],
    ['java', 'examples/cdk8s/java/src/main/java/io/c5c3/keystoneappcred/examples/Main.java'],
  ])('the %s block is an excerpt of %s', (language, file) => {
    const [block] = blocks(language);
    expect(block).toBeDefined();
    expect(readFileSync(join(REPO, file), 'utf8')).toContain(block);
  });

  it('installs the wheel jsii-pacmak writes, with the peers at the TypeScript side\'s versions', () => {
    const install = blocks('sh').join('\n');
    expect(install).toContain(`lib/jsii/dist/python/${JSII_NAMES.python.module}-${rootPackage().version}-py3-none-any.whl`);
    for (const peer of PEERS) expect(install).toContain(`${peer}==${installedVersion(peer)}`);
  });

  it('names each language\'s package as the build does', () => {
    expect(section).toContain(`\`${GO_MODULE}\``);
    expect(section).toContain(`\`${JSII_NAMES.java.groupId}:${JSII_NAMES.java.artifactId}\``);
    expect(section).toContain(`import ${JSII_NAMES.java.package}.ServiceOwner;`);
    expect(section).toContain(`from ${JSII_NAMES.python.module} import ServiceOwner`);
    expect(section).toContain(`\`${JSII_NAMES.dotnet.packageId}\``);
  });

  it('the example apps pin the peers at the TypeScript side\'s versions, and nothing beyond the peers', () => {
    const goMod = readFileSync(join(REPO, 'examples', 'cdk8s', 'go', 'go.mod'), 'utf8');
    expect(goMod).toContain(`github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2 v${installedVersion('cdk8s')}`);
    expect(goMod).toContain(`github.com/aws/constructs-go/constructs/v10 v${installedVersion('constructs')}`);
    expect(goMod).toContain(`${GO_MODULE} v${rootPackage().version}`);
    const pom = readFileSync(join(REPO, 'examples', 'cdk8s', 'java', 'pom.xml'), 'utf8');
    for (const peer of PEERS) {
      expect(pom).toMatch(new RegExp(`<artifactId>${peer}</artifactId>\\s*<version>${installedVersion(peer).replace(/\./g, '\\.')}</version>`));
    }
    // The library's closure is cdk8s and constructs: no example imports or requires cdk8s-plus in any language (its
    // npm, PyPI, Go and Maven names).
    const files = ['main.ts', 'python/main.py', 'python/requirements.txt', 'go/go.mod', 'go/main.go', 'java/pom.xml', 'java/src/main/java/io/c5c3/keystoneappcred/examples/Main.java'];
    const cdk8sPlus = /cdk8s-plus-\d|cdk8s_plus_\d|cdk8s-plus-go|org\.cdk8s\.plus/;
    for (const file of files) expect([file, cdk8sPlus.test(readFileSync(join(REPO, 'examples', 'cdk8s', file), 'utf8'))]).toEqual([file, false]);
  });
});
