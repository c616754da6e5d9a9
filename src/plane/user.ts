/**
 * The KeystoneUser's rules (identity-plane.md, KeystoneUser; Shared behaviour), as a pure `decide`:
 * - the user of `userName` in the ControlPlane's domain, created with the order's ownership marker in its description;
 *   a user of that name without it is a collision, never adopted or deleted;
 * - the password of each generation is generated once and parked (a child Secret in the ControlPlane's namespace)
 *   before Keystone is changed, so a crash never loses it; a raised `passwordGeneration` rotates the password (never
 *   held), and once Keystone holds it the other parked generations are swept;
 * - the delivered Secret `<name>-credentials` carries the password Keystone holds; a foreign Secret of that name is
 *   never taken over (`DeliveryRefused`); an edited or deleted one is repaired;
 * - deletion waits while a role assignment or a credential references the user, then deletes what the order created.
 */
import { DeliveryReason, PlaneConditionType, PlaneDefaults, formatTime, type KeystoneUser, type KeystoneUserStatus } from '../api';
import { report, type Verdict } from './conditions';
import { needsFinalizer, teardownPath, type Consent } from './consent';
import { notPublished } from './delivery';
import type { Hold } from './holds';
import { carriesMarker, deliveredSecretName, ownedDescription, ownerMarker, teardownFinalizer, USER_SECRET_KEYS, locationOf } from './naming';
import { allFalse, observed, override } from './order-status';
import { RECHECK_MS, type FinalizerAction, type PlanePlan } from './plan';
import type { KeystoneRecord } from './ports';
import { UserReason } from './reasons';

/** An action of a KeystoneUser. Passwords are named by generation, never carried: a plan can be logged as it is. */
export type UserAction =
  | FinalizerAction
  /** Generate and park the password of a generation unless one is parked (never overwritten). */
  | { readonly type: 'park'; readonly generation: number; readonly why: string }
  | { readonly type: 'create-user'; readonly name: string; readonly domainId: string; readonly description: string; readonly generation: number; readonly why: string }
  | { readonly type: 'set-password'; readonly userId: string; readonly generation: number; readonly why: string }
  /** Server-side apply the delivered Secret with the generation's password. */
  | { readonly type: 'deliver'; readonly generation: number; readonly why: string }
  /** Delete the parked password of a generation. */
  | { readonly type: 'discard'; readonly generation: number; readonly why: string }
  | { readonly type: 'delete-user'; readonly id: string; readonly why: string }
  /** Delete the delivered Secret (only ever the order's own). */
  | { readonly type: 'withdraw'; readonly why: string };

/** The delivered Secret as observed. */
export type UserDelivery =
  | { readonly state: 'absent' }
  /** A Secret of the delivered name the order does not control. */
  | { readonly state: 'foreign' }
  /** The order's Secret; `carries` is the parked generation whose document it holds exactly, if any. */
  | { readonly state: 'owned'; readonly carries?: number };

/** What one pass observed. */
export interface UserObservations {
  readonly consent: Consent;
  readonly hold?: Hold;
  readonly keystone?: {
    /** The id of `adminCredential.domainName`; undefined: no such domain. */
    readonly domainId?: string;
    /** The user of `userName` in that domain. */
    readonly user?: KeystoneRecord;
  };
  /** The generations whose password is parked. */
  readonly parked: readonly number[];
  readonly delivery: UserDelivery;
  /** The cluster the order lives on. @default the management cluster */
  readonly cluster?: string;
  /** Observing or acting failed: on Keystone → UserFailed, on the delivered Secret → DeliveryError; retried. */
  readonly failure?: { readonly where: 'keystone' | 'delivery'; readonly message: string };
}

const TYPES = [PlaneConditionType.UserReady, PlaneConditionType.DeliveryReady] as const;
type Plan = PlanePlan<KeystoneUserStatus, UserAction>;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The user name an order asks for: `spec.userName`, else `metadata.name`. */
export function userNameOf(user: KeystoneUser): string {
  return user.spec.userName || user.metadata.name;
}

