// @needs promtool
/**
 * The alerts as they ship (`keystone-appcred alerts` with the production defaults), through the real promtool: `promtool
 * check rules` accepts them (and the shortened ones the e2e test loads), and `promtool test rules` proves each alert on
 * series written the way the operator exports them: it fires on the series that mean trouble, with the order, the
 * reason and the runbook in its annotations, and stays silent on a healthy rotation with its grace period, on a held
 * switch whose successor exists, on a one-off refusal, and on a healthy operator.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { renderAlerts } from '../../src/cli/monitoring';
import { ALERT_NAMES, type AlertName } from '../../src/observability/alert-rule';
import { DOCS_URL } from '../../src/observability/alert-parameters';

const promtool = process.env.KAC_PROMTOOL as string;
const dir = mkdtempSync(join(tmpdir(), 'kac-alert-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: readonly string[]): { status: number | null; out: string } {
  const r = spawnSync(promtool, args, { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

// The labels a scrape of the operator adds to every series, and an order's.
const JOB = { job: 'keystone-appcred-operator', instance: '10.0.0.7:8080' };
const APP = { ...JOB, namespace: 'tenant-a', name: 'app' };
const EDGE = { ...JOB, namespace: 'tenant-a', name: 'app', cluster: 'edge-1' };
const ENDPOINT = 'https://keystone.example:5000/v3';

type Labels = Readonly<Record<string, string>>;
const series = (name: string, labels: Labels, values: string) => ({
  series: `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`,
  values,
});
/** The three condition series of an order: Ready, CredentialReady and DeliveryReady as `[status, reason]`. */
const conditions = (labels: Labels, credential: [string, string], delivery: [string, string], minutes = 180) => {
  const ready: [string, string] = credential[0] === 'True' && delivery[0] === 'True' ? ['True', 'AllReady'] : ['False', 'NotAllReady'];
  return (
    [
      ['Ready', ready],
      ['CredentialReady', credential],
      ['DeliveryReady', delivery],
    ] as const
  ).map(([type, [status, reason]]) => series('keystone_appcred_credential_condition', { ...labels, type, status, reason }, `1x${minutes}`));
};
const healthyConditions = (labels: Labels) => conditions(labels, ['True', 'CredentialMinted'], ['True', 'Delivered']);

const runbook = (alert: AlertName) => `${DOCS_URL}#${alert.toLowerCase()}`;
const LOOK = '`keystone-appcred status -n tenant-a` shows its reason; `kubectl describe keystoneapplicationcredential -n tenant-a app` its conditions and Events';

interface AlertTest {
  readonly eval_time: string;
  readonly alertname: AlertName;
  readonly exp_alerts: readonly { exp_labels: Labels; exp_annotations?: Labels }[];
}

/** Every alert silent at `at`. */
const silent = (...at: string[]): AlertTest[] => at.flatMap((t) => ALERT_NAMES.map((alertname) => ({ eval_time: t, alertname, exp_alerts: [] })));
const none = (alertname: AlertName, ...at: string[]): AlertTest[] => at.map((eval_time) => ({ eval_time, alertname, exp_alerts: [] }));

/** A healthy operator: one leader of two replicas, caches synced, memory well below the limit. */
const healthyOperator = [
  series('keystone_appcred_leader', { ...JOB, instance: '10.0.0.7:8080' }, '1x180'),
  series('keystone_appcred_leader', { ...JOB, instance: '10.0.0.8:8080' }, '0x180'),
  series('keystone_appcred_informer_synced', { ...JOB, kind: 'KeystoneApplicationCredential' }, '1x180'),
  series('up', JOB, '1x180'),
  series('process_resident_memory_bytes', JOB, `${150 * 2 ** 20}x180`),
  series('keystone_appcred_memory_limit_bytes', JOB, `${512 * 2 ** 20}x180`),
  series('keystone_appcred_keystone_requests_total', { ...JOB, endpoint: ENDPOINT, result: 'success' }, '0+20x180'),
];

/** KeystoneAppCredNeedsAction as it fires for the order `name` of tenant-a on `type` with `reason`. */
const needsAction = (name: string, type: string, reason: string) => ({
  exp_labels: { ...APP, name, severity: 'warning', type, status: 'False', reason },
  exp_annotations: {
    summary: `Credential order tenant-a/${name} waits for a person: ${type} is ${reason}`,
    description: `tenant-a/${name} reports ${type}=False with the reason ${reason}, which only a change of the order, a reference or a Secret clears; nothing is created, rotated or delivered that the reason blocks. docs/troubleshoot/keystoneapplicationcredential.md says what to do for ${reason}. \`keystone-appcred status -n tenant-a\` shows its reason; \`kubectl describe keystoneapplicationcredential -n tenant-a ${name}\` its conditions and Events.`,
    runbook_url: runbook('KeystoneAppCredNeedsAction'),
  },
});

