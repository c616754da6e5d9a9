/**
 * The package root, `keystone-appcred`: the `c5c3.io/v1alpha1` API (the kinds' types, defaults, Go-format durations,
 * the CRD rules and their TypeScript twins, validation, the names the spec fixes) and the lifecycle engine (`decide`,
 * `reconcile` and the ports it drives), and the operator's alerts and dashboard (`alertRules`, `grafanaDashboard`).
 *
 * It loads no optional peer dependency: neither `@pulumi/*` nor `cdk8s`/`constructs`. Each face has its own entry:
 * `keystone-appcred/pulumi` (the Pulumi resource), `keystone-appcred/pulumi/kubernetes` (delivery to a Kubernetes
 * Secret from Pulumi; needs `@pulumi/kubernetes`) and `keystone-appcred/cdk8s` (the construct library).
 */
export * from './api';
export * from './lifecycle';
export * from './observability';
