/**
 * The conditions of a KeystoneApplicationCredential (spec, Conditions) as one step of `decide` leaves them:
 * `CredentialReady` (the gates, a failed Keystone step, a refused generation, foreign credentials, minted or waiting),
 * `DeliveryReady` (a foreign Secret, nothing deliverable, a failed backup or Secret write, the backup, delivered or
 * waiting), the aggregate `Ready`, and `secretName`/`secretKeys` only while the Secret carries the delivered credential.
 * Pure: a function of what the step observed and established.
 */
import {
  ConditionType,
  CredentialReason,
  DeliveryReason,
  ReadyReason,
  SECRET_KEYS,
  setCondition,
  type Condition,
  type KeystoneApplicationCredentialStatus,
} from '../api';
import type { Failure, ForeignCredential, GenerationRecord, LifecycleOrder, Observations } from './model';
import * as rotation from './rotation';
import { windowRefusal } from './schedule';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** What one step of `decide` observed and established, as the conditions read it. */
export interface StepOutcome {
  readonly order: LifecycleOrder;
  readonly world: Observations;
  /** The observed generations, by number. */
  readonly records: ReadonlyMap<number, GenerationRecord>;
  /** The status the step records; `report` writes the conditions and the Secret's fields into it. */
  readonly status: Mutable<KeystoneApplicationCredentialStatus>;
  /** Whether the step knows what Keystone holds. */
  readonly keystoneKnown: boolean;
  /** The action that failed, for the status of a failed step. */
  readonly failure?: Failure;
  /** The generation a rotation the step started creates. */
  readonly started?: number;
  /** The successor under way, if any. */
  readonly successor?: GenerationRecord;
  /** The generation whose document the step writes to the Secret / the backup. */
  readonly delivered?: number;
  readonly backedUp?: number;
  /** A generation the step could not mint: foreign credentials hold every name it may take. */
  readonly blocked?: number;
  /** The live credential's roles or access rules are not the spec's, and its successor waits for the grace period. */
  readonly deferred?: boolean;
}

