/**
 * What git tracks is the project's and no machine's (issue 47: a Python virtualenv was committed at `v/`, its
 * `pyvenv.cfg` naming one machine's interpreter and checkout): no virtualenv, no Python bytecode, no dependency folder,
 * and no text that names a machine's paths (this checkout's own, or a tool's folder in a home directory, such as
 * `/root/.pyenv/versions/...`). .gitignore keeps them out; this test catches a `git add -f` or a new
 * kind of folder.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';

const REPO = resolve(__dirname, '..', '..', '..');

/** A path's mark of a virtualenv, of Python bytecode or of installed dependencies. */
const MACHINE_MADE: readonly { readonly pattern: RegExp; readonly what: string }[] = [
  { pattern: /(^|\/)pyvenv\.cfg$/, what: 'a Python virtualenv' },
  { pattern: /(^|\/)bin\/(activate|activate\.(csh|fish)|Activate\.ps1)$/, what: 'a Python virtualenv' },
  { pattern: /(^|\/)site-packages\//, what: 'installed Python packages' },
  { pattern: /(^|\/)__pycache__\//, what: 'Python bytecode' },
  { pattern: /\.py[co]$/, what: 'Python bytecode' },
  { pattern: /(^|\/)node_modules\//, what: 'installed npm packages' },
];

/** A tool's folder in a home directory: a dot-folder under `/root`, `/home/<user>` or `/Users/<user>`. */
const HOME_TOOL = /(?:\/root|\/home\/[^/\s'"`]+|\/Users\/[^/\s'"`]+)\/\.[A-Za-z]/;

/** Files that may name such a folder, with the reason. */
const HOME_TOOL_ALLOWED: Readonly<Record<string, string>> = {
  Dockerfile: "the image's own root home (`/root/.npm`), emptied in the image's build",
  'test/unit/repository/tracked-files.test.ts': "this test's own example of what it catches",
};

function tracked(): string[] {
  return spawnSync('git', ['ls-files', '-z'], { cwd: REPO, encoding: 'utf8' }).stdout.split('\0').filter((path) => path !== '');
}

describe('the tracked files', () => {
  const paths = tracked();

  it('are listed by git', () => {
    expect(paths.length).toBeGreaterThan(500);
    expect(paths).toContain('package.json');
  });

  it('hold no virtualenv, bytecode or installed packages', () => {
    const found = paths.flatMap((path) => MACHINE_MADE.filter((m) => m.pattern.test(path)).map((m) => `${path}: ${m.what}`));
    expect(found).toEqual([]);
  });

  it("name no machine's paths", () => {
    // This checkout, as this machine spells it (a clone elsewhere has another path, so a file that names it was made here).
    const own = REPO + sep;
    const found: string[] = [];
    for (const path of paths) {
      const content = readFileSync(join(REPO, path));
      if (content.includes(0)) continue; // binary
      const text = content.toString('utf8');
      if (text.includes(own)) found.push(`${path}: ${own}`);
      const home = HOME_TOOL.exec(text);
      if (home && HOME_TOOL_ALLOWED[path] === undefined) found.push(`${path}: ${home[0]}`);
    }
    expect(found).toEqual([]);
  });

  it('would have caught the committed virtualenv', () => {
    expect(MACHINE_MADE.some((m) => m.pattern.test('v/pyvenv.cfg'))).toBe(true);
    expect(MACHINE_MADE.some((m) => m.pattern.test('v/bin/activate'))).toBe(true);
    expect(HOME_TOOL.test('home = /root/.pyenv/versions/3.11.7/bin')).toBe(true);
    expect(HOME_TOOL.test('--kubeconfig /home/me/kc')).toBe(false);
  });
});
