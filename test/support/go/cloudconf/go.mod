// Wrapper module: cloudconf, a cloud.conf reader with the OpenStack cloud controller manager's parser (gcfg) and client
// library (gophercloud v2), for test/e2e/secret-delivery.test.ts.
module keystone-appcred/test/support/go/cloudconf

go 1.25.0

require (
	github.com/gophercloud/gophercloud/v2 v2.16.0
	gopkg.in/gcfg.v1 v1.2.3
)

require gopkg.in/warnings.v0 v0.1.2 // indirect
