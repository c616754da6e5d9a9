/** The typed ControlPlane (design: identity-plane.md). */
import type { Construct } from 'constructs';
import type { ControlPlaneSpec, NamespaceAssignment } from '../../src/api/identity-plane';
import { SecretAccessRegistry } from '../secret-access';
import { PlaneOrder } from './identity-plane-order';
import type { ClusterIdentityReference } from './keystone-cluster-identity';
import { defined, type ControlPlaneReference, type OrderProps } from './order';

/** An existing Keystone. */
export interface ExternalKeystoneProps {
  /** The http or https auth URL ending in `/v3` the operator and orders on the management cluster use. */
  readonly authURL: string;
  /** @default "public" (the API server's schema default) */
  readonly endpointType?: 'public' | 'internal';
  /**
   * A Secret in the ControlPlane's namespace holding the CA the operator trusts when it talks to Keystone.
   * @default none: the system trust store
   */
  readonly caBundleSecretRef?: {
    /** The Secret's name. */
    readonly name: string;
    /** The key. @default "ca.crt" */
    readonly key?: string;
  };
}

/** A namespace assignment: the consent for orders in one namespace on one cluster. */
export interface NamespaceAssignmentProps {
  /** The namespace: a DNS label. */
  readonly namespace: string;
  /** The target cluster. @default the management cluster */
  readonly targetClusterRef?: {
    /** The registered cluster's name. */
    readonly name: string;
  };
  /** Role names a KeystoneRoleAssignment in the namespace may assign. @default none */
  readonly allowedRoles?: readonly string[];
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
 * its namespace (`identityRef`, e.g. `identity.ref`), exactly one of the two (a CRD rule, checked at synth too).
 */
export type AdminCredentialProps = {
  /** The domain users and projects are created in. @default "Default" */
  readonly domainName?: string;
} & (
  | { readonly cloudCredentialsRef: CloudCredentialsRefProps; readonly identityRef?: never }
  | { readonly identityRef: ClusterIdentityReference; readonly cloudCredentialsRef?: never }
);

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
  readonly namespaceAssignments?: readonly NamespaceAssignmentProps[];
}

/** A ControlPlane: which Keystone, with what admin credential, for which namespaces. */
export class ControlPlane extends PlaneOrder<ControlPlaneSpec> {
  protected readonly planeKind = 'ControlPlane';
  private readonly assignments: NamespaceAssignment[];

  constructor(scope: Construct, id: string, props: ControlPlaneProps) {
    const assignments: NamespaceAssignment[] = [];
    super(
      scope,
      id,
      'ControlPlane',
      defined({
        region: props.region,
        services: {
          keystone: defined({
            mode: 'External',
            external: defined({ ...props.keystone, caBundleSecretRef: props.keystone.caBundleSecretRef && defined({ ...props.keystone.caBundleSecretRef }) }),
            publicEndpoint: props.publicEndpoint,
          }),
        },
        adminCredential: adminCredentialSpec(props.adminCredential),
        namespaceAssignments: assignments,
      }),
      props,
    );
    this.assignments = assignments;
    for (const assignment of props.namespaceAssignments ?? []) this.assignNamespace(assignment);
    // An operator with secretAccess 'namespaced' in the same app grants itself Secrets here and in each assignment.
    SecretAccessRegistry.of(this).addControlPlane(this);
  }

  /**
   * Consents to orders in `assignment.namespace` (on its cluster) and lists the roles they may assign. An operator (or
   * target cluster) with `secretAccess: 'namespaced'` in the same app emits the namespace's Role beside this ControlPlane.
   */
  assignNamespace(assignment: NamespaceAssignmentProps): void {
    this.assignments.push(
      defined({
        namespace: assignment.namespace,
        targetClusterRef: assignment.targetClusterRef && { name: assignment.targetClusterRef.name },
        allowedRoles: assignment.allowedRoles && [...assignment.allowedRoles],
      }),
    );
    SecretAccessRegistry.of(this).changed();
  }

  /** A reference to this ControlPlane, for `controlPlaneRef`; needs a namespace on the object or its chart. */
  get ref(): ControlPlaneReference {
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
