/**
 * The typed KeystoneApplicationCredential order (spec: Spec). Checked at synth with `validate` from `src/api`, so a
 * broken rule reads as it does from the API server.
 */
import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { KIND } from '../../src/api/types';
import { validate } from '../../src/api/validation';
import { privilegesSpec, rotationSpec, type AccessRule, type RotationProps } from './policy';
import { defined, emitOrder, emittedControlPlaneRef, type ControlPlaneReference, type OrderProps, type OrderReference } from './order';

/** Props of {@link KeystoneApplicationCredential}. */
export interface KeystoneApplicationCredentialProps extends OrderProps {
  /** The ControlPlane whose identity plane the credential is created in. Both halves are immutable. */
  readonly controlPlaneRef: ControlPlaneReference;
  /** The KeystoneUser in the order's namespace the credential belongs to. Immutable. */
  readonly userRef: OrderReference;
  /** The KeystoneProject in the order's namespace the credential is scoped to. Immutable. */
  readonly projectRef: OrderReference;
  /**
   * The lowest credential generation the order must hold (at least 1). Raising it above `status.credentialGeneration`
   * rotates at once; it may only increase.
   * @default 1 (the API server's schema default)
   */
  readonly credentialGeneration?: number;
  /**
   * The rotation schedule.
   * @default {} (interval 720h, grace period 24h)
   */
  readonly rotation?: RotationProps;
  /**
   * Not in the reference (an extension, issue 42): the names of the roles the credential carries, each in the
   * namespace's `allowedRoles` and assigned to the user on the project by a KeystoneRoleAssignment. A change rotates.
   * @default every role the user holds on the project
   */
  readonly roles?: string[];
  /**
   * Not in the reference (an extension, issue 42): the only requests a token from the credential may make, enforced by
   * keystonemiddleware in each service. A change rotates.
   * @default none
   */
  readonly accessRules?: AccessRule[];
}

/**
 * A KeystoneApplicationCredential: one Keystone application credential for an ordered user on an ordered project,
 * delivered as the Secret `<name>-credentials` beside the order. A KeystoneUser of the same name in the same namespace
 * delivers a Secret of the same name: give the two orders different names.
 */
export class KeystoneApplicationCredential extends Construct {
  /** The emitted object. */
  public readonly apiObject: ApiObject;
  /** The object's name. */
  public readonly name: string;
  /** The object's namespace, if set on it or its chart. */
  public readonly namespace?: string;
  /** The Secret the credential is delivered in: `<name>-credentials`. */
  public readonly secretName: string;

  public constructor(scope: Construct, id: string, props: KeystoneApplicationCredentialProps) {
    super(scope, id);
    const rotation = props.rotation ? rotationSpec(props.rotation) : undefined;
    const spec = defined({
      controlPlaneRef: emittedControlPlaneRef(props.controlPlaneRef),
      userRef: { name: props.userRef.name },
      projectRef: { name: props.projectRef.name },
      credentialGeneration: props.credentialGeneration,
      rotation,
      ...privilegesSpec(props),
    });
    ({ apiObject: this.apiObject, name: this.name, namespace: this.namespace } = emitOrder(this, KIND, spec, props, (o) => validate(o)));
    this.secretName = `${this.name}-credentials`;
  }
}
