/**
 * The ControlPlane's rules (identity-plane.md, ControlPlane), as a pure `decide`: `AdminCredentialReady` from the admin
 * credential read from its Secrets and a real admin login, `keystoneVersion` from the auth URL, and the aggregate
 * `Ready`. A ControlPlane has no actions: it is not an order and creates nothing.
 */
import { ADMIN_CREDENTIAL_EXPIRY_WARNING, Duration, IdentityConditionType, PlaneConditionType, formatTime, type ControlPlane, type ControlPlaneStatus } from '../api';
import type { KeystoneErrorKind } from '../keystone';
import type { AdminCredentialCheck } from './admin-credential';
import { report, type Verdict } from './conditions';
import { RECHECK_MS, UNREACHABLE_RECHECK_MS, type PlanePlan } from './plan';
import { AdminCredentialReason } from './reasons';

/** The outcome of the admin login (made only when the credential could be read). */
export type AdminLogin =
  | {
      readonly ok: true;
      readonly version: string;
      /** The admin application credential the login used (issue 42); absent for a password. */
      readonly applicationCredential?: { readonly id: string; readonly name: string; readonly expiresAt?: Date };
    }
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
  const observedStatus: ControlPlaneStatus = { ...controlPlane.status, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
  const { adminCredentialExpiresAt: recorded, ...status } = observedStatus;
  const { verdict, version, requeueAfter, expiresAt, steady } = adminVerdict(observed, recorded, now);
  const verdicts: Array<readonly [string, Verdict]> = [];
  if (observed.identity) verdicts.push([IdentityConditionType.IdentityAllowed, observed.identity.allowed], [IdentityConditionType.CredentialsMirrored, observed.identity.mirrored]);
  verdicts.push([PlaneConditionType.AdminCredentialReady, verdict]);
  const conditions = report(status.conditions, verdicts, now, generation);
  return {
    status: { ...status, conditions, ...(version !== undefined ? { keystoneVersion: version } : {}), ...(expiresAt !== undefined ? { adminCredentialExpiresAt: expiresAt } : {}) },
    actions: [],
    ...(requeueAfter !== undefined ? { requeueAfter } : {}),
    ...(steady ? { steady } : {}),
  };
}

/**
 * The admin verdict; `expiresAt` the admin application credential's expiry to record (absent: none is recorded),
 * `steady` when only the clock wakes it.
 */
interface AdminVerdict {
  readonly verdict: Verdict;
  readonly version?: string;
  readonly requeueAfter?: number;
  readonly expiresAt?: string;
  readonly steady?: boolean;
}

const WARNING = Duration.parse(ADMIN_CREDENTIAL_EXPIRY_WARNING);

/**
 * Only a login Keystone answered changes the recorded expiry: a success records the credential's (or none), a refusal
 * keeps it only when it has passed (the message says the credential expired) and drops it before then (the credential
 * the Secret holds now is not the one recorded, or was revoked). Everything that says nothing about the credential
 * keeps it (issue 46): Keystone not answering, a login not attempted, a Secret that cannot be read or is refused. A
 * Keystone blip then neither drops the expiry's gauge series nor resets the alert on it.
 */
function adminVerdict(observed: ControlPlaneObservations, recorded: string | undefined, now: Date): AdminVerdict {
  const kept = recorded !== undefined ? { expiresAt: recorded } : {};
  const { credential, login } = observed;
  if (observed.secretsRefused !== undefined) return { verdict: { status: 'False', reason: AdminCredentialReason.SecretAccessNotGranted, message: observed.secretsRefused }, ...kept };
  if (!credential.ok) return { verdict: { status: 'False', reason: credential.reason, message: credential.message }, ...kept };
  if (!login) return { verdict: { status: 'False', reason: AdminCredentialReason.KeystoneUnreachable, message: 'the admin login was not attempted' }, requeueAfter: UNREACHABLE_RECHECK_MS, ...kept };
  if (login.ok) {
    const authenticated = `authenticated to Keystone ${login.version} at ${credential.connection.authUrl} as the admin`;
    const used = login.applicationCredential;
    if (!used) return { verdict: { status: 'True', reason: AdminCredentialReason.AdminCredentialReady, message: authenticated }, version: login.version };
    return { ...applicationCredentialVerdict(`${authenticated} application credential ${used.name} (${used.id})`, used.expiresAt, now), version: login.version };
  }
  if (UNREACHABLE.has(login.kind)) {
    return { verdict: { status: 'False', reason: AdminCredentialReason.KeystoneUnreachable, message: login.message }, requeueAfter: UNREACHABLE_RECHECK_MS, ...kept };
  }
  // An admin application credential that expired is refused like a wrong secret: the recorded expiry says why.
  const expired = recorded !== undefined && Date.parse(recorded) <= now.getTime() ? recorded : undefined;
  const message = expired !== undefined ? `the admin application credential expired at ${expired}: ${login.message}` : login.message;
  // A refused login is looked at again now and then too: the password may be fixed in Keystone, not in the Secret.
  return { verdict: { status: 'False', reason: AdminCredentialReason.AuthenticationFailed, message }, requeueAfter: RECHECK_MS, ...(expired !== undefined ? { expiresAt: expired } : {}) };
}

/**
 * An admin application credential (issue 42): Ready, with its expiry recorded and a wake-up when the warning starts;
 * `AdminCredentialExpiring` (still True: the plane works) from `ADMIN_CREDENTIAL_EXPIRY_WARNING` before it, with a
 * wake-up at the expiry, when Keystone starts refusing it. The messages carry times, never a countdown, so a steady
 * ControlPlane writes nothing.
 */
function applicationCredentialVerdict(authenticated: string, expiresAt: Date | undefined, now: Date): Omit<AdminVerdict, 'version'> {
  if (expiresAt === undefined) return { verdict: { status: 'True', reason: AdminCredentialReason.AdminCredentialReady, message: `${authenticated}, which never expires` } };
  const at = formatTime(expiresAt);
  const warnFrom = WARNING.before(expiresAt);
  if (now < warnFrom) {
    return {
      verdict: { status: 'True', reason: AdminCredentialReason.AdminCredentialReady, message: `${authenticated}, which expires at ${at}` },
      expiresAt: at,
      requeueAfter: warnFrom.getTime() - now.getTime(),
      steady: true,
    };
  }
  return {
    verdict: {
      status: 'True',
      reason: AdminCredentialReason.AdminCredentialExpiring,
      message: `${authenticated}, which expires at ${at}: create its successor (openstack application credential create) and put it into the admin Secret before then, or the identity plane stops`,
    },
    expiresAt: at,
    requeueAfter: Math.max(0, expiresAt.getTime() - now.getTime()),
    steady: true,
  };
}
