/**
 * docs/troubleshoot/ against the reasons in the code: every condition reason of every kind has an entry (a `## Reason`
 * heading) on its kind's page, saying what it means and what to do, no page names a reason its kind does not have, and
 * the index (docs/troubleshoot/README.md) links every entry. So "my order says RoleNotAssigned, what now" is two clicks
 * from README.md for every reason there is.
 */
import { KIND_REASONS, reasonsOf } from '../../../tools/docs/conditions';
import { headings, links, page, resolves, section } from '../../support/markdown';

/** Each kind's page and every reason its conditions carry (tools/docs/conditions.ts, from the code's constants). */
const KINDS = KIND_REASONS.map((kind) => [kind.page, reasonsOf(kind)] as const);

/** The reasons a page has an entry for. */
const entries = (text: string): string[] => headings(text).filter((h) => h.startsWith('## ')).map((h) => h.slice(3));

describe('docs/troubleshoot/', () => {
  it.each(KINDS)('%s.md has an entry for every reason of the kind, and for no other', (kind, reasons) => {
    const text = page(`docs/troubleshoot/${kind}.md`);
    expect(entries(text).sort()).toEqual([...new Set(reasons)].sort());
  });

  it.each(KINDS)('every entry of %s.md says what the reason means and what to do', (kind) => {
    const text = page(`docs/troubleshoot/${kind}.md`);
    for (const reason of entries(text)) {
      const body = section(text, `## ${reason}`);
      expect([reason, /`\w+=(True|False|Unknown)`/.test(body), body.includes('**What to do:**')]).toEqual([reason, true, true]);
    }
  });

  it('the index links every entry of every kind, and each link resolves', () => {
    const index = links('docs/troubleshoot/README.md');
    for (const link of index) expect([link.target, resolves(link)]).toEqual([link.target, true]);
    for (const [kind, reasons] of KINDS) {
      for (const reason of reasons) expect(index.map((l) => l.target)).toContain(`${kind}.md#${reason.toLowerCase()}`);
    }
  });

  it('README.md links the index: any reason is two clicks away', () => {
    expect(links('README.md').map((l) => l.path)).toContain('docs/troubleshoot/README.md');
  });
});
