/**
 * The OLM bundle `deploy/olm/` (registry+v1, what `operator-sdk bundle validate` checks and `opm` indexes), generated
 * from the construct library by `npm run release:artifacts` (tools/release.ts), never written by hand:
 *
 * - `manifests/keystone-appcred.clusterserviceversion.yaml`: the operator of the namespaced Secret access, as a CSV.
 *   Its `clusterPermissions` are the construct's ClusterRole (the orders cluster-wide, no Secrets); its `permissions`
 *   are the rules of the construct's Roles (the election Lease, the target clusters' kubeconfig Secrets, and every
 *   Secret verb the namespaced access grants), which OLM grants in the namespaces of the OperatorGroup: its own
 *   (OwnNamespace), one or more (SingleNamespace, MultiNamespace: the ControlPlanes' namespaces and the namespaces they
 *   assign, as `--secret-namespaces` lists them), or all of them (AllNamespaces: the cluster-wide access). The
 *   Deployment is the construct's; `alm-examples` are the project's sample orders (constructs/app.ts).
 * - `manifests/*.crd.yaml`: the CRDs, owned by the CSV; the metrics Service and the PodDisruptionBudget.
 * - `metadata/annotations.yaml` and `bundle.Dockerfile`: the package `keystone-appcred`, channel `alpha`.
 *
 * Not in the bundle: the KeystoneClusterIdentity admission policy (a ValidatingAdmissionPolicy is no kind registry+v1
 * carries; apply it from deploy/crds.yaml) and the monitoring objects (prometheus-operator's kinds need its CRDs).
 */
import { Chart, Testing } from 'cdk8s';
import { stringify } from 'yaml';
import { defineProjectCharts } from '../constructs/app';
import { renderManifests } from '../src/cli/manifests';
import { objectsOf, type Manifest as Base } from './objects';

/** Where the bundle lives, its package and its channel. */
export const OLM_DIR = 'deploy/olm';
export const PACKAGE = 'keystone-appcred';
export const CHANNEL = 'alpha';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** An object of the bundle: its spec and rules as JSON. */
type Manifest = Base & { readonly spec?: { [key: string]: Json }; readonly rules?: Json[] };

/** A namespace to synthesize the namespaced access's Role in, to read its rules. */
const PROBE_NAMESPACE = 'kac-olm-rules';

/** A small icon for OperatorHub's tile: a key, in the project's own words (SVG). */
const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#1f4e79"/><circle cx="24" cy="32" r="10" fill="none" stroke="#fff" stroke-width="5"/><path d="M34 32h20v8M46 32v6" stroke="#fff" stroke-width="5" fill="none"/></svg>';

/** The objects the constructs synthesize for the bundle: the namespaced access's operator, its CRDs, the samples. */
function synthesized(image: string, version: string): { operator: Manifest[]; samples: Manifest[] } {
  const operator = objectsOf(renderManifests({ image, tag: version, secretGrants: { namespaces: [PROBE_NAMESPACE], sources: [] } })) as Manifest[];
  const { samples } = defineProjectCharts(Testing.app());
  return { operator, samples: (samples as Chart).toJson().filter((o: Manifest) => o.apiVersion.startsWith('c5c3.io/')) as Manifest[] };
}

const titled = (kind: string): string => kind.replace(/([a-z])([A-Z])/g, '$1 $2');

/** The CSV's `spec.description`: what the operator does, and where the rest of the install lives. */
function description(version: string): string {
  return [
    'keystone-appcred mints, rotates, delivers, backs up and tears down OpenStack Keystone application credentials, as the `c5c3.io/v1alpha1` KeystoneApplicationCredential kind defines them: each credential belongs to one user, is scoped to one project, carries a client-supplied secret and an expiry, and is replaced on a schedule with a grace period in which the old and the new one both work.',
    '',
    '**Install modes.** The operator reconciles orders in every namespace. OLM grants its Secret access in the namespaces of its OperatorGroup: AllNamespaces grants them everywhere; OwnNamespace, SingleNamespace and MultiNamespace only there (the namespaced Secret access): target the ControlPlanes\' namespaces and the namespaces they assign.',
    '',
    '**OpenBao.** Every credential is backed up to OpenBao: set `KAC_OPENBAO_ADDRESS` (and the auth) on the Subscription\'s `spec.config.env` for your OpenBao.',
    '',
    `**Not in this bundle.** The KeystoneClusterIdentity admission policy (apply it from the release's deploy/crds.yaml) and the monitoring objects (deploy/kustomize/components/monitoring). keystone-appcred ${version}.`,
  ].join('\n');
}