const tests: { name: string; input_series: ReturnType<typeof series>[]; alert_rule_test: AlertTest[]; promql_expr_test?: unknown[] }[] = [
  {
    name: 'a healthy rotation with its grace period, scraped every minute: due at 30m, its successor seen at 31m, the switch at 32m, the superseded one deleted after the grace period',
    input_series: [
      ...healthyOperator,
      // interval 1h, grace period 1h: generation 1 expires at 90m and is due at 30m. The sample at 30m was scraped as
      // it fell due, before the pass: nothing changed yet. The pass mints (the successor counts at once), the scrape at
      // 31m lands before its switch, the one at 32m sees generation 2 delivered (since 30m01s, due at 90m01s).
      series('keystone_appcred_credential_next_rotation_timestamp_seconds', APP, '1800x31 5401x148'),
      series('keystone_appcred_credential_expiry_timestamp_seconds', APP, '5400x31 9001x148'),
      series('keystone_appcred_credential_delivered_since_timestamp_seconds', APP, '0x31 1801x148'),
      series('keystone_appcred_credential_successor_exists', APP, '0x30 1 0x148'),
      ...healthyConditions(APP),
      series('keystone_appcred_credential_rotations_total', APP, '0x31 1x148'),
      series('keystone_appcred_handoff_rollouts_overdue', APP, '0x180'),
      series('keystone_appcred_target_cluster_connected', { ...JOB, cluster: 'edge-1' }, '1x180'),
    ],
    alert_rule_test: silent('10m', '30m', '31m', '32m', '45m', '90m'),
  },
  {
    name: 'a rotation held past its time (the user gone): overdue after 15m, then its credential expiring without a successor',
    input_series: [
      ...healthyOperator,
      series('keystone_appcred_credential_next_rotation_timestamp_seconds', APP, '600x180'),
      series('keystone_appcred_credential_expiry_timestamp_seconds', APP, '4200x180'),
      series('keystone_appcred_credential_successor_exists', APP, '0x180'),
      ...conditions(APP, ['False', 'WaitingForUser'], ['True', 'Delivered']),
    ],
    alert_rule_test: [
      ...none('KeystoneAppCredRotationOverdue', '10m', '24m'),
      {
        eval_time: '30m',
        alertname: 'KeystoneAppCredRotationOverdue',
        exp_alerts: [
          {
            exp_labels: { ...APP, severity: 'warning', reason: 'WaitingForUser' },
            exp_annotations: {
              summary: 'Credential order tenant-a/app has not rotated for 20m 0s past its nextRotation',
              description: `The rotation of tenant-a/app was due 20m 0s ago and no new generation is delivered. It stands on the reason WaitingForUser. The delivered credential keeps working until it expires in Keystone (status.credentialExpiresAt); fix the reason before then. ${LOOK}.`,
              runbook_url: runbook('KeystoneAppCredRotationOverdue'),
            },
          },
        ],
      },
      ...none('KeystoneAppCredExpiresWithoutSuccessor', '9m'),
      {
        eval_time: '20m',
        alertname: 'KeystoneAppCredExpiresWithoutSuccessor',
        exp_alerts: [
          {
            exp_labels: { ...APP, severity: 'critical', reason: 'WaitingForUser' },
            exp_annotations: {
              summary: 'The credential delivered for tenant-a/app expires in Keystone in 50m 0s and no successor exists',
              description: `Every consumer of tenant-a/app fails once its delivered credential expires in Keystone, in 50m 0s: its rotation has been due for more than 2m (or the schedule is off) and Keystone holds no successor. It stands on the reason WaitingForUser. Fix the reason, or rotate by hand once it is fixed (keystone-appcred rotate app -n tenant-a). ${LOOK}.`,
              runbook_url: runbook('KeystoneAppCredExpiresWithoutSuccessor'),
            },
          },
        ],
      },
      ...none('KeystoneAppCredNotReady', '59m'),
    ],
  },
  {
    name: 'an order on a target cluster whose rotation is overdue with all conditions True (the operator did not get to it)',
    input_series: [
      ...healthyOperator,
      series('keystone_appcred_credential_next_rotation_timestamp_seconds', EDGE, '0x60'),
      ...healthyConditions(EDGE),
    ],
    alert_rule_test: [
      {
        eval_time: '1h',
        alertname: 'KeystoneAppCredRotationOverdue',
        exp_alerts: [
          {
            exp_labels: { ...EDGE, severity: 'warning' },
            exp_annotations: {
              summary: 'Credential order tenant-a/app on target cluster edge-1 has not rotated for 1h 0m 0s past its nextRotation',
              description: `The rotation of tenant-a/app on target cluster edge-1 was due 1h 0m 0s ago and no new generation is delivered. It stands on the reason none (all conditions True). The delivered credential keeps working until it expires in Keystone (status.credentialExpiresAt); fix the reason before then. ${LOOK}.`,
              runbook_url: runbook('KeystoneAppCredRotationOverdue'),
            },
          },
        ],
      },
    ],
  },
  {
    name: 'a switch held by the backup: the successor exists, so only BackupNotSynced speaks (after 15m), not the expiry',
    input_series: [
      ...healthyOperator,
      // due at 10m: the pass that mints the successor fails on the backup, and its status (BackupNotSynced) and the
      // successor are seen together at the next scrape, 11m.
      series('keystone_appcred_credential_next_rotation_timestamp_seconds', APP, '600x60'),
      series('keystone_appcred_credential_expiry_timestamp_seconds', APP, '4200x60'),
      series('keystone_appcred_credential_successor_exists', APP, '0x10 1x49'),
      series('keystone_appcred_credential_condition', { ...APP, type: 'Ready', status: 'True', reason: 'AllReady' }, '1x10'),
      series('keystone_appcred_credential_condition', { ...APP, type: 'Ready', status: 'False', reason: 'NotAllReady' }, '_x11 1x49'),
      series('keystone_appcred_credential_condition', { ...APP, type: 'CredentialReady', status: 'True', reason: 'CredentialMinted' }, '1x60'),
      series('keystone_appcred_credential_condition', { ...APP, type: 'DeliveryReady', status: 'True', reason: 'Delivered' }, '1x10'),
      series('keystone_appcred_credential_condition', { ...APP, type: 'DeliveryReady', status: 'False', reason: 'BackupNotSynced' }, '_x11 1x49'),
    ],
    alert_rule_test: [
      ...none('KeystoneAppCredExpiresWithoutSuccessor', '11m', '15m', '40m'),
      ...none('KeystoneAppCredBackupNotSynced', '25m'),
      ...none('KeystoneAppCredNotReady', '40m'),
      {
        eval_time: '27m',
        alertname: 'KeystoneAppCredBackupNotSynced',
        exp_alerts: [
          {
            exp_labels: { ...APP, severity: 'warning', type: 'DeliveryReady', status: 'False', reason: 'BackupNotSynced' },
            exp_annotations: {
              summary: 'OpenBao does not hold the current credential of tenant-a/app (BackupNotSynced)',
              description: `The switch of tenant-a/app to its successor waits for the backup: OpenBao cannot be read or written, or refuses the operator's login. The delivered Secret keeps the previous generation, which works until it expires. Check --openbao-address, the login (role, bound service account, policy) and OpenBao's health. ${LOOK}.`,
              runbook_url: runbook('KeystoneAppCredBackupNotSynced'),
            },
          },
        ],
      },
    ],
  },
  {
    name: 'the schedule turned off after generation 1 was created with an expiry: reported before it expires',
    input_series: [...healthyOperator, series('keystone_appcred_credential_expiry_timestamp_seconds', APP, '3000x60'), series('keystone_appcred_credential_successor_exists', APP, '0x60'), ...healthyConditions(APP)],
    alert_rule_test: [
      {
        eval_time: '20m',
        alertname: 'KeystoneAppCredExpiresWithoutSuccessor',
        exp_alerts: [
          {
            exp_labels: { ...APP, severity: 'critical' },
            exp_annotations: {
              summary: 'The credential delivered for tenant-a/app expires in Keystone in 30m 0s and no successor exists',
              description: `Every consumer of tenant-a/app fails once its delivered credential expires in Keystone, in 30m 0s: its rotation has been due for more than 2m (or the schedule is off) and Keystone holds no successor. It stands on the reason none (all conditions True). Fix the reason, or rotate by hand once it is fixed (keystone-appcred rotate app -n tenant-a). ${LOOK}.`,
              runbook_url: runbook('KeystoneAppCredExpiresWithoutSuccessor'),
            },
          },
        ],
      },
    ],
  },
  {
    name: 'the reasons only a person clears that are not a reference: Secrets not granted in the namespace, foreign credentials keeping the order from minting (ForeignCredential False), a role subset not allowed or not assigned (issue 42); ForeignCredential True only informs',
    input_series: [
      ...healthyOperator,
      ...conditions({ ...APP, name: 'no-secrets' }, ['False', 'SecretAccessNotGranted'], ['False', 'SecretAccessNotGranted']),
      ...conditions({ ...APP, name: 'taken' }, ['False', 'ForeignCredential'], ['False', 'WaitingForCredential']),
      ...conditions({ ...APP, name: 'beside' }, ['True', 'ForeignCredential'], ['True', 'Delivered']),
      // spec.roles changed after a delivery: the credential delivered before stays (DeliveryReady True)
      ...conditions({ ...APP, name: 'too-much' }, ['False', 'RoleNotAllowed'], ['True', 'Delivered']),
      ...conditions({ ...APP, name: 'not-held' }, ['False', 'RoleNotAssigned'], ['True', 'Delivered']),
    ],
    alert_rule_test: [
      ...none('KeystoneAppCredNeedsAction', '14m'),
      {
        eval_time: '20m',
        alertname: 'KeystoneAppCredNeedsAction',
        exp_alerts: [needsAction('no-secrets', 'CredentialReady', 'SecretAccessNotGranted'), needsAction('no-secrets', 'DeliveryReady', 'SecretAccessNotGranted'), needsAction('taken', 'CredentialReady', 'ForeignCredential'), needsAction('too-much', 'CredentialReady', 'RoleNotAllowed'), needsAction('not-held', 'CredentialReady', 'RoleNotAssigned')],
      },
      // NotReady speaks only for the wait the foreign credentials cause, not for the reasons NeedsAction names
      {
        eval_time: '61m',
        alertname: 'KeystoneAppCredNotReady',
        exp_alerts: [
          {
            exp_labels: { ...APP, name: 'taken', severity: 'warning', type: 'DeliveryReady', status: 'False', reason: 'WaitingForCredential' },
            exp_annotations: {
              summary: 'Credential order tenant-a/taken has not been ready for a while: DeliveryReady is WaitingForCredential',
              description: `tenant-a/taken reports DeliveryReady=False with the reason WaitingForCredential for longer than a pass or two takes. A wait (WaitingForUser, WaitingForProject, NoRoleOnProject, WaitingForAdminCredential, WaitingForCABundle) follows the object it names; CredentialError and DeliveryError carry Keystone's or the API server's words. \`keystone-appcred status -n tenant-a\` shows its reason; \`kubectl describe keystoneapplicationcredential -n tenant-a taken\` its conditions and Events.`,
              runbook_url: runbook('KeystoneAppCredNotReady'),
            },
          },
        ],
      },
    ],
  },
  {
    name: 'CredentialFailed, a reason only a person clears, and a wait that lasts',
    input_series: [
      ...healthyOperator,
      ...conditions({ ...APP, name: 'refused' }, ['False', 'CredentialFailed'], ['True', 'Delivered']),
      ...conditions({ ...APP, name: 'foreign' }, ['True', 'CredentialMinted'], ['False', 'DeliveryRefused']),
      ...conditions({ ...APP, name: 'waiting' }, ['False', 'NoRoleOnProject'], ['False', 'WaitingForCredential']),
    ],
    alert_rule_test: [
      ...none('KeystoneAppCredCredentialFailed', '0m'),
      {
        eval_time: '2m',
        alertname: 'KeystoneAppCredCredentialFailed',
        exp_alerts: [
          {
            exp_labels: { ...APP, name: 'refused', severity: 'critical', type: 'CredentialReady', status: 'False', reason: 'CredentialFailed' },
            exp_annotations: {
              summary: 'Keystone refused the credential of tenant-a/refused (CredentialFailed)',
              description:
                "Keystone refused to create a generation of tenant-a/refused for good (400 or 403): nothing rotates until spec.credentialGeneration is raised above it. Fix the cause the condition's message names (the user's roles on the project, Keystone's policy or expiry limits), then keystone-appcred rotate refused -n tenant-a. `keystone-appcred status -n tenant-a` shows its reason; `kubectl describe keystoneapplicationcredential -n tenant-a refused` its conditions and Events.",
              runbook_url: runbook('KeystoneAppCredCredentialFailed'),
            },
          },
        ],
      },
      ...none('KeystoneAppCredNeedsAction', '14m'),
      {
        eval_time: '20m',
        alertname: 'KeystoneAppCredNeedsAction',
        exp_alerts: [
          {
            exp_labels: { ...APP, name: 'foreign', severity: 'warning', type: 'DeliveryReady', status: 'False', reason: 'DeliveryRefused' },
            exp_annotations: {
              summary: 'Credential order tenant-a/foreign waits for a person: DeliveryReady is DeliveryRefused',
              description:
                'tenant-a/foreign reports DeliveryReady=False with the reason DeliveryRefused, which only a change of the order, a reference or a Secret clears; nothing is created, rotated or delivered that the reason blocks. docs/troubleshoot/keystoneapplicationcredential.md says what to do for DeliveryRefused. `keystone-appcred status -n tenant-a` shows its reason; `kubectl describe keystoneapplicationcredential -n tenant-a foreign` its conditions and Events.',
              runbook_url: runbook('KeystoneAppCredNeedsAction'),
            },
          },
        ],
      },
      ...none('KeystoneAppCredNotReady', '59m'),
      {
        eval_time: '61m',
        alertname: 'KeystoneAppCredNotReady',
        exp_alerts: (
          [
            ['CredentialReady', 'NoRoleOnProject'],
            ['DeliveryReady', 'WaitingForCredential'],
          ] as const
        ).map(([type, reason]) => ({
          exp_labels: { ...APP, name: 'waiting', severity: 'warning', type, status: 'False', reason },
          exp_annotations: {
            summary: `Credential order tenant-a/waiting has not been ready for a while: ${type} is ${reason}`,
            description: `tenant-a/waiting reports ${type}=False with the reason ${reason} for longer than a pass or two takes. A wait (WaitingForUser, WaitingForProject, NoRoleOnProject, WaitingForAdminCredential, WaitingForCABundle) follows the object it names; CredentialError and DeliveryError carry Keystone's or the API server's words. \`keystone-appcred status -n tenant-a\` shows its reason; \`kubectl describe keystoneapplicationcredential -n tenant-a waiting\` its conditions and Events.`,
            runbook_url: runbook('KeystoneAppCredNotReady'),
          },
        })),
      },
    ],
  },
  {
    name: 'a consumer rollout overdue',
    input_series: [...healthyOperator, series('keystone_appcred_handoff_rollouts_overdue', APP, '0x5 2x30')],
    alert_rule_test: [
      ...none('KeystoneAppCredRolloutOverdue', '5m', '6m'),
      {
        eval_time: '8m',
        alertname: 'KeystoneAppCredRolloutOverdue',
        exp_alerts: [
          {
            exp_labels: { ...APP, severity: 'warning' },
            exp_annotations: {
              summary: '2 consumer workload(s) of tenant-a/app have not finished rolling out to the delivered credential',
              description:
                'The consumer handoff rolled the workloads that opted in to the new generation of tenant-a/app, and 2 of them have not finished their rollout with half the grace period left: they lose their credential when the superseded generation is deleted (status.previousCredentialDeleteAt). The RolloutOverdue Events on the order name each workload and why (paused, OnDelete, a partition, pods not available): kubectl events -n tenant-a --for keystoneapplicationcredential/app.',
              runbook_url: runbook('KeystoneAppCredRolloutOverdue'),
            },
          },
        ],
      },
    ],
  },
  {
    name: 'Keystone unreachable from 10m on: every request fails with no answer; back at 40m',
    input_series: [
      ...healthyOperator.filter((s) => !s.series.startsWith('keystone_appcred_keystone_requests_total')),
      series('keystone_appcred_keystone_requests_total', { ...JOB, endpoint: ENDPOINT, result: 'success' }, '0+20x10 200x30 200+20x60'),
      series('keystone_appcred_keystone_requests_total', { ...JOB, endpoint: ENDPOINT, result: 'transport' }, '0x10 0+6x30 180x60'),
    ],
    alert_rule_test: [
      ...none('KeystoneAppCredKeystoneUnreachable', '10m', '15m'),
      {
        eval_time: '30m',
        alertname: 'KeystoneAppCredKeystoneUnreachable',
        exp_alerts: [
          {
            exp_labels: { endpoint: ENDPOINT, result: 'transport', severity: 'critical' },
            exp_annotations: {
              summary: `Keystone at ${ENDPOINT} does not answer the operator (transport: 100% of its requests)`,
              description: `More than 50% of the operator's requests to ${ENDPOINT} over 10m got no answer or a 5xx; 100% failed with transport (transport: no connection, timeout: no reply in time, server: 5xx or 429). Nothing rotates or is swept while Keystone cannot be listed; delivered credentials stay as they are and keep working until they expire. The orders report CredentialError, the ControlPlane KeystoneUnreachable. Check the ControlPlane's authURL, the CA bundle and the network path from the operator's pods to Keystone.`,
              runbook_url: runbook('KeystoneAppCredKeystoneUnreachable'),
            },
          },
        ],
      },
      ...none('KeystoneAppCredKeystoneUnreachable', '55m'),
    ],
  },
  {
    name: 'a few failures among many successes: not unreachable',
    input_series: [
      series('keystone_appcred_keystone_requests_total', { ...JOB, endpoint: ENDPOINT, result: 'success' }, '0+100x60'),
      series('keystone_appcred_keystone_requests_total', { ...JOB, endpoint: ENDPOINT, result: 'timeout' }, '0+10x60'),
    ],
    alert_rule_test: none('KeystoneAppCredKeystoneUnreachable', '30m', '60m'),
  },
  {
    name: 'Keystone refusing: a 401 every few minutes for an hour, against a one-off 401 (a token revoked early)',
    input_series: [
      ...healthyOperator,
      series('keystone_appcred_keystone_requests_total', { ...JOB, endpoint: ENDPOINT, result: 'unauthorized' }, '0x5 1x3 2x3 3x3 4x3 5x3 6x3 7x3 8x3 9x3 10x3 11x3 12x3 13x3 14x3 15x3 16x20'),
      series('keystone_appcred_keystone_requests_total', { ...JOB, endpoint: 'https://other.example/v3', result: 'unauthorized' }, '0x5 1x70'),
    ],
    alert_rule_test: [
      ...none('KeystoneAppCredKeystoneRefusing', '20m'),
      {
        eval_time: '30m',
        alertname: 'KeystoneAppCredKeystoneRefusing',
        exp_alerts: [
          {
            exp_labels: { endpoint: ENDPOINT, result: 'unauthorized', severity: 'warning' },
            exp_annotations: {
              summary: `Keystone at ${ENDPOINT} keeps refusing the operator (unauthorized)`,
              description: `Keystone at ${ENDPOINT} answered unauthorized (401 unauthorized: a password or token refused; 403 forbidden: its policy refuses the call) to 3.333 of the operator's requests in the last 10m, for 15m on end. The orders concerned report CredentialError with Keystone's words, a ControlPlane AuthenticationFailed: keystone-appcred status -A names them.`,
              runbook_url: runbook('KeystoneAppCredKeystoneRefusing'),
            },
          },
        ],
      },
    ],
  },
  {
    name: 'a target cluster disconnected for 20m, another one back after 5m',
    input_series: [
      ...healthyOperator,
      series('keystone_appcred_target_cluster_connected', { ...JOB, cluster: 'edge-1' }, '0x20 1x10'),
      series('keystone_appcred_target_cluster_connected', { ...JOB, cluster: 'edge-2' }, '0x5 1x25'),
    ],
    alert_rule_test: [
      ...none('KeystoneAppCredTargetClusterDisconnected', '9m', '25m'),
      {
        eval_time: '15m',
        alertname: 'KeystoneAppCredTargetClusterDisconnected',
        exp_alerts: [
          {
            exp_labels: { ...JOB, cluster: 'edge-1', severity: 'warning' },
            exp_annotations: {
              summary: 'Target cluster edge-1 is disconnected from the operator',
              description:
                'The API server of the registered target cluster edge-1 does not answer, or its kubeconfig cannot be used: its orders are not reconciled (their delivered Secrets stay as they are, and a rotation falls due without happening). The Events on its registration Secret say why: kubectl events -n <operator namespace> --for secret/edge-1.',
              runbook_url: runbook('KeystoneAppCredTargetClusterDisconnected'),
            },
          },
        ],
      },
    ],
  },
  {
    name: 'no leader: two replicas, neither leads from 5m on; a leader again at 20m',
    input_series: [
      series('keystone_appcred_leader', { ...JOB, instance: '10.0.0.7:8080' }, '1x5 0x15 1x10'),
      series('keystone_appcred_leader', { ...JOB, instance: '10.0.0.8:8080' }, '0x30'),
    ],
    alert_rule_test: [
      ...none('KeystoneAppCredOperatorNoLeader', '9m', '25m'),
      {
        eval_time: '15m',
        alertname: 'KeystoneAppCredOperatorNoLeader',
        exp_alerts: [
          {
            exp_labels: { job: JOB.job, severity: 'critical' },
            exp_annotations: {
              summary: 'No replica of the keystone-appcred operator leads',
              description:
                "No operator replica holds the election Lease (or none is scraped): nothing is reconciled, no credential rotates or is repaired. kubectl get lease -n <operator namespace> keystone-appcred-operator-leader names the holder; the replicas' logs say why they do not take it (the API server unreachable, the Lease Role missing).",
              runbook_url: runbook('KeystoneAppCredOperatorNoLeader'),
            },
          },
        ],
      },
    ],
  },
  {
    name: 'no operator scraped at all',
    input_series: [series('up', { job: 'something-else', instance: 'x' }, '1x20')],
    alert_rule_test: [
      {
        eval_time: '10m',
        alertname: 'KeystoneAppCredOperatorNoLeader',
        exp_alerts: [
          {
            exp_labels: { job: JOB.job, severity: 'critical' },
            exp_annotations: {
              summary: 'No replica of the keystone-appcred operator leads',
              description:
                "No operator replica holds the election Lease (or none is scraped): nothing is reconciled, no credential rotates or is repaired. kubectl get lease -n <operator namespace> keystone-appcred-operator-leader names the holder; the replicas' logs say why they do not take it (the API server unreachable, the Lease Role missing).",
              runbook_url: runbook('KeystoneAppCredOperatorNoLeader'),
            },
          },
        ],
      },
    ],
  },
  {
    name: 'a replica not ready: a cache that never synced',
    input_series: [
      ...healthyOperator,
      series('keystone_appcred_informer_synced', { ...JOB, instance: '10.0.0.8:8080', kind: 'KeystoneApplicationCredential' }, '1x30'),
      series('keystone_appcred_informer_synced', { ...JOB, instance: '10.0.0.8:8080', kind: 'Secret/metadata' }, '0x30'),
    ],
    alert_rule_test: [
      ...none('KeystoneAppCredOperatorNotReady', '9m'),
      {
        eval_time: '15m',
        alertname: 'KeystoneAppCredOperatorNotReady',
        exp_alerts: [
          {
            exp_labels: { job: JOB.job, instance: '10.0.0.8:8080', severity: 'warning' },
            exp_annotations: {
              summary: 'The keystone-appcred operator replica 10.0.0.8:8080 is not ready',
              description:
                'The replica 10.0.0.8:8080 has caches that have not synced (its /readyz answers 503 and names them), or Prometheus cannot scrape it: a replica that is not ready cannot take over from the leader. Its log says which list fails (RBAC, the API server); see docs/troubleshoot/operator-start.md.',
              runbook_url: runbook('KeystoneAppCredOperatorNotReady'),
            },
          },
        ],
      },
    ],
  },
  {
    name: 'memory near the limit: 480 MiB of 512 MiB for 20m',
    input_series: [
      series('keystone_appcred_leader', JOB, '1x30'),
      series('process_resident_memory_bytes', JOB, `${150 * 2 ** 20}x5 ${480 * 2 ** 20}x25`),
      series('keystone_appcred_memory_limit_bytes', JOB, `${512 * 2 ** 20}x30`),
    ],
    alert_rule_test: [
      ...none('KeystoneAppCredOperatorMemoryNearLimit', '5m', '15m'),
      {
        eval_time: '25m',
        alertname: 'KeystoneAppCredOperatorMemoryNearLimit',
        exp_alerts: [
          {
            exp_labels: { ...JOB, severity: 'warning' },
            exp_annotations: {
              summary: 'The keystone-appcred operator replica 10.0.0.7:8080 uses 93.75% of its memory limit',
              description:
                'The resident memory of 10.0.0.7:8080 has been above 90% of its container\'s memory limit for 15m: the next burst (many new orders, a mass rotation) may get it OOM-killed. Raise the construct\'s limits.memory (docs/operate/what-to-do-when.md, "Sizing the memory limit": about 105 MiB plus 15 MiB per 1,000 orders, twice that for the limit).',
              runbook_url: runbook('KeystoneAppCredOperatorMemoryNearLimit'),
            },
          },
        ],
      },
    ],
  },
  // Issue 42: the admin application credential's expiry (src/observability/admin-credential-alert.ts), a case of its own.
  {
    name: 'an admin application credential: silent while it expires in more than a week, firing (warning) from a week before its expiry, after it still',
    input_series: [
      ...healthyOperator,
      // One expires in 180 days, one a week and an hour after the start (in the week before it from 1h on), one expired at 1h.
      series('keystone_appcred_admin_credential_expiry_timestamp_seconds', { ...JOB, namespace: 'openstack', name: 'cp' }, `${(180 * 86400 + 3 * 3600).toString()}x180`),
      series('keystone_appcred_admin_credential_expiry_timestamp_seconds', { ...JOB, namespace: 'openstack', name: 'short' }, `${(7 * 86400 + 3600).toString()}x180`),
      series('keystone_appcred_admin_credential_expiry_timestamp_seconds', { ...JOB, namespace: 'openstack', name: 'expired' }, '3600x180'),
    ],
    alert_rule_test: [
      { eval_time: '1m', alertname: 'KeystoneAppCredAdminCredentialExpiring', exp_alerts: [] },
      {
        eval_time: '2h',
        alertname: 'KeystoneAppCredAdminCredentialExpiring',
        exp_alerts: [
          {
            exp_labels: { ...JOB, namespace: 'openstack', name: 'expired', severity: 'warning' },
            exp_annotations: {
              summary: 'The admin application credential of ControlPlane openstack/expired has expired',
              description:
                'ControlPlane openstack/expired authenticates to Keystone with an application credential that has expired (status.adminCredentialExpiresAt). Once it has, Keystone refuses it: no user, project or role assignment of the ControlPlane is created, changed or deleted, and its orders wait with WaitingForAdminCredential (credentials already delivered keep working). Create its successor (openstack application credential create, as the same admin user, with the admin role on its project) and put it into the ControlPlane\'s admin Secret (or the KeystoneClusterIdentity\'s source Secret); the ControlPlane logs in with it at once. kubectl describe controlplane -n openstack expired shows AdminCredentialReady.',
              runbook_url: runbook('KeystoneAppCredAdminCredentialExpiring'),
            },
          },
          {
            exp_labels: { ...JOB, namespace: 'openstack', name: 'short', severity: 'warning' },
            exp_annotations: {
              summary: 'The admin application credential of ControlPlane openstack/short expires in 6d 23h 0m 0s',
              description:
                'ControlPlane openstack/short authenticates to Keystone with an application credential that expires in 6d 23h 0m 0s (status.adminCredentialExpiresAt). Once it has, Keystone refuses it: no user, project or role assignment of the ControlPlane is created, changed or deleted, and its orders wait with WaitingForAdminCredential (credentials already delivered keep working). Create its successor (openstack application credential create, as the same admin user, with the admin role on its project) and put it into the ControlPlane\'s admin Secret (or the KeystoneClusterIdentity\'s source Secret); the ControlPlane logs in with it at once. kubectl describe controlplane -n openstack short shows AdminCredentialReady.',
              runbook_url: runbook('KeystoneAppCredAdminCredentialExpiring'),
            },
          },
        ],
      },
      ...none('KeystoneAppCredAdminCredentialExpiring', '4m'),
    ],
  },
];

