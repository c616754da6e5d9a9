/**
 * Which of the credentials under an order's names the order minted. Keystone keeps one credential name per user, and
 * the names are deterministic (`<prefix>-credential-v<N>`, the prefix a hash of where the order lives), so a second
 * installation that orders the same names for the same Keystone user (a second cluster with the same order namespace
 * and name, a Pulumi stack of the same project, stack and resource name in another backend) lists the first one's
 * credentials under its own names. A name therefore proves nothing. A credential is the order's own, to delete, adopt
 * or count as a generation, only where the order can prove it minted it:
 *
 * - **owner**: its description carries the order's owner id (the operator: the order's `metadata.uid`; Pulumi: an id
 *   drawn at create and kept in the state), which another installation's order does not have;
 * - **proof**: its description carries a digest of its secret that matches the order's parked secret of that
 *   generation: only the holder of the secret can produce it (a restored cluster, whose orders have new uids, holds
 *   its parked secrets);
 * - **record**: its id is one the order recorded (the status's `credentialID` or `previousCredentialID`, the backup at
 *   the order's own path), which only the order writes: credentials minted before credentials carried marks stay their
 *   orders' own, and so does what a restored status names. An unmarked credential no record names counts as one when
 *   Keystone authenticates it with the order's parked secret of its generation (observe.ts, `verifiedRecords`): 0.1.0's
 *   successor minted and parked but not switched to at the upgrade, a delivered credential whose status a restore lost.
 *   The delivered Secret, which a tenant may edit, is never evidence by itself.
 *
 * Everything else under the order's names is foreign: never deleted, adopted, rotated away or counted as a generation;
 * the order reports it and mints under a name that does not collide ({@link alternateCredentialName}). A credential
 * that carries no mark and no record (one a crash left behind before anything recorded it) is therefore left to its
 * Keystone expiry (docs/concepts/ownership.md).
 *
 * The marks are no secret: the owner id is an identifier, and the proof is a one-way digest of 256 random bits.
 */
import { createHash } from 'node:crypto';
import type { ForeignCredential } from './model';

/** What a credential's description says about who minted it, and how. */
export interface CredentialMark {
  /** The owner id of the order that minted it. */
  readonly owner?: string;
  /** {@link proofOf} the secret it was minted with. */
  readonly proof?: string;
  /**
   * Its roles are a subset the order chose (`roles=subset`; issue 42), not every role its user held: Keystone lists a
   * credential's roles, not whether they were chosen, and an order that drops its subset must replace it.
   */
  readonly subset?: boolean;
}

/** Separates the proof's input from any other use of a secret's digest. */
const PROOF_CONTEXT = 'keystone-appcred application credential proof v1\n';

/** The proof of a secret: base64url of sha256 over a fixed context and the secret (43 characters). */
export function proofOf(secret: string): string {
  return createHash('sha256').update(PROOF_CONTEXT).update(secret).digest('base64url');
}

/** A credential's description: what it is for, then its marks (`; owner=<id>; proof=<digest>; roles=subset`). */
export function describeCredential(about: string, mark: CredentialMark): string {
  return [about, ...(mark.owner ? [`owner=${mark.owner}`] : []), ...(mark.proof ? [`proof=${mark.proof}`] : []), ...(mark.subset ? ['roles=subset'] : [])].join('; ');
}

/** The marks a description carries; none for a credential minted before marks, or by anybody else. */
export function markOf(description: string | undefined): CredentialMark {
  if (!description) return {};
  const field = (name: string): string | undefined => new RegExp(`(?:^|;\\s*)${name}=([A-Za-z0-9_.:-]+)\\s*(?:;|$)`).exec(description)?.[1];
  const owner = field('owner');
  const proof = field('proof');
  const subset = field('roles') === 'subset';
  return { ...(owner ? { owner } : {}), ...(proof ? { proof } : {}), ...(subset ? { subset } : {}) };
}

/** What an order can prove its credentials by. */
export interface OwnershipEvidence {
  /** The order's owner id; absent for a face that has none (the demo), which then proves by proof and record. */
  readonly owner?: string;
  /** The proof of each parked generation's secret that the pass needed to compare. */
  readonly proofs: ReadonlyMap<number, string>;
  /** Credential ids the order recorded: the status's, the backup's, and a delivered Secret's that Keystone proved paired. */
  readonly recorded: ReadonlySet<string>;
}

/** A credential under the order's names, as the Keystone port lists it. */
export interface MarkedCredential {
  readonly generation: number;
  readonly id: string;
  readonly mark: CredentialMark;
}

/** Whether the order minted `credential`, by owner, proof or record; see the module comment. */
export function owns(evidence: OwnershipEvidence, credential: MarkedCredential): boolean {
  const { mark } = credential;
  if (evidence.recorded.has(credential.id)) return true;
  if (evidence.owner !== undefined && mark.owner === evidence.owner) return true;
  return mark.proof !== undefined && evidence.proofs.get(credential.generation) === mark.proof;
}

/**
 * Whether the order needs the proof of a parked generation's secret to judge `credential`: it carries a proof, and
 * neither its owner nor a record settles it. The pass reads only those secrets.
 */
export function needsProof(evidence: Omit<OwnershipEvidence, 'proofs'>, credential: MarkedCredential): boolean {
  if (evidence.recorded.has(credential.id)) return false;
  if (evidence.owner !== undefined && credential.mark.owner === evidence.owner) return false;
  return credential.mark.proof !== undefined;
}

/** A listed credential, as {@link sortCredentials} takes it. */
export interface ListedCredential extends MarkedCredential {
  readonly name: string;
  readonly userId?: string;
}

/**
 * The listed credentials the order minted, at most one per generation, and the foreign ones. One order never mints two
 * credentials of one generation (a generation is minted only while Keystone holds none of the order's for it); should
 * a world show two anyway, the recorded one counts and the other is reported as foreign, so nothing is deleted on a
 * guess.
 */
export function sortCredentials<C extends ListedCredential>(listed: readonly C[], evidence: OwnershipEvidence): { own: C[]; foreign: ForeignCredential[] } {
  const mine = new Map<number, C>();
  for (const c of listed) {
    if (!owns(evidence, c)) continue;
    const held = mine.get(c.generation);
    if (!held || (evidence.recorded.has(c.id) && !evidence.recorded.has(held.id))) mine.set(c.generation, c);
  }
  const foreign = listed
    .filter((c) => mine.get(c.generation) !== c)
    .map((c) => ({ generation: c.generation, id: c.id, name: c.name, ...(c.userId !== undefined ? { userId: c.userId } : {}), ...(c.mark.owner !== undefined ? { owner: c.mark.owner } : {}) }))
    .sort((a, b) => a.generation - b.generation || a.name.localeCompare(b.name));
  return { own: [...mine.values()], foreign };
}

/** Keystone's form of an application credential id: `uuid4().hex`. */
const KEYSTONE_ID = /^[0-9a-f]{32}$/;

/**
 * How a credential id a tenant could have written (the delivered Secret's `application_credential_id`) is shown in a log
 * line or an Event: as it is when it has Keystone's form, else by its length only. A tenant who swapped the Secret's id
 * and secret, or pasted anything else there, must not have that value printed (ground rule 4): only Keystone's ids are.
 */
export function shownCredentialId(id: string): string {
  return KEYSTONE_ID.test(id) ? id : `<a value of ${id.length} characters that is not a Keystone id, not shown>`;
}
