import { Testing } from 'cdk8s';
import { defineProjectCharts } from '../../../constructs/app';

describe('the project app (npm run synth)', () => {
  const charts = defineProjectCharts(Testing.app());

  it.each(['crds', 'operator', 'samples'] as const)('%s matches the snapshot', (name) => {
    expect(Testing.synth(charts[name])).toMatchSnapshot();
  });

  it('orders the spec example workflow-appcred in tenant-a', () => {
    const appcred = Testing.synth(charts.samples).find((o) => o.kind === 'KeystoneApplicationCredential');
    expect(appcred).toEqual({
      apiVersion: 'c5c3.io/v1alpha1',
      kind: 'KeystoneApplicationCredential',
      metadata: { name: 'workflow-appcred', namespace: 'tenant-a' },
      spec: { controlPlaneRef: { name: 'cp', namespace: 'openstack' }, userRef: { name: 'workflow' }, projectRef: { name: 'workflow-project' } },
    });
  });
});