/** The password generation the order asks for. */
export function orderedGeneration(user: KeystoneUser): number {
  return user.spec.passwordGeneration || PlaneDefaults.passwordGeneration;
}

/** Decides the next step of a KeystoneUser. */
export function decideUser(user: KeystoneUser, world: UserObservations, now: Date): Plan {
  const status = observed(user.status, user.metadata.generation);
  if (user.metadata.deletionTimestamp) return teardown(user, status, world, now);
  const { consent } = world;
  if (consent.state === 'refused') return { status: allFalse(status, TYPES, consent.reason, consent.message, now), actions: [] };
  const actions: UserAction[] = [];
  if (needsFinalizer(consent, user.metadata, teardownFinalizer('KeystoneUser'))) actions.push({ type: 'add-finalizer', why: 'the namespace is assigned' });
  if (consent.wait) return { status: allFalse(status, TYPES, consent.wait.reason, consent.wait.message, now), actions };
  if (world.failure) return failed(status, world.failure, now, actions);
  const keystone = world.keystone;
  const domainName = consent.controlPlane.spec.adminCredential.domainName || PlaneDefaults.domainName;
  if (!keystone) return failed(status, { where: 'keystone', message: 'Keystone was not observed' }, now, actions);
  if (keystone.domainId === undefined) {
    return failed(status, { where: 'keystone', message: `domain ${domainName} (adminCredential.domainName) does not exist in Keystone` }, now, actions);
  }
  const name = userNameOf(user);
  const uid = user.metadata.uid ?? '';
  const generation = orderedGeneration(user);
  const parked = new Set(world.parked);
  const next: Mutable<KeystoneUserStatus> = { ...status };
  const found = keystone.user;

  if (!found) {
    if (!parked.has(generation)) actions.push({ type: 'park', generation, why: 'before Keystone sees it' });
    const description = ownedDescription('KeystoneUser', locationOf(user, world.cluster), uid);
    actions.push({ type: 'create-user', name, domainId: keystone.domainId, description, generation, why: `no user ${name} in domain ${domainName}` });
    next.passwordGeneration = generation;
    next.lastPasswordRotation = formatTime(now);
    delete next.userID;
    return { status: next, actions };
  }
  if (!carriesMarker(uid, { description: found.description ?? '' })) {
    delete next.userID;
    const message = `a user ${name} (id ${found.id}) exists in domain ${domainName} that this order did not create (its description lacks ${ownerMarker(uid)}); it is never adopted or deleted`;
    const delivery = conditionOrPending(status, 'the user is not provisioned');
    return { status: withConditions(next, [{ status: 'False', reason: UserReason.UserCollision, message }, delivery], now), actions, requeueAfter: RECHECK_MS };
  }

  next.userID = found.id;
  // Keystone holds the ordered generation only once this order set it; a lost status or a lost parked password sets it again.
  if (status.passwordGeneration !== generation || !parked.has(generation)) {
    const why = status.passwordGeneration === undefined || status.passwordGeneration === generation ? 'the generation Keystone holds is not recorded or its password is lost' : `passwordGeneration raised to ${generation}`;
    if (!parked.has(generation)) actions.push({ type: 'park', generation, why: 'before Keystone sees it' });
    actions.push({ type: 'set-password', userId: found.id, generation, why });
    next.passwordGeneration = generation;
    next.lastPasswordRotation = formatTime(now);
  }
  const userVerdict: Verdict = { status: 'True', reason: UserReason.UserProvisioned, message: `user ${found.name} (id ${found.id}) holds password generation ${generation}` };
  const delivery = deliver(user, world, generation, actions);
  for (const g of world.parked) if (g !== generation) actions.push({ type: 'discard', generation: g, why: `Keystone holds generation ${generation}` });
  if (delivery.status === 'True') {
    next.secretName = deliveredSecretName(user.metadata.name);
    next.secretKeys = [...USER_SECRET_KEYS];
  } else {
    delete next.secretName;
    delete next.secretKeys;
  }
  return { status: withConditions(next, [userVerdict, delivery], now), actions };
}

