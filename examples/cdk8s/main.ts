/**
 * A cdk8s app using the library, in two charts: the platform team's (`platform`: the CRDs, the operator granted Secrets
 * per namespace, and a ControlPlane that assigns the `billing` namespace) and a service owner's (`billing`: the billing
 * team orders a Keystone project, a user, the `member` role and an application credential rotated weekly, and runs a
 * Deployment that reads the delivered `clouds.yaml`).
 *
 * It imports the library by the package name, as your own project does after
 * `npm install keystone-appcred cdk8s constructs` (inside this repository the name resolves to the sources through
 * tsconfig.json's `paths`). The namespaces and the billing team's Deployment are cdk8s core's `ApiObject`s; an app
 * that uses cdk8s-plus may write them with its classes instead. The same app in Python, Go and Java is in `python/`,
 * `go/` and `java/` beside this file, on the jsii package `keystone-appcred-cdk8s`; each writes these manifests byte
 * for byte.
 *
 * Run: `npx -p cdk8s-cli cdk8s synth` in this directory (cdk8s.yaml; writes dist/), or `npx tsx examples/cdk8s/main.ts`
 * from the repository root (writes dist/example/).
 */
import { ApiObject, App, Chart, type ChartProps } from 'cdk8s';
import type { Construct } from 'constructs';
import { ControlPlane, Crds, Duration, EndpointType, OpenBaoAuth, Operator, SecretAccess, ServiceOwner } from 'keystone-appcred/cdk8s';

/** The platform team's chart: CRDs, operator, and the ControlPlane that assigns `billing`. */
export class PlatformChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new Crds(this, 'Crds');
    new Operator(this, 'Operator', {
      image: 'registry.example/keystone-appcred',
      tag: '0.3.0',
      openBao: { address: 'https://openbao.openbao.svc:8200', auth: OpenBaoAuth.kubernetes({ role: 'keystone-appcred-operator' }) },
      secretAccess: SecretAccess.NAMESPACED,
    });
    for (const name of ['openstack', 'billing']) new ApiObject(this, `Namespace-${name}`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    new ControlPlane(this, 'ControlPlane', {
      metadata: { name: 'cp', namespace: 'openstack' },
      keystone: { authURL: 'https://keystone.openstack.svc:5000/v3', endpointType: EndpointType.INTERNAL },
      adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } },
      namespaceAssignments: [{ namespace: 'billing', allowedRoles: ['member'] }],
    });
  }
}

/** Props of {@link BillingChart}. */
export interface BillingChartProps extends ChartProps {
  /** The image of the billing service. @default "registry.example/billing:1.4.2" */
  readonly image?: string;
}

/** The billing team's chart. */
export class BillingChart extends Chart {
  public constructor(scope: Construct, id: string, props: BillingChartProps = {}) {
    super(scope, id, { namespace: 'billing', ...props });
    const owner = new ServiceOwner(this, 'Owner', {
      namespace: 'billing',
      controlPlaneRef: { name: 'cp', namespace: 'openstack' },
      name: 'billing',
      role: 'member',
      rotation: { interval: Duration.parse('168h'), gracePeriod: '12h' },
    });

    new ApiObject(this, 'Billing', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'billing' },
      spec: {
        selector: { matchLabels: { app: 'billing' } },
        template: {
          metadata: { labels: { app: 'billing' } },
          spec: {
            containers: [
              {
                name: 'billing',
                image: props.image ?? 'registry.example/billing:1.4.2',
                // openstacksdk and the OpenStack CLI read clouds.yaml from /etc/openstack.
                env: [{ name: 'OS_CLOUD', value: 'openstack' }],
                volumeMounts: [{ name: 'openstack', mountPath: '/etc/openstack', readOnly: true }],
              },
            ],
            // The Secret is rewritten at each rotation; a mounted volume picks the successor up within the grace period.
            volumes: [{ name: 'openstack', secret: { secretName: owner.applicationCredential.secretName, items: [{ key: 'clouds.yaml', path: 'clouds.yaml' }] } }],
          },
        },
      },
    });
  }
}

if (require.main === module) {
  // `cdk8s synth` says where to write in CDK8S_OUTDIR.
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'dist/example' });
  new PlatformChart(app, 'platform');
  new BillingChart(app, 'billing');
  app.synth();
}
