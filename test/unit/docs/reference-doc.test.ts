/**
 * What the prose of docs/ says about the code beside the generated tables (those are the code's by construction:
 * test/unit/tools/docs-reference.test.ts): every metric name any page mentions is one the operator exports, and the
 * claims rbac.md's text makes about the rule tables (the namespaced ClusterRole is the cluster-wide one without its
 * three rules on Secrets; a target cluster's namespaced Role holds exactly its Secret rules).
 */
import { Registry } from 'prom-client';
import { CLUSTER_RULES, NAMESPACED_CLUSTER_RULES, TARGET_CLUSTER_RULES, TARGET_NAMESPACE_SECRET_RULES } from '../../../constructs/operator-rbac';
import { adminCredentialMetrics } from '../../../src/operator/admin-credential-metrics';
import { CredentialMetrics } from '../../../src/operator/credential/metrics';
import { HandoffMetrics } from '../../../src/operator/handoff/metrics';
import { OperatorMetrics } from '../../../src/operator/runtime/metrics';
import { markdownFiles, page } from '../../support/markdown';

describe('docs/: what the prose says about the code', () => {
  it('names no metric the operator does not export, on any page', async () => {
    const operator = new OperatorMetrics({ defaultMetrics: false, version: '0.0.0-test' });
    operator.memoryLimit(512 * 2 ** 20); // exported once a limit is known
    const perOrder = new Registry();
    new CredentialMetrics(perOrder);
    new HandoffMetrics(perOrder);
    adminCredentialMetrics(perOrder, { controlPlanes: () => [], leading: () => true });
    const known = [...(await operator.registry.getMetricsAsJSON()), ...(await perOrder.getMetricsAsJSON())].map((m) => m.name);
    for (const path of ['README.md', ...markdownFiles('docs')]) {
      const named = (page(path).match(/\bkeystone_appcred_[a-z_]+[a-z]\b/g) ?? []).filter((name) => !/_(bucket|count|sum)$/.test(name));
      for (const name of named) expect([path, name, known.includes(name)]).toEqual([path, name, true]);
    }
  });

  it('rbac.md: the namespaced ClusterRole is the cluster-wide one without its three rules on Secrets', () => {
    expect(NAMESPACED_CLUSTER_RULES).toEqual(CLUSTER_RULES.filter((r) => !r.resources.includes('secrets')));
    expect(CLUSTER_RULES.filter((r) => r.resources.includes('secrets'))).toHaveLength(3);
  });

  it('rbac.md: a target cluster\'s namespaced Role holds its Secret rules', () => {
    expect(TARGET_NAMESPACE_SECRET_RULES.map((r) => r.verbs)).toEqual(TARGET_CLUSTER_RULES.filter((r) => r.resources.includes('secrets')).map((r) => r.verbs));
  });
});
