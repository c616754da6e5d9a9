/**
 * `keystone-appcred/cdk8s`, and the jsii library `keystone-appcred-cdk8s` for Python, Go, Java and .NET: the public API
 * of the construct library, one list. Everything here is jsii's: classes, props interfaces of readonly fields, enums
 * with ALL_CAPS members, unions as classes with static factories. The building blocks behind it (the CRD schemas and
 * their rules, the RBAC tables, the Secret access registry) are internal: import them from their modules inside this
 * repository, never from the package.
 */
export { ClusterIdentityAdmission, type ClusterIdentityAdmissionProps } from './cluster-identity-admission';
export { CustomResourceDefinition, Kind, type CustomResourceDefinitionProps } from './crd';
export { Crds, type CrdsProps } from './crds';
export { Duration } from './duration';
export type { LabelSelector, LabelSelectorRequirement } from './label-selector';
export { AlertRules, Dashboard, MonitorKind, OperatorMonitor, type AlertRulesProps, type DashboardProps, type OperatorMonitorProps } from './monitoring';
export { Operator } from './operator/operator';
export {
  ImagePullPolicy,
  KeystonePacing,
  LogLevel,
  OpenBaoAuth,
  type OpenBaoKubernetesAuthOptions,
  type OpenBaoSettings,
  type OpenBaoTokenAuthOptions,
  type OperatorProps,
  type ResourceAmounts,
} from './operator/props';
export type { JustifiedRule } from './operator-rbac';
export {
  ControlPlane,
  EndpointType,
  type AdminCredentialProps,
  type CloudCredentialsRefProps,
  type ControlPlaneProps,
  type ExternalKeystoneProps,
  type NamespaceAssignmentProps,
  type SecretKeyReference,
  type TargetClusterReference,
} from './orders/control-plane';
export {
  AccessRuleMethod,
  DeletionPolicy,
  KeystoneApplicationCredential,
  SecretFormat,
  type AccessRule,
  type AdoptProps,
  type AdoptSecretReference,
  type KeystoneApplicationCredentialProps,
  type RotationProps,
  type SecretTemplateProps,
} from './orders/keystone-application-credential';
export {
  KeystoneClusterIdentity,
  type AllowedNamespaces,
  type ClusterIdentityReference,
  type KeystoneClusterIdentityProps,
  type SecretReference,
} from './orders/keystone-cluster-identity';
export { KeystoneProject, type KeystoneProjectProps } from './orders/keystone-project';
export { KeystoneRoleAssignment, type KeystoneRoleAssignmentProps } from './orders/keystone-role-assignment';
export { KeystoneUser, type KeystoneUserProps } from './orders/keystone-user';
export type { ControlPlaneReference, OrderProps, OrderReference } from './orders/order';
export { ServiceOwner, type ServiceOwnerProps } from './orders/service-owner';
export { SecretAccess } from './secret-access';
export { TargetCluster, TargetClusterSubject, type TargetClusterProps } from './target-cluster';
export type { AlertParameters } from '../src/observability/alert-parameters';
