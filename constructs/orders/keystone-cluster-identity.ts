/** The typed KeystoneClusterIdentity (issue 11, terraformclusteridentity.md): cluster-scoped, validated at synth. */
import { JsonPatch } from 'cdk8s';
import type { Construct } from 'constructs';
import { ClusterIdentityKind, type KeystoneClusterIdentitySpec } from '../../src/api/cluster-identity';
import { validateClusterIdentity } from '../../src/api/cluster-identity-rules';
import type { LabelSelector } from '../../src/api/label-selector';
import { violation, type Violation } from '../../src/api/validation';
import { SecretAccessRegistry } from '../secret-access';
import { defined, Order, type OrderProps } from './order';

/** Props of {@link KeystoneClusterIdentity}. */
export interface KeystoneClusterIdentityProps extends OrderProps {
  /**
   * The credentials Secret, whose key `clouds.yaml` holds a password cloud or an application credential
   * (`auth_type: v3applicationcredential`) with admin rights; its author must be allowed to `get` it.
   */
  readonly secretRef: {
    /** The Secret's name: a DNS subdomain of at most 253 characters. */
    readonly name: string;
    /** The Secret's namespace: a DNS label. Required: never defaulted. */
    readonly namespace: string;
  };
  /** The cloud in that `clouds.yaml`. @default "admin" (the API server's schema default) */
  readonly cloudName?: string;
  /**
   * Which namespaces' ControlPlanes may use the identity: those in `list` and those whose labels match `selector`.
   * `selector: {}` allows every namespace; `{}` is refused. A selector trusts namespace labels: anyone who can label a
   * namespace can opt it in.
   * @default unset: no namespace
   */
  readonly allowedNamespaces?: {
    /** 1 to 100 unique namespace names. @default none */
    readonly list?: readonly string[];
    /** A label selector over Namespace labels. @default none */
    readonly selector?: LabelSelector;
  };
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
export class KeystoneClusterIdentity extends Order<KeystoneClusterIdentitySpec> {
  /** Always undefined: the kind is cluster-scoped. */
  override readonly namespace: undefined = undefined;
  private readonly givenNamespace: string | undefined;

  constructor(scope: Construct, id: string, props: KeystoneClusterIdentityProps) {
    const allowed = props.allowedNamespaces;
    super(
      scope,
      id,
      ClusterIdentityKind.kind,
      defined({
        secretRef: { name: props.secretRef.name, namespace: props.secretRef.namespace },
        cloudName: props.cloudName,
        allowedNamespaces: allowed && defined({ list: allowed.list && [...allowed.list], selector: allowed.selector && copySelector(allowed.selector) }),
      }),
      props,
    );
    this.givenNamespace = props.metadata?.namespace;
    if (this.apiObject.metadata.namespace !== undefined) this.apiObject.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
    // An operator with secretAccess 'namespaced' in the same app grants itself the source (read only) and the allowed list.
    SecretAccessRegistry.of(this).addIdentity(this);
  }

  /** A reference to this identity, for `adminCredential.identityRef`. */
  get ref(): ClusterIdentityReference {
    return { name: this.name };
  }

  protected violations(): readonly Violation[] {
    const namespace = this.givenNamespace === undefined ? [] : [violation('metadata.namespace', this.givenNamespace, 'must be left out: KeystoneClusterIdentity is cluster-scoped')];
    return [...namespace, ...validateClusterIdentity({ metadata: { name: this.name }, spec: this.spec })];
  }
}

/** A copy of a selector with only the given fields, so an absent field stays absent in the manifest. */
function copySelector(selector: LabelSelector): LabelSelector {
  return defined({
    matchLabels: selector.matchLabels && { ...selector.matchLabels },
    matchExpressions: selector.matchExpressions?.map((r) => defined({ key: r.key, operator: r.operator, values: r.values && [...r.values] })),
  });
}
