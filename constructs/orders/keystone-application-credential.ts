/**
 * The typed KeystoneApplicationCredential order (spec: Spec). Checked at synth with `validate` from `src/api`, so a
 * broken rule reads as it does from the API server.
 */
import type { Construct } from 'constructs';
import type { DurationInput } from '../../src/api/duration';
import type { AccessRule } from '../../src/api/privileges';
import { KIND, type KeystoneApplicationCredentialSpec } from '../../src/api/types';
import { validate, type Violation } from '../../src/api/validation';
import { defined, durationString, emittedControlPlaneRef, Order, type ControlPlaneReference, type OrderProps, type OrderReference } from './order';

/** The rotation schedule of a credential. */
export interface RotationProps {
  /**
   * The time between two scheduled rotations, as a Go duration (`720h`, `1h30m`) or a Duration. `0s` turns the
   * schedule off; any other value is at least `1m`, and at most `87600h`.
   * @default "720h" (the API server's schema default)
   */
  readonly interval?: DurationInput;
  /**
   * How long the superseded credential stays in Keystone after the delivered Secret switched. Not negative, and shorter
   * than a non-zero interval.
   * @default "24h" (the API server's schema default)
   */
  readonly gracePeriod?: DurationInput;
}

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
  readonly roles?: readonly string[];
  /**
   * Not in the reference (an extension, issue 42): the only requests a token from the credential may make, enforced by
   * keystonemiddleware in each service. A change rotates.
   * @default none
   */
  readonly accessRules?: readonly AccessRule[];
}

/**
 * A KeystoneApplicationCredential: one Keystone application credential for an ordered user on an ordered project,
 * delivered as the Secret `<name>-credentials` beside the order. A KeystoneUser of the same name in the same namespace
 * delivers a Secret of the same name: give the two orders different names.
 */
export class KeystoneApplicationCredential extends Order<KeystoneApplicationCredentialSpec> {
  /** The Secret the credential is delivered in: `<name>-credentials`. */
  readonly secretName: string;

  constructor(scope: Construct, id: string, props: KeystoneApplicationCredentialProps) {
    const rotation = props.rotation
      ? defined({ interval: durationString(props.rotation.interval), gracePeriod: durationString(props.rotation.gracePeriod) })
      : undefined;
    super(
      scope,
      id,
      KIND,
      defined({
        controlPlaneRef: emittedControlPlaneRef(props.controlPlaneRef),
        userRef: { name: props.userRef.name },
        projectRef: { name: props.projectRef.name },
        credentialGeneration: props.credentialGeneration,
        rotation,
        roles: props.roles && [...props.roles],
        accessRules: props.accessRules?.map((r) => ({ service: r.service, method: r.method, path: r.path })),
      }),
      props,
    );
    this.secretName = `${this.name}-credentials`;
  }

  protected violations(): readonly Violation[] {
    return validate({ metadata: { name: this.name }, spec: this.spec });
  }
}
