/**
 * The expiry of each ControlPlane's admin application credential (issue 42), as a series the alert
 * `KeystoneAppCredAdminCredentialExpiring` reads: its rotation is the platform team's, by hand, so the operator reports
 * it before Keystone starts refusing it. Read at scrape time from the cached ControlPlanes' `status.adminCredentialExpiresAt`
 * (which the ControlPlane's pass records), by the leader only, as every series a pass moves: a standby exports none, so
 * one alert fires per ControlPlane, not one per replica.
 */
import { Gauge, type Registry } from 'prom-client';
import type { ControlPlane } from '../api';

/** The metric's name. */
export const ADMIN_CREDENTIAL_EXPIRY_METRIC = 'keystone_appcred_admin_credential_expiry_timestamp_seconds';

/** Registers the gauge: one series per ControlPlane whose admin credential expires, labelled with its namespace and name. */
export function adminCredentialMetrics(registry: Registry, source: { readonly controlPlanes: () => readonly ControlPlane[]; readonly leading: () => boolean }): void {
  new Gauge({
    name: ADMIN_CREDENTIAL_EXPIRY_METRIC,
    help: "When a ControlPlane's admin application credential expires in Keystone (status.adminCredentialExpiresAt), Unix seconds; absent for a password or a credential without an expiry; kept while Keystone does not answer the admin login",
    labelNames: ['namespace', 'name'],
    registers: [registry],
    collect() {
      this.reset();
      if (!source.leading()) return;
      for (const cp of source.controlPlanes()) {
        const at = cp.status?.adminCredentialExpiresAt;
        const seconds = at === undefined ? Number.NaN : Date.parse(at) / 1000;
        if (!Number.isNaN(seconds)) this.set({ namespace: cp.metadata.namespace ?? '', name: cp.metadata.name }, seconds);
      }
    },
  });
}
