/**
 * What `decide` reads and returns: the order as the lifecycle sees it, the observed world, the actions and the plan.
 * Nothing here carries a secret: actions name generations, and the runner fetches a parked secret only when it executes
 * one, so a plan can be logged, diffed and shown as it is.
 */
import type { AccessRule, AdmissionReason, CredentialReason, DeliveryReason, KeystoneApplicationCredentialStatus, PolicyStatus, ResolvedSpec } from '../api';

/** The order, as every face hands it to the lifecycle. */
export interface LifecycleOrder {
  /** The per-order prefix the credential names derive from (see `childPrefix` / `credentialName`). */
  readonly prefix: string;
  /**
   * The order's owner id, carried in the description of every credential it mints and proving them its own
   * (ownership.ts): the operator's order `metadata.uid`, the Pulumi resource's id drawn at create. Absent for a face
   * without one (the demo): its credentials are proven by their secrets' proofs and by its records.
   */
  readonly owner?: string;
  /** `metadata.generation`, reported back as `status.observedGeneration`. */
  readonly generation?: number;
  /** The spec with its defaults resolved. */
  readonly spec: ResolvedSpec;
  /** The status as last recorded. */
  readonly status: KeystoneApplicationCredentialStatus;
  /** The order is being deleted: tear down. */
  readonly deleting?: boolean;
  /** The delivered Secret's name, reported as `status.secretName`; absent for a face that delivers no Secret. */
  readonly secretName?: string;
  /**
   * Fleet defaults (issue 48, src/plane/policy.ts; the operator's): `status` is recorded as `status.policy`, and
   * `refused` says why the defaults are not applied (`spec` is then the order's own). Absent: none apply.
   */
  readonly policy?: { readonly status?: PolicyStatus; readonly refused?: string };
  /**
   * The path of the order's own backup, recorded as `status.backupPath` once the backup lives there alone
   * (migration.ts); absent for a face that records no migration (its own state says it: Pulumi's owner id).
   */
  readonly backupPath?: string;
  /**
   * A request to revoke now (issue 49): the `c5c3.io/revoke-previous` annotation's value, the Pulumi input
   * `revokePrevious`. Pending while it differs from `status.lastRevokeRequest` (rotation.ts, `revokePending`).
   */
  readonly revokeRequest?: string;
  /**
   * The keys the delivered Secret carries, for `status.secretKeys`: the reference's three and those the order's
   * template adds (issue 49). @default the reference's three
   */
  readonly secretKeys?: readonly string[];
}

/**
 * What a credential carries, as Keystone shows it (issue 42): its roles and its access rules, both immutable in
 * Keystone, and whether its roles were a chosen subset.
 */
export interface HeldPrivileges {
  /** The names of the roles Keystone lists for it. Absent when the face does not know them. */
  readonly roles?: readonly string[];
  /**
   * It was minted with a chosen subset of roles (its description's mark, ownership.ts), not with every role its user
   * held: with `spec.roles` left out, such a credential is replaced.
   */
  readonly subset: boolean;
  /** Its access rules; empty: none, every request its roles allow. */
  readonly accessRules: readonly AccessRule[];
}

/** A credential of a generation, as Keystone holds it. */
export interface HeldCredential {
  readonly id: string;
  readonly expiresAt?: Date;
  /** What it carries; absent when the face does not know (the rotation trigger then reads no change). */
  readonly privileges?: HeldPrivileges;
}

/** One credential generation as the world holds it: its parked secret and its Keystone credential. */
export interface GenerationRecord {
  readonly generation: number;
  /** The generation's secret is parked and readable. */
  readonly parked: boolean;
  /** A terminal error recorded when Keystone refused to create it. */
  readonly failure?: string;
  /** The credential of this generation's deterministic name, as Keystone holds it. */
  readonly credential?: HeldCredential;
  /**
   * The generation holds a credential the order adopted (issue 49, `spec.adopt`) rather than minted: its Keystone id,
   * as the parked record names it. Its name is not the generation's, and its description carries no mark.
   */
  readonly adopted?: string;
}

/**
 * A credential under the order's names that the order cannot prove it minted (ownership.ts): another installation's
 * that orders the same names for the same Keystone user, or one left behind before anything recorded it. Never
 * deleted, adopted, rotated away or counted as a generation; the order reports it.
 */
