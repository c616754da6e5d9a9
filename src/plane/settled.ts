/**
 * Whether an identity-plane object is settled by what the cache shows, so that a process meeting it for the first time
 * (a restart, the standby that took over) skips its Keystone observation: the same rule as the credential's
 * (src/lifecycle/settled.ts), for the kinds whose passes only check what they converged to. A ControlPlane's pass logs
 * in as the admin, a project's, user's or role assignment's looks its object up in Keystone: with hundreds of orders
 * that is hundreds of admin calls at the moment the platform is already disturbed.
 *
 * Settled: not being deleted, the status observed the current spec, every condition it records is True (Ready among
 * them), the consent (from the cached ControlPlane) admits it with its finalizer installed, and what the kind keeps
 * in the cluster agrees with the status (a user's parked password and delivered Secret). Anything else takes the full
 * pass. What only Keystone can show (an object deleted there by hand, an admin password changed while no operator
 * ran) is noticed at the next change, as it would have been without the restart.
 */
import type { Consent } from './consent';

/** The verdict, with the reason when not settled. */
export type PlaneSettled = { readonly settled: true } | { readonly settled: false; readonly why: string };

/** What every kind's rule reads of its object. */
export interface SettledObject {
  readonly metadata: { readonly generation?: number; readonly deletionTimestamp?: string; readonly finalizers?: readonly string[] };
  readonly status?: { readonly observedGeneration?: number; readonly conditions?: readonly { readonly type: string; readonly status: string }[] };
}

const no = (why: string): PlaneSettled => ({ settled: false, why });

/**
 * The rule every kind shares; `consent` and `finalizer` for the orders (a ControlPlane has neither), `agrees` for
 * what a kind keeps in the cluster beside its status (undefined when it agrees, else why not).
 */
export function planeSettled(object: SettledObject, options: { readonly consent?: Consent; readonly finalizer?: string; readonly agrees?: string } = {}): PlaneSettled {
  if (object.metadata.deletionTimestamp) return no('being deleted');
  const status = object.status;
  if (status?.observedGeneration === undefined || status.observedGeneration !== (object.metadata.generation ?? status.observedGeneration)) return no('the spec changed since the status was recorded');
  const conditions = status.conditions ?? [];
  if (!conditions.some((c) => c.type === 'Ready')) return no('no Ready condition');
  const notTrue = conditions.find((c) => c.status !== 'True');
  if (notTrue) return no(`${notTrue.type} is not True`);
  const consent = options.consent;
  if (consent) {
    if (consent.state !== 'assigned') return no('not admitted');
    if (consent.wait) return no('waiting for the admin credential');
  }
  if (options.finalizer !== undefined && !(object.metadata.finalizers ?? []).includes(options.finalizer)) return no('its finalizer is not installed');
  if (options.agrees !== undefined) return no(options.agrees);
  return { settled: true };
}
