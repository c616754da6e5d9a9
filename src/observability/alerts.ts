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
import { CredentialReason, DeliveryReason, AdmissionReason } from '../api';
import { ADMIN_CREDENTIAL_ALERT, adminCredentialAlertGroup } from './admin-credential-alert';

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

/**
 * The reasons of a credential order that only a person clears: a reference that does not exist or belongs elsewhere,
 * consent withdrawn, the operator refused the namespace's Secrets (no Role there), a foreign Secret in the way, foreign
 * credentials under the order's names keeping it from minting (`ForeignCredential` when False; True only informs), a
 * cluster name too long, no published endpoint, a role subset (`spec.roles`, issue 42) the namespace may not hand on or
 * the user does not hold. (`CredentialFailed` has an alert of its own.) Every other reason that
 * is not True is a wait the operator resolves itself, or reported by an alert of its own (BackupNotSynced, and
 * Keystone's failures by the request alerts).
 */
export const NEEDS_ACTION_REASONS: readonly string[] = [
  CredentialReason.UserNotFound,
  CredentialReason.ProjectNotFound,
  CredentialReason.ControlPlaneMismatch,
  CredentialReason.ForeignCredential,
  CredentialReason.RoleNotAllowed,
  CredentialReason.RoleNotAssigned,
  AdmissionReason.ControlPlaneNotFound,
  AdmissionReason.NamespaceNotAssigned,
  AdmissionReason.ClusterNameTooLong,
  AdmissionReason.SecretAccessNotGranted,
  DeliveryReason.DeliveryRefused,
  DeliveryReason.KeystoneNotPublished,
];

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
  ADMIN_CREDENTIAL_ALERT, // issue 42: admin-credential-alert.ts
] as const;

/** An alert's name. */
export type AlertName = (typeof ALERT_NAMES)[number];

/** The anchor of an alert's section in docs/operate/alerts.md (GitHub's: the heading lower-cased). */
export const runbookAnchor = (alert: AlertName): string => alert.toLowerCase();

const DURATION = /^(?:\d+(?:ms|[smhdwy]))+$/;
const ORDER_LABELS = 'namespace, name, cluster';
/** The order an alert is about: `namespace/name`, and the target cluster it lives on when there is one. */
const ORDER = '{{ $labels.namespace }}/{{ $labels.name }}{{ with $labels.cluster }} on target cluster {{ . }}{{ end }}';
/** What to look at for an order. */
const LOOK = '`keystone-appcred status -n {{ $labels.namespace }}` shows its reason; `kubectl describe keystoneapplicationcredential -n {{ $labels.namespace }} {{ $labels.name }}` its conditions and Events';
/**
 * How long the order's rotation had been due when the operator was last scraped (negative: not due yet). Scrape lag is
 * a fact: between two scrapes Prometheus holds the last sample, so a due time that passed after it (the switch already
 * done, or under way) is not yet a rotation that is late; measured from the sample's own timestamp, a rule reads the
 * same at a scrape interval of 1 s or 60 s, and at any evaluation interval.
 */
const SINCE_DUE = '(timestamp(keystone_appcred_credential_next_rotation_timestamp_seconds) - keystone_appcred_credential_next_rotation_timestamp_seconds)';

/** The reason an order stands on, when the alert's expression joined one (see {@link withReason}). */
const REASON = '{{ with $labels.reason }}{{ . }}{{ else }}none (all conditions True){{ end }}';

/**
 * `expr` (one series per order) with the `reason` of one of the order's sub-conditions that is not True, joined from
 * `keystone_appcred_credential_condition`; an order whose sub-conditions are all True keeps its series, without a
 * reason. `topk` picks one when both sub-conditions are False (an admission reason is on both).
 */
function withReason(expr: string): string {
  return (
    `(${expr}) * on(${ORDER_LABELS}) group_left(reason) topk by (${ORDER_LABELS}) (1, keystone_appcred_credential_condition{type=~"CredentialReady|DeliveryReady", status!="True"})\n` +
    `or on(${ORDER_LABELS}) (${expr})`
  );
}

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