export interface ForeignCredential {
  /** The generation its name denotes. */
  readonly generation: number;
  readonly id: string;
  readonly name: string;
  /** The Keystone user that holds it (the ordered user), when the port knows it. */
  readonly userId?: string;
  /** The owner id its description names (ownership.ts), if any: whose it is, for whoever may have to delete it. */
  readonly owner?: string;
}

/** The delivered Secret (or the face's equivalent). */
export type DeliveryObservation =
  | { readonly state: 'absent' }
  /**
   * A Secret of the delivered name the order does not own: never taken over. `credentialId`: the id it names, which
   * only the teardown reads (a Secret an earlier pass of a Retain teardown released reads as foreign: teardown.ts).
   */
  | { readonly state: 'foreign'; readonly credentialId?: string }
  /**
   * The order's Secret, carrying the credential `credentialId`; `intact` when all three keys hold what the order wrote.
   * `switchedAt`: this pass's write switched the Secret to `credentialId` from the superseded credential, and was
   * confirmed then (the world the runner carries, execute.ts): the grace period runs from that moment (step.ts).
   */
  | { readonly state: 'delivered'; readonly credentialId: string; readonly intact: boolean; readonly switchedAt?: Date };

/** Why the order may not act at all (spec, Consent; Conditions rows "both"). */
export interface Admission {
  readonly reason: AdmissionReason;
  readonly message: string;
}

/** Why the order may not create or rotate (spec, Consent: the gates on user, project and role). */
export interface Gate {
  readonly reason: CredentialReason;
  readonly message: string;
}

/**
 * Why the order's document cannot be delivered where the order lives (spec, Delivered Secret contract: an order on
 * another cluster whose ControlPlane publishes no endpoint reports `DeliveryReady=False/KeystoneNotPublished`).
 */
export interface Undeliverable {
  readonly reason: typeof DeliveryReason.KeystoneNotPublished;
  readonly message: string;
}

/** Everything one pass observed. */
export interface Observations {
  /** Set when the order is not admitted; the order is frozen. */
  readonly admission?: Admission;
  /** Set when a gate refuses; the schedule pauses and the delivered credential is kept. */
  readonly gate?: Gate;
  /**
   * Set when no document can be delivered where the order lives: nothing is created, switched, delivered or repaired
   * (a credential nobody can be handed is not minted), and what the Secret carries stays.
   */
  readonly undeliverable?: Undeliverable;
  /**
   * Every generation that has a parked secret, a recorded failure or a Keystone credential. While `keystoneError` is
   * set the records carry no `credential`: what Keystone holds is unknown, not empty.
   */
  readonly generations: readonly GenerationRecord[];
  /**
   * Credentials under the order's names the order did not mint (ownership.ts); not among `generations`. Absent or
   * empty when there are none, and while `keystoneError` is set.
   */
  readonly foreign?: readonly ForeignCredential[];
  /**
   * Keystone could not be listed this pass (its error text, never a secret). The order then repairs what needs only the
   * parked secret and the recorded id, and neither rotates, sweeps nor deletes anything.
   */
  readonly keystoneError?: string;
  /**
   * The backup; absent when none is configured, or not read because nothing this pass decides asks for it (an order
   * that cannot act, whose migration its status records: migration.ts, `backupIdleWhileStopped`).
   */
  readonly backup?: BackupObservation;
  /**
   * The path keystone-appcred 0.1.0 backed up to (the spec's, without the owner segment), when the face looks at it this
   * pass (migration.ts): its document is removed once proven the order's own. Absent: not looked at.
   */
  readonly formerBackup?: BackupObservation;
  readonly delivery: DeliveryObservation;
}

/** The backup as one pass saw it. */
export interface BackupObservation {
  /** The credential id of the document the backup holds; absent when it holds none (or `error` is set). */
  readonly credentialId?: string;
  /** The backup could not be read (its error text): whether it holds the current document is unknown. */
  readonly error?: string;
}

