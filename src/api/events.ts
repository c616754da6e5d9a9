/**
 * The Events the operator records besides a condition's transition (whose reason is the condition's own: conditions.ts,
 * recorded by src/operator/runtime/events.ts): the lifecycle's moments on a KeystoneApplicationCredential (spec,
 * Observability: Minted, Switched, Swept, CredentialFailed, TornDown), what issue 49's delivery options did, the
 * consumer handoff's rolls, and a target cluster's registration. One table, reason → type, action, kinds, meaning:
 * every emit site builds its Event with {@link eventOf}, so a reason the table lacks does not compile and an Event's
 * type and action are the table's, and the reference's Events section is generated from it (`npm run
 * docs:reference`, docs/reference/logs-and-events.md).
 */

/** An Event's type (`events.k8s.io/v1`): Warning calls for a look. */
export type EventType = 'Normal' | 'Warning';

/** What the table says of one reason. */
export interface EventReasonEntry {
  readonly type: EventType;
  /** The Event's `action`: what the operator did or observed. */
  readonly action: string;
  /** The kinds whose objects the Event is about (its `regarding`). */
  readonly kinds: readonly string[];
  /** What it means, for the reference: one sentence, what happened and what the note names. */
  readonly meaning: string;
}

const CREDENTIAL = ['KeystoneApplicationCredential'];
/** A target cluster's registration Secret (docs/configure/target-clusters.md). */
const REGISTRATION = ['Secret'];

/** Every Event reason the operator records besides the conditions', and what each says. */
export const EVENT_REASONS = {
  Minted: {
    type: 'Normal',
    action: 'Mint',
    kinds: CREDENTIAL,
    meaning: 'a generation was created in Keystone; the note says which, and why',
  },
  Switched: {
    type: 'Normal',
    action: 'Rotate',
    kinds: CREDENTIAL,
    meaning: "a rotation's switch: the delivered Secret carries generation N instead of the one before (a new order's first delivery records Minted only)",
  },
  Swept: {
    type: 'Normal',
    action: 'Sweep',
    kinds: CREDENTIAL,
    meaning: 'a generation was deleted in Keystone while the order lives: the superseded one once its grace period is over, or a stray, stale or failed one; the note says which, and why',
  },
  CredentialFailed: {
    type: 'Warning',
    action: 'Mint',
    kinds: CREDENTIAL,
    meaning: 'Keystone refused to create a generation for good (the CredentialReady condition says why)',
  },
  TornDown: {
    type: 'Normal',
    action: 'Teardown',
    kinds: CREDENTIAL,
    meaning: "the teardown finished: every credential, the backup, the parked secrets and the delivered Secret are gone, and the finalizer is released",
  },
  SecretRepaired: {
    type: 'Warning',
    action: 'Repair',
    kinds: CREDENTIAL,
    meaning:
      "the delivered Secret named a credential id that is not the order's (somebody who may edit Secrets in the namespace wrote it): the note names the Secret and the id (a value not of Keystone's id form only by its length), and the Secret is rewritten with the delivered generation",
  },
  ForeignBackup: {
    type: 'Warning',
    action: 'Migrate',
    kinds: CREDENTIAL,
    meaning:
      'the backup path keystone-appcred 0.1.0 wrote for the order holds a credential the order does not record: left alone (another installation sharing OpenBao may have written it); once per process',
  },
  Retained: {
    type: 'Normal',
    action: 'Teardown',
    kinds: CREDENTIAL,
    meaning: 'a deletionPolicy: Retain teardown left the delivered credential, its Secret and its backup: the note names them and the commands that remove them (also logged)',
  },
  GraceSkipped: {
    type: 'Warning',
    action: 'Revoke',
    kinds: CREDENTIAL,
    meaning: 'a revoke request (the c5c3.io/revoke-previous annotation) deleted a superseded credential before its grace period ended: which one and why (also logged)',
  },
  Adopted: {
    type: 'Normal',
    action: 'Adopt',
    kinds: CREDENTIAL,
    meaning: 'the credential spec.adopt names became generation N instead of a mint; the next rotation supersedes it (also logged)',
  },
  WorkloadRolled: {
    type: 'Normal',
    action: 'Handoff',
    kinds: CREDENTIAL,
    meaning: "the consumer handoff rolled a workload: its pod template now carries the delivered generation (one per workload)",
  },
  RolloutOverdue: {
    type: 'Warning',
    action: 'Handoff',
    kinds: CREDENTIAL,
    meaning: "a workload has not finished its rollout to the delivered generation a safety margin before the superseded credential is deleted in Keystone",
  },
  ClusterConnected: {
    type: 'Normal',
    action: 'Connect',
    kinds: REGISTRATION,
    meaning: "a target cluster's API server answered (again): its orders are served",
  },
  ClusterUnreachable: {
    type: 'Warning',
    action: 'Connect',
    kinds: REGISTRATION,
    meaning: "a target cluster's API server does not answer: its orders wait, the other clusters carry on",
  },
  KubeconfigInvalid: {
    type: 'Warning',
    action: 'Register',
    kinds: REGISTRATION,
    meaning: 'the registration Secret has no kubeconfig, or one that does not parse or names no usable cluster: nothing is registered',
  },
} as const satisfies Readonly<Record<string, EventReasonEntry>>;

/** An Event reason of {@link EVENT_REASONS}. */
export type EventReason = keyof typeof EVENT_REASONS;

/** The reasons by name, e.g. `EventReason.Minted`. */
export const EventReason: { readonly [R in EventReason]: R } = Object.fromEntries(Object.keys(EVENT_REASONS).map((r) => [r, r])) as { readonly [R in EventReason]: R };

/** An Event of the table: its type and action the reason's, and a note for people (never a secret). */
export interface ReasonedEvent<R extends EventReason = EventReason> {
  readonly type: (typeof EVENT_REASONS)[R]['type'];
  readonly reason: R;
  readonly action: (typeof EVENT_REASONS)[R]['action'];
  readonly note: string;
}

/** The Event of `reason` with `note`: type and action from {@link EVENT_REASONS}. */
export function eventOf<R extends EventReason>(reason: R, note: string): ReasonedEvent<R> {
  const entry = EVENT_REASONS[reason];
  return { type: entry.type, reason, action: entry.action, note };
}
