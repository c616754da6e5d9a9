/**
 * The project's own cdk8s app: the CRDs, the operator, and sample orders (a ControlPlane that assigns `tenant-a`, and in
 * `tenant-a` the spec's example credential `workflow-appcred` with the project, user and role assignment it needs; and a
 * KeystoneClusterIdentity sharing the admin Secret with the `openstack` namespace). `npm run synth` writes it to `dist/`.
 */
import { Chart, type App } from 'cdk8s';
import { Crds } from './crds';
import { kubeObject } from './kube';
import { Operator } from './operator';
import { ControlPlane } from './orders/control-plane';
import { KeystoneClusterIdentity } from './orders/keystone-cluster-identity';
import { ServiceOwner } from './orders/service-owner';

/** The namespace of the sample ControlPlane. */
export const SAMPLE_CONTROL_PLANE_NAMESPACE = 'openstack';
/** The namespace the sample ControlPlane assigns. */
export const SAMPLE_TENANT_NAMESPACE = 'tenant-a';

/** The charts of the app, by file name. */
export interface ProjectCharts {
  /** `crds.k8s.yaml`: the six CRDs and the KeystoneClusterIdentity's admission policy. */
  readonly crds: Chart;
  /** `operator.k8s.yaml`: the operator. */
  readonly operator: Chart;
  /** `samples.k8s.yaml`: the sample orders and their namespaces. */
  readonly samples: Chart;
}

/** Adds the project's charts to `app`. */
export function defineProjectCharts(app: App): ProjectCharts {
  const crds = new Chart(app, 'crds');
  new Crds(crds, 'Crds');

  const operator = new Chart(app, 'operator');
  new Operator(operator, 'Operator', {
    image: 'keystone-appcred',
    tag: '0.3.0',
    openBao: { address: 'https://openbao.openbao.svc:8200', auth: { method: 'kubernetes', role: 'keystone-appcred-operator' } },
  });
  operator.addDependency(crds);

  const samples = new Chart(app, 'samples');
  for (const name of [SAMPLE_CONTROL_PLANE_NAMESPACE, SAMPLE_TENANT_NAMESPACE]) kubeObject(samples, `Namespace-${name}`, 'Namespace', { metadata: { name } });
  const controlPlane = new ControlPlane(samples, 'ControlPlane', {
    metadata: { name: 'cp', namespace: SAMPLE_CONTROL_PLANE_NAMESPACE },
    keystone: { authURL: 'https://keystone.openstack.svc:5000/v3', caBundleSecretRef: { name: 'keystone-ca' } },
    adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } },
    namespaceAssignments: [{ namespace: SAMPLE_TENANT_NAMESPACE, allowedRoles: ['member', 'reader'] }],
  });
  new ServiceOwner(samples, 'Workflow', { namespace: SAMPLE_TENANT_NAMESPACE, controlPlaneRef: controlPlane.ref, name: 'workflow', role: 'member' });
  // The admin Secret shared by name: a ControlPlane in `openstack` may write adminCredential.identityRef: {name: keystone-admin}.
  new KeystoneClusterIdentity(samples, 'ClusterIdentity', {
    metadata: { name: 'keystone-admin' },
    secretRef: { name: 'keystone-admin', namespace: SAMPLE_CONTROL_PLANE_NAMESPACE },
    allowedNamespaces: { list: [SAMPLE_CONTROL_PLANE_NAMESPACE] },
  });
  samples.addDependency(crds);
  return { crds, operator, samples };
}
