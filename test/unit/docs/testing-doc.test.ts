/**
 * docs/testing.md's table of test files against test/integration/, test/e2e/ and test/reliability/: every file has a row, and the row's
 * `needs` column starts with the file's `@needs` line (or says nothing when it has none), so the table cannot drift.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { needsLine } from '../../support/needs';

const ROOT = join(__dirname, '../../..');
const DOC = readFileSync(join(ROOT, 'docs/testing.md'), 'utf8');

/** The rows of the table, by the file its first cell names. */
const ROWS = new Map(
  DOC.split('\n')
    .filter((line) => line.startsWith('| `test/'))
    .map((line) => {
      const cells = line.split('|').map((cell) => cell.trim());
      return [cells[1].replace(/`/g, ''), cells[cells.length - 2]] as const;
    }),
);

const FILES = ['test/integration', 'test/e2e', 'test/reliability'].flatMap((dir) =>
  readdirSync(join(ROOT, dir))
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => `${dir}/${name}`),
);

describe('docs/testing.md: the test files and what they need', () => {
  it.each(FILES)('%s has a row with its @needs line', (file) => {
    const needs = needsLine(readFileSync(join(ROOT, file), 'utf8'));
    const row = ROWS.get(file);
    expect(row).toBeDefined();
    if (needs) expect(row!.startsWith(needs)).toBe(true);
    else expect(row!.startsWith('nothing')).toBe(true);
  });

  it('has no row for a file that does not exist', () => {
    for (const file of ROWS.keys()) if (!file.includes('*')) expect(FILES).toContain(file);
  });
});
