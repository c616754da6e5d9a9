/**
 * All six CRDs of the project in one construct, with the KeystoneClusterIdentity's admission policy: what a cluster needs
 * before any order or the operator.
 */
import { Construct } from 'constructs';
import { ClusterIdentityAdmission } from './cluster-identity-admission';
import { CustomResourceDefinition, type KindDefinition } from './crd';
import { IDENTITY_PLANE } from './definitions/identity-plane';
import { KEYSTONE_APPLICATION_CREDENTIAL } from './definitions/keystone-application-credential';
import { KEYSTONE_CLUSTER_IDENTITY } from './definitions/keystone-cluster-identity';

/** Every kind of the project: the KeystoneApplicationCredential, its four neighbours and the KeystoneClusterIdentity. */
export const ALL_KINDS: readonly KindDefinition[] = [...IDENTITY_PLANE, KEYSTONE_APPLICATION_CREDENTIAL, KEYSTONE_CLUSTER_IDENTITY];

/** Props of {@link Crds}. */
export interface CrdsProps {
  /**
   * Emit only the KeystoneApplicationCredential CRD, for a cluster whose ControlPlane, users, projects and role
   * assignments are defined by another operator of the same group.
   * @default false
   */
  readonly applicationCredentialOnly?: boolean;
  /**
   * Emit the KeystoneClusterIdentity's ValidatingAdmissionPolicy and binding ({@link ClusterIdentityAdmission}). Without
   * them anyone who may create an identity can share a Secret they cannot read, and an identity in use can be deleted:
   * leave them out only where another admission controller does their checks.
   * @default true (none with `applicationCredentialOnly`)
   */
  readonly clusterIdentityAdmission?: boolean;
}

/** The project's CRDs. */
export class Crds extends Construct {
  /** The emitted CRDs, by kind. */
  readonly definitions: ReadonlyMap<string, CustomResourceDefinition>;
  /** The KeystoneClusterIdentity's admission policy, unless left out. */
  readonly clusterIdentityAdmission: ClusterIdentityAdmission | undefined;

  constructor(scope: Construct, id: string, props: CrdsProps = {}) {
    super(scope, id);
    const kinds = props.applicationCredentialOnly ? [KEYSTONE_APPLICATION_CREDENTIAL] : ALL_KINDS;
    this.definitions = new Map(kinds.map((d) => [d.kind, new CustomResourceDefinition(this, d.kind, { definition: d })]));
    const identity = this.definitions.get(KEYSTONE_CLUSTER_IDENTITY.kind);
    if (identity && (props.clusterIdentityAdmission ?? true)) {
      this.clusterIdentityAdmission = new ClusterIdentityAdmission(this, 'ClusterIdentityAdmission');
      this.clusterIdentityAdmission.node.addDependency(identity);
    }
  }
}
