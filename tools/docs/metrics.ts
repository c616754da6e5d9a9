/**
 * The operator's metrics, from the registries the operator itself registers them in: the runtime's
 * (src/operator/runtime/metrics.ts, with the admin credentials' expiry), the KeystoneApplicationCredential reconciler's
 * per-order series (src/operator/credential/metrics.ts) and the consumer handoff's (src/operator/handoff/metrics.ts):
 * each series' name, type, labels and the help text `/metrics` prints.
 */
import { Registry, type Metric } from 'prom-client';
import { adminCredentialMetrics } from '../../src/operator/admin-credential-metrics';
import { CredentialMetrics } from '../../src/operator/credential/metrics';
import { HandoffMetrics } from '../../src/operator/handoff/metrics';
import { OperatorMetrics } from '../../src/operator/runtime/metrics';
import { code, codes, table } from './markdown';

/** The registries, by the block that lists them. */
function registries(): Record<'operator' | 'credential' | 'handoff', Registry> {
  const runtime = new OperatorMetrics({ defaultMetrics: false, version: '0.0.0' });
  runtime.memoryLimit(1); // registered once a limit is known
  adminCredentialMetrics(runtime.registry, { controlPlanes: () => [], leading: () => true });
  const credential = new Registry();
  new CredentialMetrics(credential);
  const handoff = new Registry();
  new HandoffMetrics(handoff);
  return { operator: runtime.registry, credential, handoff };
}

/** A metric's label names (prom-client keeps them on the metric; they are not part of its public type). */
const labelNames = (metric: Metric | undefined): readonly string[] => (metric as { labelNames?: readonly string[] } | undefined)?.labelNames ?? [];

/** The table of the metrics in one registry: name, type, labels, help. */
export async function metrics(which: 'operator' | 'credential' | 'handoff'): Promise<string> {
  const registry = registries()[which];
  const described = (await registry.getMetricsAsJSON()).map((m) => ({ ...m, labels: labelNames(registry.getSingleMetric(m.name)) }));
  described.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return table(['metric', 'type', 'labels', 'help'], described.map((m) => [code(m.name), String(m.type), codes(m.labels), m.help]));
}
