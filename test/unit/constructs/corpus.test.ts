import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { generateCorpus, type FixtureEntry } from '../../e2e/corpus/generate';
import { validate, type OrderInput } from '../../../src/api/validation';
import { validatePlane } from '../../../src/api/identity-plane-rules';
import { validateClusterIdentity } from '../../../src/api/cluster-identity-rules';
import type { PlaneKind } from '../../../src/api/identity-plane';

const DIR = join(__dirname, '../../e2e/corpus');

function filesOnDisk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) filesOnDisk(path, out);
    else if (entry !== 'generate.ts') out.push(relative(DIR, path));
  }
  return out;
}

describe('the admission corpus', () => {
  const generated = generateCorpus();

  it('is what generate.ts generates (run `npm run corpus` after changing a rule)', () => {
    expect(filesOnDisk(DIR).sort()).toEqual([...generated.keys()].sort());
    for (const [file, content] of generated) expect([file, readFileSync(join(DIR, file), 'utf8')]).toEqual([file, content]);
  });

  const index = JSON.parse(generated.get('index.json') ?? '[]') as FixtureEntry[];

  it.each(index.map((e) => [e.file, e]))('%s: the TypeScript twin of the rules agrees', (_file, entry) => {
    const docs = parseAllDocuments(generated.get(entry.file) ?? '').map((d) => d.toJS() as OrderInput & { metadata: { name: string } });
    const [old, next] = docs.length === 2 ? docs : [undefined, docs[0]];
    const violations =
      entry.kind === 'KeystoneApplicationCredential'
        ? validate(next, old)
        : entry.kind === 'KeystoneClusterIdentity'
          ? validateClusterIdentity(next, old)
          : validatePlane(entry.kind as PlaneKind, next, old);
    if ('accepted' in entry.expect) expect(violations).toEqual([]);
    else expect(violations.length).toBeGreaterThan(0);
    if ('rejected' in entry.expect && entry.expect.by === 'rule') {
      expect(violations.map((v) => v.rule)).toEqual([entry.expect.rejected]);
    }
  });
});
