/**
 * The package entry: the Pulumi face (`KeystoneApplicationCredential`). The lifecycle, the Keystone client and the API
 * types are importable from their folders (`keystone-appcred/lib/src/<folder>`).
 */
export * from './pulumi';
