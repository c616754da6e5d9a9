/**
 * The dashboard the package ships (src/observability/dashboard.json) is what tools/dashboard.ts builds with Grafana's
 * library now (so a change of the builder is committed with its product), its panels all carry queries, and every query
 * reads only metrics the operator exports. (test/e2e/observability.test.ts asks a real Prometheus for each query.)
 */
import { readFileSync } from 'node:fs';
import { buildDashboard, DASHBOARD_FILE } from '../../../tools/dashboard';
import { DASHBOARD_UID, dashboardJson, grafanaDashboard } from '../../../src/observability/dashboard';
import { exportedNames, metricsOf } from './exported';

interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly targets?: readonly { readonly expr: string; readonly refId: string; readonly datasource: { readonly uid: string } }[];
}

describe('the Grafana dashboard', () => {
  const shipped = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { uid: string; panels: Panel[]; templating: { list: { name: string }[] } };

  it('is what tools/dashboard.ts builds (run `npm run dashboard` after changing it)', () => {
    expect(readFileSync(DASHBOARD_FILE, 'utf8')).toBe(`${JSON.stringify(buildDashboard(), null, 2)}\n`);
    expect(dashboardJson()).toBe(readFileSync(DASHBOARD_FILE, 'utf8'));
    expect(grafanaDashboard()).toEqual(shipped);
  });

  it('has a stable uid, unique panel ids, the data source and namespace variables, and queries on every panel', () => {
    expect(shipped.uid).toBe(DASHBOARD_UID);
    expect(new Set(shipped.panels.map((p) => p.id)).size).toBe(shipped.panels.length);
    expect(shipped.templating.list.map((v) => v.name)).toEqual(['datasource', 'namespace']);
    const panels = shipped.panels.filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThanOrEqual(15);
    for (const panel of panels) {
      expect(panel.targets?.length).toBeGreaterThan(0);
      for (const t of panel.targets ?? []) expect(t.datasource.uid).toBe('${datasource}');
      expect(new Set(panel.targets?.map((t) => t.refId)).size).toBe(panel.targets?.length);
    }
  });

  it('reads only metrics the operator exports', async () => {
    const exported = await exportedNames();
    for (const panel of shipped.panels) {
      for (const target of panel.targets ?? []) {
        const read = metricsOf(target.expr);
        expect(read.length).toBeGreaterThan(0);
        for (const name of read) expect({ panel: panel.title, name, exported: exported.has(name) }).toEqual({ panel: panel.title, name, exported: true });
      }
    }
  });
});
