// Command pulumi-resource-kubernetes serves the Pulumi Kubernetes provider. The schema and the Terraform
// mapping are copies of the provider module's schema.json and terraform-mapping.json with the version set,
// written next to this file by test/support/build-test-binaries.sh (they are not committed).
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var schema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, schema, terraformMapping)
}