/** One condition's status, reason and message, as a step records it. */
export interface ConditionVerdict {
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

const liveOf = (s: StepOutcome): number => rotation.liveGeneration(s.status);

/** Whether the Secret carries the delivered credential once the step's actions succeeded. */
function secretCarriesLive(s: StepOutcome): boolean {
  if (liveOf(s) === 0) return false;
  if (s.delivered === liveOf(s)) return true;
  const delivery = s.world.delivery;
  return delivery.state === 'delivered' && delivery.intact && delivery.credentialId === s.status.credentialID;
}

/**
 * The conditions, `secretName` and `secretKeys` as they will read once the step's actions succeeded (or, for a failed
 * step, as things stand); writes them into `s.status`.
 */
export function report(s: StepOutcome, now: Date): void {
  const credential = credentialCondition(s, now);
  const delivery = deliveryCondition(s);
  const generation = s.status.observedGeneration;
  let conditions: Condition[] | undefined = s.status.conditions ? [...s.status.conditions] : undefined;
  conditions = setCondition(conditions, { type: ConditionType.CredentialReady, ...credential }, now, generation);
  conditions = setCondition(conditions, { type: ConditionType.DeliveryReady, ...delivery }, now, generation);
  conditions = setCondition(conditions, { type: ConditionType.Ready, ...readyOf(credential, delivery) }, now, generation);
  s.status.conditions = conditions;
  // spec, Status: secretName and secretKeys appear once the Secret carries the current credential, and only then.
  if (secretCarriesLive(s) && s.order.secretName !== undefined && s.world.delivery.state !== 'foreign' && !s.world.undeliverable) {
    s.status.secretName = s.order.secretName;
    s.status.secretKeys = [...(s.order.secretKeys ?? SECRET_KEYS)];
  } else {
    delete s.status.secretName;
    delete s.status.secretKeys;
  }
}

function credentialCondition(s: StepOutcome, now: Date): ConditionVerdict {
  if (s.world.gate) return { status: 'False', reason: s.world.gate.reason, message: s.world.gate.message };
  const failure = s.failure;
  if (failure?.action.type === 'adopt') return { status: 'False', reason: CredentialReason.AdoptionRefused, message: failure.message };
  if (failure && ['park', 'mint', 'delete', 'discard'].includes(failure.action.type)) {
    return { status: 'False', reason: CredentialReason.CredentialError, message: failure.message };
  }
  if (s.world.keystoneError !== undefined) {
    return { status: 'False', reason: CredentialReason.CredentialError, message: `Keystone cannot be listed: ${s.world.keystoneError}` };
  }
  const pending = s.started ?? (s.successor && s.successor.generation !== s.delivered ? s.successor.generation : undefined);
  const failed = s.successor?.failure !== undefined && s.delivered === undefined ? s.successor : undefined;
  if (failed) {
    return {
      status: 'False',
      reason: CredentialReason.CredentialFailed,
      message: `generation ${failed.generation}: ${failed.failure}; raise spec.credentialGeneration above ${failed.generation} to replace it`,
    };
  }
  const live = liveOf(s);
  const exists = s.delivered === live || s.records.get(live)?.credential !== undefined;
  const foreign = s.keystoneKnown ? (s.world.foreign ?? []) : [];
  if (s.blocked !== undefined && !(live > 0 && exists)) {
    return { status: 'False', reason: CredentialReason.ForeignCredential, message: `generation ${s.blocked} cannot be created: ${foreignNote(foreign)}` };
  }
  const refused = live > 0 && exists ? standingRefusal(s.order, live, now) : undefined;
  if (refused !== undefined) return refused;
  if (live > 0 && exists) {
    const deferred = s.deferred
      ? `; its roles or access rules differ from the spec's: a successor carrying the spec's is created when the grace period of generation ${s.status.previousCredentialGeneration} ends (${s.status.previousCredentialDeleteAt})`
      : '';
    const adopted = s.records.get(live)?.adopted;
    const named = `generation ${live}${adopted !== undefined ? ` (adopted application credential ${adopted})` : ''}`;
    const message = (pending !== undefined ? `${named} is delivered; generation ${pending} is being created` : `${named} exists in Keystone`) + deferred;
    if (s.blocked !== undefined) return { status: 'True', reason: CredentialReason.ForeignCredential, message: `${message}; generation ${s.blocked} cannot be created: ${foreignNote(foreign)}` };
    if (foreign.length > 0) return { status: 'True', reason: CredentialReason.ForeignCredential, message: `${message}; ${foreignNote(foreign)}` };
    return { status: 'True', reason: CredentialReason.CredentialMinted, message };
  }
  const undeliverable = s.world.undeliverable ? `; none is created while it cannot be delivered: ${s.world.undeliverable.message}` : '';
  const message =
    live === 0
      ? `waiting for the first credential (generation ${pending ?? s.order.spec.credentialGeneration})${undeliverable}`
      : `generation ${live} is gone from Keystone${pending !== undefined ? `; generation ${pending} is being created` : ''}${undeliverable}`;
  return { status: 'False', reason: CredentialReason.WaitingForCredential, message };
}

/**
 * `CredentialReady` while generation `live` exists in Keystone and the order's settings are refused (issue 48): fleet
 * defaults that would break the order's rules (`DefaultsRefused`, src/plane/policy.ts) or a rotation window that cannot
 * be honoured (`RotationWindowRefused`, ./schedule.ts `windowRefusal`); undefined when nothing is refused. The
 * credential is valid and delivered, but the spec is not being honoured (spec, Conditions), so the condition is False
 * until the settings change; the same spec and policy give the same verdict, pass after pass, which is why such an
 * order is settled as one whose conditions are all True is (./settled.ts).
 */
export function standingRefusal(order: LifecycleOrder, live: number, now: Date): ConditionVerdict | undefined {
  const exists = `generation ${live} exists in Keystone`;
  const defaults = order.policy?.refused;
  if (defaults !== undefined) return { status: 'False', reason: CredentialReason.DefaultsRefused, message: `${exists}; ${defaults}` };
  const window = windowRefusal(order.spec, now);
  if (window === undefined) return undefined;
  return { status: 'False', reason: CredentialReason.RotationWindowRefused, message: `${exists}; the rotation window is refused and not applied until it is fixed: ${window}` };
}

/** `Ready` (spec, Conditions): True when `CredentialReady` and `DeliveryReady` are, else False naming the reasons of those that are not. */
export function readyOf(credential: Pick<ConditionVerdict, 'status' | 'reason'>, delivery: Pick<ConditionVerdict, 'status' | 'reason'>): ConditionVerdict {
  if (credential.status === 'True' && delivery.status === 'True') return { status: 'True', reason: ReadyReason.AllReady, message: 'CredentialReady and DeliveryReady are True' };
  return { status: 'False', reason: ReadyReason.NotAllReady, message: notReady(credential, delivery) };
}

function deliveryCondition(s: StepOutcome): ConditionVerdict {
  const delivery = s.world.delivery;
  if (delivery.state === 'foreign') {
    const name = s.order.secretName !== undefined ? `a Secret ${s.order.secretName}` : 'a Secret of the delivered name';
    return { status: 'False', reason: DeliveryReason.DeliveryRefused, message: `${name} exists that this order does not own; it is never taken over` };
  }
  if (s.world.undeliverable) return { status: 'False', ...s.world.undeliverable };
  const failure = s.failure;
  if (failure && (failure.action.type === 'backup' || failure.action.type === 'remove-backup')) {
    return { status: 'False', reason: DeliveryReason.BackupNotSynced, message: failure.message };
  }
  if (failure?.action.type === 'deliver' && failure.template) return { status: 'False', reason: DeliveryReason.SecretTemplateInvalid, message: failure.message };
  if (failure && (failure.action.type === 'deliver' || failure.action.type === 'withdraw' || failure.action.type === 'retain')) {
    return { status: 'False', reason: DeliveryReason.DeliveryError, message: failure.message };
  }
  const backupError = s.world.backup?.error;
  if (liveOf(s) > 0 && backupError !== undefined) {
    const carries = secretCarriesLive(s) ? `the Secret carries generation ${liveOf(s)}; ` : '';
    return { status: 'False', reason: DeliveryReason.BackupNotSynced, message: `${carries}the backup cannot be read: ${backupError}` };
  }
  if (secretCarriesLive(s)) return { status: 'True', reason: DeliveryReason.Delivered, message: `the Secret carries generation ${liveOf(s)}` };
  const liveId = s.status.credentialID;
  const backupHoldsLive = s.backedUp === liveOf(s) || s.world.backup === undefined || s.world.backup.credentialId === liveId;
  if (liveOf(s) > 0 && !backupHoldsLive) return { status: 'False', reason: DeliveryReason.BackupNotSynced, message: `the backup does not hold generation ${liveOf(s)} yet` };
  return { status: 'False', reason: DeliveryReason.WaitingForCredential, message: liveOf(s) === 0 ? 'no credential exists yet' : `the Secret does not carry generation ${liveOf(s)} yet` };
}

/**
 * What the conditions say of foreign credentials: each one's id, name and user, that it is left alone, and what to do.
 * Ids and names only: Keystone never shows a secret.
 */
export function foreignNote(foreign: readonly ForeignCredential[]): string {
  const each = foreign.map((f) => `${f.id} (${f.name}${f.userId !== undefined ? `, Keystone user ${f.userId}` : ''}${f.owner !== undefined ? `, owner ${f.owner}` : ''})`).join(', ');
  const one = foreign.length === 1;
  return (
    `${one ? 'credential' : 'credentials'} ${each} under this order's names ${one ? 'was' : 'were'} not minted by it and ${one ? 'is' : 'are'} left alone; ` +
    'if another installation (a cluster, a Pulumi stack in another backend) orders the same names for this user, give each its own Keystone user; ' +
    `a leftover nobody owns can be deleted with \`openstack application credential delete ${foreign[0]?.id ?? '<id>'}\``
  );
}

function notReady(...conditions: { status: string; reason: string }[]): string {
  return conditions
    .filter((c) => c.status !== 'True')
    .map((c) => c.reason)
    .join(', ');
}
