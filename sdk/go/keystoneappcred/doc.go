// OpenStack Keystone application credentials minted, rotated on schedule with a grace period, and swept on `pulumi up`, by the lifecycle engine of keystone-appcred.
package keystoneappcred
