/**
 * A service owner's own cdk8s app using the library: the billing team orders a Keystone project, a user, the `member`
 * role and an application credential rotated weekly in the namespace its ControlPlane assigned (`billing`), and runs a
 * Deployment that reads the delivered `clouds.yaml`.
 *
 * It imports the library by the package name, as your own project does after
 * `npm install keystone-appcred cdk8s constructs cdk8s-plus-33` (inside this repository the name resolves to the
 * sources through tsconfig.json's `paths`).
 *
 * Run: `npx -p cdk8s-cli cdk8s synth` in this directory (cdk8s.yaml; writes dist/), or `npx tsx examples/cdk8s/main.ts`
 * from the repository root (writes dist/example/).
 */
import { App, Chart, type ChartProps } from 'cdk8s';
import { k8s } from 'cdk8s-plus-33';
import type { Construct } from 'constructs';
import { Duration, ServiceOwner } from 'keystone-appcred/cdk8s';

/** Props of {@link BillingChart}. */
export interface BillingChartProps extends ChartProps {
  /** The image of the billing service. @default "registry.example/billing:1.4.2" */
  readonly image?: string;
}

/** The billing team's chart. */
export class BillingChart extends Chart {
  constructor(scope: Construct, id: string, props: BillingChartProps = {}) {
    super(scope, id, { namespace: 'billing', ...props });
    const owner = new ServiceOwner(this, 'Owner', {
      namespace: 'billing',
      controlPlaneRef: { name: 'cp', namespace: 'openstack' },
      name: 'billing',
      role: 'member',
      rotation: { interval: Duration.parse('168h'), gracePeriod: '12h' },
    });

    new k8s.KubeDeployment(this, 'Billing', {
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
  new BillingChart(app, 'billing');
  app.synth();
}
