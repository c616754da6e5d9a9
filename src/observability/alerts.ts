/**
 * The alerts a platform team installs with the operator: the conditions under which a consumer is about to break (a
 * rotation overdue, a delivered credential expiring with no successor, a reason only a person can clear, a backup
 * OpenBao does not hold, Keystone unreachable or refusing, a target cluster gone, a consumer's rollout overdue) and
 * under which the operator itself cannot work (no leader, not ready, memory near its limit). Built once, here, as
 * Prometheus rule groups: `keystone-appcred alerts` prints them as a rule file, the `AlertRules` construct wraps them in
 * a prometheus-operator PrometheusRule, and the tests run them through `promtool test rules` and a real Prometheus.
 *
 * Every window is a parameter (the shipped defaults are for production; the e2e test shortens them to seconds). Every
 * alert names the order (namespace, name, and the target cluster when there is one), the reason it stands on, what to
 * do, and carries a `runbook_url` into docs/operate/alerts.md, whose section per alert links the troubleshooting entry
 * of the reason (docs/troubleshoot/).
 */
import { resolveAlertParameters, type AlertParameters } from './alert-parameters';
import { adminCredentialAlertGroup } from './admin-credential-alert';
import type { RuleFile } from './alert-rule';
import { credentialAlertGroup } from './credential-alerts';
import { keystoneAlertGroup, operatorAlertGroup } from './operator-alerts';

/** The alert rule groups with `parameters` (see {@link AlertParameters}); throws on a bad parameter, naming it. */
export function alertRules(parameters: AlertParameters = {}): RuleFile {
  const p = resolveAlertParameters(parameters);
  return { groups: [credentialAlertGroup(p), keystoneAlertGroup(p), operatorAlertGroup(p), adminCredentialAlertGroup(p.runbookBaseUrl)] };
}
