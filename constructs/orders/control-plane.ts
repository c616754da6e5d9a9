/** The typed ControlPlane (design: identity-plane.md). */
import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { ControlPlaneSpec, NamespaceAssignment } from '../../src/api/identity-plane';
import { validatePlane } from '../../src/api/identity-plane-rules';
import { SecretAccessRegistry } from '../secret-access';
import type { ClusterIdentityReference } from './keystone-cluster-identity';
import { defined, emitOrder, type ControlPlaneReference, type OrderProps } from './order';
import { defaultsSpec, type ApplicationCredentialDefaultsProps, type NamespaceCredentialDefaultsProps } from './policy';

/** Which Keystone endpoint the operator uses (`services.keystone.external.endpointType`). */
export enum EndpointType {
  /** The public endpoint. */
  PUBLIC = 'public',
  /** The internal endpoint. */
  INTERNAL = 'internal',
}

/** A key of a Secret in the ControlPlane's namespace. */
export interface SecretKeyReference {
  /** The Secret's name. */
  readonly name: string;
  /** The key. @default "ca.crt" */
  readonly key?: string;
}

/** An existing Keystone. */
export interface ExternalKeystoneProps {
  /** The http or https auth URL ending in `/v3` the operator and orders on the management cluster use. */
  readonly authURL: string;
  /** @default EndpointType.PUBLIC (the API server's schema default) */
  readonly endpointType?: EndpointType;
  /**
   * A Secret in the ControlPlane's namespace holding the CA the operator trusts when it talks to Keystone.
   * @default none: the system trust store
   */
  readonly caBundleSecretRef?: SecretKeyReference;
}

/** A registered target cluster, by its name (the name of the kubeconfig Secret that registers it). */
export interface TargetClusterReference {
  /** The registered cluster's name. */
  readonly name: string;
}

/** A namespace assignment: the consent for orders in one namespace on one cluster. */
export interface NamespaceAssignmentProps {
  /** The namespace: a DNS label. */
  readonly namespace: string;
  /** The target cluster. @default the management cluster */
  readonly targetClusterRef?: TargetClusterReference;
  /** Role names a KeystoneRoleAssignment in the namespace may assign. @default none */
  readonly allowedRoles?: string[];
  /**
   * Not in identity-plane.md (an extension, issue 48): defaults for the KeystoneApplicationCredentials of this
   * namespace on this cluster; each field wins over the ControlPlane's `applicationCredentialDefaults`.
   * @default none
   */
  readonly applicationCredentialDefaults?: NamespaceCredentialDefaultsProps;
}

/**
 * A Secret in the ControlPlane's namespace whose key `clouds.yaml` holds a password cloud or an application credential
 * (`auth_type: v3applicationcredential`) with admin rights.
 */
export interface CloudCredentialsRefProps {
  /** The Secret's name. */
  readonly secretName: string;
  /** The cloud in clouds.yaml. @default "admin" */
  readonly cloudName?: string;
}

/**
 * The admin credential: the ControlPlane's own Secret (`cloudCredentialsRef`) or a KeystoneClusterIdentity that allows
 * its namespace (`identityRef`, e.g. `identity.ref`). Exactly one of the two: the CRD's rule, which the synth checks
 * with the same message the API server gives.
 */
export interface AdminCredentialProps {
  /** The ControlPlane's own Secret. @default none: give `identityRef` */
  readonly cloudCredentialsRef?: CloudCredentialsRefProps;
  /** A KeystoneClusterIdentity that allows the ControlPlane's namespace. @default none: give `cloudCredentialsRef` */
  readonly identityRef?: ClusterIdentityReference;
  /** The domain users and projects are created in. @default "Default" */
  readonly domainName?: string;
}

