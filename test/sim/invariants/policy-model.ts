/**
 * The simulation's own reading of issue 48's rules, written from the spec and not from src/ (src/plane/policy.ts,
 * src/lifecycle/schedule.ts judge nothing here): the policy an order runs with under the ControlPlane's fleet defaults,
 * field by field (the order's own, its namespace assignment's, the ControlPlane's, the CRD's default), refused when the
 * combination breaks the order's rules (a grace period not shorter than a non-zero interval); the reference's due time;
 * the bounds a scheduled start keeps. Windows are the pool's, read by ../events/policy.ts's hand-written models.
 */
import { Duration, type PolicyStatus } from '../../../src/api';
import { windowModel, type WindowModel } from '../events/policy';
import { CP, PATHS, type FleetDefaults } from '../objects';
import type { SimWorld } from '../sim-world';
import type { Obj } from '../../unit/kube/fake-api-server';

type Rotation = { interval?: string; gracePeriod?: string; window?: { schedule: string; timeZone?: string; duration: string }; jitterPercent?: number };
type Source = 'Order' | 'NamespaceAssignment' | 'ControlPlane' | 'Default';
const ROTATION_FIELDS = ['interval', 'gracePeriod', 'window', 'jitterPercent'] as const;
const CRD_DEFAULTS: Rotation = { interval: '720h', gracePeriod: '24h' };

/** What an order runs with, as the simulation reads the spec. */
export interface ExpectedPolicy {
  /** The rotation fields in force. */
  readonly rotation: Rotation;
  readonly intervalMs: number;
  readonly graceMs: number;
  /** The window applied: in force and not refused (none with the schedule off). */
  readonly window?: WindowModel;
  /** The window in force is refused. */
  readonly windowRefused: boolean;
  readonly jitterPercent: number;
  /** Fleet defaults are set for the order (status.policy is recorded), with each rotation field's source. */
  readonly sources?: Readonly<Record<(typeof ROTATION_FIELDS)[number], Source>>;
  /** Fleet defaults are set and refused: the order runs its own spec. */
  readonly defaultsRefused: boolean;
}

const ms = (value: string | undefined) => Duration.parse(value ?? '0s').milliseconds;

/** The policy `order` runs with under the ControlPlane as it is now. */
export function expectedPolicy(world: SimWorld, order: Obj): ExpectedPolicy {
  const own = ((order.spec as { rotation?: Rotation } | undefined)?.rotation ?? {}) as Rotation;
  const cp = world.management.object(PATHS.controlPlanes, CP.namespace, CP.name)?.spec as
    | { applicationCredentialDefaults?: FleetDefaults; namespaceAssignments?: { namespace: string; applicationCredentialDefaults?: FleetDefaults }[] }
    | undefined;
  const assignment = cp?.namespaceAssignments?.find((a) => a.namespace === order.metadata.namespace);
  const levels = [
    ...(assignment?.applicationCredentialDefaults ? [{ source: 'NamespaceAssignment' as const, rotation: assignment.applicationCredentialDefaults.rotation as Rotation }] : []),
    ...(cp?.applicationCredentialDefaults ? [{ source: 'ControlPlane' as const, rotation: cp.applicationCredentialDefaults.rotation as Rotation }] : []),
  ];
  const sources = {} as Record<(typeof ROTATION_FIELDS)[number], Source>;
  const merged: Record<string, unknown> = {};
  for (const field of ROTATION_FIELDS) {
    const level = own[field] !== undefined ? { source: 'Order' as const, rotation: own } : levels.find((l) => l.rotation[field] !== undefined);
    sources[field] = level?.source ?? 'Default';
    merged[field] = level?.rotation[field] ?? CRD_DEFAULTS[field];
  }
  const withDefaults = merged as Rotation;
  const broken = ms(withDefaults.interval) > 0 && ms(withDefaults.gracePeriod) >= ms(withDefaults.interval);
  const defaultsRefused = levels.length > 0 && broken;
  const rotation = defaultsRefused || levels.length === 0 ? { ...CRD_DEFAULTS, ...own } : withDefaults;
  const intervalMs = ms(rotation.interval);
  const model = windowModel(rotation.window);
  const windowRefused = model !== undefined && intervalMs > 0 && model.refused;
  return {
    rotation,
    intervalMs,
    graceMs: ms(rotation.gracePeriod),
    ...(model && !windowRefused && intervalMs > 0 ? { window: model } : {}),
    windowRefused,
    jitterPercent: rotation.jitterPercent ?? 0,
    ...(levels.length > 0 && !defaultsRefused ? { sources } : {}),
    defaultsRefused,
  };
}

/** How `status.policy` differs from the expected one (undefined: it does not). */
export function policyDiff(expected: ExpectedPolicy, recorded: PolicyStatus | undefined): string | undefined {
  if (!expected.sources) return recorded === undefined ? undefined : `status.policy is recorded (${JSON.stringify(recorded)}) while ${expected.defaultsRefused ? 'the fleet defaults are refused' : 'no fleet defaults are set for it'}`;
  if (recorded === undefined) return `status.policy is missing while fleet defaults are set for it (${JSON.stringify(expected.rotation)})`;
  const got = recorded.rotation as Rotation;
  for (const field of ROTATION_FIELDS) {
    const want = expected.rotation[field];
    if (JSON.stringify(got[field]) !== JSON.stringify(want)) return `status.policy.rotation.${field} is ${JSON.stringify(got[field])}, not ${JSON.stringify(want)}`;
    const source = (recorded.sources as Record<string, string>)[`rotation.${field}`];
    if (source !== expected.sources[field]) return `status.policy.sources["rotation.${field}"] is ${source}, not ${expected.sources[field]}`;
  }
  return undefined;
}

/** The times a scheduled rotation of a recorded rotation is bounded by. */
export interface Bounds {
  /** The reference's nextRotation: min(lastRotation + interval, credentialExpiresAt − gracePeriod). */
  readonly due: number;
  /** Never before: lastRotation + gracePeriod (or due, if earlier). */
  readonly earliest: number;
  /** Never before, without an applied window: the jittered lower bound, max(earliest, due − jitter span). */
  readonly jittered: number;
}

/** The bounds of the next scheduled rotation after `lastRotation` (undefined with the schedule off). */
export function boundsOf(policy: ExpectedPolicy, status: { lastRotation?: string; credentialExpiresAt?: string }): Bounds | undefined {
  if (policy.intervalMs === 0 || status.lastRotation === undefined) return undefined;
  const last = Date.parse(status.lastRotation);
  const expiry = status.credentialExpiresAt === undefined ? Infinity : Date.parse(status.credentialExpiresAt) - policy.graceMs;
  const due = Math.min(last + policy.intervalMs, expiry);
  const earliest = Math.min(due, last + policy.graceMs);
  return { due, earliest, jittered: Math.max(earliest, due - (policy.intervalMs * policy.jitterPercent) / 100) };
}

/** Whole seconds: deadlines round up, as status times are written. */
export const ceilSecond = (t: number) => Math.ceil(t / 1000) * 1000;
export const floorSecond = (t: number) => Math.floor(t / 1000) * 1000;
