/**
 * The kind's defaults (spec, Spec and Defaulting and Validation Summary), and their resolution for callers without an
 * API server in front: the kind has no webhook, so the reconciler and the Pulumi provider resolve a zero
 * `credentialGeneration` and an absent duration to their defaults themselves.
 */
import { DEFAULT_DELETION_POLICY, type DeletionPolicy } from './deletion-policy';
import { Duration } from './duration';
import type { AccessRule } from './privileges';
import type { KeystoneApplicationCredentialSpec } from './types';

/** Schema default of `spec.credentialGeneration`. */
export const DEFAULT_CREDENTIAL_GENERATION = 1;
/** Schema default of `spec.rotation.interval`, as the API server stores it. */
export const DEFAULT_INTERVAL = '720h';
/** Schema default of `spec.rotation.gracePeriod`, as the API server stores it. */
export const DEFAULT_GRACE_PERIOD = '24h';

/** The rotation settings with every default applied and every duration parsed. */
export interface ResolvedRotation {
  /** The time between two scheduled rotations; zero means the schedule is off. */
  readonly interval: Duration;
  readonly gracePeriod: Duration;
}

/**
 * What a credential is minted with beyond its name, secret and expiry (issue 42): the roles it carries and the access
 * rules it is restricted to. Keystone keeps both immutable.
 */
export interface Privileges {
  /** The roles it carries. @default every role the user holds on the project */
  readonly roles?: readonly string[];
  /** The only requests a token from it may make. @default none: every request its roles allow */
  readonly accessRules?: readonly AccessRule[];
}

/** The spec fields the lifecycle reads, resolved. */
export interface ResolvedSpec extends ResolvedRotation, Privileges {
  readonly credentialGeneration: number;
  /** What deleting the order does (issue 49). @default "Delete" */
  readonly deletionPolicy: DeletionPolicy;
  /** The credential to adopt instead of minting the first one (issue 49), by its Keystone id. @default none */
  readonly adopt?: string;
}

/**
 * Resolves defaults and parses durations. Does not validate ranges (see `validate`); throws a DurationError naming the
 * field for a string that is no Go duration at all.
 */
export function resolveSpec(
  spec: Pick<KeystoneApplicationCredentialSpec, 'credentialGeneration' | 'rotation' | 'roles' | 'accessRules' | 'deletionPolicy'> & { readonly adopt?: { readonly credentialID: string } },
): ResolvedSpec {
  return {
    credentialGeneration: spec.credentialGeneration || DEFAULT_CREDENTIAL_GENERATION,
    deletionPolicy: spec.deletionPolicy ?? DEFAULT_DELETION_POLICY,
    ...(spec.adopt?.credentialID ? { adopt: spec.adopt.credentialID } : {}),
    interval: Duration.parse(spec.rotation?.interval || DEFAULT_INTERVAL, 'spec.rotation.interval'),
    gracePeriod: Duration.parse(spec.rotation?.gracePeriod || DEFAULT_GRACE_PERIOD, 'spec.rotation.gracePeriod'),
    ...(spec.roles !== undefined && spec.roles.length > 0 ? { roles: [...spec.roles] } : {}),
    ...(spec.accessRules !== undefined && spec.accessRules.length > 0 ? { accessRules: spec.accessRules.map((r) => ({ service: r.service, method: r.method, path: r.path })) } : {}),
  };
}

/** Whether the rotation schedule is on (a non-zero interval). */
export function scheduleOn(rotation: ResolvedRotation): boolean {
  return !rotation.interval.isZero();
}
