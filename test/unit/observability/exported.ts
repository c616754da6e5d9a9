/**
 * The metric names the operator exports (its runtime, the credential reconciler's, the handoff's, and prom-client's
 * process metrics), and the names a PromQL expression reads, for the tests that check the alerts and the dashboard read
 * nothing the operator does not export.
 */
import { Registry } from 'prom-client';
import { adminCredentialMetrics } from '../../../src/operator/admin-credential-metrics';
import { CredentialMetrics } from '../../../src/operator/credential/metrics';
import { HandoffMetrics } from '../../../src/operator/handoff/metrics';
import { OperatorMetrics } from '../../../src/operator/runtime/metrics';

/** Every metric name a scrape of the operator can show; histograms with their `_bucket`, `_sum` and `_count` series. */
export async function exportedNames(): Promise<Set<string>> {
  const operator = new OperatorMetrics();
  operator.memoryLimit(1);
  const perOrder = new Registry();
  new CredentialMetrics(perOrder);
  new HandoffMetrics(perOrder);
  adminCredentialMetrics(perOrder, { controlPlanes: () => [], leading: () => true });
  const names = new Set<string>(['up']); // Prometheus's own per target
  for (const m of [...(await operator.registry.getMetricsAsJSON()), ...(await perOrder.getMetricsAsJSON())]) {
    names.add(m.name);
    // prom-client's typings say a number; its JSON carries the type's name
    if (String(m.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${m.name}${suffix}`);
  }
  return names;
}

/** The metric names an expression selects (identifiers followed by a selector, a range, an operator or its end). */
export function metricsOf(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const words = withoutStrings.match(/\b[a-z_][a-z0-9_]*_[a-z0-9_]+\b|\bup\b/g) ?? [];
  return [...new Set(words.filter((w) => /^(keystone_appcred_|process_|nodejs_)/.test(w) || w === 'up'))];
}
