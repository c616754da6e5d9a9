/**
 * src/api/events.ts: the table of every Event reason the operator records besides a condition's transition. An Event
 * built with eventOf carries the table's type and action; every reason of the table is recorded somewhere in src/ (a
 * reason no emit site uses is a stale row of the reference), and no emit site writes an Event reason as a literal.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { EVENT_REASONS, EventReason, eventOf } from '../../../src/api/events';

const SRC = resolve(__dirname, '..', '..', '..', 'src');
const files = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : name.endsWith('.ts') ? [join(dir, name)] : []));

describe('the Event reasons', () => {
  const sources = files(SRC)
    .filter((path) => relative(SRC, path) !== join('api', 'events.ts'))
    .map((path) => ({ path: relative(SRC, path), text: readFileSync(path, 'utf8') }));

  it('an Event carries the type and action of its reason', () => {
    expect(eventOf(EventReason.Minted, 'created generation 1')).toEqual({ type: 'Normal', reason: 'Minted', action: 'Mint', note: 'created generation 1' });
    expect(eventOf(EventReason.SecretRepaired, 'n')).toMatchObject({ type: 'Warning', action: 'Repair' });
    for (const [reason, entry] of Object.entries(EVENT_REASONS)) {
      expect(EventReason[reason as EventReason]).toBe(reason);
      expect(entry.kinds.length).toBeGreaterThan(0);
      expect(entry.meaning.length).toBeGreaterThan(20);
    }
  });

  it('every reason is recorded by an emit site, through the table', () => {
    const unused = Object.keys(EVENT_REASONS).filter((reason) => !sources.some((s) => s.text.includes(`EventReason.${reason}`)));
    expect(unused).toEqual([]);
  });

  it('no emit site writes an Event as a literal (type and reason by hand)', () => {
    const literal = /type: '(Normal|Warning)',\s*reason:/;
    expect(sources.filter((s) => literal.test(s.text)).map((s) => s.path)).toEqual([]);
  });
});
