/** The typed KeystoneClusterIdentity (issue 11, terraformclusteridentity.md): cluster-scoped, validated at synth. */
import { JsonPatch, type ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { ClusterIdentityKind, type KeystoneClusterIdentitySpec } from '../../src/api/cluster-identity';
import { validateClusterIdentity } from '../../src/api/cluster-identity-rules';
import type { LabelSelector as SelectorSpec, LabelSelectorOperator } from '../../src/api/label-selector';
import { violation } from '../../src/api/field-rules';
import type { LabelSelector } from '../label-selector';
import { SecretAccessRegistry } from '../secret-access';
import { defined, emitOrder, type OrderProps } from './order';

/** A Secret, by name and namespace. */
export interface SecretReference {
  /** The Secret's name: a DNS subdomain of at most 253 characters. */
  readonly name: string;
  /** The Secret's namespace: a DNS label. Required: never defaulted. */
  readonly namespace: string;
}

/**
 * Which namespaces' ControlPlanes may use an identity: those in `list` and those whose labels match `selector`.
 * `selector: {}` allows every namespace; `{}` (neither) is refused.
 */
export interface AllowedNamespaces {
  /** 1 to 100 unique namespace names. @default none */
  readonly list?: string[];
  /** A label selector over Namespace labels (`metav1.LabelSelector`). @default none */
  readonly selector?: LabelSelector;
}

/** Props of {@link KeystoneClusterIdentity}. */
export interface KeystoneClusterIdentityProps extends OrderProps {
  /**
   * The credentials Secret, whose key `clouds.yaml` holds a password cloud or an application credential
   * (`auth_type: v3applicationcredential`) with admin rights; its author must be allowed to `get` it.
   */
  readonly secretRef: SecretReference;
  /** The cloud in that `clouds.yaml`. @default "admin" (the API server's schema default) */
  readonly cloudName?: string;
  /**
   * Which namespaces' ControlPlanes may use the identity. A selector trusts namespace labels: anyone who can label a
   * namespace can opt it in.
   * @default unset: no namespace
   */
  readonly allowedNamespaces?: AllowedNamespaces;
}

/** A reference to a KeystoneClusterIdentity, for a ControlPlane's `adminCredential.identityRef`. */
export interface ClusterIdentityReference {
  /** The identity's name. */
  readonly name: string;
}

/**
 * A KeystoneClusterIdentity. It is cluster-scoped: a chart's namespace is not applied to it, and a `metadata.namespace`
 * fails synth.
 */
export class KeystoneClusterIdentity extends Construct {
  /** The emitted object. */
  public readonly apiObject: ApiObject;
  /** The object's name. */
  public readonly name: string;

  public constructor(scope: Construct, id: string, props: KeystoneClusterIdentityProps) {
    super(scope, id);
    const allowed = props.allowedNamespaces;
    const spec: KeystoneClusterIdentitySpec = defined({
      secretRef: { name: props.secretRef.name, namespace: props.secretRef.namespace },
      cloudName: props.cloudName,
      allowedNamespaces: allowed && defined({ list: allowed.list && [...allowed.list], selector: allowed.selector && copySelector(allowed.selector) }),
    });
    const given = props.metadata?.namespace;
    ({ apiObject: this.apiObject, name: this.name } = emitOrder(this, ClusterIdentityKind.kind, spec, props, (o) => [
      ...(given === undefined ? [] : [violation('metadata.namespace', given, 'must be left out: KeystoneClusterIdentity is cluster-scoped')]),
      ...validateClusterIdentity(o),
    ]));
    if (this.apiObject.metadata.namespace !== undefined) this.apiObject.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
    // An operator with secretAccess NAMESPACED in the same app grants itself the source (read only) and the allowed list.
    SecretAccessRegistry.of(this).addIdentity({ construct: this, secretRef: spec.secretRef, allowedList: spec.allowedNamespaces?.list ?? [] });
  }

  /** A reference to this identity, for `adminCredential.identityRef`. */
  public get ref(): ClusterIdentityReference {
    return { name: this.name };
  }
}

/**
 * A copy of a selector with only the given fields, so an absent field stays absent in the manifest. The operator is
 * passed as written: an unknown one is the CRD rule's to refuse (synth checks it with the same message).
 */
function copySelector(selector: LabelSelector): SelectorSpec {
  return defined({
    matchLabels: selector.matchLabels && { ...selector.matchLabels },
    matchExpressions: selector.matchExpressions?.map((r) => defined({ key: r.key, operator: r.operator as LabelSelectorOperator, values: r.values && [...r.values] })),
  });
}
