/**
 * `keystone-appcred/pulumi`: the Pulumi face, the `KeystoneApplicationCredential` dynamic resource and its connection
 * settings. Needs `@pulumi/pulumi`; delivery to a Kubernetes Secret is in `keystone-appcred/pulumi/kubernetes`.
 */
export * from './connection';
export * from './resource';
export type { ProviderInputs, ProviderOutputs, RotationSettings, StatusOutputs } from './state';
export type { BackupSettings, ConnectionSettings } from './settings';
