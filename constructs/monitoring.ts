/**
 * The operator's observability for a cluster that runs prometheus-operator and Grafana's dashboard sidecar, all opt-in,
 * beside an {@link Operator}:
 *
 * - {@link OperatorMonitor}: a `ServiceMonitor` on the metrics Service (or a `PodMonitor` on the pods), so Prometheus
 *   scrapes `/metrics` of every replica, with the order's labels kept (`honorLabels`) and the job named after the
 *   operator;
 * - {@link AlertRules}: a `PrometheusRule` with the alerts of src/observability/alerts.ts (the same rules
 *   `keystone-appcred alerts` prints as a plain rule file);
 * - {@link Dashboard}: a ConfigMap carrying the Grafana dashboard, labelled for the grafana sidecar.
 *
 * The prometheus-operator types (`monitoring.coreos.com/v1`) are generated from its CRDs with `cdk8s import`
 * (./imports/monitoring.coreos.com.ts, which names the release); the CRDs themselves are prometheus-operator's to install.
 */
import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { alertRules } from '../src/observability/alerts';
import type { AlertParameters } from '../src/observability/alert-parameters';
import { DASHBOARD_FILE_NAME, dashboardJson } from '../src/observability/dashboard';
import { PodMonitor, PrometheusRule, PrometheusRuleSpecGroupsRulesExpr, ServiceMonitor } from './imports/monitoring.coreos.com';
import { kubeObject } from './kube';
import type { Operator } from './operator';

/**
 * The label the operator's Service and pods carry whose value (the operator's name) prometheus-operator makes the job's
 * name (`jobLabel`): the alerts' default selector `job="keystone-appcred-operator"` finds it.
 */
const JOB_LABEL = 'app.kubernetes.io/name';

/** How Prometheus finds the operator's replicas. */
export enum MonitorKind {
  /** A `ServiceMonitor`: through the metrics Service's endpoints. */
  SERVICE_MONITOR = 'ServiceMonitor',
  /** A `PodMonitor`: the pods directly (for a Prometheus that selects PodMonitors only). */
  POD_MONITOR = 'PodMonitor',
}

/** Props of {@link OperatorMonitor}. */
export interface OperatorMonitorProps {
  /** The operator to scrape. */
  readonly operator: Operator;
  /**
   * `SERVICE_MONITOR` scrapes the replicas through the metrics Service's endpoints; `POD_MONITOR` scrapes the pods
   * directly (for a Prometheus that selects PodMonitors only).
   * @default MonitorKind.SERVICE_MONITOR
   */
  readonly kind?: MonitorKind;
  /** How often Prometheus scrapes each replica. @default "30s" */
  readonly interval?: string;
  /**
   * Labels of the monitor object itself, for a Prometheus whose `serviceMonitorSelector` / `podMonitorSelector` selects
   * by label (kube-prometheus-stack's default selects `release: <its release name>`).
   * @default none
   */
  readonly labels?: { [key: string]: string };
}

/**
 * A prometheus-operator `ServiceMonitor` (or `PodMonitor`) for the operator's `/metrics`, in the operator's namespace.
 * `honorLabels: true` keeps the per-order series' own `namespace` label (the order's, not the operator pod's), as
 * kube-state-metrics' monitors do; the job is the operator's name.
 */
export class OperatorMonitor extends Construct {
  /** The monitor object: a `monitoring.coreos.com/v1` ServiceMonitor or PodMonitor. */
  public readonly monitor: ApiObject;

  public constructor(scope: Construct, id: string, props: OperatorMonitorProps) {
    super(scope, id);
    const { operator } = props;
    const interval = props.interval ?? '30s';
    if (!DURATION.test(interval)) throw new Error(`${this.node.path}: interval (${JSON.stringify(interval)}) must be a Prometheus duration such as 30s or 1m`);
    const metadata = { name: `${operator.name}-metrics`, namespace: operator.namespace, labels: { ...operator.labels, ...(props.labels ?? {}) } };
    const endpoint = { port: 'metrics', path: '/metrics', interval, honorLabels: true };
    const namespaceSelector = { matchNames: [operator.namespace] };
    this.monitor =
      (props.kind ?? MonitorKind.SERVICE_MONITOR) === MonitorKind.SERVICE_MONITOR
        ? new ServiceMonitor(this, 'ServiceMonitor', {
            metadata,
            spec: { jobLabel: JOB_LABEL, selector: { matchLabels: { ...operator.selector } }, namespaceSelector, endpoints: [endpoint] },
          })
        : new PodMonitor(this, 'PodMonitor', {
            metadata,
            spec: { jobLabel: JOB_LABEL, selector: { matchLabels: { ...operator.selector } }, namespaceSelector, podMetricsEndpoints: [endpoint] },
          });
  }
}

