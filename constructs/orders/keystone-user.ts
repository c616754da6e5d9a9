/** The typed KeystoneUser order (design: identity-plane.md). */
import type { Construct } from 'constructs';
import type { KeystoneUserSpec } from '../../src/api/identity-plane';
import { PlaneOrder } from './identity-plane-order';
import { defined, emittedControlPlaneRef, type ControlPlaneReference, type OrderProps, type OrderReference } from './order';

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
export class KeystoneUser extends PlaneOrder<KeystoneUserSpec> {
  protected readonly planeKind = 'KeystoneUser';
  /** The Secret the password is delivered in: `<name>-credentials`. */
  readonly secretName: string;

  constructor(scope: Construct, id: string, props: KeystoneUserProps) {
    super(
      scope,
      id,
      'KeystoneUser',
      defined({ controlPlaneRef: emittedControlPlaneRef(props.controlPlaneRef), userName: props.userName, passwordGeneration: props.passwordGeneration }),
      props,
    );
    this.secretName = `${this.name}-credentials`;
  }

  /** A reference to this order, for `userRef`. */
  get ref(): OrderReference {
    return { name: this.name };
  }
}