/**
 * Scheduled rotations as a Prometheus scraping every `scrapeS` seconds sees them, in the operator's real update order:
 * generation 1 is due at 17m13s (between two scrapes at any interval), interval 1h, grace period 30m (under the 6h
 * `--expiry-warning`, so the delivered credential is always "expiring soon" when its rotation falls due). The first scrape
 * after the due time lands while the pass runs: the successor is minted (the gauge counts it at once) and not switched
 * to; the next scrape sees the switch (the next generation delivered a second after the due time, its own rotation due
 * an interval later). With `stuck` the rotation never happens: no successor, nothing switched. Two rotations and their
 * sweeps (grace period ends) within 2h40m; the operator's own series healthy throughout.
 */
function scheduledRotations(scrapeS: number, options: { readonly stuck?: boolean } = {}) {
  const interval = 3600;
  const grace = 1800;
  const end = 2 * 3600 + 40 * 60;
  const samples = Math.floor(end / scrapeS) + 1;
  const firstDue = 17 * 60 + 13;
  // The generations: when each became the delivered one, and when it is due (the last one due after the end).
  const generations = [{ since: firstDue - interval, due: firstDue }];
  while (!options.stuck && (generations.at(-1) as { due: number }).due < end) {
    const due = (generations.at(-1) as { due: number }).due;
    generations.push({ since: due + 1, due: due + 1 + interval });
  }
  /** What a scrape at `t` sees: the generation delivered, and whether its successor exists. */
  const seen = (t: number) => {
    let current = 0;
    let successor = 0;
    for (let g = 1; g < generations.length; g++) {
      const due = generations[g - 1].due;
      const firstAfterDue = Math.floor(due / scrapeS) * scrapeS + scrapeS; // the first scrape strictly after the due time
      if (t >= firstAfterDue + scrapeS) current = g;
      else if (t >= firstAfterDue) successor = 1;
    }
    return { g: generations[current], index: current, successor };
  };
  const values = (f: (t: number) => number) => Array.from({ length: samples }, (_, i) => f(i * scrapeS)).join(' ');
  const flat = (value: number) => `${value}x${samples - 1}`;
  return [
    series('keystone_appcred_leader', JOB, flat(1)),
    series('keystone_appcred_informer_synced', { ...JOB, kind: 'KeystoneApplicationCredential' }, flat(1)),
    series('up', JOB, flat(1)),
    series('process_resident_memory_bytes', JOB, flat(150 * 2 ** 20)),
    series('keystone_appcred_memory_limit_bytes', JOB, flat(512 * 2 ** 20)),
    series('keystone_appcred_keystone_requests_total', { ...JOB, endpoint: ENDPOINT, result: 'success' }, `0+1x${samples - 1}`),
    series('keystone_appcred_credential_next_rotation_timestamp_seconds', APP, values((t) => seen(t).g.due)),
    series('keystone_appcred_credential_expiry_timestamp_seconds', APP, values((t) => seen(t).g.due + grace)),
    series('keystone_appcred_credential_delivered_since_timestamp_seconds', APP, values((t) => seen(t).g.since)),
    series('keystone_appcred_credential_successor_exists', APP, values((t) => seen(t).successor)),
    series('keystone_appcred_credential_rotations_total', APP, values((t) => seen(t).index)),
    ...(['Ready', 'CredentialReady', 'DeliveryReady'] as const).map((type, i) =>
      series('keystone_appcred_credential_condition', { ...APP, type, status: 'True', reason: ['AllReady', 'CredentialMinted', 'Delivered'][i] }, flat(1)),
    ),
  ];
}

