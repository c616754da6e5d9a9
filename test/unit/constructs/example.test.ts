import { Testing } from 'cdk8s';
import { BillingChart, PlatformChart } from '../../../examples/cdk8s/main';

describe('the cdk8s example', () => {
  it('orders the billing service owner and mounts its credential', () => {
    const objects = Testing.synth(new BillingChart(Testing.app(), 'billing')) as { kind: string; metadata: { name: string; namespace?: string }; spec: Record<string, unknown> }[];
    expect(objects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'KeystoneProject/billing/billing-project',
      'KeystoneUser/billing/billing',
      'KeystoneRoleAssignment/billing/billing-role',
      'KeystoneApplicationCredential/billing/billing-appcred',
      'Deployment/billing/billing',
    ]);
    expect(objects[3].spec.rotation).toEqual({ interval: '168h0m0s', gracePeriod: '12h' });
    expect(JSON.stringify(objects[4])).toContain('"secretName":"billing-appcred-credentials"');
  });

  it('the platform chart: CRDs, the operator granted Secrets in openstack and billing, the ControlPlane assigning billing', () => {
    const objects = Testing.synth(new PlatformChart(Testing.app(), 'platform')) as { kind: string; metadata: { name: string; namespace?: string }; spec?: Record<string, unknown> }[];
    expect(objects.filter((o) => o.kind === 'CustomResourceDefinition')).toHaveLength(6);
    expect(objects.filter((o) => o.kind === 'Role' && o.metadata.name === 'keystone-appcred-operator-secrets').map((o) => o.metadata.namespace).sort()).toEqual(['billing', 'openstack']);
    const controlPlane = objects.find((o) => o.kind === 'ControlPlane');
    expect(controlPlane?.metadata).toEqual({ name: 'cp', namespace: 'openstack' });
    expect(JSON.stringify(controlPlane?.spec)).toContain('"endpointType":"internal"');
  });
});
