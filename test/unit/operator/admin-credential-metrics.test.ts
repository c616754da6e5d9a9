/**
 * The admin application credential's expiry as a series (issue 42): one per ControlPlane that records an expiry, from
 * the cache at scrape time, on the leader only.
 */
import { Registry } from 'prom-client';
import type { ControlPlane } from '../../../src/api';
import { ADMIN_CREDENTIAL_EXPIRY_METRIC, adminCredentialMetrics } from '../../../src/operator/admin-credential-metrics';

const cp = (name: string, adminCredentialExpiresAt?: string): ControlPlane =>
  ({ metadata: { name, namespace: 'openstack' }, spec: {}, status: adminCredentialExpiresAt ? { adminCredentialExpiresAt } : {} }) as unknown as ControlPlane;

describe('keystone_appcred_admin_credential_expiry_timestamp_seconds', () => {
  it('one series per ControlPlane whose admin credential expires, from the cache, on the leader only', async () => {
    const registry = new Registry();
    let leading = true;
    let planes = [cp('cp', '2026-12-13T10:00:00Z'), cp('password-cp')];
    adminCredentialMetrics(registry, { controlPlanes: () => planes, leading: () => leading });
    expect(await registry.metrics()).toContain(`${ADMIN_CREDENTIAL_EXPIRY_METRIC}{namespace="openstack",name="cp"} ${Date.parse('2026-12-13T10:00:00Z') / 1000}`);
    expect(await registry.metrics()).not.toContain('name="password-cp"');
    planes = [cp('cp')];
    expect(await registry.metrics()).not.toContain('name="cp"');
    planes = [cp('cp', '2026-12-13T10:00:00Z')];
    leading = false;
    expect(await registry.metrics()).not.toContain('name="cp"');
  });
});
