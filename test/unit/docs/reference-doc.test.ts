/**
 * docs/reference/ against the code it describes, so the pages cannot drift: every setting of the operator (flag,
 * environment variable, default) and every parameter of `keystone-appcred alerts` (cli.md), every RBAC rule of the
 * construct (group, resources, verbs, names; rbac.md), and every metric (metrics.md). The consumer handoff's rules
 * (granted only with the construct's `consumerHandoff`) have rows of their own in the same table.
 */
import { Registry } from 'prom-client';
import {
  CLUSTER_RULES,
  HANDOFF_RULES,
  NAMESPACE_SECRET_RULES,
  NAMESPACED_CLUSTER_RULES,
  REGISTRATION_RULES,
  TARGET_CLUSTER_RULES,
  TARGET_NAMESPACE_SECRET_RULES,
  leaseRules,
  sourceSecretRules,
  type JustifiedRule,
} from '../../../constructs/operator-rbac';
import { adminCredentialMetrics } from '../../../src/operator/admin-credential-metrics';
import { CredentialMetrics } from '../../../src/operator/credential/metrics';
import { HandoffMetrics } from '../../../src/operator/handoff/metrics';
import { parameterFlag } from '../../../src/cli/monitoring';
import { ALERT_DEFAULTS, ALERT_PARAMETER_HELP } from '../../../src/observability/alerts';
import { SETTINGS } from '../../../src/operator/runtime/config';
import { OperatorMetrics } from '../../../src/operator/runtime/metrics';
import { page, rows, section, spans } from '../../support/markdown';

const CLI = page('docs/reference/cli.md');
const RBAC = page('docs/reference/rbac.md');
const METRICS = page('docs/reference/metrics.md');

const sorted = (values: readonly string[]): string[] => [...values].sort();

describe('docs/reference/cli.md: the operator\'s settings', () => {
  const table = rows(section(CLI, '## keystone-appcred operator'));

  it.each(SETTINGS.map((s) => [s.flag || s.env, s] as const))('%s has a row with its flag, variable and default', (_, setting) => {
    const flag = setting.flag.split(' ')[0];
    const row = table.find((cells) => (flag ? spans(cells[0]).includes(flag) : spans(cells[1]).includes(setting.env as string)));
    expect(row).toBeDefined();
    if (setting.env) expect(spans(row![1])).toContain(setting.env);
    else expect(row![1]).toBe('');
    if (setting.default !== undefined && !setting.default.startsWith('<')) expect(spans(row![2])).toContain(setting.default);
  });

  it('names no flag or variable the operator does not have', () => {
    const flags = SETTINGS.map((s) => s.flag.split(' ')[0]).filter(Boolean);
    const envs = SETTINGS.map((s) => s.env).filter(Boolean);
    for (const cells of table.slice(1)) {
      for (const flag of spans(cells[0])) expect(flags).toContain(flag);
      for (const env of spans(cells[1])) expect(envs).toContain(env);
    }
  });
});

describe('docs/reference/rbac.md', () => {
  const groupOf = (cell: string) => (cell === 'core' ? '' : (spans(cell)[0] ?? cell));
  const verbsOf = (cell: string) => cell.split(',').map((v) => v.trim());
  const rowOf = (table: string[][], rule: JustifiedRule) =>
    table.find(
      (cells) =>
        rule.apiGroups.length === 1 &&
        groupOf(cells[0]) === rule.apiGroups[0] &&
        JSON.stringify(sorted(spans(cells[1]))) === JSON.stringify(sorted(rule.resources)) &&
        JSON.stringify(sorted(verbsOf(cells[2]))) === JSON.stringify(sorted(rule.verbs)) &&
        JSON.stringify(sorted(spans(cells[3]))) === JSON.stringify(sorted(rule.resourceNames ?? [])),
    );
  const title = (r: JustifiedRule) => `${r.apiGroups.join(',') || 'core'} ${r.resources.join(',')} ${r.verbs.join(',')}`;

  describe('the cluster-wide mode', () => {
    const table = rows(section(RBAC, '## The cluster-wide mode (the default)')).slice(1);
    const rules: JustifiedRule[] = [...CLUSTER_RULES, ...HANDOFF_RULES, ...leaseRules('keystone-appcred-operator-leader'), ...REGISTRATION_RULES];

    it.each(rules.map((r) => [title(r), r] as const))('%s has a row with its reason', (_, rule) => {
      const row = rowOf(table, rule);
      expect(row).toBeDefined();
      expect(row![4].length).toBeGreaterThan(20);
    });

    it('has no row for a rule the construct does not grant', () => {
      expect(table).toHaveLength(rules.length);
    });
  });

  describe('the namespaced mode', () => {
    const table = rows(section(RBAC, '## The namespaced mode')).slice(1);
    const rules: JustifiedRule[] = [...NAMESPACE_SECRET_RULES, ...sourceSecretRules('<secret>')];

    it.each(rules.map((r) => [title(r), r] as const))('the Role rule %s has a row with its reason', (_, rule) => {
      const row = rowOf(table, rule);
      expect(row).toBeDefined();
      expect(row![4].length).toBeGreaterThan(20);
    });

    it('has no other row, and the ClusterRole is the cluster-wide one without its rules on Secrets, as the text says', () => {
      expect(table).toHaveLength(rules.length);
      expect(NAMESPACED_CLUSTER_RULES).toEqual(CLUSTER_RULES.filter((r) => !r.resources.includes('secrets')));
      expect(CLUSTER_RULES.filter((r) => r.resources.includes('secrets'))).toHaveLength(3);
    });
  });
});

