/**
 * The ControlPlane's rules (identity-plane.md, ControlPlane), as a pure `decide`: `AdminCredentialReady` from the admin
 * credential read from its Secrets and a real admin login, `keystoneVersion` from the auth URL, and the aggregate
 * `Ready`. A ControlPlane has no actions: it is not an order and creates nothing.
 */
import { IdentityConditionType, PlaneConditionType, type ControlPlane, type ControlPlaneStatus } from '../api';
import type { KeystoneErrorKind } from '../keystone';
import type { AdminCredentialCheck } from './admin-credential';
import { report, type Verdict } from './conditions';
import { RECHECK_MS, UNREACHABLE_RECHECK_MS, type PlanePlan } from './plan';
import { AdminCredentialReason } from './reasons';

/** The outcome of the admin login (made only when the credential could be read). */
export type AdminLogin =
  | { readonly ok: true; readonly version: string }
  /** `kind` of the `KeystoneError`, or `other` for any other failure. */
  | { readonly ok: false; readonly kind: KeystoneErrorKind | 'other'; readonly message: string };

/** What one pass observed. */
export interface ControlPlaneObservations {
  readonly credential: AdminCredentialCheck;
  /** Set when `credential.ok`. */
  readonly login?: AdminLogin;
  /** With `adminCredential.identityRef`: `IdentityAllowed` and `CredentialsMirrored` (src/plane/cluster-identity.ts). */
  readonly identity?: { readonly allowed: Verdict; readonly mirrored: Verdict };
  /**
   * Set when the API server refused the operator the Secrets of the ControlPlane's namespace, or its identity's source
   * (the namespaced Secret access, ./secret-access.ts): the message of the refusal. Nothing is read or logged in then.
   */
  readonly secretsRefused?: string;
}

/** The Keystone error kinds that mean "no answer": the login is retried soon. */
const UNREACHABLE: ReadonlySet<string> = new Set(['transport', 'timeout', 'server']);

/** Decides the ControlPlane's status. */
export function decideControlPlane(controlPlane: ControlPlane, observed: ControlPlaneObservations, now: Date): PlanePlan<ControlPlaneStatus, never> {
  const generation = controlPlane.metadata.generation;
  const status: ControlPlaneStatus = { ...controlPlane.status, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
  const { verdict, version, requeueAfter } = adminVerdict(observed);
  const verdicts: Array<readonly [string, Verdict]> = [];
  if (observed.identity) verdicts.push([IdentityConditionType.IdentityAllowed, observed.identity.allowed], [IdentityConditionType.CredentialsMirrored, observed.identity.mirrored]);
  verdicts.push([PlaneConditionType.AdminCredentialReady, verdict]);
  const conditions = report(status.conditions, verdicts, now, generation);
  return {
    status: { ...status, conditions, ...(version !== undefined ? { keystoneVersion: version } : {}) },
    actions: [],
    ...(requeueAfter !== undefined ? { requeueAfter } : {}),
  };
}

function adminVerdict(observed: ControlPlaneObservations): { verdict: Verdict; version?: string; requeueAfter?: number } {
  const { credential, login } = observed;
  if (observed.secretsRefused !== undefined) return { verdict: { status: 'False', reason: AdminCredentialReason.SecretAccessNotGranted, message: observed.secretsRefused } };
  if (!credential.ok) return { verdict: { status: 'False', reason: credential.reason, message: credential.message } };
  if (!login) return { verdict: { status: 'False', reason: AdminCredentialReason.KeystoneUnreachable, message: 'the admin login was not attempted' }, requeueAfter: UNREACHABLE_RECHECK_MS };
  if (login.ok) {
    return {
      verdict: { status: 'True', reason: AdminCredentialReason.AdminCredentialReady, message: `authenticated to Keystone ${login.version} at ${credential.connection.authUrl} as the admin` },
      version: login.version,
    };
  }
  if (UNREACHABLE.has(login.kind)) {
    return { verdict: { status: 'False', reason: AdminCredentialReason.KeystoneUnreachable, message: login.message }, requeueAfter: UNREACHABLE_RECHECK_MS };
  }
  // A refused login is looked at again now and then too: the password may be fixed in Keystone, not in the Secret.
  return { verdict: { status: 'False', reason: AdminCredentialReason.AuthenticationFailed, message: login.message }, requeueAfter: RECHECK_MS };
}
