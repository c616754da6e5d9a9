import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Testing } from 'cdk8s';
import { defineProjectCharts } from '../../../constructs/app';

describe('the project app (npm run synth)', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'kac-synth-'));
  const app = new App({ outdir });
  const charts = defineProjectCharts(app);
  app.synth();

  it('writes the CRDs, the operator and the samples, in that order', () => {
    expect(readdirSync(outdir).sort()).toEqual(['0000-crds.k8s.yaml', '0001-operator.k8s.yaml', '0002-samples.k8s.yaml']);
  });

  it.each(['0000-crds.k8s.yaml', '0001-operator.k8s.yaml', '0002-samples.k8s.yaml'])('%s matches the YAML snapshot', (file) => {
    expect(readFileSync(join(outdir, file), 'utf8')).toMatchSnapshot();
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
