/**
 * The parameters of the alerts (alerts.ts): every window and ratio, with the production defaults, the words
 * `keystone-appcred alerts --help` gives each, and their check. The alert groups read them resolved.
 */

/**
 * The parameters of the alerts. Durations are Prometheus durations (`30s`, `15m`, `1h30m`); ratios are numbers above
 * 0 and at most 1. Every field is optional; the defaults are for production.
 */
export interface AlertParameters {
  /**
   * The series selector of the operator's own metrics (the scrape job): the leader, readiness and memory alerts sum and
   * compare per installation. The constructs' ServiceMonitor and PodMonitor name the job after the operator's name, as
   * the scrape configuration in docs/configure/alerts.md does.
   * @default 'job="keystone-appcred-operator"'
   */
  readonly operatorSelector?: string;
  /** Where docs/operate/alerts.md is served; each alert's `runbook_url` is this plus its section's anchor. @default {@link DOCS_URL} */
  readonly runbookBaseUrl?: string;
  /**
   * How far past `status.nextRotation` a rotation that has not switched is overdue, as of the operator's last scrape (a
   * due time that passed after it is not overdue yet). @default "15m"
   */
  readonly rotationOverdueAfter?: string;
  /**
   * How long after `status.nextRotation` a rotation may take to create its successor before the expiry alert counts the
   * successor as missing, as of the operator's last scrape: the pass that rotates (a login and a create in Keystone),
   * behind the other orders due at the same time. @default "2m"
   */
  readonly successorDueAfter?: string;
  /**
   * How long before its expiry in Keystone a delivered credential without a successor (the rotation due, or the
   * schedule turned off) is reported. @default "6h"
   */
  readonly expiryWarning?: string;
  /** How long `CredentialFailed` stands before it is reported. @default "1m" */
  readonly credentialFailedFor?: string;
  /** How long a reason only a person can clear (a missing reference, a foreign Secret, consent withdrawn) stands. @default "15m" */
  readonly needsActionFor?: string;
  /** How long any other reason that is not True stands before it is reported. @default "1h" */
  readonly notReadyFor?: string;
  /** How long `BackupNotSynced` stands (the Secret keeps the previous generation meanwhile). @default "15m" */
  readonly backupNotSyncedFor?: string;
  /** The window the Keystone alerts compute their rates over. @default "10m" */
  readonly keystoneWindow?: string;
  /** Above this share of failed requests (no answer, 5xx) an endpoint is unreachable. @default 0.5 */
  readonly keystoneFailureRatio?: number;
  /** How long the share stays above it. @default "5m" */
  readonly keystoneUnreachableFor?: string;
  /** How long Keystone keeps refusing (401, 403) before it is reported. @default "15m" */
  readonly keystoneRefusingFor?: string;
  /** How long a registered target cluster stays disconnected. @default "10m" */
  readonly targetClusterFor?: string;
  /** How long a consumer's rollout stays overdue (the handoff counts it from half the grace period on). @default "1m" */
  readonly rolloutOverdueFor?: string;
  /** How long no replica leads. @default "5m" */
  readonly noLeaderFor?: string;
  /** How long a replica is not ready (a cache not synced, or not scraped). @default "10m" */
  readonly notReadyOperatorFor?: string;
  /** Above this share of the container's memory limit the resident memory is near it. @default 0.9 */
  readonly memoryRatio?: number;
  /** How long the resident memory stays above that share. @default "15m" */
  readonly memoryFor?: string;
}

