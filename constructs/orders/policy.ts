/**
 * The policy props an order and a ControlPlane's fleet defaults share: the rotation schedule, its window and jitter
 * (issue 48), the roles and access rules (issue 42), and the fleet defaults block itself; emitted with only the fields
 * given, so a left-out one is left to the schema default, a fleet default or absent.
 */
import type { ApplicationCredentialDefaults } from '../../src/api/identity-plane';
import type { RotationSpec } from '../../src/api/types';
import { durationString, type Duration } from '../duration';
import { defined } from './order';

/** The HTTP method an access rule allows (Keystone's access rules). */
export enum AccessRuleMethod {
  /** `GET` */
  GET = 'GET',
  /** `HEAD` */
  HEAD = 'HEAD',
  /** `POST` */
  POST = 'POST',
  /** `PUT` */
  PUT = 'PUT',
  /** `PATCH` */
  PATCH = 'PATCH',
  /** `DELETE` */
  DELETE = 'DELETE',
}

/**
 * One request a token from the credential may make (Keystone's access rules), enforced by keystonemiddleware's
 * `auth_token` in the service that validates the token.
 */
export interface AccessRule {
  /** The service type in Keystone's catalog, e.g. `compute` or `object-store`. */
  readonly service: string;
  /** The HTTP method. */
  readonly method: AccessRuleMethod;
  /** The request path, beginning with `/`; `*` matches one path segment, `**` any number. */
  readonly path: string;
}

/** The rotation schedule of a credential. */
export interface RotationProps {
  /**
   * The time between two scheduled rotations, as a Go duration string (`720h`, `1h30m`), written as given, or a
   * {@link Duration}, written in Go's canonical form (`720h0m0s`). `0s` turns the schedule off; any other value is at
   * least `1m`, and at most `87600h`.
   * @default "720h" (the API server's schema default)
   */
  readonly interval?: string | Duration;
  /**
   * How long the superseded credential stays in Keystone after the delivered Secret switched, as `interval` is given.
   * Not negative, and shorter than a non-zero interval.
   * @default "24h" (the API server's schema default)
   */
  readonly gracePeriod?: string | Duration;
  /**
   * Not in the reference (an extension, issue 48): when scheduled rotations may start.
   * @default none: a scheduled rotation starts when it is due
   */
  readonly window?: RotationWindowProps;
  /**
   * Not in the reference (an extension, issue 48): spreads scheduled rotations over this percentage of the interval, 0
   * to 50: each order rotates earlier than due by its own fraction of the span, drawn from a hash of its uid, and in a
   * window later than the window's opening by its own fraction of the open time.
   * @default 0
   */
  readonly jitterPercent?: number;
}

/**
 * Not in the reference (an extension, issue 48): a recurring window in which scheduled rotations may start, as a
 * Kubernetes CronJob names its schedule. A scheduled rotation starts in the latest window that opens at or before it is
 * due, never later; a raised `credentialGeneration`, an expired or lost credential, a lost secret or a change of roles
 * or access rules never waits. A window that cannot open between the end of one grace period and the next rotation is
 * refused by the operator (`CredentialReady=False/RotationWindowRefused`) and not applied.
 */
export interface RotationWindowProps {
  /**
   * When the window opens: a cron schedule of five fields (minute hour day-of-month month day-of-week) or `@hourly`,
   * `@daily`, `@weekly`, `@monthly`, `@yearly`. `0 2 * * 1-5`: weekdays at 02:00.
   */
  readonly schedule: string;
  /**
   * The IANA time zone the schedule is read in (`Europe/Berlin`).
   * @default "UTC"
   */
  readonly timeZone?: string;
  /** How long the window stays open after each opening (elapsed time), at least `1m`, as `RotationProps.interval` is given. */
  readonly duration: string | Duration;
}

/**
 * Not in identity-plane.md (an extension, issue 48): defaults for the KeystoneApplicationCredentials of one namespace
 * assignment: the rotation policy and the roles (access rules are defaulted per ControlPlane only). Each field wins over
 * the ControlPlane's `applicationCredentialDefaults`; an order's own field wins over both.
 */
export interface NamespaceCredentialDefaultsProps {
  /**
   * The rotation policy: interval, grace period, window and jitter, each on its own.
   * @default none: the orders' own, the ControlPlane's, or the CRD's defaults
   */
  readonly rotation?: RotationProps;
  /**
   * The roles the credentials carry.
   * @default none: the orders' own, the ControlPlane's, or every role the user holds
   */
  readonly roles?: string[];
}

/**
 * Not in identity-plane.md (an extension, issue 48): defaults for every KeystoneApplicationCredential of a ControlPlane.
 * A namespace assignment's defaults win over them, and an order's own field over both; each order reports the values in
 * force and where each came from in `status.policy`.
 */
export interface ApplicationCredentialDefaultsProps extends NamespaceCredentialDefaultsProps {
  /**
   * The access rules the credentials are restricted to.
   * @default none: the orders' own, or none
   */
  readonly accessRules?: AccessRule[];
}

/** The emitted rotation block: only the given fields. */
export function rotationSpec(props: RotationProps): RotationSpec {
  return defined({
    interval: durationString(props.interval),
    gracePeriod: durationString(props.gracePeriod),
    window: props.window && defined({ schedule: props.window.schedule, timeZone: props.window.timeZone, duration: durationString(props.window.duration) as string }),
    jitterPercent: props.jitterPercent,
  });
}

/** The emitted `roles` and `accessRules`: only the given ones. */
export function privilegesSpec(props: { readonly roles?: string[]; readonly accessRules?: AccessRule[] }): Pick<ApplicationCredentialDefaults, 'roles' | 'accessRules'> {
  return defined({
    roles: props.roles && [...props.roles],
    accessRules: props.accessRules?.map((r) => ({ service: r.service, method: r.method, path: r.path })),
  });
}

/** The emitted fleet defaults block (a namespace assignment's has no access rules). */
export function defaultsSpec(props: ApplicationCredentialDefaultsProps): ApplicationCredentialDefaults {
  return defined({ rotation: props.rotation && rotationSpec(props.rotation), ...privilegesSpec(props) });
}