/** Delivers the generation unless the Secret is foreign, the cluster has no published endpoint, or it carries it already. */
function deliver(user: KeystoneUser, world: UserObservations, generation: number, actions: UserAction[]): Verdict {
  const name = deliveredSecretName(user.metadata.name);
  const { consent } = world;
  const unpublished = consent.state === 'assigned' ? notPublished(consent.controlPlane, world.cluster) : undefined;
  if (unpublished) return { status: 'False', ...unpublished };
  const delivery = world.delivery;
  if (delivery.state === 'foreign') {
    return { status: 'False', reason: DeliveryReason.DeliveryRefused, message: `a Secret ${name} exists that this order does not own; it is never taken over` };
  }
  if (delivery.state === 'absent' || delivery.carries !== generation) {
    actions.push({ type: 'deliver', generation, why: delivery.state === 'absent' ? 'Secret missing' : 'the Secret does not carry the current password' });
  }
  return { status: 'True', reason: DeliveryReason.Delivered, message: `the Secret ${name} carries password generation ${generation}` };
}

function withConditions(status: KeystoneUserStatus, [userVerdict, deliveryVerdict]: readonly [Verdict, Verdict], now: Date): KeystoneUserStatus {
  return { ...status, conditions: report(status.conditions, [[TYPES[0], userVerdict], [TYPES[1], deliveryVerdict]], now, status.observedGeneration) };
}

/** DeliveryReady as it was, or False/WaitingForCredential when not reported yet. */
function conditionOrPending(status: KeystoneUserStatus, message: string): Verdict {
  const c = status.conditions?.find((x) => x.type === TYPES[1]);
  return c ? { status: c.status === 'True' ? 'True' : 'False', reason: c.reason, message: c.message } : { status: 'False', reason: DeliveryReason.WaitingForCredential, message };
}

function failed(status: KeystoneUserStatus, failure: NonNullable<UserObservations['failure']>, now: Date, actions: UserAction[]): Plan {
  const verdict: Verdict =
    failure.where === 'delivery'
      ? { status: 'False', reason: DeliveryReason.DeliveryError, message: failure.message }
      : { status: 'False', reason: UserReason.UserFailed, message: failure.message };
  return { status: override(status, TYPES, failure.where === 'delivery' ? TYPES[1] : TYPES[0], verdict, now), actions, requeueAfter: RECHECK_MS };
}

/** Deletion: wait while held; then the user (if this order created it), the parked passwords, the delivered Secret. */
function teardown(user: KeystoneUser, status: KeystoneUserStatus, world: UserObservations, now: Date): Plan {
  if (!(user.metadata.finalizers ?? []).includes(teardownFinalizer('KeystoneUser'))) return { status, actions: [] };
  if (world.hold) return { status: override(status, TYPES, TYPES[0], { status: 'False', reason: world.hold.reason, message: world.hold.message }, now), actions: [], requeueAfter: RECHECK_MS };
  const path = teardownPath(world.consent);
  if (path.path === 'wait') return { status: override(status, TYPES, TYPES[0], { status: 'False', reason: path.wait.reason, message: `deletion waits: ${path.wait.message}` }, now), actions: [] };
  if (path.path === 'proceed' && world.failure) return failed(status, world.failure, now, []);
  const actions: UserAction[] = [];
  const found = world.keystone?.user;
  if (path.path === 'proceed' && found && carriesMarker(user.metadata.uid ?? '', { description: found.description ?? '' })) {
    actions.push({ type: 'delete-user', id: found.id, why: 'teardown' });
  }
  for (const g of world.parked) actions.push({ type: 'discard', generation: g, why: 'teardown' });
  if (world.delivery.state === 'owned') actions.push({ type: 'withdraw', why: 'teardown' });
  const why = path.path === 'release' ? 'the ControlPlane is gone: nothing is left to reach Keystone with' : 'teardown done';
  actions.push({ type: 'release', why });
  return { status, actions };
}