/** `alert` for the order at `at`, pending or firing (ALERTS): firing with `severity`, else neither. */
const alerted = (alert: AlertName, at: string, severity?: string) => ({
  expr: `ALERTS{alertname="${alert}"}`,
  eval_time: at,
  exp_samples: severity ? [{ labels: `ALERTS{alertname="${alert}", alertstate="firing", instance="${JOB.instance}", job="${JOB.job}", name="app", namespace="tenant-a", severity="${severity}"}`, value: 1 }] : [],
});

/** No alert was pending or firing at any evaluation up to 2h40m (ALERTS holds both states). */
const neverAlerted = { expr: 'count_over_time(ALERTS[3h])', eval_time: '2h40m', exp_samples: [] };

/** Scheduled rotations at 30 s and 60 s scrapes, evaluated every 10 s (between scrapes too): silent. */
const healthyLagTests = [30, 60].map((scrapeS) => ({
  name: `two healthy scheduled rotations and their sweeps, scraped every ${scrapeS} s: no alert pending or firing at any evaluation`,
  interval: `${scrapeS}s`,
  input_series: scheduledRotations(scrapeS),
  alert_rule_test: [],
  promql_expr_test: [neverAlerted],
}));

/** The same, stuck: the alerts fire. */
const lagTests = [30, 60].flatMap((scrapeS, i) => [
  healthyLagTests[i],
  {
    name: `the same rotation stuck (no successor ever), scraped every ${scrapeS} s: the expiry alert fires once the rotation has been due for 2m, the overdue one after 15m`,
    interval: `${scrapeS}s`,
    input_series: scheduledRotations(scrapeS, { stuck: true }),
    alert_rule_test: [],
    promql_expr_test: [
      alerted('KeystoneAppCredExpiresWithoutSuccessor', '19m10s'),
      alerted('KeystoneAppCredExpiresWithoutSuccessor', '20m40s', 'critical'),
      alerted('KeystoneAppCredRotationOverdue', '32m10s'),
      alerted('KeystoneAppCredRotationOverdue', '33m40s', 'warning'),
    ],
  },
]);

