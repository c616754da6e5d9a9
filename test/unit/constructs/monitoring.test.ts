/**
 * The monitoring constructs: the ServiceMonitor (or PodMonitor) on the operator's metrics with the order labels kept and
 * the job named after the operator, the PrometheusRule with exactly the rules `keystone-appcred alerts` prints for that
 * job, the dashboard ConfigMap for the grafana sidecar, and bad props refused naming the construct, the prop and the
 * value. (Accepted by the API server against prometheus-operator's CRDs: test/e2e/observability.test.ts.)
 */
import { Testing } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { AlertRules, Dashboard, MonitorKind, Operator, OperatorMonitor } from '../../../constructs';
import { renderManifests } from '../../../src/cli/manifests';
import { alertRules } from '../../../src/observability/alerts';
import { dashboardJson } from '../../../src/observability/dashboard';

type Json = Record<string, unknown>;
const openBao = { address: 'https://openbao.example:8200', auth: { method: 'kubernetes' as const, role: 'r' } };

function chartWith(name?: string) {
  const chart = Testing.chart();
  const operator = new Operator(chart, 'operator', { image: 'registry.example/kac', tag: '1.0', openBao, ...(name ? { name, namespace: 'ops' } : {}) });
  return { chart, operator };
}
const ofKind = (chart: Parameters<typeof Testing.synth>[0], kind: string) => (Testing.synth(chart) as Json[]).filter((o) => o.kind === kind);

describe('OperatorMonitor', () => {
  it('scrapes the metrics Service\'s port, keeps the orders\' labels, names the job after the operator', () => {
    const { chart, operator } = chartWith();
    new OperatorMonitor(chart, 'monitor', { operator, labels: { release: 'kube-prometheus-stack' } });
    const [monitor] = ofKind(chart, 'ServiceMonitor');
    expect(monitor).toMatchObject({
      apiVersion: 'monitoring.coreos.com/v1',
      metadata: { name: 'keystone-appcred-operator-metrics', namespace: 'keystone-appcred-system', labels: { release: 'kube-prometheus-stack', 'app.kubernetes.io/name': 'keystone-appcred-operator' } },
      spec: {
        jobLabel: 'app.kubernetes.io/name',
        selector: { matchLabels: { 'app.kubernetes.io/name': 'keystone-appcred-operator' } },
        namespaceSelector: { matchNames: ['keystone-appcred-system'] },
        endpoints: [{ port: 'metrics', path: '/metrics', interval: '30s', honorLabels: true }],
      },
    });
    // the Service it selects carries the label, and its port is named so
    const [service] = ofKind(chart, 'Service') as { metadata: { labels: Json }; spec: { ports: { name: string }[] } }[];
    expect(service.metadata.labels).toMatchObject({ 'app.kubernetes.io/name': 'keystone-appcred-operator' });
    expect(service.spec.ports.map((p) => p.name)).toEqual(['metrics']);
  });

  it('or a PodMonitor on the pods, every 15s', () => {
    const { chart, operator } = chartWith('kac');
    new OperatorMonitor(chart, 'monitor', { operator, kind: MonitorKind.POD_MONITOR, interval: '15s' });
    expect(ofKind(chart, 'ServiceMonitor')).toEqual([]);
    const [monitor] = ofKind(chart, 'PodMonitor');
    expect(monitor).toMatchObject({
      metadata: { name: 'kac-metrics', namespace: 'ops' },
      spec: { jobLabel: 'app.kubernetes.io/name', selector: { matchLabels: { 'app.kubernetes.io/name': 'kac' } }, podMetricsEndpoints: [{ port: 'metrics', interval: '15s', honorLabels: true }] },
    });
  });

  it('refuses an interval that is not a duration', () => {
    const { chart, operator } = chartWith();
    expect(() => new OperatorMonitor(chart, 'monitor', { operator, interval: 'often' })).toThrow('monitor: interval ("often") must be a Prometheus duration such as 30s or 1m');
  });
});

describe('AlertRules', () => {
  it('holds the rules `keystone-appcred alerts` prints, for the operator\'s job, in its namespace', () => {
    const { chart, operator } = chartWith('kac');
    new AlertRules(chart, 'alerts', { operator, parameters: { expiryWarning: '12h' }, labels: { release: 'prom' } });
    const [rule] = ofKind(chart, 'PrometheusRule') as { metadata: Json; spec: { groups: unknown } }[];
    expect(rule.metadata).toMatchObject({ name: 'kac-alerts', namespace: 'ops', labels: { release: 'prom' } });
    const expected = alertRules({ operatorSelector: 'job="kac"', expiryWarning: '12h' });
    expect(rule.spec.groups).toEqual(JSON.parse(JSON.stringify(expected.groups)));
  });

  it('refuses a bad parameter, naming the construct', () => {
    const { chart, operator } = chartWith();
    expect(() => new AlertRules(chart, 'alerts', { operator, parameters: { memoryRatio: 2 } })).toThrow('alerts: alert parameter memoryRatio (2) must be a number above 0 and at most 1');
  });
});

describe('Dashboard', () => {
  it('is a ConfigMap with the dashboard, labelled for the grafana sidecar', () => {
    const chart = Testing.chart();
    new Dashboard(chart, 'dashboard', { namespace: 'monitoring', folder: 'OpenStack' });
    const [configMap] = ofKind(chart, 'ConfigMap') as { metadata: Json; data: Record<string, string> }[];
    expect(configMap.metadata).toEqual({ name: 'keystone-appcred-dashboard', namespace: 'monitoring', labels: { 'app.kubernetes.io/part-of': 'keystone-appcred', grafana_dashboard: '1' }, annotations: { grafana_folder: 'OpenStack' } });
    expect(configMap.data).toEqual({ 'keystone-appcred.json': dashboardJson() });
  });

  it('takes the sidecar\'s label of another installation, and refuses a bad name', () => {
    const chart = Testing.chart();
    new Dashboard(chart, 'dashboard', { namespace: 'monitoring', labels: { 'grafana.io/dashboard': 'true' } });
    expect((ofKind(chart, 'ConfigMap')[0].metadata as Json).labels).toEqual({ 'app.kubernetes.io/part-of': 'keystone-appcred', 'grafana.io/dashboard': 'true' });
    expect(() => new Dashboard(Testing.chart(), 'd', { namespace: 'monitoring', name: 'Dash' })).toThrow('d: name ("Dash") must be a DNS subdomain');
    expect(() => new Dashboard(Testing.chart(), 'd', { namespace: 'Mon' })).toThrow('d: namespace ("Mon") must be a DNS label');
  });
});

describe('keystone-appcred manifests --monitoring', () => {
  it('adds the three after the operator, in its namespace; without the flag none', () => {
    const kinds = (yaml: string) => parseAllDocuments(yaml).map((d) => (d.toJS() as { kind: string }).kind);
    const plain = kinds(renderManifests({ image: 'r/kac', tag: '1' }));
    expect(plain).not.toContain('ServiceMonitor');
    const objects = parseAllDocuments(renderManifests({ image: 'r/kac', tag: '1', monitoring: true, namespace: 'ops' })).map((d) => d.toJS() as { kind: string; metadata: { namespace?: string } });
    const added = objects.slice(plain.length);
    expect(added.map((o) => o.kind)).toEqual(['ServiceMonitor', 'PrometheusRule', 'ConfigMap']);
    for (const o of added) expect(o.metadata.namespace).toBe('ops');
  });
});
