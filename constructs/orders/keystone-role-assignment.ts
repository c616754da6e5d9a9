/** The typed KeystoneRoleAssignment order (design: identity-plane.md). */
import type { Construct } from 'constructs';
import type { KeystoneRoleAssignmentSpec } from '../../src/api/identity-plane';
import { PlaneOrder } from './identity-plane-order';
import { emittedControlPlaneRef, type ControlPlaneReference, type OrderProps, type OrderReference } from './order';

/** Props of {@link KeystoneRoleAssignment}. */
export interface KeystoneRoleAssignmentProps extends OrderProps {
  /** The ControlPlane both referenced orders belong to. Both halves are immutable. */
  readonly controlPlaneRef: ControlPlaneReference;
  /** The KeystoneUser in the same namespace. Immutable. */
  readonly userRef: OrderReference;
  /** The KeystoneProject in the same namespace. Immutable. */
  readonly projectRef: OrderReference;
  /** The role to assign: 1 to 255 characters, no comma, in the namespace's `allowedRoles`. Immutable. */
  readonly role: string;
}

/** A KeystoneRoleAssignment: a role for an ordered user on an ordered project. */
export class KeystoneRoleAssignment extends PlaneOrder<KeystoneRoleAssignmentSpec> {
  protected readonly planeKind = 'KeystoneRoleAssignment';

  constructor(scope: Construct, id: string, props: KeystoneRoleAssignmentProps) {
    super(
      scope,
      id,
      'KeystoneRoleAssignment',
      {
        controlPlaneRef: emittedControlPlaneRef(props.controlPlaneRef),
        userRef: { name: props.userRef.name },
        projectRef: { name: props.projectRef.name },
        role: props.role,
      },
      props,
    );
  }
}