/** Why a rotation starts (spec, Rotation: "A rotation starts when one of these holds"). */
export type Trigger =
  /** The order holds no credential yet. */
  | 'first'
  /** The clock has reached status.nextRotation. */
  | 'schedule'
  /** spec.credentialGeneration is above status.credentialGeneration. */
  | 'generation-raised'
  /** The live credential has expired in Keystone. */
  | 'expired'
  /** The live credential is gone from Keystone (deleted out of band). */
  | 'gone'
  /** The live credential's secret is lost; Keystone cannot hand it back. */
  | 'secret-lost'
  /**
   * Not the reference's (issue 42): the live credential's roles or access rules are not the spec's. Keystone keeps both
   * immutable, so the change is a successor minted with the spec's, switched to with the usual grace period.
   */
  | 'privileges-changed'
  /** Not the reference's (issue 49): a revoke request is pending; the successor's switch skips the grace period. */
  | 'revoke-requested';

/** A small idempotent step; the runner executes them in order. */
export type Action =
  /** Generate (crypto-random, at least 256 bits) and park the secret of a generation, before Keystone sees it. */
  | { readonly type: 'park'; readonly generation: number; readonly why: string }
  /**
   * Create the generation's credential in Keystone, with its parked secret, its deterministic name (or the alternate
   * one when a foreign credential holds that), and the order's marks in its description.
   */
  | { readonly type: 'mint'; readonly generation: number; readonly name: string; readonly expiresAt?: Date; readonly why: string }
  /** Write the generation's document (its credential `credentialId` and its parked secret) to the backup. */
  | { readonly type: 'backup'; readonly generation: number; readonly credentialId: string; readonly why: string }
  /**
   * Write the generation's document (its credential `credentialId` and its parked secret) to the delivered Secret.
   * `unowned`: the id the Secret named before this repair, when it is none of the order's credentials (a tenant's edit:
   * it is reported, never recorded, adopted or deleted). A tenant's value: print it only through `shownCredentialId`.
   * `switching`: the write switches the Secret from the superseded credential, whose grace period runs from when the
   * write is confirmed (step.ts).
   */
  | { readonly type: 'deliver'; readonly generation: number; readonly credentialId: string; readonly why: string; readonly unowned?: string; readonly switching?: true }
  /**
   * Adopt an existing credential of the ordered user as the generation (issue 49, `spec.adopt`): prove it by its secret
   * (Keystone authenticates the id with it, and it is the user's, on the project, restricted: adoption.ts) and park that
   * secret as the generation's, naming the credential. Nothing is created in Keystone.
   */
  | { readonly type: 'adopt'; readonly generation: number; readonly credentialId: string; readonly why: string }
  /** Delete the generation's credential in Keystone; an already deleted one is fine. */
  | { readonly type: 'delete'; readonly generation: number; readonly id: string; readonly why: string }
  /** Forget the generation's parked secret (its credential is gone from Keystone). */
  | { readonly type: 'discard'; readonly generation: number; readonly why: string }
  /** Remove the backup's document (teardown). */
  | { readonly type: 'remove-backup'; readonly why: string }
  /** Remove the order's own document, credential `credentialId`, from the path 0.1.0 backed up to (migration.ts). */
  | { readonly type: 'remove-former-backup'; readonly credentialId: string; readonly why: string }
  /** Remove the delivered Secret (teardown). */
  | { readonly type: 'withdraw'; readonly why: string }
  /**
   * Teardown under `deletionPolicy: Retain` (issue 49): the generation's credential stays in Keystone, the delivered
   * Secret carrying it stays with its owner reference removed, and the backup holding it stays; the face records what
   * it left and the commands that remove it.
   */
  | { readonly type: 'retain'; readonly generation: number; readonly id: string; readonly backup: boolean; readonly why: string }
  /** Teardown is done: release the order (drop the finalizer, forget the resource). */
  | { readonly type: 'release'; readonly why: string };

/** One action of a pass failed: what went wrong, for the conditions. Carries the error text, never a secret. */
export interface Failure {
  readonly action: Action;
  readonly message: string;
  /** The order's Secret template could not be rendered (issue 49): DeliveryReady names it, not the API server. */
  readonly template?: boolean;
}

/** What `decide` returns. */
export interface Plan {
  /** The status to record once every action has succeeded. */
  readonly status: KeystoneApplicationCredentialStatus;
  /** The actions of this step, in order; empty when the order has converged for now. */
  readonly actions: readonly Action[];
  /**
   * When to look again if nothing else happens: the earliest of nextRotation, previousCredentialDeleteAt, the live
   * credential's expiry and the time a waiting successor must be replaced, that lies after `now`. Never in the past, so
   * a driver that requeues at `wakeAt` cannot spin.
   */
  readonly wakeAt?: Date;
}
