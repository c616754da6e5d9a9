/**
 * Builds the operator's Grafana dashboard with Grafana's own builder library (@grafana/grafana-foundation-sdk, Apache
 * 2.0, a devDependency) and writes it to src/observability/dashboard.json, the file the package ships: `keystone-appcred
 * dashboard` prints it and the `Dashboard` construct puts it into a ConfigMap for the grafana sidecar.
 *
 *   tsx tools/dashboard.ts [OUT]    (`npm run dashboard`; OUT defaults to src/observability/dashboard.json)
 *
 * The JSON is generated here rather than at run time so the operator's image and the command line carry no 11 MB
 * library for one document; test/unit/observability/dashboard.test.ts fails when the committed file is not what this
 * builds, and test/e2e/observability.test.ts asks a real Prometheus scraping a real operator for every panel's query.
 *
 * What it shows: when each order rotates next, how old its delivered credential is and when it expires in Keystone, the
 * orders by condition, failures by reason and rotations; Keystone's requests by result, the time waited for the
 * per-endpoint limit, the requests in flight against the paced limit and the capacity measured; reconcile durations and
 * results, work queue depth and workers, API writes, the leader and the memory against its limit; the orders per
 * cluster and each target cluster's connection.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as bargauge from '@grafana/grafana-foundation-sdk/bargauge';
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as prometheus from '@grafana/grafana-foundation-sdk/prometheus';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';

/** The dashboard's uid: stable, so an import or a sidecar reload replaces it instead of adding another. */
import { DASHBOARD_UID } from '../src/observability/dashboard';
export const DASHBOARD_FILE = join(resolve(__dirname, '..'), 'src', 'observability', 'dashboard.json');

/** Every query goes to the data source the `datasource` variable selects. */
const DATASOURCE: common.DataSourceRef = { type: 'prometheus', uid: '${datasource}' };
/** The orders the `namespace` variable selects. */
const NS = 'namespace=~"$namespace"';
const ORDER_LEGEND = '{{namespace}}/{{name}} {{cluster}}';

const query = (refId: string, expr: string, legend: string, instant = false) => {
  const q = new prometheus.DataqueryBuilder().refId(refId).expr(expr).legendFormat(legend).datasource(DATASOURCE);
  return instant ? q.instant().format(prometheus.PromQueryFormat.TimeSeries) : q.range();
};

/** Panel ids, in the order the panels are made: stable, so a panel's link survives a regeneration. */
let nextId = 1;

/** A time series panel. */
function graph(title: string, description: string, unit: string, targets: readonly [expr: string, legend: string][]) {
  const panel = new timeseries.PanelBuilder().id(nextId++).title(title).description(description).unit(unit).datasource(DATASOURCE).height(8).span(12);
  targets.forEach(([expr, legend], i) => panel.withTarget(query(String.fromCharCode(65 + i), expr, legend)));
  return panel;
}

/** A row of panels. */
const row = (title: string) => new dashboard.RowBuilder(title).id(nextId++);

/** One bar per order, its current value (an instant query), lowest first. */
function perOrder(title: string, description: string, expr: string) {
  return new bargauge.PanelBuilder()
    .id(nextId++)
    .title(title)
    .description(description)
    .unit('s')
    .datasource(DATASOURCE)
    .height(8)
    .span(8)
    .orientation(common.VizOrientation.Horizontal)
    .displayMode(common.BarGaugeDisplayMode.Basic)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .withTarget(query('A', expr, ORDER_LEGEND, true));
}

