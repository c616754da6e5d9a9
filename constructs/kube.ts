/**
 * The Kubernetes objects the constructs emit: cdk8s core's `ApiObject`, with each kind's body typed here in the wire
 * form the API server reads (`openAPIV3Schema`, `x-kubernetes-validations`, a port by number or name), and each
 * kind's API version written once.
 *
 * Why not cdk8s-plus-33's generated `k8s` classes: the library would carry a third peer, a generated import of all of
 * Kubernetes, and the jsii package would need its bindings in every language (Maven Central and the Go module proxy
 * serve none at the versions used here, so the Java and Go builds compiled them from npm: most of the jsii build's
 * time, docs/install/cdk8s.md "Every cdk8s language"). The constructs write thirteen kinds and a few dozen of their
 * fields: those are typed here and nothing else. The manifests are the same bytes the generated classes wrote: cdk8s
 * sorts every object's keys, in the order the generated serializers wrote them (test/unit/constructs' snapshots).
 *
 * Internal: the public API exposes an emitted object as an `ApiObject` (its JSON patches, dependencies, metadata).
 */
import { ApiObject, type ApiObjectMetadata } from 'cdk8s';
import type { Construct } from 'constructs';
import type { JsonSchemaProps } from './schema';

/** Labels, annotations or a selector's `matchLabels`. */
export type StringMap = Readonly<Record<string, string>>;

/** A count or a percentage (`maxUnavailable`), or a port by number or name (`targetPort`, a probe's `port`). */
export type IntOrString = number | string;

/** `rbac.authorization.k8s.io/v1` PolicyRule. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

/** `rbac.authorization.k8s.io/v1` Subject. */
export interface Subject {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly apiGroup?: string;
}

/** `rbac.authorization.k8s.io/v1` RoleRef. */
export interface RoleRef {
  readonly apiGroup: 'rbac.authorization.k8s.io';
  readonly kind: 'Role' | 'ClusterRole';
  readonly name: string;
}

/** A selector by labels only (`metav1.LabelSelector` with `matchLabels`). */
export interface MatchLabels {
  readonly matchLabels: StringMap;
}

/** `core/v1` EnvVar: a value, or one of the sources the operator's container reads. */
export interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: {
    readonly fieldRef?: { readonly apiVersion: string; readonly fieldPath: string };
    readonly secretKeyRef?: { readonly name: string; readonly key: string };
    readonly resourceFieldRef?: { readonly containerName: string; readonly resource: string; readonly divisor?: string };
  };
}

/** `core/v1` Probe by HTTP GET. */
export interface Probe {
  readonly httpGet: { readonly path: string; readonly port: IntOrString };
  readonly initialDelaySeconds?: number;
  readonly periodSeconds?: number;
  readonly timeoutSeconds?: number;
  readonly failureThreshold?: number;
}

/** `core/v1` Volume: an emptyDir or a Secret. */
export interface Volume {
  readonly name: string;
  readonly emptyDir?: { readonly sizeLimit?: string };
  readonly secret?: { readonly secretName: string; readonly items?: readonly { readonly key: string; readonly path: string }[] };
}

/** `core/v1` VolumeMount. */
export interface VolumeMount {
  readonly name: string;
  readonly mountPath: string;
  readonly readOnly?: boolean;
}

/** `core/v1` SeccompProfile. */
interface SeccompProfile {
  readonly type: 'RuntimeDefault';
}

/** `core/v1` Container, the fields the operator's container sets. */
export interface Container {
  readonly name: string;
  readonly image: string;
  readonly imagePullPolicy?: string;
  readonly command?: readonly string[];
  readonly env?: readonly EnvVar[];
  readonly ports?: readonly { readonly name: string; readonly containerPort: number; readonly protocol: 'TCP' }[];
  readonly terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError';
  readonly livenessProbe?: Probe;
  readonly readinessProbe?: Probe;
  /** CPU and memory quantities (`100m`, `256Mi`). */
  readonly resources?: { readonly requests?: StringMap; readonly limits?: StringMap };
  readonly securityContext?: {
    readonly runAsNonRoot?: boolean;
    readonly allowPrivilegeEscalation?: boolean;
    readonly readOnlyRootFilesystem?: boolean;
    readonly capabilities?: { readonly drop: readonly string[] };
    readonly seccompProfile?: SeccompProfile;
  };
  readonly volumeMounts?: readonly VolumeMount[];
}

/** `core/v1` PodSpec, the fields the operator's pod sets. */
export interface PodSpec {
  readonly serviceAccountName?: string;
  readonly automountServiceAccountToken?: boolean;
  readonly terminationGracePeriodSeconds?: number;
  readonly securityContext?: { readonly runAsNonRoot?: boolean; readonly runAsUser?: number; readonly runAsGroup?: number; readonly seccompProfile?: SeccompProfile };
  readonly affinity?: {
    readonly podAntiAffinity?: {
      readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly { readonly weight: number; readonly podAffinityTerm: { readonly topologyKey: string; readonly labelSelector: MatchLabels } }[];
    };
  };
  readonly containers: readonly Container[];
  readonly volumes?: readonly Volume[];
}

