/**
 * The operator's Grafana dashboard, as the package ships it: Grafana's JSON model, built by tools/dashboard.ts with
 * Grafana's builder library and committed as ./dashboard.json. `keystone-appcred dashboard` prints it; the `Dashboard`
 * construct puts it into a ConfigMap that the grafana sidecar picks up (label `grafana_dashboard: "1"`). Its queries
 * read the operator's metrics (docs/reference/metrics.md) from the data source its `datasource` variable selects.
 */
import dashboard from './dashboard.json';

/** A Grafana dashboard (its JSON model). */
export type GrafanaDashboard = Readonly<Record<string, unknown>>;

/** The dashboard's uid: importing it again (or the sidecar reloading it) replaces it. */
export const DASHBOARD_UID = 'keystone-appcred';

/** The dashboard's file name in the ConfigMap and for an import. */
export const DASHBOARD_FILE_NAME = 'keystone-appcred.json';

/** The operator's dashboard. */
export function grafanaDashboard(): GrafanaDashboard {
  return structuredClone(dashboard) as GrafanaDashboard;
}

/** The dashboard as the file Grafana imports (JSON, two-space indent, a final newline). */
export function dashboardJson(): string {
  return `${JSON.stringify(dashboard, null, 2)}\n`;
}
