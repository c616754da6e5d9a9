/**
 * Adoption (issue 49, `spec.adopt`; K-ORC #670): an order takes an existing application credential of its user under
 * management instead of minting its first one, so a hand-made credential moves under the operator without a second
 * credential or a gap. Only what the order can prove its own is ever deleted (ownership.ts), and an adopted credential
 * is proven by its secret, which the order's author hands over in a Secret of the order's namespace:
 *
 * - **proof**: Keystone authenticates the id with the given secret (an unknown id, a wrong secret or an expired
 *   credential is refused: Keystone says no to all three alike);
 * - **the order's user and project**: Keystone shows the credential under the ordered user (a credential of another
 *   user is not found there), scoped to the ordered project;
 * - **restricted**: an unrestricted credential may create and delete application credentials, which no credential this
 *   project delivers may (the reference: "The credential is always restricted"): refused;
 * - **no order's**: one an order minted is that order's to rotate and sweep, and two orders would rotate and sweep it:
 *   refused when its description names an owner (every release since 0.2.0 marks what it mints) or when its name is an
 *   order's credential name (src/api/naming.ts, `isCredentialName`: every release names what it mints so, and 0.1.0's
 *   credentials carry no mark; Keystone keeps the name a credential was created with, and only its creator chose it);
 * - **deliverable**: the order's template can carry its secret (a hand-made secret may hold what `cloud.conf` cannot).
 *
 * Its roles, access rules and expiry are taken as they are: a credential whose roles or rules are not the spec's is
 * rotated away at once with the usual grace period (privileges.ts), one whose expiry comes before the schedule's is
 * rotated at `credentialExpiresAt − gracePeriod` (rotation.ts). The secret is parked as the generation's, naming the
 * credential, and written to the backup at the switch, so the proof survives restarts and the loss of the status;
 * the next rotation supersedes the adopted credential and sweeps it after the grace period, as any other.
 */
import { isCredentialName } from '../api';
import type { Action, HeldCredential } from './model';
import type { CredentialScope, DescribedCredential, Ports } from './ports';
import { TemplateError } from './secret-template';

/** An adoption the order refuses; the message says why and what to do, never the secret. */
export class AdoptionRefused extends Error {
  override readonly name = 'AdoptionRefused';
}

/** What an adoption established about the credential. */
export interface AdoptionFacts {
  /** Keystone authenticated the id with the given secret. */
  readonly authenticated: boolean;
  /** The ordered user's credential of that id, as Keystone shows it; absent: the user has none. */
  readonly described?: DescribedCredential;
  /** The ordered user and project. */
  readonly scope: Pick<CredentialScope, 'userId' | 'projectId'>;
  /** Why the order's template cannot carry the secret, if it cannot. */
  readonly undeliverable?: string;
}

/** Why the credential `id` may not be adopted, or undefined when it may (see the module comment). */
export function adoptionRefusal(id: string, facts: AdoptionFacts): string | undefined {
  if (!facts.authenticated) return `Keystone does not authenticate application credential ${id} with the given secret: the id, the secret or the expiry is wrong`;
  const c = facts.described;
  if (c === undefined) return `application credential ${id} is not one of the ordered user's (Keystone user ${facts.scope.userId})`;
  if (c.projectId !== facts.scope.projectId) return `application credential ${id} is scoped to project ${c.projectId}, not the ordered project ${facts.scope.projectId}`;
  if (c.unrestricted) return `application credential ${id} is unrestricted (it may create and delete application credentials); only a restricted credential can be adopted`;
  if (c.mark.owner !== undefined) return `application credential ${id} was minted by another order (owner ${c.mark.owner}); that order rotates and sweeps it`;
  if (isCredentialName(c.name)) return `application credential ${id} was minted by an order (its name ${c.name} is an order's credential name); that order rotates and sweeps it`;
  if (facts.undeliverable !== undefined) return `application credential ${id} cannot be delivered: ${facts.undeliverable}`;
  return undefined;
}

/**
 * Executes an `adopt` action through the ports: reads the given secret, proves the credential (see the module comment)
 * and parks the secret as the generation's. Throws {@link AdoptionRefused} for a refusal; the credential as Keystone
 * holds it otherwise.
 */
export async function adopt(ports: Ports, action: Extract<Action, { type: 'adopt' }>): Promise<HeldCredential> {
  const { keystone, secrets } = ports;
  if (!ports.adoption || !keystone.verify || !keystone.describe || !keystone.scope || !secrets.adopt) throw new AdoptionRefused('this face cannot adopt a credential');
  const given = await ports.adoption();
  if ('refused' in given) throw new AdoptionRefused(given.refused);
  const id = action.credentialId;
  const [authenticated, described, scope] = await Promise.all([keystone.verify(id, given.secret), keystone.describe(id), keystone.scope()]);
  let undeliverable: string | undefined;
  try {
    ports.template?.(ports.render(id, given.secret));
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    undeliverable = error.message;
  }
  const refusal = adoptionRefusal(id, { authenticated, ...(described ? { described } : {}), scope, ...(undeliverable !== undefined ? { undeliverable } : {}) });
  if (refusal !== undefined) throw new AdoptionRefused(refusal);
  await secrets.adopt(action.generation, given.secret, id);
  const held = described as DescribedCredential;
  return { id, ...(held.expiresAt ? { expiresAt: held.expiresAt } : {}), ...(held.privileges ? { privileges: held.privileges } : {}) };
}
