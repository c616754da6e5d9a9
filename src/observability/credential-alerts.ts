/**
 * The alerts on the credential orders, one series per order: a rotation overdue, a delivered credential expiring with
 * no successor, Keystone refusing a generation for good, a reason only a person clears, any other reason standing too
 * long, a backup OpenBao does not hold, a consumer's rollout overdue. Each names the order (namespace, name, and the
 * target cluster when there is one) and the reason it stands on, and says what to do.
 */
import { AdmissionReason, CredentialReason, DeliveryReason } from '../api';
import { seconds, type AlertParameters } from './alert-parameters';
import { alertRuleMaker, type AlertGroup } from './alert-rule';

/**
 * The reasons of a credential order that only a person clears: a reference that does not exist or belongs elsewhere,
 * consent withdrawn, the operator refused the namespace's Secrets (no Role there), a foreign Secret in the way, foreign
 * credentials under the order's names keeping it from minting (`ForeignCredential` when False; True only informs), a
 * cluster name too long, no published endpoint, a role subset (`spec.roles`, issue 42) the namespace may not hand on or
 * the user does not hold, an adoption refused or a Secret template that cannot be rendered (issue 49). (`CredentialFailed`
 * has an alert of its own.) Every other reason that
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
  CredentialReason.AdoptionRefused,
  AdmissionReason.ControlPlaneNotFound,
  AdmissionReason.NamespaceNotAssigned,
  AdmissionReason.ClusterNameTooLong,
  AdmissionReason.SecretAccessNotGranted,
  DeliveryReason.DeliveryRefused,
  DeliveryReason.KeystoneNotPublished,
  DeliveryReason.SecretTemplateInvalid,
];

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

/** The group `keystone-appcred.credentials`, with the parameters resolved (`resolveAlertParameters`). */
export function credentialAlertGroup(p: Required<AlertParameters>): AlertGroup {
  const rule = alertRuleMaker(p.runbookBaseUrl);
  return {
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
  };
}
