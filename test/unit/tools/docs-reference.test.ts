/**
 * `npm run docs:reference` (tools/docs/): the generated blocks of docs/ are what the code generates today (every flag,
 * metric, RBAC rule, CRD field and rule, condition reason), every block has a page, and the generator's Markdown holds
 * what it is given (a pipe in a cell, a placeholder such as <name>, a block without its closing marker).
 */
import { regenerate } from '../../../tools/docs/main';
import { begin, end, fill, table } from '../../../tools/docs/markdown';

describe('npm run docs:reference', () => {
  it('the committed pages equal the generated ones, and every block is on a page', async () => {
    const { changed, unused } = await regenerate();
    expect([...changed.keys()]).toEqual([]); // run `npm run docs:reference` and commit the pages it wrote
    expect(unused).toEqual([]);
  });

  it('fills a block between its markers and leaves the prose around it as it is', () => {
    const page = ['# Title', 'prose', begin('x'), 'stale', end('x'), 'more prose'].join('\n');
    expect(fill('p.md', page, (name) => (name === 'x' ? 'fresh' : undefined))).toBe(['# Title', 'prose', begin('x'), '', 'fresh', '', end('x'), 'more prose'].join('\n'));
  });

  it('refuses a block without its closing marker, or one no generator makes', () => {
    expect(() => fill('p.md', `${begin('x')}\nno end`, () => 'y')).toThrow('p.md: the generated block x has no closing line');
    expect(() => fill('p.md', `${begin('x')}\n${end('x')}`, () => undefined)).toThrow('p.md: no generator makes the block x');
  });

  it('escapes a pipe in a cell, and a placeholder outside code spans', () => {
    expect(table(['a', 'b'], [['x | y', 'a Role <name>-secrets, `<kept>`']])).toBe('| a | b |\n| --- | --- |\n| x \\| y | a Role \\<name>-secrets, `<kept>` |');
  });
});
