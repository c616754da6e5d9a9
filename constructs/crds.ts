/**
 * All five CRDs of the project in one construct: what a cluster needs before any order or the operator.
 */
import { Construct } from 'constructs';
import { CustomResourceDefinition, type KindDefinition } from './crd';
import { IDENTITY_PLANE } from './definitions/identity-plane';
import { KEYSTONE_APPLICATION_CREDENTIAL } from './definitions/keystone-application-credential';

/** Every kind of the project: the KeystoneApplicationCredential and its four neighbours. */
export const ALL_KINDS: readonly KindDefinition[] = [...IDENTITY_PLANE, KEYSTONE_APPLICATION_CREDENTIAL];

/** Props of {@link Crds}. */
export interface CrdsProps {
  /**
   * Emit only the KeystoneApplicationCredential CRD, for a cluster whose ControlPlane, users, projects and role
   * assignments are defined by another operator of the same group.
   * @default false
   */
  readonly applicationCredentialOnly?: boolean;
}

/** The project's CRDs. */
export class Crds extends Construct {
  /** The emitted CRDs, by kind. */
  readonly definitions: ReadonlyMap<string, CustomResourceDefinition>;

  constructor(scope: Construct, id: string, props: CrdsProps = {}) {
    super(scope, id);
    const kinds = props.applicationCredentialOnly ? [KEYSTONE_APPLICATION_CREDENTIAL] : ALL_KINDS;
    this.definitions = new Map(kinds.map((d) => [d.kind, new CustomResourceDefinition(this, d.kind, { definition: d })]));
  }
}
