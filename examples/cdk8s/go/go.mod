// The Go example's module. keystone-appcred-cdk8s is not published yet, and the Go module proxy does not serve the cdk8s
// Go module: both are replaced with the modules jsii-pacmak builds from the npm packages (`npm run jsii` writes them to
// lib/jsii/go/; README.md beside this file). constructs-go and jsii-runtime-go come from the module proxy.
module keystone-appcred/examples/cdk8s/go

go 1.25.0

require (
	github.com/aws/constructs-go/constructs/v10 v10.8.1
	github.com/aws/jsii-runtime-go v1.140.0
	github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2 v2.70.106
	keystone-appcred/cdk8s-go/keystoneappcredcdk8s v0.3.0
)

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/fatih/color v1.19.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/yuin/goldmark v1.7.16 // indirect
	golang.org/x/lint v0.0.0-20241112194109-818c5a804067 // indirect
	golang.org/x/mod v0.39.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/telemetry v0.0.0-20260811182544-a038080d80e5 // indirect
	golang.org/x/tools v0.49.0 // indirect
	golang.org/x/tools/cmd/godoc v0.1.0-deprecated // indirect
	golang.org/x/tools/godoc v0.1.0-deprecated // indirect
)

replace (
	github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2 => ../../../lib/jsii/go/cdk8s
	keystone-appcred/cdk8s-go/keystoneappcredcdk8s => ../../../lib/jsii/go/keystoneappcredcdk8s
)
