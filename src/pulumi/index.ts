export * from './connection';
export * from './resource';
export type { BackupSettings, ProviderInputs, ProviderOutputs, RotationSettings, StatusOutputs } from './state';
