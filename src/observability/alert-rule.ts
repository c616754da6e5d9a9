/**
 * An alerting rule as a Prometheus rule file holds it, the names of the alerts this project ships (each the heading of
 * its section in docs/operate/alerts.md) and the one way such a rule is made: with its severity and a
 * `runbook_url` into that section. The alert groups (credential-alerts.ts, operator-alerts.ts,
 * admin-credential-alert.ts) build on it; alerts.ts puts them into one rule file.
 */

/** One alerting rule, as Prometheus's rule file (and a PrometheusRule's `spec.groups[].rules[]`) holds it. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: { readonly summary: string; readonly description: string; readonly runbook_url: string };
}

/** A rule group: Prometheus evaluates a group's rules in order, every evaluation interval. */
export interface AlertGroup {
  readonly name: string;
  readonly rules: readonly AlertRule[];
}

/** A Prometheus rule file: `promtool check rules` reads it, `rule_files` loads it. */
export interface RuleFile {
  readonly groups: readonly AlertGroup[];
}

/** The alert names, each the heading of its section in docs/operate/alerts.md. */
export const ALERT_NAMES = [
  'KeystoneAppCredRotationOverdue',
  'KeystoneAppCredExpiresWithoutSuccessor',
  'KeystoneAppCredCredentialFailed',
  'KeystoneAppCredNeedsAction',
  'KeystoneAppCredNotReady',
  'KeystoneAppCredBackupNotSynced',
  'KeystoneAppCredKeystoneUnreachable',
  'KeystoneAppCredKeystoneRefusing',
  'KeystoneAppCredTargetClusterDisconnected',
  'KeystoneAppCredRolloutOverdue',
  'KeystoneAppCredOperatorNoLeader',
  'KeystoneAppCredOperatorNotReady',
  'KeystoneAppCredOperatorMemoryNearLimit',
  'KeystoneAppCredAdminCredentialExpiring', // issue 42: admin-credential-alert.ts
] as const;

/** An alert's name. */
export type AlertName = (typeof ALERT_NAMES)[number];

/** The anchor of an alert's section in docs/operate/alerts.md (GitHub's: the heading lower-cased). */
export const runbookAnchor = (alert: AlertName): string => alert.toLowerCase();


/**
 * The maker of this project's alerting rules: each labelled with its severity, its `runbook_url` the section of the
 * alert under `runbookBaseUrl` (see {@link runbookAnchor}).
 */
export function alertRuleMaker(runbookBaseUrl: string): (alert: AlertName, severity: 'critical' | 'warning', expr: string, forDuration: string, summary: string, description: string) => AlertRule {
  return (alert, severity, expr, forDuration, summary, description) => ({
    alert,
    expr,
    for: forDuration,
    labels: { severity },
    annotations: { summary, description, runbook_url: `${runbookBaseUrl}#${runbookAnchor(alert)}` },
  });
}
