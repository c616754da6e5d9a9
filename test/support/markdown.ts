/**
 * Reading the repository's Markdown as GitHub renders it, for the tests that hold docs/ to the code: headings and their
 * anchors (outside fenced blocks), a heading's section, a section's table rows and code spans, and the relative links of
 * a page. One reader, so every docs test agrees on what a heading, an anchor or a link is.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';

/** The repository's root. */
export const REPO = join(__dirname, '..', '..');

/** docs/'s folders by task, each with a README.md as its index; the package ships them (and docs/README.md, the map). */
export const USER_DOC_FOLDERS = ['install', 'configure', 'operate', 'troubleshoot', 'reference', 'concepts'] as const;

/** Where the documentation is published: a runbook URL or a link to the repository is this plus a path. */
export const PUBLISHED = 'https://github.com/c5c3/keystone-appcred/blob/main/';

/** A page's text, by its path from the repository root. */
export function page(path: string): string {
  return readFileSync(join(REPO, path), 'utf8');
}

/** The page's lines, each with whether it lies inside a fenced code block (a ``` or ~~~ line opens and closes one). */
function lines(text: string): { line: string; fenced: boolean }[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker && fence === undefined) {
      fence = marker.slice(0, 3);
      return { line, fenced: true };
    }
    if (marker && fence !== undefined && line.trim().startsWith(fence)) {
      fence = undefined;
      return { line, fenced: true };
    }
    return { line, fenced: fence !== undefined };
  });
}

/** The heading lines of a page (`## Title`), outside fenced blocks, in order. */
export function headings(text: string): string[] {
  return lines(text)
    .filter(({ line, fenced }) => !fenced && /^#{1,6} /.test(line))
    .map(({ line }) => line);
}

/** GitHub's anchor of a heading's text: lower case, every character but letters, digits, ` `, `_` and `-` dropped, spaces as `-`. */
export function slug(title: string): string {
  return title.trim().toLowerCase().replace(/[^a-z0-9 _-]/g, '').replace(/ /g, '-');
}

/** Every anchor of a page: its headings' slugs, a repeated one suffixed `-1`, `-2`, ... as GitHub does. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const heading of headings(text)) {
    const base = slug(heading.replace(/^#+ /, ''));
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The text under `heading` (a whole heading line), up to the next heading of the same or a higher level. */
export function section(text: string, heading: string): string {
  const all = lines(text);
  const start = all.findIndex(({ line, fenced }) => !fenced && line === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = heading.indexOf(' ');
  const end = all.findIndex(({ line, fenced }, i) => i > start && !fenced && /^#+ /.test(line) && line.indexOf(' ') <= level);
  return all
    .slice(start + 1, end < 0 ? undefined : end)
    .map(({ line }) => line)
    .join('\n');
}

/** The body rows of the Markdown tables in `text`, as trimmed cells (a `|` inside a code span is written `\|`). */
export function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .map((line) =>
      line
        .slice(1, line.endsWith('|') ? -1 : undefined)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

/** The `code` spans of a cell or text. */
export function spans(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

/** A relative link of a page: where it points (a path from the repository root) and its anchor, if any. */
export interface Link {
  readonly from: string;
  readonly target: string;
  readonly path: string;
  readonly anchor?: string;
}

/** The relative links of a page outside fenced blocks and code spans (`[text](target)`; no scheme, so not a URL). */
export function links(path: string): Link[] {
  const result: Link[] = [];
  for (const { line, fenced } of lines(page(path))) {
    if (fenced) continue;
    for (const [, target] of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const resolved = file === '' ? path : posix.normalize(posix.join(posix.dirname(path), file));
      result.push({ from: path, target, path: resolved.replace(/\/$/, ''), anchor: anchor || undefined });
    }
  }
  return result;
}

/** The Markdown files under a directory of the repository, recursively, as paths from the repository root. */
export function markdownFiles(dir: string): string[] {
  const root = join(REPO, dir);
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md') && statSync(join(root, name)).isFile())
    .map((name) => relative(REPO, join(root, name)).split('\\').join('/'))
    .sort();
}

/** Whether a link resolves: its file or directory exists, and its anchor (on a Markdown page) is a heading there. */
export function resolves(link: Link): boolean {
  const target = join(REPO, link.path);
  if (!existsSync(target)) return false;
  if (link.anchor === undefined) return true;
  if (!link.path.endsWith('.md')) return true; // an anchor into source code (#L10) is GitHub's line, not a heading
  return anchors(readFileSync(target, 'utf8')).has(link.anchor);
}

/** The page a published URL (`PUBLISHED` plus a path, and an anchor) names, as a link from the repository root. */
export function publishedLink(url: string): Link | undefined {
  if (!url.startsWith(PUBLISHED)) return undefined;
  const [file, anchor] = url.slice(PUBLISHED.length).split('#') as [string, string | undefined];
  return { from: url, target: url, path: file, anchor: anchor || undefined };
}

/**
 * The fenced block of `language` on a page whose first line starts with `firstLine`, as a test runs it verbatim (the
 * OpenBao setup's shell steps, the scrape configuration); throws naming the page when there is none.
 */
export function fencedBlock(path: string, language: string, firstLine: string): string {
  const block = [...page(path).matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]).find((b) => b.startsWith(firstLine));
  if (block === undefined) throw new Error(`${path} has no \`\`\`${language} block starting with "${firstLine}"`);
  return block;
}

