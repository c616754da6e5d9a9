/**
 * All six CRDs of the project in one construct, with the KeystoneClusterIdentity's admission policy: what a cluster needs
 * before any order or the operator.
 */
import { Construct } from 'constructs';
import { ClusterIdentityAdmission } from './cluster-identity-admission';
import { CustomResourceDefinition, Kind } from './crd';
import { ALL_KINDS } from './definitions/kinds';

export { ALL_KINDS } from './definitions/kinds';

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
  /** The emitted CRDs, in the order they are emitted. */
  public readonly definitions: CustomResourceDefinition[];
  /** The KeystoneClusterIdentity's admission policy, unless left out. */
  public readonly clusterIdentityAdmission?: ClusterIdentityAdmission;

  public constructor(scope: Construct, id: string, props: CrdsProps = {}) {
    super(scope, id);
    const kinds = props.applicationCredentialOnly ? [Kind.KEYSTONE_APPLICATION_CREDENTIAL] : ALL_KINDS.map((d) => d.kind as Kind);
    this.definitions = kinds.map((kind) => new CustomResourceDefinition(this, kind, { kind }));
    const identity = this.definition(Kind.KEYSTONE_CLUSTER_IDENTITY);
    if (identity && (props.clusterIdentityAdmission ?? true)) {
      this.clusterIdentityAdmission = new ClusterIdentityAdmission(this, 'ClusterIdentityAdmission');
      this.clusterIdentityAdmission.node.addDependency(identity);
    }
  }

  /** The CRD of `kind`, or undefined when it is not emitted. */
  public definition(kind: Kind): CustomResourceDefinition | undefined {
    return this.definitions.find((d) => d.kind === kind);
  }
}