/** `apiextensions.k8s.io/v1` CustomResourceDefinitionSpec, one version. */
export interface CustomResourceDefinitionSpec {
  readonly group: string;
  readonly scope: 'Namespaced' | 'Cluster';
  readonly names: {
    readonly kind: string;
    readonly listKind: string;
    readonly plural: string;
    readonly singular: string;
    readonly shortNames?: readonly string[];
    readonly categories?: readonly string[];
  };
  readonly versions: readonly {
    readonly name: string;
    readonly served: boolean;
    readonly storage: boolean;
    readonly subresources?: { readonly status?: Readonly<Record<string, never>> };
    readonly additionalPrinterColumns?: readonly { readonly name: string; readonly type: string; readonly jsonPath: string; readonly description?: string; readonly priority?: number }[];
    readonly schema: { readonly openAPIV3Schema: JsonSchemaProps };
  }[];
}

/** `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicySpec, the fields the cluster identity's policy sets. */
export interface ValidatingAdmissionPolicySpec {
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly matchConstraints: {
    readonly resourceRules: readonly {
      readonly apiGroups: readonly string[];
      readonly apiVersions: readonly string[];
      readonly operations: readonly string[];
      readonly resources: readonly string[];
      readonly scope?: string;
    }[];
  };
  readonly variables?: readonly { readonly name: string; readonly expression: string }[];
  readonly validations: readonly { readonly expression: string; readonly message?: string; readonly messageExpression?: string; readonly reason?: string }[];
}

/** The body of each kind the constructs emit, beside its `metadata`. */
interface Bodies {
  readonly Namespace: object;
  readonly ServiceAccount: object;
  readonly ConfigMap: { readonly data: StringMap };
  readonly Service: {
    readonly spec: {
      readonly type: 'ClusterIP';
      readonly selector: StringMap;
      readonly ports: readonly { readonly name: string; readonly port: number; readonly targetPort: IntOrString; readonly protocol: 'TCP' }[];
    };
  };
  readonly ClusterRole: { readonly rules: readonly PolicyRule[] };
  readonly Role: { readonly rules: readonly PolicyRule[] };
  readonly ClusterRoleBinding: { readonly roleRef: RoleRef; readonly subjects: readonly Subject[] };
  readonly RoleBinding: { readonly roleRef: RoleRef; readonly subjects: readonly Subject[] };
  readonly Deployment: {
    readonly spec: {
      readonly replicas?: number;
      readonly selector: MatchLabels;
      readonly strategy?: { readonly type: 'RollingUpdate'; readonly rollingUpdate?: { readonly maxSurge?: IntOrString; readonly maxUnavailable?: IntOrString } };
      readonly template: { readonly metadata?: { readonly labels?: StringMap }; readonly spec: PodSpec };
    };
  };
  readonly PodDisruptionBudget: { readonly spec: { readonly maxUnavailable?: IntOrString; readonly selector: MatchLabels } };
  readonly CustomResourceDefinition: { readonly spec: CustomResourceDefinitionSpec };
  readonly ValidatingAdmissionPolicy: { readonly spec: ValidatingAdmissionPolicySpec };
  readonly ValidatingAdmissionPolicyBinding: { readonly spec: { readonly policyName: string; readonly validationActions: readonly ('Deny' | 'Warn' | 'Audit')[] } };
}

/** A kind the constructs emit. */
export type KubeKind = keyof Bodies;

/** The API version of each kind. */
const API_VERSIONS: { readonly [kind in KubeKind]: string } = {
  Namespace: 'v1',
  ServiceAccount: 'v1',
  ConfigMap: 'v1',
  Service: 'v1',
  ClusterRole: 'rbac.authorization.k8s.io/v1',
  Role: 'rbac.authorization.k8s.io/v1',
  ClusterRoleBinding: 'rbac.authorization.k8s.io/v1',
  RoleBinding: 'rbac.authorization.k8s.io/v1',
  Deployment: 'apps/v1',
  PodDisruptionBudget: 'policy/v1',
  CustomResourceDefinition: 'apiextensions.k8s.io/v1',
  ValidatingAdmissionPolicy: 'admissionregistration.k8s.io/v1',
  ValidatingAdmissionPolicyBinding: 'admissionregistration.k8s.io/v1',
};

/** Emits an object of `kind` under `scope` as `id`: its API version, its metadata (cdk8s fills in the chart's), its body. */
export function kubeObject<K extends KubeKind>(scope: Construct, id: string, kind: K, object: { readonly metadata: ApiObjectMetadata } & Bodies[K]): ApiObject {
  return new ApiObject(scope, id, { apiVersion: API_VERSIONS[kind], kind, ...object });
}
