/**
 * Kubernetes from the same Pulumi program: the construct library's CRDs and operator (the YAML `npm run synth` writes to
 * dist/), an order the in-cluster operator serves, and a credential minted by Pulumi itself delivered as a Secret with
 * the spec's keys. `index.ts` calls it when the stack config `kubernetes` is true; the Kubernetes provider takes its
 * cluster from KUBECONFIG as usual.
 */
import { join } from 'node:path';
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import type { KeystoneApplicationCredential } from 'keystone-appcred/pulumi';
import { CredentialSecret, type DeliveredCredential } from 'keystone-appcred/pulumi/kubernetes';

/** What {@link deployToKubernetes} creates. */
export interface KubernetesDeployment {
  readonly crds: k8s.yaml.ConfigFile;
  readonly operator: k8s.yaml.ConfigFile;
  readonly order: k8s.apiextensions.CustomResource;
  readonly delivered: CredentialSecret;
}

/** Options of {@link deployToKubernetes}. */
export interface KubernetesOptions {
  /** Where the synthesized manifests are. @default "dist" (relative to the project directory) */
  readonly distDir?: string;
  /** The namespace of the order and of the delivered Secret. @default "tenant-a" */
  readonly namespace?: string;
  /** The Kubernetes provider. @default the ambient provider (KUBECONFIG) */
  readonly provider?: k8s.Provider;
  /**
   * Do not wait for the operator's workloads to become ready (a cluster without nodes never runs them).
   * @default false
   */
  readonly skipAwait?: boolean;
}

/** Deploys the CRDs, the operator, one order, and `credential` as a Secret. */
export function deployToKubernetes(credential: DeliveredCredential, options: KubernetesOptions = {}): KubernetesDeployment {
  const dist = options.distDir ?? 'dist';
  const namespace = options.namespace ?? 'tenant-a';
  const opts = options.provider ? { provider: options.provider } : {};
  const skipAwait = options.skipAwait ?? false;
  const crds = new k8s.yaml.ConfigFile('keystone-appcred-crds', { file: join(dist, '0000-crds.k8s.yaml') }, opts);
  const operator = new k8s.yaml.ConfigFile('keystone-appcred-operator', { file: join(dist, '0001-operator.k8s.yaml'), skipAwait }, { ...opts, dependsOn: [crds] });
  const ns = new k8s.core.v1.Namespace(namespace, { metadata: { name: namespace } }, opts);
  // An order the operator serves: a credential for the ordered user `workflow` on `workflow-project` (see the spec's example).
  const order = new k8s.apiextensions.CustomResource(
    'workflow-appcred',
    {
      apiVersion: 'c5c3.io/v1alpha1',
      kind: 'KeystoneApplicationCredential',
      metadata: { name: 'workflow-appcred', namespace },
      spec: {
        controlPlaneRef: { name: 'cp', namespace: 'openstack' },
        userRef: { name: 'workflow' },
        projectRef: { name: 'workflow-project' },
        rotation: { interval: '720h', gracePeriod: '24h' },
      },
    },
    { ...opts, dependsOn: [crds, ns] },
  );
  // The credential this program minted, for workloads in the same namespace; rewritten by the `pulumi up` that rotates it.
  const delivered = new CredentialSecret('ci', { credential, namespace: ns.metadata.name }, opts);
  return { crds, operator, order, delivered };
}

/** For `index.ts`: deploy when the stack config says so. */
export function maybeDeployToKubernetes(credential: KeystoneApplicationCredential): KubernetesDeployment | undefined {
  return new pulumi.Config().getBoolean('kubernetes') ? deployToKubernetes(credential) : undefined;
}
