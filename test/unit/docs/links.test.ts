/**
 * Every relative link of the documentation resolves: README.md, CHANGELOG.md, every page under docs/ and the READMEs of
 * examples/ and constructs/ link only to files and directories that exist, and every `#anchor` names a heading of its
 * page as GitHub renders it. So a page that moves or a heading that is renamed cannot leave a dead link behind.
 */
import { links, markdownFiles, resolves, USER_DOC_FOLDERS } from '../../support/markdown';

const PAGES = ['README.md', 'CHANGELOG.md', 'constructs/README.md', ...markdownFiles('docs'), ...markdownFiles('examples')];

describe('the documentation\'s links', () => {
  it('reads the pages of every docs/ folder', () => {
    for (const folder of USER_DOC_FOLDERS) {
      expect(PAGES).toContain(`docs/${folder}/README.md`);
    }
  });

  it.each(PAGES)('every relative link and anchor of %s resolves', (path) => {
    const dead = links(path).filter((link) => !resolves(link)).map((link) => link.target);
    expect(dead).toEqual([]);
  });
});
