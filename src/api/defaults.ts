/**
 * The kind's defaults (spec, Spec and Defaulting and Validation Summary), and their resolution for callers without an
 * API server in front: the kind has no webhook, so the reconciler and the Pulumi provider resolve a zero
 * `credentialGeneration` and an absent duration to their defaults themselves.
 */
import { Duration } from './duration';
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

/** The spec fields the lifecycle reads, resolved. */
export interface ResolvedSpec extends ResolvedRotation {
  readonly credentialGeneration: number;
}

/**
 * Resolves defaults and parses durations. Does not validate ranges (see `validate`); throws a DurationError naming the
 * field for a string that is no Go duration at all.
 */
export function resolveSpec(spec: Pick<KeystoneApplicationCredentialSpec, 'credentialGeneration' | 'rotation'>): ResolvedSpec {
  return {
    credentialGeneration: spec.credentialGeneration || DEFAULT_CREDENTIAL_GENERATION,
    interval: Duration.parse(spec.rotation?.interval || DEFAULT_INTERVAL, 'spec.rotation.interval'),
    gracePeriod: Duration.parse(spec.rotation?.gracePeriod || DEFAULT_GRACE_PERIOD, 'spec.rotation.gracePeriod'),
  };
}

/** Whether the rotation schedule is on (a non-zero interval). */
export function scheduleOn(rotation: ResolvedRotation): boolean {
  return !rotation.interval.isZero();
}
