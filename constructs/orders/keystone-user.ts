/** The typed KeystoneUser order (design: identity-plane.md). */
import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { validatePlane } from '../../src/api/identity-plane-rules';
import { defined, emitOrder, emittedControlPlaneRef, type ControlPlaneReference, type OrderProps, type OrderReference } from './order';

/** Props of {@link KeystoneUser}. */
export interface KeystoneUserProps extends OrderProps {
  /** The ControlPlane whose Keystone the user is created in. Both halves are immutable. */
  readonly controlPlaneRef: ControlPlaneReference;
  /**
   * The Keystone user name: 1 to 255 characters, no comma. Immutable.
   * @default the order's `metadata.name`
   */
  readonly userName?: string;
  /**
   * The lowest password generation the user must hold (at least 1); raising it rotates the password. It may only increase.
   * @default 1 (the API server's schema default)
   */
  readonly passwordGeneration?: number;
}

/**
 * A KeystoneUser: a Keystone user whose password is delivered as the Secret `<name>-credentials` beside the order. A
 * KeystoneApplicationCredential of the same name in the same namespace would deliver a Secret of the same name.
 */
export class KeystoneUser extends Construct {
  /** The emitted object. */
  public readonly apiObject: ApiObject;
  /** The object's name. */
  public readonly name: string;
  /** The object's namespace, if set on it or its chart. */
  public readonly namespace?: string;
  /** The Secret the password is delivered in: `<name>-credentials`. */
  public readonly secretName: string;

  public constructor(scope: Construct, id: string, props: KeystoneUserProps) {
    super(scope, id);
    const spec = defined({ controlPlaneRef: emittedControlPlaneRef(props.controlPlaneRef), userName: props.userName, passwordGeneration: props.passwordGeneration });
    ({ apiObject: this.apiObject, name: this.name, namespace: this.namespace } = emitOrder(this, 'KeystoneUser', spec, props, (o) => validatePlane('KeystoneUser', o)));
    this.secretName = `${this.name}-credentials`;
  }

  /** A reference to this order, for `userRef`. */
  public get ref(): OrderReference {
    return { name: this.name };
  }
}
