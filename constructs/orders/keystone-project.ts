/** The typed KeystoneProject order (design: identity-plane.md). */
import type { Construct } from 'constructs';
import type { KeystoneProjectSpec } from '../../src/api/identity-plane';
import { PlaneOrder } from './identity-plane-order';
import { defined, emittedControlPlaneRef, type ControlPlaneReference, type OrderProps, type OrderReference } from './order';

/** Props of {@link KeystoneProject}. */
export interface KeystoneProjectProps extends OrderProps {
  /** The ControlPlane whose Keystone the project is created in. Both halves are immutable. */
  readonly controlPlaneRef: ControlPlaneReference;
  /**
   * The Keystone project name: 1 to 64 characters, no comma. Immutable.
   * @default the order's `metadata.name`
   */
  readonly projectName?: string;
}

/** A KeystoneProject: a Keystone project in the ControlPlane's domain. */
export class KeystoneProject extends PlaneOrder<KeystoneProjectSpec> {
  protected readonly planeKind = 'KeystoneProject';

  constructor(scope: Construct, id: string, props: KeystoneProjectProps) {
    super(scope, id, 'KeystoneProject', defined({ controlPlaneRef: emittedControlPlaneRef(props.controlPlaneRef), projectName: props.projectName }), props);
  }

  /** A reference to this order, for `projectRef`. */
  get ref(): OrderReference {
    return { name: this.name };
  }
}
