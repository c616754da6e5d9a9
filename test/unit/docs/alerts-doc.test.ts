/**
 * The alerts' runbooks: every alert has its section in docs/operate/alerts.md, every `runbook_url` the alerts print
 * (both rule groups, at the default base) resolves to a heading of a page in the repository, and every text an alert
 * prints that names a page names one that exists.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { alertRules } from '../../../src/observability/alerts';
import { ALERT_NAMES } from '../../../src/observability/alert-rule';
import { DOCS_URL } from '../../../src/observability/alert-parameters';
import { PUBLISHED, REPO, headings, page, publishedLink, resolves } from '../../support/markdown';

const rules = alertRules().groups.flatMap((g) => g.rules);

describe('docs/operate/alerts.md: the runbooks', () => {
  it('is where the runbook links point by default', () => {
    expect(DOCS_URL).toBe(`${PUBLISHED}docs/operate/alerts.md`);
  });

  it('has a section per alert', () => {
    for (const name of ALERT_NAMES) expect(headings(page('docs/operate/alerts.md'))).toContain(`## ${name}`);
  });

  it.each(rules.map((r) => [r.alert, r.annotations.runbook_url] as const))('the runbook_url of %s resolves to a heading', (_, url) => {
    const link = publishedLink(url);
    expect(link).toBeDefined();
    expect(link!.anchor).toBeDefined();
    expect(resolves(link!)).toBe(true);
  });

  it('every page an alert\'s text names exists', () => {
    const texts = rules.flatMap((r) => Object.values(r.annotations));
    const named = texts.flatMap((t) => [...t.matchAll(/\bdocs\/[\w/.-]+\.md\b/g)].map((m) => m[0]));
    expect(named.length).toBeGreaterThan(0);
    for (const path of named) expect([path, existsSync(join(REPO, path))]).toEqual([path, true]);
  });
});
