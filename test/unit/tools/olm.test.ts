/**
 * The OLM bundle (tools/olm.ts) against the constructs: the CSV's RBAC is the namespaced Secret access's ClusterRole
 * and Roles rule for rule, its Deployment the construct's, its owned CRDs the six CRDs, its alm-examples the sample
 * orders. The operator-framework validators check the committed bundle in test/integration/helm-chart.test.ts.
 */
import { parse } from 'yaml';
import { renderManifests } from '../../../src/cli/manifests';
import { objectsOf, type Manifest } from '../../../tools/objects';
import { bundleFiles, OLM_DIR, PACKAGE } from '../../../tools/olm';

interface Csv {
  metadata: { name: string; annotations: Record<string, string> };
  spec: {
    installModes: { type: string; supported: boolean }[];
    customresourcedefinitions: { owned: { name: string; kind: string; version: string }[] };
    install: { spec: { clusterPermissions: { serviceAccountName: string; rules: unknown[] }[]; permissions: { serviceAccountName: string; rules: unknown[] }[]; deployments: { name: string; spec: unknown }[] } };
  };
}

describe('the OLM bundle', () => {
  const files = bundleFiles('keystone-appcred', '9.8.7', (what) => `# ${what}\n`);
  const csv = parse(files.get(`${OLM_DIR}/manifests/${PACKAGE}.clusterserviceversion.yaml`) as string) as Csv;
  // What the constructs synthesize for the namespaced Secret access (a Role's rules are the same in every namespace).
  const objects = objectsOf(renderManifests({ image: 'keystone-appcred', tag: '9.8.7', secretGrants: { namespaces: ['any'], sources: [] } }));
  const of = (kind: string): (Manifest & { rules?: unknown[]; spec?: unknown })[] => objects.filter((o) => o.kind === kind);

  it("grants the construct's ClusterRole cluster-wide and its Roles' rules in the OperatorGroup's namespaces", () => {
    const install = csv.spec.install.spec;
    expect(install.clusterPermissions).toEqual([{ serviceAccountName: 'keystone-appcred-operator', rules: of('ClusterRole')[0].rules }]);
    expect(install.permissions).toEqual([{ serviceAccountName: 'keystone-appcred-operator', rules: of('Role').flatMap((r) => r.rules) }]);
    expect(JSON.stringify(install.clusterPermissions)).not.toContain('"secrets"');
    expect(csv.spec.installModes).toEqual(['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'].map((type) => ({ type, supported: true })));
  });

  it("runs the construct's Deployment, owns the six CRDs (each a manifest of the bundle), and gives the sample orders as examples", () => {
    expect(csv.spec.install.spec.deployments).toEqual([{ name: 'keystone-appcred-operator', label: of('Deployment')[0].metadata.labels, spec: of('Deployment')[0].spec }]);
    const crds = of('CustomResourceDefinition').map((c) => c.metadata.name);
    expect(csv.spec.customresourcedefinitions.owned.map((o) => o.name)).toEqual(crds);
    for (const crd of crds) expect(files.has(`${OLM_DIR}/manifests/${crd}.crd.yaml`)).toBe(true);
    const kinds = (JSON.parse(csv.metadata.annotations['alm-examples']) as { kind: string }[]).map((o) => o.kind);
    expect(new Set(kinds)).toEqual(new Set(csv.spec.customresourcedefinitions.owned.map((o) => o.kind)));
    expect([csv.metadata.name, csv.metadata.annotations.containerImage, csv.metadata.annotations['olm.skipRange']]).toEqual(['keystone-appcred.v9.8.7', 'keystone-appcred:9.8.7', '<9.8.7']);
  });

  it('names its package and channel in metadata/annotations.yaml and in the bundle image labels', () => {
    const { annotations } = parse(files.get(`${OLM_DIR}/metadata/annotations.yaml`) as string) as { annotations: Record<string, string> };
    expect(annotations).toMatchObject({ 'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1', 'operators.operatorframework.io.bundle.package.v1': 'keystone-appcred' });
    for (const [key, value] of Object.entries(annotations)) expect(files.get(`${OLM_DIR}/bundle.Dockerfile`)).toContain(`LABEL ${key}=${value}`);
  });
});