/**
 * The expiry alert as it shipped before issue 40 (`nextRotation > time()`, the successor as the pass's end recorded it):
 * on the healthy series above it goes firing at every rotation, which is what the lag tests must catch.
 */
const FORMER_EXPIRY_RULE = {
  groups: [
    {
      name: 'former',
      rules: [
        {
          alert: 'FormerExpiresWithoutSuccessor',
          expr:
            '(keystone_appcred_credential_expiry_timestamp_seconds - time() < 21600) unless on(namespace, name, cluster) (keystone_appcred_credential_next_rotation_timestamp_seconds > time())' +
            ' unless on(namespace, name, cluster) (keystone_appcred_credential_successor_exists == 1)',
          for: '0s',
        },
      ],
    },
  ],
};

describe('the shipped alerts through promtool', () => {
  it('promtool check rules accepts the rule file with the production defaults and with the e2e test\'s short windows', () => {
    writeFileSync(join(dir, 'alerts.yaml'), renderAlerts());
    writeFileSync(join(dir, 'alerts-short.yaml'), renderAlerts({ rotationOverdueAfter: '5s', successorDueAfter: '10s', expiryWarning: '40s', keystoneWindow: '20s', keystoneUnreachableFor: '5s', noLeaderFor: '10s', memoryFor: '5s' }));
    const checked = run(['check', 'rules', 'alerts.yaml', 'alerts-short.yaml']);
    expect(checked.out).toContain(`SUCCESS: ${ALERT_NAMES.length} rules found`);
    expect(checked.status).toBe(0);
  });

  it('promtool check rules refuses a broken rule (the check is real)', () => {
    writeFileSync(join(dir, 'broken.yaml'), renderAlerts().replace('keystone_appcred_target_cluster_connected == 0', 'keystone_appcred_target_cluster_connected =='));
    expect(run(['check', 'rules', 'broken.yaml']).status).not.toBe(0);
  });

  it('promtool test rules: every alert fires on trouble with the order, the reason and the runbook, and is silent on a healthy rotation', () => {
    writeFileSync(join(dir, 'alerts.yaml'), renderAlerts());
    writeFileSync(join(dir, 'alerts.test.yaml'), stringify({ rule_files: ['alerts.yaml'], evaluation_interval: '1m', tests: tests.map((t) => ({ interval: '1m', ...t })) }, { lineWidth: 0 }));
    const tested = run(['test', 'rules', 'alerts.test.yaml']);
    if (tested.status !== 0) throw new Error(tested.out);
    expect(tested.out).toContain('SUCCESS');
    // Each alert has a test in which it fires.
    const fired = new Set(tests.flatMap((t) => t.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)));
    expect([...fired].sort()).toEqual([...ALERT_NAMES].sort());
  });

  it('promtool test rules: scheduled rotations scraped every 30 s and 60 s, in the operator\'s update order, raise no alert; stuck, they do', () => {
    writeFileSync(join(dir, 'alerts.yaml'), renderAlerts());
    writeFileSync(join(dir, 'lag.test.yaml'), stringify({ rule_files: ['alerts.yaml'], evaluation_interval: '10s', tests: lagTests }, { lineWidth: 0 }));
    const tested = run(['test', 'rules', 'lag.test.yaml']);
    if (tested.status !== 0) throw new Error(tested.out);
    expect(tested.out).toContain('SUCCESS');
  });

  it('the former expiry rule goes pending or firing on those healthy rotations (the lag series are real enough to catch it)', () => {
    writeFileSync(join(dir, 'former.yaml'), stringify(FORMER_EXPIRY_RULE));
    for (const test of healthyLagTests) {
      writeFileSync(join(dir, 'former.test.yaml'), stringify({ rule_files: ['former.yaml'], evaluation_interval: '10s', tests: [test] }, { lineWidth: 0 }));
      const tested = run(['test', 'rules', 'former.test.yaml']);
      expect(tested.status).not.toBe(0);
      expect(tested.out).toContain('FormerExpiresWithoutSuccessor');
    }
  });

  it('promtool test rules fails when an alert does not fire as expected (the test is real)', () => {
    const wrong = tests.map((t) => ({ interval: '1m', ...t, alert_rule_test: t.alert_rule_test.map((a) => (a.alertname === 'KeystoneAppCredRotationOverdue' ? { ...a, eval_time: '1m' } : a)) }));
    writeFileSync(join(dir, 'wrong.test.yaml'), stringify({ rule_files: ['alerts.yaml'], evaluation_interval: '1m', tests: wrong }, { lineWidth: 0 }));
    expect(run(['test', 'rules', 'wrong.test.yaml']).status).not.toBe(0);
  });
});
