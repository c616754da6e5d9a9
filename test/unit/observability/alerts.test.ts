/**
 * The alert rules as data: every alert has its severity, summary, description and runbook link; every metric an
 * expression reads is one the operator exports; the parameters reach the expressions; a bad parameter is refused naming
 * it, the value and the rule. (promtool proves the rules themselves: test/integration/alert-rules.test.ts.)
 */
import { alertRules } from '../../../src/observability/alerts';
import { ALERT_DEFAULTS, DOCS_URL, resolveAlertParameters, seconds } from '../../../src/observability/alert-parameters';
import { ALERT_NAMES } from '../../../src/observability/alert-rule';
import { exportedNames, metricsOf } from './exported';

const rulesOf = (file: ReturnType<typeof alertRules>) => file.groups.flatMap((g) => g.rules);

describe('alertRules', () => {
  const rules = rulesOf(alertRules());

  it('has each named alert once, with a severity, a summary and a description naming the order, and a runbook link to its section', () => {
    expect(rules.map((r) => r.alert).sort()).toEqual([...ALERT_NAMES].sort());
    for (const r of rules) {
      expect(['critical', 'warning']).toContain(r.labels.severity);
      expect(r.annotations.summary.length).toBeGreaterThan(10);
      expect(r.annotations.description.length).toBeGreaterThan(r.annotations.summary.length);
      expect(r.annotations.runbook_url).toBe(`${DOCS_URL}#${r.alert.toLowerCase()}`);
    }
    const perOrder = rules.filter((r) => r.expr.includes('keystone_appcred_credential_') || r.expr.includes('keystone_appcred_handoff_'));
    expect(perOrder.length).toBeGreaterThanOrEqual(7);
    for (const r of perOrder) expect(r.annotations.summary).toContain('{{ $labels.namespace }}/{{ $labels.name }}');
  });

  it('reads only metrics the operator exports', async () => {
    const exported = await exportedNames();
    const read = rules.flatMap((r) => metricsOf(r.expr));
    expect(read.length).toBeGreaterThan(10);
    for (const name of read) expect(exported).toContain(name);
  });

  it('measures a rotation\'s lateness from the operator\'s last scrape, not from the evaluation time (scrape lag is a fact)', () => {
    const byName = Object.fromEntries(rules.map((r) => [r.alert, r]));
    const sinceDue = '(timestamp(keystone_appcred_credential_next_rotation_timestamp_seconds) - keystone_appcred_credential_next_rotation_timestamp_seconds)';
    for (const alert of ['KeystoneAppCredRotationOverdue', 'KeystoneAppCredExpiresWithoutSuccessor']) {
      expect(byName[alert].expr).toContain(sinceDue);
      expect(byName[alert].expr).not.toMatch(/next_rotation_timestamp_seconds\s*>\s*time\(\)|time\(\)\s*-\s*keystone_appcred_credential_next_rotation/);
    }
  });

  it('puts the parameters into the expressions and windows', () => {
    const custom = rulesOf(alertRules({ rotationOverdueAfter: '1h30m', successorDueAfter: '3m', keystoneWindow: '2m', memoryRatio: 0.75, notReadyFor: '2h', operatorSelector: 'job="kac", namespace="ops"', runbookBaseUrl: 'https://docs.example/operator.html' }));
    const byName = Object.fromEntries(custom.map((r) => [r.alert, r]));
    expect(byName.KeystoneAppCredRotationOverdue.expr).toContain('> 5400');
    expect(byName.KeystoneAppCredExpiresWithoutSuccessor.expr).toContain('<= 180)');
    expect(byName.KeystoneAppCredKeystoneUnreachable.expr).toContain('[2m]');
    expect(byName.KeystoneAppCredOperatorMemoryNearLimit.expr).toBe('process_resident_memory_bytes{job="kac", namespace="ops"} / keystone_appcred_memory_limit_bytes{job="kac", namespace="ops"} > 0.75');
    expect(byName.KeystoneAppCredNotReady.for).toBe('2h');
    expect(byName.KeystoneAppCredOperatorNoLeader.annotations.runbook_url).toBe('https://docs.example/operator.html#keystoneappcredoperatornoleader');
  });

  it.each([
    [{ rotationOverdueAfter: '15 minutes' }, 'alert parameter rotationOverdueAfter ("15 minutes") must be a Prometheus duration such as 30s, 15m or 1h30m'],
    [{ memoryFor: '' }, 'alert parameter memoryFor ("") must be a Prometheus duration'],
    [{ keystoneFailureRatio: 0 }, 'alert parameter keystoneFailureRatio (0) must be a number above 0 and at most 1'],
    [{ memoryRatio: 1.5 }, 'alert parameter memoryRatio (1.5) must be a number above 0 and at most 1'],
    [{ operatorSelector: '{job="x"}' }, 'alert parameter operatorSelector ("{job=\\"x\\"}") must be label matchers such as job="keystone-appcred-operator" (without braces)'],
    [{ runbookBaseUrl: 'docs/operate/alerts.md' }, 'alert parameter runbookBaseUrl ("docs/operate/alerts.md") must be an http or https URL without a fragment'],
  ])('refuses %j', (parameters, message) => {
    expect(() => alertRules(parameters)).toThrow(message);
  });

  it('fills every parameter with its default, and an undefined one too', () => {
    expect(resolveAlertParameters({ expiryWarning: undefined })).toEqual(ALERT_DEFAULTS);
    expect(seconds('1h30m')).toBe(5400);
    expect(seconds('90s')).toBe(90);
  });
});
