/**
 * `npm run docs:reference` (`tsx tools/docs/main.ts`): fills every generated block of the pages under docs/ from the
 * code (tools/docs/blocks.ts), so the reference of every flag, metric, RBAC rule, CRD field and condition reason is
 * the code's. `--check` writes nothing and exits 1 naming each page that differs from what the code generates, and any
 * block no page carries (test/unit/tools/docs-reference.test.ts runs it).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { blocks } from './blocks';
import { blocksOf, fill } from './markdown';

const REPO = resolve(__dirname, '..', '..');

/** The Markdown pages under docs/, as paths from the repository root. */
function pages(): string[] {
  const walk = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : name.endsWith('.md') ? [join(dir, name)] : []));
  return walk(join(REPO, 'docs')).map((p) => relative(REPO, p)).sort();
}

/** What regenerating would change: the pages whose text differs (with their new text), and the blocks no page holds. */
export async function regenerate(): Promise<{ changed: Map<string, string>; unused: string[] }> {
  const generated = await blocks();
  const changed = new Map<string, string>();
  const used = new Set<string>();
  for (const path of pages()) {
    const text = readFileSync(join(REPO, path), 'utf8');
    for (const name of blocksOf(text)) used.add(name);
    const filled = fill(path, text, (name) => generated.get(name));
    if (filled !== text) changed.set(path, filled);
  }
  return { changed, unused: [...generated.keys()].filter((name) => !used.has(name)) };
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const { changed, unused } = await regenerate();
  if (!check) for (const [path, text] of changed) writeFileSync(join(REPO, path), text);
  for (const path of changed.keys()) process.stdout.write(`${check ? 'differs from the code' : 'wrote'}: ${path}\n`);
  for (const name of unused) process.stdout.write(`no page holds the block ${name}\n`);
  if (check && (changed.size > 0 || unused.length > 0)) process.exitCode = 1;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`docs:reference: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