/** The alert rule groups with `parameters` (see {@link AlertParameters}); throws on a bad parameter, naming it. */
export function alertRules(parameters: AlertParameters = {}): RuleFile {
  const p = resolveAlertParameters(parameters);
  const sel = p.operatorSelector;
  const rule = (alert: AlertName, severity: 'critical' | 'warning', expr: string, forDuration: string, summary: string, description: string): AlertRule => ({
    alert,
    expr,
    for: forDuration,
    labels: { severity },
    annotations: { summary, description, runbook_url: `${p.runbookBaseUrl}#${runbookAnchor(alert)}` },
  });
  const requests = 'keystone_appcred_keystone_requests_total';
  const unanswered = `${requests}{result=~"transport|timeout|server"}`;
  const window = p.keystoneWindow;
  return {
    groups: [
      {
        name: 'keystone-appcred.credentials',
        rules: [
          rule(
            'KeystoneAppCredRotationOverdue',
            'warning',
            withReason(`${SINCE_DUE} > ${seconds(p.rotationOverdueAfter)}`),
            '0s',
            `Credential order ${ORDER} has not rotated for {{ $value | humanizeDuration }} past its nextRotation`,
            `The rotation of ${ORDER} was due {{ $value | humanizeDuration }} ago and no new generation is delivered. It stands on the reason ${REASON}. ` +
              `The delivered credential keeps working until it expires in Keystone (status.credentialExpiresAt); fix the reason before then. ${LOOK}.`,
          ),
          rule(
            'KeystoneAppCredExpiresWithoutSuccessor',
            'critical',
            withReason(
              `(keystone_appcred_credential_expiry_timestamp_seconds - time() < ${seconds(p.expiryWarning)})` +
                ` unless on(${ORDER_LABELS}) (${SINCE_DUE} <= ${seconds(p.successorDueAfter)})` +
                ` unless on(${ORDER_LABELS}) (keystone_appcred_credential_successor_exists == 1)`,
            ),
            '0s',
            `The credential delivered for ${ORDER} expires in Keystone in {{ $value | humanizeDuration }} and no successor exists`,
            `Every consumer of ${ORDER} fails once its delivered credential expires in Keystone, in {{ $value | humanizeDuration }}: its rotation has been due for more than ${p.successorDueAfter} (or the schedule is off) and Keystone holds no successor. ` +
              `It stands on the reason ${REASON}. Fix the reason, or rotate by hand once it is fixed (keystone-appcred rotate {{ $labels.name }} -n {{ $labels.namespace }}). ${LOOK}.`,
          ),
          rule(
            'KeystoneAppCredCredentialFailed',
            'critical',
            'keystone_appcred_credential_condition{type="CredentialReady", reason="CredentialFailed"} == 1',
            p.credentialFailedFor,
            `Keystone refused the credential of ${ORDER} (CredentialFailed)`,
            `Keystone refused to create a generation of ${ORDER} for good (400 or 403): nothing rotates until spec.credentialGeneration is raised above it. ` +
              `Fix the cause the condition's message names (the user's roles on the project, Keystone's policy or expiry limits), then keystone-appcred rotate {{ $labels.name }} -n {{ $labels.namespace }}. ${LOOK}.`,
          ),
          rule(
            'KeystoneAppCredNeedsAction',
            'warning',
            `keystone_appcred_credential_condition{type=~"CredentialReady|DeliveryReady", status!="True", reason=~"${NEEDS_ACTION_REASONS.join('|')}"} == 1`,
            p.needsActionFor,
            `Credential order ${ORDER} waits for a person: {{ $labels.type }} is {{ $labels.reason }}`,
            `${ORDER} reports {{ $labels.type }}={{ $labels.status }} with the reason {{ $labels.reason }}, which only a change of the order, a reference or a Secret clears; nothing is created, rotated or delivered that the reason blocks. ` +
              `docs/troubleshoot/keystoneapplicationcredential.md says what to do for {{ $labels.reason }}. ${LOOK}.`,
          ),
          rule(
            'KeystoneAppCredNotReady',
            'warning',
            `keystone_appcred_credential_condition{type=~"CredentialReady|DeliveryReady", status!="True", reason!~"${[...NEEDS_ACTION_REASONS, CredentialReason.CredentialFailed, DeliveryReason.BackupNotSynced].join('|')}"} == 1`,
            p.notReadyFor,
            `Credential order ${ORDER} has not been ready for a while: {{ $labels.type }} is {{ $labels.reason }}`,
            `${ORDER} reports {{ $labels.type }}={{ $labels.status }} with the reason {{ $labels.reason }} for longer than a pass or two takes. ` +
              `A wait (WaitingForUser, WaitingForProject, NoRoleOnProject, WaitingForAdminCredential, WaitingForCABundle) follows the object it names; CredentialError and DeliveryError carry Keystone's or the API server's words. ${LOOK}.`,
          ),
          rule(
            'KeystoneAppCredBackupNotSynced',
            'warning',
            `keystone_appcred_credential_condition{type="DeliveryReady", reason="BackupNotSynced"} == 1`,
            p.backupNotSyncedFor,
            `OpenBao does not hold the current credential of ${ORDER} (BackupNotSynced)`,
            `The switch of ${ORDER} to its successor waits for the backup: OpenBao cannot be read or written, or refuses the operator's login. The delivered Secret keeps the previous generation, which works until it expires. ` +
              `Check --openbao-address, the login (role, bound service account, policy) and OpenBao's health. ${LOOK}.`,
          ),
          rule(
            'KeystoneAppCredRolloutOverdue',
            'warning',
            'keystone_appcred_handoff_rollouts_overdue > 0',
            p.rolloutOverdueFor,
            `{{ $value }} consumer workload(s) of ${ORDER} have not finished rolling out to the delivered credential`,
            `The consumer handoff rolled the workloads that opted in to the new generation of ${ORDER}, and {{ $value }} of them have not finished their rollout with half the grace period left: they lose their credential when the superseded generation is deleted (status.previousCredentialDeleteAt). ` +
              `The RolloutOverdue Events on the order name each workload and why (paused, OnDelete, a partition, pods not available): kubectl events -n {{ $labels.namespace }} --for keystoneapplicationcredential/{{ $labels.name }}.`,
          ),
        ],
      },
      {
        name: 'keystone-appcred.keystone',
        rules: [
          rule(
            'KeystoneAppCredKeystoneUnreachable',
            'critical',
            `(sum by (endpoint, result) (rate(${unanswered}[${window}])) / on(endpoint) group_left() sum by (endpoint) (rate(${requests}[${window}])))\n` +
              `and on(endpoint) (sum by (endpoint) (rate(${unanswered}[${window}])) / sum by (endpoint) (rate(${requests}[${window}])) > ${p.keystoneFailureRatio})`,
            p.keystoneUnreachableFor,
            'Keystone at {{ $labels.endpoint }} does not answer the operator ({{ $labels.result }}: {{ $value | humanizePercentage }} of its requests)',
            `More than ${percent(p.keystoneFailureRatio)} of the operator's requests to {{ $labels.endpoint }} over ${window} got no answer or a 5xx; {{ $value | humanizePercentage }} failed with {{ $labels.result }} (transport: no connection, timeout: no reply in time, server: 5xx or 429). ` +
              'Nothing rotates or is swept while Keystone cannot be listed; delivered credentials stay as they are and keep working until they expire. The orders report CredentialError, the ControlPlane KeystoneUnreachable. Check the ControlPlane\'s authURL, the CA bundle and the network path from the operator\'s pods to Keystone.',
          ),
          rule(
            'KeystoneAppCredKeystoneRefusing',
            'warning',
            `sum by (endpoint, result) (increase(${requests}{result=~"unauthorized|forbidden"}[${window}])) > 0`,
            p.keystoneRefusingFor,
            'Keystone at {{ $labels.endpoint }} keeps refusing the operator ({{ $labels.result }})',
            `Keystone at {{ $labels.endpoint }} answered {{ $labels.result }} (401 unauthorized: a password or token refused; 403 forbidden: its policy refuses the call) to {{ $value | humanize }} of the operator's requests in the last ${window}, for ${p.keystoneRefusingFor} on end. ` +
              'The orders concerned report CredentialError with Keystone\'s words, a ControlPlane AuthenticationFailed: keystone-appcred status -A names them.',
          ),
        ],
      },
      {
        name: 'keystone-appcred.operator',
        rules: [
          rule(
            'KeystoneAppCredTargetClusterDisconnected',
            'warning',
            'keystone_appcred_target_cluster_connected == 0',
            p.targetClusterFor,
            'Target cluster {{ $labels.cluster }} is disconnected from the operator',
            'The API server of the registered target cluster {{ $labels.cluster }} does not answer, or its kubeconfig cannot be used: its orders are not reconciled (their delivered Secrets stay as they are, and a rotation falls due without happening). ' +
              'The Events on its registration Secret say why: kubectl events -n <operator namespace> --for secret/{{ $labels.cluster }}.',
          ),
          rule(
            'KeystoneAppCredOperatorNoLeader',
            'critical',
            `(max by (job, namespace) (keystone_appcred_leader{${sel}}) < 1) or absent(keystone_appcred_leader{${sel}})`,
            p.noLeaderFor,
            'No replica of the keystone-appcred operator leads{{ with $labels.namespace }} in {{ . }}{{ end }}',
            'No operator replica holds the election Lease (or none is scraped): nothing is reconciled, no credential rotates or is repaired. ' +
              'kubectl get lease -n <operator namespace> keystone-appcred-operator-leader names the holder; the replicas\' logs say why they do not take it (the API server unreachable, the Lease Role missing).',
          ),
          rule(
            'KeystoneAppCredOperatorNotReady',
            'warning',
            `(min by (job, namespace, instance) (keystone_appcred_informer_synced{${sel}}) < 1) or (up{${sel}} == 0)`,
            p.notReadyOperatorFor,
            'The keystone-appcred operator replica {{ $labels.instance }} is not ready',
            'The replica {{ $labels.instance }} has caches that have not synced (its /readyz answers 503 and names them), or Prometheus cannot scrape it: a replica that is not ready cannot take over from the leader. ' +
              'Its log says which list fails (RBAC, the API server); see docs/troubleshoot/operator-start.md.',
          ),
          rule(
            'KeystoneAppCredOperatorMemoryNearLimit',
            'warning',
            `process_resident_memory_bytes{${sel}} / keystone_appcred_memory_limit_bytes{${sel}} > ${p.memoryRatio}`,
            p.memoryFor,
            'The keystone-appcred operator replica {{ $labels.instance }} uses {{ $value | humanizePercentage }} of its memory limit',
            `The resident memory of {{ $labels.instance }} has been above ${percent(p.memoryRatio)} of its container's memory limit for ${p.memoryFor}: the next burst (many new orders, a mass rotation) may get it OOM-killed. ` +
              'Raise the construct\'s limits.memory (docs/operate/what-to-do-when.md, "Sizing the memory limit": about 105 MiB plus 15 MiB per 1,000 orders, twice that for the limit).',
          ),
        ],
      },
      adminCredentialAlertGroup(p.runbookBaseUrl),
    ],
  };
}

/** A Prometheus duration in seconds (the thresholds compare with `time()` differences). */
export function seconds(duration: string): number {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
  let total = 0;
  for (const m of duration.matchAll(/(\d+)(ms|[smhdwy])/g)) total += Number(m[1]) * (units[m[2]] as number);
  return total;
}

const percent = (ratio: number): string => `${Math.round(ratio * 1000) / 10}%`;