describe('docs/reference/rbac.md: on a target cluster', () => {
  const table = rows(section(RBAC, '## On a target cluster')).slice(1);
  const groupOf = (cell: string) => (cell === 'core' ? '' : (spans(cell)[0] ?? cell));
  const verbsOf = (cell: string) => cell.split(',').map((v) => v.trim()).sort();

  it.each(TARGET_CLUSTER_RULES.map((r) => [`${r.apiGroups.join(',') || 'core'} ${r.resources.join(',')} ${r.verbs.join(',')}`, r] as const))('%s has a row', (_, rule) => {
    const row = table.find((cells) => groupOf(cells[0]) === rule.apiGroups[0] && JSON.stringify(verbsOf(cells[2])) === JSON.stringify(sorted(rule.verbs)) && rule.resources.every((r) => cells[1].includes(r.split('/')[0])));
    expect(row).toBeDefined();
  });

  it('has a row per rule, no more', () => {
    expect(table).toHaveLength(TARGET_CLUSTER_RULES.length);
  });

  it('the namespaced mode\'s Role holds the Secret rows, as the text says', () => {
    expect(TARGET_NAMESPACE_SECRET_RULES.map((r) => r.verbs)).toEqual(TARGET_CLUSTER_RULES.filter((r) => r.resources.includes('secrets')).map((r) => r.verbs));
  });
});

describe('docs/reference/metrics.md', () => {
  const operatorMetrics = new OperatorMetrics({ defaultMetrics: false, version: '0.0.0-test' });
  operatorMetrics.memoryLimit(512 * 2 ** 20); // exported once a limit is known
  const runtime = operatorMetrics.registry;
  const perOrder = new Registry();
  new CredentialMetrics(perOrder);
  new HandoffMetrics(perOrder);
  adminCredentialMetrics(perOrder, { controlPlanes: () => [], leading: () => true });
  const names = async () => [...(await runtime.getMetricsAsJSON()), ...(await perOrder.getMetricsAsJSON())].map((m) => m.name);

  it('lists every metric of the runtime, of the KeystoneApplicationCredential reconciler and of the consumer handoff', async () => {
    for (const name of await names()) expect(spans(METRICS)).toContain(name);
  });

  it('names no metric the operator does not export', async () => {
    const known = await names();
    for (const name of METRICS.match(/\b(?:keystone_appcred|kac_credential|kac_handoff|kac)_[a-z_]+/g) ?? []) expect(known).toContain(name);
  });
});

describe('docs/reference/cli.md: the alerts\' parameters', () => {
  it('lists every parameter with its flag and default, and no other', () => {
    const table = rows(section(CLI, '## keystone-appcred alerts')).slice(1);
    expect(table.map((cells) => spans(cells[0])[0]).sort()).toEqual(Object.keys(ALERT_PARAMETER_HELP).map(parameterFlag).sort());
    for (const [key, value] of Object.entries(ALERT_DEFAULTS)) {
      const row = table.find((cells) => spans(cells[0])[0] === parameterFlag(key));
      expect(spans(row![1])).toContain(String(value));
    }
  });
});
