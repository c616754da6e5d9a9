/**
 * The `keystone-appcred` Pulumi provider plugin: its package schema and its provider (served by `main.ts`).
 */
export * from './provider';
export * from './schema';
