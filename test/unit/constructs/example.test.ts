import { Testing } from 'cdk8s';
import { BillingChart } from '../../../examples/cdk8s/main';

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
});
