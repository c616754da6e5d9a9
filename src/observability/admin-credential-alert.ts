/**
 * The alert on a ControlPlane's admin application credential (issue 42): its expiry and rotation are the platform
 * team's, by hand, so it is reported a week (`ADMIN_CREDENTIAL_EXPIRY_WARNING`) before Keystone starts refusing it and
 * the identity plane stops (the ControlPlane's `AdminCredentialReady=True/AdminCredentialExpiring` says the same). It
 * reads `keystone_appcred_admin_credential_expiry_timestamp_seconds`, which the leader exports from the ControlPlanes'
 * `status.adminCredentialExpiresAt`: a stable timestamp, so no scrape-interval transient can fire it. A rule of its own,
 * in a group of its own, beside the credential orders' alerts (alerts.ts).
 */
import { ADMIN_CREDENTIAL_EXPIRY_WARNING, Duration } from '../api';
import { alertRuleMaker, type AlertGroup } from './alert-rule';

/** The rule group; `warning` the time before the expiry it fires from (a Go duration). */
export function adminCredentialAlertGroup(runbookBaseUrl: string, warning: string = ADMIN_CREDENTIAL_EXPIRY_WARNING): AlertGroup {
  const seconds = Duration.parse(warning).milliseconds / 1000;
  const controlPlane = 'ControlPlane {{ $labels.namespace }}/{{ $labels.name }}';
  return {
    name: 'keystone-appcred.identity-plane',
    rules: [
      alertRuleMaker(runbookBaseUrl)(
        'KeystoneAppCredAdminCredentialExpiring',
        'warning',
        `keystone_appcred_admin_credential_expiry_timestamp_seconds - time() < ${seconds}`,
        '5m',
        `The admin application credential of ${controlPlane} {{ if lt $value 0.0 }}has expired{{ else }}expires in {{ $value | humanizeDuration }}{{ end }}`,
        `${controlPlane} authenticates to Keystone with an application credential that ` +
          '{{ if lt $value 0.0 }}has expired{{ else }}expires in {{ $value | humanizeDuration }}{{ end }} ' +
          '(status.adminCredentialExpiresAt). Once it has, Keystone refuses it: no user, project or role assignment of the ControlPlane is created, changed or deleted, and its orders wait with WaitingForAdminCredential (credentials already delivered keep working). ' +
          'Create its successor (openstack application credential create, as the same admin user, with the admin role on its project) and put it into the ControlPlane\'s admin Secret (or the KeystoneClusterIdentity\'s source Secret); the ControlPlane logs in with it at once. ' +
          `kubectl describe controlplane -n {{ $labels.namespace }} {{ $labels.name }} shows AdminCredentialReady.`,
      ),
    ],
  };
}