/** Props of {@link AlertRules}. */
export interface AlertRulesProps {
  /** The operator the alerts are about: its namespace holds the PrometheusRule, its name is the scrape job. */
  readonly operator: Operator;
  /**
   * The alerts' windows and thresholds (docs/reference/cli.md, "keystone-appcred alerts"): the engine's `AlertParameters`
   * (src/observability/alerts.ts), which the `keystone-appcred alerts` flags set too.
   * @default the production defaults of `ALERT_DEFAULTS`, with `operatorSelector` `job="<the operator's name>"`
   */
  readonly parameters?: AlertParameters;
  /**
   * Labels of the PrometheusRule, for a Prometheus whose `ruleSelector` selects by label (kube-prometheus-stack's
   * default selects `release: <its release name>`).
   * @default none
   */
  readonly labels?: { [key: string]: string };
}

/** The alerts as a prometheus-operator `PrometheusRule` named `<operator name>-alerts`, in the operator's namespace. */
export class AlertRules extends Construct {
  /** The PrometheusRule (`monitoring.coreos.com/v1`), whose `spec.groups` are the rule groups `keystone-appcred alerts` prints. */
  public readonly prometheusRule: ApiObject;

  public constructor(scope: Construct, id: string, props: AlertRulesProps) {
    super(scope, id);
    const { operator } = props;
    let rules: ReturnType<typeof alertRules>;
    try {
      rules = alertRules({ operatorSelector: `job="${operator.name}"`, ...(props.parameters ?? {}) });
    } catch (error) {
      throw new Error(`${this.node.path}: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.prometheusRule = new PrometheusRule(this, 'PrometheusRule', {
      metadata: { name: `${operator.name}-alerts`, namespace: operator.namespace, labels: { ...operator.labels, ...(props.labels ?? {}) } },
      spec: {
        groups: rules.groups.map((group) => ({
          name: group.name,
          rules: group.rules.map((r) => ({ alert: r.alert, expr: PrometheusRuleSpecGroupsRulesExpr.fromString(r.expr), for: r.for, labels: { ...r.labels }, annotations: { ...r.annotations } })),
        })),
      },
    });
  }
}

/** Props of {@link Dashboard}. */
export interface DashboardProps {
  /** The namespace of the ConfigMap (the one the grafana sidecar watches, or any when it watches all). */
  readonly namespace: string;
  /** The ConfigMap's name. @default "keystone-appcred-dashboard" */
  readonly name?: string;
  /**
   * The labels the grafana sidecar selects dashboards by (its `sidecar.dashboards.label` and `labelValue`).
   * @default { grafana_dashboard: "1" } (the Grafana Helm chart's and kube-prometheus-stack's defaults)
   */
  readonly labels?: { [key: string]: string };
  /**
   * The Grafana folder to put it in, as the annotation the sidecar reads (`sidecar.dashboards.folderAnnotation`,
   * by default `grafana_folder`).
   * @default none (the sidecar's default folder)
   */
  readonly folder?: string;
}

/** The Grafana dashboard (`keystone-appcred dashboard`) as a ConfigMap for the grafana sidecar. */
export class Dashboard extends Construct {
  /** The ConfigMap (`v1`). */
  public readonly configMap: ApiObject;

  public constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const name = props.name ?? 'keystone-appcred-dashboard';
    if (!DNS_SUBDOMAIN.test(name)) throw new Error(`${this.node.path}: name (${JSON.stringify(name)}) must be a DNS subdomain (lower-case letters, digits, "-" and ".")`);
    if (!DNS_LABEL.test(props.namespace)) throw new Error(`${this.node.path}: namespace (${JSON.stringify(props.namespace)}) must be a DNS label of at most 63 characters`);
    this.configMap = kubeObject(this, 'ConfigMap', 'ConfigMap', {
      metadata: {
        name,
        namespace: props.namespace,
        labels: { 'app.kubernetes.io/part-of': 'keystone-appcred', ...(props.labels ?? { grafana_dashboard: '1' }) },
        ...(props.folder !== undefined ? { annotations: { grafana_folder: props.folder } } : {}),
      },
      data: { [DASHBOARD_FILE_NAME]: dashboardJson() },
    });
  }
}

const DURATION = /^(?:\d+(?:ms|[smhdwy]))+$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