/** The dashboard, as Grafana's JSON model. */
export function buildDashboard(): dashboard.Dashboard {
  nextId = 1;
  const builder = new dashboard.DashboardBuilder('keystone-appcred')
    .uid(DASHBOARD_UID)
    .description('Keystone application credentials: rotations, expiry, failures by reason, Keystone, the operator (docs/configure/alerts.md, docs/operate/alerts.md)')
    .tags(['keystone-appcred', 'openstack', 'keystone'])
    .editable()
    .refresh('1m')
    .time({ from: 'now-6h', to: 'now' })
    .timezone('browser')
    .withVariable(new dashboard.DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(
      new dashboard.QueryVariableBuilder('namespace')
        .label('Order namespace')
        .datasource(DATASOURCE)
        .query('label_values(keystone_appcred_credential_condition, namespace)')
        .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
        .sort(dashboard.VariableSort.AlphabeticalAsc)
        .multi(true)
        .includeAll(true)
        .allValue('.*'),
    )
    .withRow(row('Credentials'))
    .withPanel(
      perOrder(
        'Next rotation in',
        'status.nextRotation minus now, per order (negative: overdue; the RotationOverdue alert fires past its margin). Orders with the schedule off have none.',
        `sort(keystone_appcred_credential_next_rotation_timestamp_seconds{${NS}} - time())`,
      ),
    )
    .withPanel(
      perOrder(
        'Delivered credential age',
        'How long each order\'s delivered credential has been the delivered one (status.lastRotation).',
        `sort_desc(time() - keystone_appcred_credential_delivered_since_timestamp_seconds{${NS}})`,
      ),
    )
    .withPanel(
      perOrder(
        'Delivered credential expires in',
        'status.credentialExpiresAt minus now: when Keystone stops accepting the delivered credential. A healthy rotation keeps it above the grace period.',
        `sort(keystone_appcred_credential_expiry_timestamp_seconds{${NS}} - time())`,
      ),
    )
    .withPanel(
      graph('Orders by condition', 'Orders per condition type, status and reason (docs/troubleshoot/ says what each reason means and what to do).', 'short', [
        [`count by (type, status, reason) (keystone_appcred_credential_condition{${NS}})`, '{{type}} {{status}} {{reason}}'],
      ]),
    )
    .withPanel(
      graph('Failed passes by reason', 'Failed passes per second, by the reason of the order\'s first sub-condition that is not True.', 'ops', [
        [`sum by (reason) (rate(keystone_appcred_credential_failures_total{${NS}}[$__rate_interval]))`, '{{reason}}'],
      ]),
    )
    .withPanel(
      graph('Rotations and successors', 'Switches to a new generation per second, and the orders whose successor exists in Keystone but is not delivered yet.', 'short', [
        [`sum(rate(keystone_appcred_credential_rotations_total{${NS}}[$__rate_interval]))`, 'rotations per second'],
        [`sum(keystone_appcred_credential_successor_exists{${NS}})`, 'successors waiting to be switched to'],
      ]),
    )
    .withRow(row('Keystone'))
    .withPanel(
      graph('Keystone requests by result', 'Requests per second per Keystone endpoint: success, or the kind of failure (transport and timeout: no answer; server: 5xx or 429; unauthorized, forbidden: refused).', 'reqps', [
        ['sum by (endpoint, result) (rate(keystone_appcred_keystone_requests_total[$__rate_interval]))', '{{endpoint}} {{result}}'],
      ]),
    )
    .withPanel(
      graph('Waits for the Keystone limit', 'How long requests waited for --keystone-rate, --keystone-in-flight and any Retry-After pause: the 95th percentile, and the seconds waited per second.', 's', [
        ['histogram_quantile(0.95, sum by (endpoint, le) (rate(keystone_appcred_keystone_wait_seconds_bucket[$__rate_interval])))', 'p95 {{endpoint}}'],
        ['sum by (endpoint) (rate(keystone_appcred_keystone_wait_seconds_sum[$__rate_interval]))', 'waited per second {{endpoint}}'],
      ]),
    )
    .withPanel(
      graph('Keystone requests in flight', 'Requests in flight per endpoint now, the most at once since the start (never above --keystone-in-flight), the limit allowed now (the paced limit, or --keystone-in-flight with --keystone-pacing fixed), and the Keystone workers free for the operator as the adaptive pacing measured them.', 'short', [
        ['sum by (endpoint) (keystone_appcred_keystone_in_flight)', 'in flight {{endpoint}}'],
        ['max by (endpoint) (keystone_appcred_keystone_in_flight_peak)', 'peak {{endpoint}}'],
        ['max by (endpoint) (keystone_appcred_keystone_in_flight_limit)', 'limit {{endpoint}}'],
        ['max by (endpoint) (keystone_appcred_keystone_capacity)', 'capacity measured {{endpoint}}'],
      ]),
    )
    .withRow(row('Operator'))
    .withPanel(
      graph('Reconcile duration (p95)', 'The 95th percentile of a reconcile\'s duration, per kind.', 's', [
        ['histogram_quantile(0.95, sum by (kind, le) (rate(keystone_appcred_reconcile_duration_seconds_bucket[$__rate_interval])))', '{{kind}}'],
      ]),
    )
    .withPanel(
      graph('Reconciles by result', 'Finished reconciles per second, per kind and result (requeue: success with a wake-up).', 'ops', [
        ['sum by (kind, result) (rate(keystone_appcred_reconcile_total[$__rate_interval]))', '{{kind}} {{result}}'],
      ]),
    )
    .withPanel(
      graph('Work queue depth and workers', 'Keys waiting for a worker, and the workers busy, per kind: at the maximum with a deep queue, the kind waits on its workers.', 'short', [
        ['sum by (kind) (keystone_appcred_workqueue_depth)', 'queued {{kind}}'],
        ['sum by (kind) (keystone_appcred_active_workers)', 'busy {{kind}}'],
      ]),
    )
    .withPanel(
      graph('API writes', 'Writes to the API servers per second, per kind and verb: a converged cluster writes nothing.', 'ops', [
        ['sum by (kind, verb) (rate(keystone_appcred_api_writes_total[$__rate_interval]))', '{{kind}} {{verb}}'],
      ]),
    )
    .withPanel(
      graph('Leader', 'Which replica holds the election Lease (1).', 'short', [['keystone_appcred_leader', '{{instance}}']]),
    )
    .withPanel(
      graph('Memory against the limit', 'Resident memory per replica and the container\'s memory limit (KeystoneAppCredOperatorMemoryNearLimit fires above 90%).', 'bytes', [
        ['process_resident_memory_bytes and on(instance, job) keystone_appcred_leader', 'resident {{instance}}'],
        ['keystone_appcred_memory_limit_bytes', 'limit {{instance}}'],
      ]),
    )
    .withRow(row('Clusters'))
    .withPanel(
      graph('Orders per cluster', 'KeystoneApplicationCredentials per cluster they live on (no cluster: the management cluster).', 'short', [
        [`count by (cluster) (keystone_appcred_credential_condition{type="Ready", ${NS}})`, '{{cluster}}'],
      ]),
    )
    .withPanel(
      graph('Target clusters connected', '1 while a registered target cluster\'s API server answers, 0 while it does not or its kubeconfig cannot be used.', 'short', [
        ['max by (cluster) (keystone_appcred_target_cluster_connected)', '{{cluster}}'],
      ]),
    );
  return builder.build();
}

if (require.main === module) {
  const out = process.argv[2] ?? DASHBOARD_FILE;
  writeFileSync(out, `${JSON.stringify(buildDashboard(), null, 2)}\n`);
  process.stdout.write(`wrote ${out}\n`);
}
