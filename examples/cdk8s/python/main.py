#!/usr/bin/env python3
"""The example app of examples/cdk8s/main.ts in Python, on the jsii package keystone-appcred-cdk8s.

Two charts: the platform team's (the CRDs, the operator granted Secrets per namespace, a ControlPlane that assigns the
`billing` namespace) and the billing team's (a ServiceOwner with a weekly rotation, and a Deployment that mounts the
delivered clouds.yaml). `cdk8s synth` in this directory runs it (cdk8s.yaml) and writes the same manifests, byte for
byte, as the TypeScript app.
"""
from cdk8s import ApiObject, ApiObjectMetadata, App, Chart, JsonPatch
from constructs import Construct
from keystone_appcred_cdk8s import (
    AdminCredentialProps,
    CloudCredentialsRefProps,
    ControlPlane,
    ControlPlaneReference,
    Crds,
    Duration,
    EndpointType,
    ExternalKeystoneProps,
    NamespaceAssignmentProps,
    OpenBaoAuth,
    OpenBaoSettings,
    Operator,
    RotationProps,
    SecretAccess,
    ServiceOwner,
)


class PlatformChart(Chart):
    """The platform team's chart: CRDs, operator, and the ControlPlane that assigns `billing`."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        Crds(self, "Crds")
        Operator(
            self,
            "Operator",
            image="registry.example/keystone-appcred",
            tag="0.3.0",
            open_bao=OpenBaoSettings(
                address="https://openbao.openbao.svc:8200",
                auth=OpenBaoAuth.kubernetes(role="keystone-appcred-operator"),
            ),
            secret_access=SecretAccess.NAMESPACED,
        )
        for name in ["openstack", "billing"]:
            ApiObject(self, f"Namespace-{name}", api_version="v1", kind="Namespace", metadata=ApiObjectMetadata(name=name))
        ControlPlane(
            self,
            "ControlPlane",
            metadata=ApiObjectMetadata(name="cp", namespace="openstack"),
            keystone=ExternalKeystoneProps(auth_url="https://keystone.openstack.svc:5000/v3", endpoint_type=EndpointType.INTERNAL),
            admin_credential=AdminCredentialProps(cloud_credentials_ref=CloudCredentialsRefProps(secret_name="keystone-admin")),
            namespace_assignments=[NamespaceAssignmentProps(namespace="billing", allowed_roles=["member"])],
        )


class BillingChart(Chart):
    """The billing team's chart."""

    def __init__(self, scope: Construct, id: str, image: str = "registry.example/billing:1.4.2") -> None:
        super().__init__(scope, id, namespace="billing")
        owner = ServiceOwner(
            self,
            "Owner",
            namespace="billing",
            control_plane_ref=ControlPlaneReference(name="cp", namespace="openstack"),
            name="billing",
            role="member",
            rotation=RotationProps(interval=Duration.parse("168h"), grace_period="12h"),
        )
        # A Deployment of the team's own, as cdk8s core writes any object: an ApiObject and its spec as a JSON patch. cdk8s
        # sorts the keys of what an ApiObject is given, not of a patch, so the keys are written in sorted order here: the
        # same manifest as the TypeScript app's, byte for byte.
        deployment = ApiObject(self, "Billing", api_version="apps/v1", kind="Deployment", metadata=ApiObjectMetadata(name="billing"))
        deployment.add_json_patch(
            JsonPatch.add(
                "/spec",
                {
                    "selector": {"matchLabels": {"app": "billing"}},
                    "template": {
                        "metadata": {"labels": {"app": "billing"}},
                        "spec": {
                            "containers": [
                                {
                                    # openstacksdk and the OpenStack CLI read clouds.yaml from /etc/openstack.
                                    "env": [{"name": "OS_CLOUD", "value": "openstack"}],
                                    "image": image,
                                    "name": "billing",
                                    "volumeMounts": [{"mountPath": "/etc/openstack", "name": "openstack", "readOnly": True}],
                                }
                            ],
                            # The Secret is rewritten at each rotation; a mounted volume picks the successor up within the grace period.
                            "volumes": [
                                {
                                    "name": "openstack",
                                    "secret": {
                                        "items": [{"key": "clouds.yaml", "path": "clouds.yaml"}],
                                        "secretName": owner.application_credential.secret_name,
                                    },
                                }
                            ],
                        },
                    },
                },
            )
        )

if __name__ == "__main__":
    # `cdk8s synth` says where to write in CDK8S_OUTDIR, which App reads.
    app = App()
    PlatformChart(app, "platform")
    BillingChart(app, "billing")
    app.synth()
