/** The typed KeystoneRoleAssignment order (design: identity-plane.md). */
import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { validatePlane } from '../../src/api/identity-plane-rules';
import { emitOrder, emittedControlPlaneRef, type ControlPlaneReference, type OrderProps, type OrderReference } from './order';

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
export class KeystoneRoleAssignment extends Construct {
  /** The emitted object. */
  public readonly apiObject: ApiObject;
  /** The object's name. */
  public readonly name: string;
  /** The object's namespace, if set on it or its chart. */
  public readonly namespace?: string;

  public constructor(scope: Construct, id: string, props: KeystoneRoleAssignmentProps) {
    super(scope, id);
    const spec = {
      controlPlaneRef: emittedControlPlaneRef(props.controlPlaneRef),
      userRef: { name: props.userRef.name },
      projectRef: { name: props.projectRef.name },
      role: props.role,
    };
    ({ apiObject: this.apiObject, name: this.name, namespace: this.namespace } = emitOrder(this, 'KeystoneRoleAssignment', spec, props, (o) => validatePlane('KeystoneRoleAssignment', o)));
  }
}