/** Each parameter with the words `keystone-appcred alerts --help` gives it (its flag is the key in kebab case). */
export const ALERT_PARAMETER_HELP: Readonly<Record<keyof AlertParameters, string>> = {
  operatorSelector: 'label matchers of the operator\'s scrape job, without braces',
  runbookBaseUrl: 'where docs/operate/alerts.md is served; each runbook_url is this plus the alert\'s anchor',
  rotationOverdueAfter: 'how far past status.nextRotation a rotation that has not switched is overdue (as of the last scrape)',
  successorDueAfter: 'how long after status.nextRotation a rotation may take to create its successor before the expiry alert counts it missing (as of the last scrape)',
  expiryWarning: 'how long before its expiry a delivered credential without a successor is reported',
  credentialFailedFor: 'how long CredentialFailed stands before it is reported',
  needsActionFor: 'how long a reason only a person clears stands before it is reported',
  notReadyFor: 'how long any other reason that is not True stands before it is reported',
  backupNotSyncedFor: 'how long BackupNotSynced stands before it is reported',
  keystoneWindow: 'the window the Keystone alerts compute their rates over',
  keystoneFailureRatio: 'above this share of requests without an answer (or 5xx) a Keystone endpoint is unreachable',
  keystoneUnreachableFor: 'how long the share stays above it',
  keystoneRefusingFor: 'how long Keystone keeps refusing (401, 403) before it is reported',
  targetClusterFor: 'how long a registered target cluster stays disconnected',
  rolloutOverdueFor: 'how long a consumer\'s rollout stays overdue',
  noLeaderFor: 'how long no replica leads',
  notReadyOperatorFor: 'how long a replica is not ready (a cache not synced, or not scraped)',
  memoryRatio: 'above this share of the container\'s memory limit the resident memory is near it',
  memoryFor: 'how long the resident memory stays above that share',
};

/**
 * Where docs/operate/alerts.md is published: the runbook links' base. A fork or an internal mirror of the documentation sets
 * `runbookBaseUrl` (`--runbook-base-url`) instead.
 */
export const DOCS_URL = 'https://github.com/c5c3/keystone-appcred/blob/main/docs/operate/alerts.md';

/** The defaults of {@link AlertParameters}. */
export const ALERT_DEFAULTS: Required<AlertParameters> = {
  operatorSelector: 'job="keystone-appcred-operator"',
  runbookBaseUrl: DOCS_URL,
  rotationOverdueAfter: '15m',
  successorDueAfter: '2m',
  expiryWarning: '6h',
  credentialFailedFor: '1m',
  needsActionFor: '15m',
  notReadyFor: '1h',
  backupNotSyncedFor: '15m',
  keystoneWindow: '10m',
  keystoneFailureRatio: 0.5,
  keystoneUnreachableFor: '5m',
  keystoneRefusingFor: '15m',
  targetClusterFor: '10m',
  rolloutOverdueFor: '1m',
  noLeaderFor: '5m',
  notReadyOperatorFor: '10m',
  memoryRatio: 0.9,
  memoryFor: '15m',
};

const DURATION = /^(?:\d+(?:ms|[smhdwy]))+$/;

/** Checks and completes the parameters; an error names the parameter, the value and the rule. */
export function resolveAlertParameters(given: AlertParameters = {}): Required<AlertParameters> {
  const p: Required<AlertParameters> = { ...ALERT_DEFAULTS, ...(Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as AlertParameters) };
  const fail = (field: string, value: unknown, rule: string): never => {
    throw new Error(`alert parameter ${field} (${JSON.stringify(value)}) ${rule}`);
  };
  for (const [field, value] of Object.entries(p)) {
    if (field === 'operatorSelector' || field === 'runbookBaseUrl') continue;
    if (field.endsWith('Ratio')) {
      if (typeof value !== 'number' || !(value > 0 && value <= 1)) fail(field, value, 'must be a number above 0 and at most 1');
    } else if (typeof value !== 'string' || !DURATION.test(value)) {
      fail(field, value, 'must be a Prometheus duration such as 30s, 15m or 1h30m');
    }
  }
  if (!/^(?:\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(?:=|!=|=~|!~)\s*"(?:[^"\\]|\\.)*"\s*,?)+$/.test(p.operatorSelector)) {
    fail('operatorSelector', p.operatorSelector, 'must be label matchers such as job="keystone-appcred-operator" (without braces)');
  }
  if (!/^https?:\/\/\S+$/.test(p.runbookBaseUrl) || p.runbookBaseUrl.includes('#')) fail('runbookBaseUrl', p.runbookBaseUrl, 'must be an http or https URL without a fragment');
  return p;
}

/** A Prometheus duration in seconds (the thresholds compare with `time()` differences). */
export function seconds(duration: string): number {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
  let total = 0;
  for (const m of duration.matchAll(/(\d+)(ms|[smhdwy])/g)) total += Number(m[1]) * (units[m[2]] as number);
  return total;
}
