/**
 * The blocks of docs/ that the e2e tests run as written are where those tests look for them, so an edit of a page that
 * moves or renames one fails here at once instead of in a run of minutes: the OpenBao setup's shell steps 1, 2a, 2b and
 * 3 (test/e2e/image-operator.test.ts runs 1, 2b and 3) and the scrape configuration without prometheus-operator
 * (test/e2e/observability.test.ts gives it to a real Prometheus).
 */
import { parse } from 'yaml';
import { fencedBlock } from '../../support/markdown';

describe('the docs blocks the e2e tests run', () => {
  it.each(['1', '2a', '2b', '3'])('docs/install/openbao.md has the shell step %s', (step) => {
    expect(fencedBlock('docs/install/openbao.md', 'sh', `# ${step}.`).length).toBeGreaterThan(20);
  });

  it('docs/configure/alerts.md has the scrape configuration, a job with honor_labels', () => {
    const scrape = parse(fencedBlock('docs/configure/alerts.md', 'yaml', '# prometheus.yml, without prometheus-operator')) as { scrape_configs: { job_name: string; honor_labels: boolean }[] };
    expect(scrape.scrape_configs).toEqual([expect.objectContaining({ job_name: 'keystone-appcred-operator', honor_labels: true })]);
  });
});