/** Props of {@link ControlPlane}. */
export interface ControlPlaneProps extends OrderProps {
  /** The Keystone region. @default "RegionOne" (the API server's schema default) */
  readonly region?: string;
  /** The existing Keystone (`services.keystone.external`); the mode is always `External`. */
  readonly keystone: ExternalKeystoneProps;
  /**
   * The auth URL written into documents for orders on other clusters (`services.keystone.publicEndpoint`).
   * @default none: such orders report DeliveryReady=False/KeystoneNotPublished
   */
  readonly publicEndpoint?: string;
  /** The admin credential, used only for users, projects and role assignments. */
  readonly adminCredential: AdminCredentialProps;
  /** The namespaces that may order from this ControlPlane; more can be added with {@link ControlPlane.assignNamespace}. @default none */
  readonly namespaceAssignments?: NamespaceAssignmentProps[];
  /**
   * Not in identity-plane.md (an extension, issue 48): defaults for every KeystoneApplicationCredential of this
   * ControlPlane: a namespace assignment's win over them, and an order's own field over both.
   * @default none
   */
  readonly applicationCredentialDefaults?: ApplicationCredentialDefaultsProps;
}

/** A ControlPlane: which Keystone, with what admin credential, for which namespaces. */
export class ControlPlane extends Construct {
  /** The emitted object. */
  public readonly apiObject: ApiObject;
  /** The object's name. */
  public readonly name: string;
  /** The object's namespace, if set on it or its chart. */
  public readonly namespace?: string;
  private readonly assignments: NamespaceAssignment[] = [];

  public constructor(scope: Construct, id: string, props: ControlPlaneProps) {
    super(scope, id);
    const keystone = props.keystone;
    const spec: ControlPlaneSpec = defined({
      region: props.region,
      services: {
        keystone: defined({
          mode: 'External',
          external: defined({
            authURL: keystone.authURL,
            endpointType: keystone.endpointType,
            caBundleSecretRef: keystone.caBundleSecretRef && defined({ name: keystone.caBundleSecretRef.name, key: keystone.caBundleSecretRef.key }),
          }),
          publicEndpoint: props.publicEndpoint,
        }),
      },
      adminCredential: adminCredentialSpec(props.adminCredential),
      namespaceAssignments: this.assignments,
      applicationCredentialDefaults: props.applicationCredentialDefaults && defaultsSpec(props.applicationCredentialDefaults),
    });
    ({ apiObject: this.apiObject, name: this.name, namespace: this.namespace } = emitOrder(this, 'ControlPlane', spec, props, (o) => validatePlane('ControlPlane', o)));
    for (const assignment of props.namespaceAssignments ?? []) this.assignNamespace(assignment);
    // An operator with secretAccess NAMESPACED in the same app grants itself Secrets here and in each assignment.
    SecretAccessRegistry.of(this).addControlPlane({ construct: this, namespace: this.namespace, assignments: this.assignments });
  }

  /**
   * Consents to orders in `assignment.namespace` (on its cluster) and lists the roles they may assign. An operator (or
   * target cluster) with `secretAccess: SecretAccess.NAMESPACED` in the same app emits the namespace's Role beside this
   * ControlPlane.
   */
  public assignNamespace(assignment: NamespaceAssignmentProps): void {
    this.assignments.push(
      defined({
        namespace: assignment.namespace,
        targetClusterRef: assignment.targetClusterRef && { name: assignment.targetClusterRef.name },
        allowedRoles: assignment.allowedRoles && [...assignment.allowedRoles],
        applicationCredentialDefaults: assignment.applicationCredentialDefaults && defaultsSpec(assignment.applicationCredentialDefaults),
      }),
    );
    SecretAccessRegistry.of(this).changed();
  }

  /** A reference to this ControlPlane, for `controlPlaneRef`; needs a namespace on the object or its chart. */
  public get ref(): ControlPlaneReference {
    if (this.namespace === undefined) throw new Error(`${this.node.path}: the ControlPlane has no namespace: set metadata.namespace or the chart's namespace`);
    return { name: this.name, namespace: this.namespace };
  }
}

/** The emitted `adminCredential`: only the given fields, so a left-out one is left to the schema default or absent. */
function adminCredentialSpec(props: AdminCredentialProps): ControlPlaneSpec['adminCredential'] {
  const { cloudCredentialsRef, identityRef } = props;
  return defined({
    cloudCredentialsRef: cloudCredentialsRef && defined({ secretName: cloudCredentialsRef.secretName, cloudName: cloudCredentialsRef.cloudName }),
    identityRef: identityRef && { name: identityRef.name },
    domainName: props.domainName,
  });
}