/** The ClusterServiceVersion. */
function csv(version: string, image: string, objects: readonly Manifest[], samples: readonly Manifest[]): Manifest {
  const of = (kind: string): Manifest[] => objects.filter((o) => o.kind === kind);
  const deployment = of('Deployment')[0];
  const serviceAccountName = String((deployment.spec?.template as { spec: { serviceAccountName: string } }).spec.serviceAccountName);
  const crds = of('CustomResourceDefinition');
  const rulesOf = (kind: string): Json[] => of(kind).flatMap((o) => o.rules ?? []);
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: `${PACKAGE}.v${version}`,
      namespace: 'placeholder',
      annotations: {
        'alm-examples': JSON.stringify(samples, null, 2),
        capabilities: 'Full Lifecycle',
        categories: 'Security',
        containerImage: `${image}:${version}`,
        description: 'Mints, rotates, delivers and backs up OpenStack Keystone application credentials',
        'olm.skipRange': `<${version}`,
      },
    } as Manifest['metadata'],
    spec: {
      displayName: 'keystone-appcred',
      description: description(version),
      version,
      minKubeVersion: '1.30.0',
      maturity: CHANNEL,
      provider: { name: 'keystone-appcred', url: 'https://github.com/c5c3/keystone-appcred' },
      links: [
        { name: 'Source', url: 'https://github.com/c5c3/keystone-appcred' },
        { name: 'Installing with OLM', url: 'https://github.com/c5c3/keystone-appcred/blob/main/docs/install/olm.md' },
      ],
      keywords: ['openstack', 'keystone', 'application credentials', 'rotation', 'openbao'],
      icon: [{ base64data: Buffer.from(ICON_SVG).toString('base64'), mediatype: 'image/svg+xml' }],
      installModes: ['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'].map((type) => ({ type, supported: true })),
      customresourcedefinitions: {
        owned: crds.map((crd) => {
          const spec = crd.spec as { names: { kind: string }; versions: { name: string; storage: boolean; schema?: { openAPIV3Schema?: { description?: string } } }[] };
          const stored = spec.versions.find((v) => v.storage) ?? spec.versions[0];
          return { name: crd.metadata.name, version: stored.name, kind: spec.names.kind, displayName: titled(spec.names.kind), description: stored.schema?.openAPIV3Schema?.description ?? titled(spec.names.kind) };
        }),
      },
      install: {
        strategy: 'deployment',
        spec: {
          clusterPermissions: [{ serviceAccountName, rules: rulesOf('ClusterRole') }],
          permissions: [{ serviceAccountName, rules: rulesOf('Role') }],
          deployments: [{ name: deployment.metadata.name, label: deployment.metadata.labels ?? {}, spec: deployment.spec as Json }],
        },
      },
      relatedImages: [{ name: 'operator', image: `${image}:${version}` }],
    },
  };
}

/** Every file of the bundle, by its path under the repository. */
export function bundleFiles(image: string, version: string, header: (what: string) => string): Map<string, string> {
  const { operator, samples } = synthesized(image, version);
  const files = new Map<string, string>();
  const put = (file: string, what: string, o: unknown): void => void files.set(`${OLM_DIR}/${file}`, header(what) + stringify(o, { lineWidth: 0 }));
  put(`manifests/${PACKAGE}.clusterserviceversion.yaml`, 'the ClusterServiceVersion: the operator, its RBAC and its CRDs for OLM', csv(version, image, operator, samples));
  for (const crd of operator.filter((o) => o.kind === 'CustomResourceDefinition')) put(`manifests/${crd.metadata.name}.crd.yaml`, `the CRD ${crd.metadata.name}`, crd);
  for (const kind of ['Service', 'PodDisruptionBudget']) {
    for (const o of operator.filter((x) => x.kind === kind)) {
      // OLM installs into the OperatorGroup's namespace.
      const metadata = Object.fromEntries(Object.entries(o.metadata).filter(([k]) => k !== 'namespace'));
      put(`manifests/${o.metadata.name}.${kind.toLowerCase()}.yaml`, `the ${kind} ${o.metadata.name}`, { ...o, metadata });
    }
  }
  const annotations = {
    'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
    'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
    'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
    'operators.operatorframework.io.bundle.package.v1': PACKAGE,
    'operators.operatorframework.io.bundle.channels.v1': CHANNEL,
    'operators.operatorframework.io.bundle.channel.default.v1': CHANNEL,
  };
  put('metadata/annotations.yaml', "the bundle's package and channel", { annotations });
  files.set(
    `${OLM_DIR}/bundle.Dockerfile`,
    `${header('the bundle image: docker build -f deploy/olm/bundle.Dockerfile deploy/olm')}FROM scratch\n${Object.entries(annotations)
      .map(([k, v]) => `LABEL ${k}=${v}`)
      .join('\n')}\nCOPY manifests /manifests/\nCOPY metadata /metadata/\n`,
  );
  return files;
}
