// The example app of examples/cdk8s/main.ts in Go, on the jsii package keystone-appcred-cdk8s (its Go module).
//
// Two charts: the platform team's (the CRDs, the operator granted Secrets per namespace, a ControlPlane that assigns the
// `billing` namespace) and the billing team's (a ServiceOwner with a weekly rotation, and a Deployment that mounts the
// delivered clouds.yaml). `cdk8s synth` in this directory runs it (cdk8s.yaml) and writes the same manifests, byte for
// byte, as the TypeScript app.
package main

import (
	"fmt"

	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2"
	kac "keystone-appcred/cdk8s-go/keystoneappcredcdk8s"
)

// NewPlatformChart is the platform team's chart: CRDs, operator, and the ControlPlane that assigns `billing`.
func NewPlatformChart(scope constructs.Construct, id string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), nil)
	kac.NewCrds(chart, jsii.String("Crds"), nil)
	kac.NewOperator(chart, jsii.String("Operator"), &kac.OperatorProps{
		Image: jsii.String("registry.example/keystone-appcred"),
		Tag:   jsii.String("0.3.0"),
		OpenBao: &kac.OpenBaoSettings{
			Address: jsii.String("https://openbao.openbao.svc:8200"),
			Auth:    kac.OpenBaoAuth_Kubernetes(&kac.OpenBaoKubernetesAuthOptions{Role: jsii.String("keystone-appcred-operator")}),
		},
		SecretAccess: kac.SecretAccess_NAMESPACED,
	})
	for _, name := range []string{"openstack", "billing"} {
		cdk8s.NewApiObject(chart, jsii.String(fmt.Sprintf("Namespace-%s", name)), &cdk8s.ApiObjectProps{
			ApiVersion: jsii.String("v1"),
			Kind:       jsii.String("Namespace"),
			Metadata:   &cdk8s.ApiObjectMetadata{Name: jsii.String(name)},
		})
	}
	kac.NewControlPlane(chart, jsii.String("ControlPlane"), &kac.ControlPlaneProps{
		Metadata:        &cdk8s.ApiObjectMetadata{Name: jsii.String("cp"), Namespace: jsii.String("openstack")},
		Keystone:        &kac.ExternalKeystoneProps{AuthURL: jsii.String("https://keystone.openstack.svc:5000/v3"), EndpointType: kac.EndpointType_INTERNAL},
		AdminCredential: &kac.AdminCredentialProps{CloudCredentialsRef: &kac.CloudCredentialsRefProps{SecretName: jsii.String("keystone-admin")}},
		NamespaceAssignments: &[]*kac.NamespaceAssignmentProps{
			{Namespace: jsii.String("billing"), AllowedRoles: jsii.Strings("member")},
		},
	})
	return chart
}

// NewBillingChart is the billing team's chart.
func NewBillingChart(scope constructs.Construct, id string, image string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), &cdk8s.ChartProps{Namespace: jsii.String("billing")})
	owner := kac.NewServiceOwner(chart, jsii.String("Owner"), &kac.ServiceOwnerProps{
		Namespace:       jsii.String("billing"),
		ControlPlaneRef: &kac.ControlPlaneReference{Name: jsii.String("cp"), Namespace: jsii.String("openstack")},
		Name:            jsii.String("billing"),
		Role:            jsii.String("member"),
		Rotation:        &kac.RotationProps{Interval: kac.Duration_Parse(jsii.String("168h")), GracePeriod: jsii.String("12h")},
	})
	// A Deployment of the team's own, as cdk8s core writes any object: an ApiObject and its spec as a JSON patch (the
	// jsii runtime sends a map with its keys sorted, as cdk8s writes what an ApiObject is given).
	deployment := cdk8s.NewApiObject(chart, jsii.String("Billing"), &cdk8s.ApiObjectProps{
		ApiVersion: jsii.String("apps/v1"),
		Kind:       jsii.String("Deployment"),
		Metadata:   &cdk8s.ApiObjectMetadata{Name: jsii.String("billing")},
	})
	labels := map[string]any{"app": "billing"}
	deployment.AddJsonPatch(cdk8s.JsonPatch_Add(jsii.String("/spec"), map[string]any{
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{
			"metadata": map[string]any{"labels": labels},
			"spec": map[string]any{
				"containers": []any{map[string]any{
					"name":  "billing",
					"image": image,
					// openstacksdk and the OpenStack CLI read clouds.yaml from /etc/openstack.
					"env":          []any{map[string]any{"name": "OS_CLOUD", "value": "openstack"}},
					"volumeMounts": []any{map[string]any{"name": "openstack", "mountPath": "/etc/openstack", "readOnly": true}},
				}},
				// The Secret is rewritten at each rotation; a mounted volume picks the successor up within the grace period.
				"volumes": []any{map[string]any{
					"name": "openstack",
					"secret": map[string]any{
						"secretName": *owner.ApplicationCredential().SecretName(),
						"items":      []any{map[string]any{"key": "clouds.yaml", "path": "clouds.yaml"}},
					},
				}},
			},
		},
	}))
	return chart
}

func main() {
	// `cdk8s synth` says where to write in CDK8S_OUTDIR, which App reads.
	app := cdk8s.NewApp(nil)
	NewPlatformChart(app, "platform")
	NewBillingChart(app, "billing", "registry.example/billing:1.4.2")
	app.Synth()
}
