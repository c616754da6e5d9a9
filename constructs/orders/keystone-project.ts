/** The typed KeystoneProject order (design: identity-plane.md). */
import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { validatePlane } from '../../src/api/identity-plane-rules';
import { defined, emitOrder, emittedControlPlaneRef, type ControlPlaneReference, type OrderProps, type OrderReference } from './order';

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
export class KeystoneProject extends Construct {
  /** The emitted object. */
  public readonly apiObject: ApiObject;
  /** The object's name. */
  public readonly name: string;
  /** The object's namespace, if set on it or its chart. */
  public readonly namespace?: string;

  public constructor(scope: Construct, id: string, props: KeystoneProjectProps) {
    super(scope, id);
    const spec = defined({ controlPlaneRef: emittedControlPlaneRef(props.controlPlaneRef), projectName: props.projectName });
    ({ apiObject: this.apiObject, name: this.name, namespace: this.namespace } = emitOrder(this, 'KeystoneProject', spec, props, (o) => validatePlane('KeystoneProject', o)));
  }

  /** A reference to this order, for `projectRef`. */
  public get ref(): OrderReference {
    return { name: this.name };
  }
}
