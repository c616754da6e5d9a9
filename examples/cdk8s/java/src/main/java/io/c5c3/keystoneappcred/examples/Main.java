/*
 * The example app of examples/cdk8s/main.ts in Java, on the jsii package keystone-appcred-cdk8s (its Maven artifact
 * io.c5c3:keystone-appcred-cdk8s).
 *
 * Two charts: the platform team's (the CRDs, the operator granted Secrets per namespace, a ControlPlane that assigns the
 * `billing` namespace) and the billing team's (a ServiceOwner with a weekly rotation, and a Deployment that mounts the
 * delivered clouds.yaml). `cdk8s synth` in this directory runs it (cdk8s.yaml) and writes the same manifests, byte for
 * byte, as the TypeScript app.
 */
package io.c5c3.keystoneappcred.examples;

import io.c5c3.keystoneappcred.cdk8s.AdminCredentialProps;
import io.c5c3.keystoneappcred.cdk8s.CloudCredentialsRefProps;
import io.c5c3.keystoneappcred.cdk8s.ControlPlane;
import io.c5c3.keystoneappcred.cdk8s.ControlPlaneProps;
import io.c5c3.keystoneappcred.cdk8s.ControlPlaneReference;
import io.c5c3.keystoneappcred.cdk8s.Crds;
import io.c5c3.keystoneappcred.cdk8s.Duration;
import io.c5c3.keystoneappcred.cdk8s.EndpointType;
import io.c5c3.keystoneappcred.cdk8s.ExternalKeystoneProps;
import io.c5c3.keystoneappcred.cdk8s.NamespaceAssignmentProps;
import io.c5c3.keystoneappcred.cdk8s.OpenBaoAuth;
import io.c5c3.keystoneappcred.cdk8s.OpenBaoKubernetesAuthOptions;
import io.c5c3.keystoneappcred.cdk8s.OpenBaoSettings;
import io.c5c3.keystoneappcred.cdk8s.Operator;
import io.c5c3.keystoneappcred.cdk8s.OperatorProps;
import io.c5c3.keystoneappcred.cdk8s.RotationProps;
import io.c5c3.keystoneappcred.cdk8s.SecretAccess;
import io.c5c3.keystoneappcred.cdk8s.ServiceOwner;
import io.c5c3.keystoneappcred.cdk8s.ServiceOwnerProps;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.cdk8s.ApiObject;
import org.cdk8s.ApiObjectMetadata;
import org.cdk8s.ApiObjectProps;
import org.cdk8s.App;
import org.cdk8s.Chart;
import org.cdk8s.ChartProps;
import org.cdk8s.JsonPatch;
import software.constructs.Construct;

public final class Main {
    /** The platform team's chart: CRDs, operator, and the ControlPlane that assigns `billing`. */
    public static final class PlatformChart extends Chart {
        public PlatformChart(final Construct scope, final String id) {
            super(scope, id);
            new Crds(this, "Crds");
            new Operator(this, "Operator", OperatorProps.builder()
                    .image("registry.example/keystone-appcred")
                    .tag("0.3.0")
                    .openBao(OpenBaoSettings.builder()
                            .address("https://openbao.openbao.svc:8200")
                            .auth(OpenBaoAuth.kubernetes(OpenBaoKubernetesAuthOptions.builder().role("keystone-appcred-operator").build()))
                            .build())
                    .secretAccess(SecretAccess.NAMESPACED)
                    .build());
            for (String name : List.of("openstack", "billing")) {
                new ApiObject(this, "Namespace-" + name, ApiObjectProps.builder().apiVersion("v1").kind("Namespace").metadata(ApiObjectMetadata.builder().name(name).build()).build());
            }
            new ControlPlane(this, "ControlPlane", ControlPlaneProps.builder()
                    .metadata(ApiObjectMetadata.builder().name("cp").namespace("openstack").build())
                    .keystone(ExternalKeystoneProps.builder().authUrl("https://keystone.openstack.svc:5000/v3").endpointType(EndpointType.INTERNAL).build())
                    .adminCredential(AdminCredentialProps.builder().cloudCredentialsRef(CloudCredentialsRefProps.builder().secretName("keystone-admin").build()).build())
                    .namespaceAssignments(List.of(NamespaceAssignmentProps.builder().namespace("billing").allowedRoles(List.of("member")).build()))
                    .build());
        }
    }

    /** The billing team's chart. */
    public static final class BillingChart extends Chart {
        public BillingChart(final Construct scope, final String id, final String image) {
            super(scope, id, ChartProps.builder().namespace("billing").build());
            ServiceOwner owner = new ServiceOwner(this, "Owner", ServiceOwnerProps.builder()
                    .namespace("billing")
                    .controlPlaneRef(ControlPlaneReference.builder().name("cp").namespace("openstack").build())
                    .name("billing")
                    .role("member")
                    .rotation(RotationProps.builder().interval(Duration.parse("168h")).gracePeriod("12h").build())
                    .build());
            // A Deployment of the team's own, as cdk8s core writes any object: an ApiObject and its spec as a JSON patch.
            ApiObject deployment = new ApiObject(this, "Billing", ApiObjectProps.builder()
                    .apiVersion("apps/v1")
                    .kind("Deployment")
                    .metadata(ApiObjectMetadata.builder().name("billing").build())
                    .build());
            Map<String, Object> labels = json("app", "billing");
            deployment.addJsonPatch(JsonPatch.add("/spec", json(
                    "selector", json("matchLabels", labels),
                    "template", json(
                            "metadata", json("labels", labels),
                            "spec", json(
                                    "containers", List.of(json(
                                            "name", "billing",
                                            "image", image,
                                            // openstacksdk and the OpenStack CLI read clouds.yaml from /etc/openstack.
                                            "env", List.of(json("name", "OS_CLOUD", "value", "openstack")),
                                            "volumeMounts", List.of(json("name", "openstack", "mountPath", "/etc/openstack", "readOnly", true)))),
                                    // The Secret is rewritten at each rotation; a mounted volume picks the successor up within the grace period.
                                    "volumes", List.of(json(
                                            "name", "openstack",
                                            "secret", json(
                                                    "secretName", owner.getApplicationCredential().getSecretName(),
                                                    "items", List.of(json("key", "clouds.yaml", "path", "clouds.yaml"))))))))));
        }
    }

    /**
     * A JSON object from keys and values, its keys sorted: cdk8s sorts the keys of what an ApiObject is given but writes
     * a patch as given, and the app's manifests are the TypeScript app's byte for byte.
     */
    static Map<String, Object> json(final Object... keysAndValues) {
        Map<String, Object> object = new TreeMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            object.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return object;
    }

    public static void main(final String[] args) {
        // `cdk8s synth` says where to write in CDK8S_OUTDIR, which App reads.
        App app = new App();
        new PlatformChart(app, "platform");
        new BillingChart(app, "billing", "registry.example/billing:1.4.2");
        app.synth();
    }
}
